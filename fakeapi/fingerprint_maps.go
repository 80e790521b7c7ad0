package fakeapi

import (
	"math/bits"
	"strconv"
	"strings"
	"unsafe"

	"github.com/informersim/informersim/internal/swissmap"
)

// The entries of a map[string]any read from its memory, for fingerprint: most maps of a
// stored object hold a handful of entries (a fieldsV1 tree of managedFields is dozens of maps of
// one or two), and ranging over one costs the runtime's iterator set-up (a random starting
// point, an iterator to fill) and a call per entry: about half of what fingerprinting an object
// cost. A fingerprint combines a map's entries by addition, so any order of visiting them gives
// the same value, and reading the slots in place gives what ranging gives.
//
// The runtime's layout of maps is internal/swissmap's: a small map (at most eight entries) is a
// header and one group of slots, a big one (an object's metadata, a Deployment's spec) a
// directory of tables of groups (walkBigMap). It is not a promise of the language:
// smallAnyMapLayout checks it once per process on maps of its own, small and big, and when it is
// not as expected, or a map's full slots do not number its count, fingerprint ranges over the
// map as before.

// smallAnyMapLayout says whether the runtime's map[string]any has the layout above, checked
// once when the package is initialised (a few microseconds; asked at every map fingerprinted,
// where a sync.OnceValue's call cost a tenth of what reading in place saves).
var smallAnyMapLayout = swissmap.Enabled && checkSmallAnyMapLayout()

// smallMapGroup returns the group of m when it is a small map whose full slots number its
// count, with the bits of its full slots (swissmap.Full), and false for a big map, or when the
// layout is not the one expected. An empty map may have no group: it returns a nil group and no
// bits.
func smallMapGroup(m map[string]any) (group unsafe.Pointer, full uint64, ok bool) {
	header := swissmap.Header(m)
	if header == nil {
		return nil, 0, true
	}
	group, small := swissmap.SmallGroup(header)
	if !small {
		return nil, 0, false
	}
	used := swissmap.Count(header)
	if group == nil {
		return nil, 0, used == 0
	}
	full = swissmap.Full(group)
	return group, full, uint64(swissmap.FullCount(full)) == used
}

// walkBigMap calls visit with each entry of m, a big map (not smallMapGroup's), read from its
// tables' groups, and reports whether the entries it found number m's count; false means the
// layout is not the one expected (what visit was given then is no answer).
func walkBigMap(m map[string]any, visit func(k string, v any)) bool {
	header := swissmap.Header(m)
	found := uint64(0)
	walked := swissmap.EachGroup(header, func(group unsafe.Pointer) {
		full := swissmap.Full(group)
		found += uint64(swissmap.FullCount(full))
		for ; full != 0; full &= full - 1 {
			visit(anyMapSlot(group, bits.TrailingZeros64(full)))
		}
	})
	return walked && found == swissmap.Count(header)
}

// anyMapSlot returns the key and the value in the slot of group whose bit in swissmap.Full's
// answer is bit.
func anyMapSlot(group unsafe.Pointer, bit int) (string, any) {
	slot := swissmap.Slot(group, bit)
	return *(*string)(slot), *(*any)(unsafe.Add(slot, 16))
}

// checkSmallAnyMapLayout finds, in maps of 0 to 8 entries made by inserts and deletes, each
// entry once in a full slot where the layout says, and as many full slots as the count in the
// header; in a map of 9 entries, a directory; and in big maps with deletes, each entry once
// in their tables' groups (walkBigMap).
func checkSmallAnyMapLayout() bool {
	entries := func(n int) map[string]any {
		m := map[string]any{}
		for i := range n {
			m[strings.Clone("key-"+strconv.Itoa(i))] = int64(i)
		}
		return m
	}
	sameEntries := func(m map[string]any) bool {
		group, full, ok := smallMapGroup(m)
		if !ok || group == nil && len(m) != 0 {
			return false
		}
		seen := 0
		for f := full; f != 0; f &= f - 1 {
			k, v := anyMapSlot(group, bits.TrailingZeros64(f))
			if w, ok := m[k]; !ok || w != v {
				return false
			}
			seen++
		}
		return seen == len(m)
	}
	for n := 0; n <= swissmap.GroupSlots; n++ {
		m := entries(n)
		if !sameEntries(m) {
			return false
		}
		// Deleted and replaced entries leave the slots as a write through the map left them.
		if n > 1 {
			delete(m, "key-0")
			m["key-1"] = "changed"
			if !sameEntries(m) {
				return false
			}
		}
	}
	if _, _, ok := smallMapGroup(entries(swissmap.GroupSlots + 1)); ok {
		return false
	}
	// Big maps: each entry once where the layout says, as many as the count, as the map grows
	// and after deletes (which leave tombstones). A map of more than 896 entries has several
	// tables: TestSmallAnyMapLayout checks one (here, at every process's start, it would cost
	// a third of a millisecond); its count guards it meanwhile.
	for _, n := range []int{9, 17, 60, 200} {
		if !bigMapWalkedAsRanged(entries(n)) {
			return false
		}
	}
	return true
}

// bigMapWalkedAsRanged deletes every third entry of m, a big map of entries "key-N", and
// reports whether walkBigMap then finds each entry once, as many as the count.
func bigMapWalkedAsRanged(m map[string]any) bool {
	for i := 0; i < len(m); i += 3 {
		delete(m, "key-"+strconv.Itoa(i))
	}
	seen := make(map[string]bool, len(m))
	bad := false
	ok := walkBigMap(m, func(k string, v any) {
		if w, in := m[k]; !in || w != v || seen[k] {
			bad = true
		}
		seen[k] = true
	})
	return ok && !bad && len(seen) == len(m)
}
