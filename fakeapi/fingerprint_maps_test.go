package fakeapi

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/informersim/informersim/internal/swissmap"
)

// TestSmallAnyMapLayout: the layout fingerprint reads small maps by is the runtime's (else every
// map is ranged over, which is correct but slower: this test says so).
func TestSmallAnyMapLayout(t *testing.T) {
	if !swissmap.Enabled {
		// The plain build, or a 32-bit platform: nothing may read a map's memory.
		if smallAnyMapLayout {
			t.Fatal("the map layout is used though swissmap.Enabled is false")
		}
		return
	}
	if !smallAnyMapLayout {
		t.Fatal("the runtime's map[string]any does not have the layout fingerprint_maps.go expects")
	}
	// A map of several tables, which the check at start-up leaves out, grown until one table
	// takes two entries of the directory (one table split, not the other).
	m := map[string]any{}
	for i := 0; ; i++ {
		if i == 20000 {
			t.Fatal("no map of up to 20,000 entries has a table at two entries of its directory")
		}
		m["key-"+strconv.Itoa(i)] = int64(i)
		if dir := swissmap.Directory(swissmap.Header(m)); len(dir) >= 2 && dir[0] == dir[1] {
			break
		}
	}
	if !bigMapWalkedAsRanged(m) {
		t.Fatal("walkBigMap does not find the entries of a map of several tables")
	}
}

// rangedFingerprint is fingerprint with every map ranged over: what fingerprint gave before it
// read small maps in place, and must still give.
func rangedFingerprint(v any) uint64 {
	switch x := v.(type) {
	case map[string]any:
		sum := uint64(0x9e3779b97f4a7c15)
		for k, e := range x {
			sum += mix(hashString(k) ^ (rangedFingerprint(e) * 0xff51afd7ed558ccd))
		}
		return mix(sum)
	case []any:
		h := uint64(0xc4ceb9fe1a85ec53)
		for _, e := range x {
			h = (h ^ rangedFingerprint(e)) * fnvPrime
		}
		return mix(h ^ uint64(len(x)))
	}
	return fingerprint(v)
}

// TestFingerprintOfMapsAsRanged compares fingerprint with rangedFingerprint on maps of every
// size around the small maps' eight entries and up to 40 (big maps, read from their tables), built by inserts, overwrites, deletes, clears, and
// growth past eight then deletes back under it (a map that grew stays big), nested.
func TestFingerprintOfMapsAsRanged(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	var build func(depth int) map[string]any
	build = func(depth int) map[string]any {
		var m map[string]any
		switch r.IntN(4) {
		case 0:
			if r.IntN(4) == 0 {
				return nil
			}
			m = map[string]any{}
		case 1:
			m = make(map[string]any, r.IntN(20))
		default:
			m = map[string]any{}
		}
		keys, ops := 12, 14
		if depth == 0 && r.IntN(4) == 0 { // big maps too, grown past eight entries or made so
			keys, ops = 40, 60
		}
		for range r.IntN(ops) {
			k := fmt.Sprint("k", r.IntN(keys))
			switch op := r.IntN(10); {
			case op < 5:
				var v any = int64(r.IntN(5))
				switch r.IntN(4) {
				case 0:
					if depth < 3 {
						v = build(depth + 1)
					}
				case 1:
					v = fmt.Sprint("value-", r.IntN(3))
				case 2:
					v = []any{float64(r.IntN(2)), math.NaN(), nil}
				}
				m[k] = v
			case op < 9:
				delete(m, k)
			default:
				if r.IntN(3) == 0 {
					clear(m)
				}
			}
		}
		return m
	}
	for i := range 20000 {
		m := build(0)
		if got, want := fingerprint(m), rangedFingerprint(m); got != want {
			t.Fatalf("map %d (%d entries): fingerprint %x, ranged %x: %v", i, len(m), got, want, m)
		}
	}
}
