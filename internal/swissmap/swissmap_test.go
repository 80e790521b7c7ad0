//go:build !plain && (amd64 || arm64 || loong64 || mips64 || mips64le || ppc64 || ppc64le || riscv64 || s390x)

package swissmap

import (
	"math/bits"
	"strconv"
	"testing"
	"unsafe"
)

// entriesInPlace reads m's entries from its memory: its one group when it is small, else every
// group of its tables; ok false when the directory is not as the layout says or an entry was
// read twice.
func entriesInPlace(m map[string]string) (entries map[string]string, ok bool) {
	header := Header(m)
	if header == nil {
		return nil, true
	}
	entries = map[string]string{}
	twice := false
	read := func(group unsafe.Pointer) {
		for full := Full(group); full != 0; full &= full - 1 {
			slot := Slot(group, bits.TrailingZeros64(full))
			k := *(*string)(slot)
			if _, seen := entries[k]; seen {
				twice = true
			}
			entries[k] = *(*string)(unsafe.Add(slot, 16))
		}
	}
	defer func() { ok = ok && !twice }()
	if group, small := SmallGroup(header); small {
		if group != nil {
			read(group)
		}
		return entries, true
	}
	return entries, EachGroup(header, read)
}

// TestEntriesWhereTheLayoutSays: maps of 0 to 2,000 entries, grown and then with every third
// entry deleted, read in place give the entries ranging gives, as many as Count, small maps
// through SmallGroup and big ones (several tables past 896 entries) through EachGroup.
func TestEntriesWhereTheLayoutSays(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 8, 9, 17, 100, 897, 2000} {
		m := map[string]string{}
		for i := range n {
			m["key-"+strconv.Itoa(i)] = "value-" + strconv.Itoa(i)
		}
		for round, edit := range []func(){func() {}, func() {
			for i := 0; i < n; i += 3 {
				delete(m, "key-"+strconv.Itoa(i))
			}
		}} {
			edit()
			got, ok := entriesInPlace(m)
			if !ok {
				t.Fatalf("%d entries, round %d: the directory is not as the layout says", n, round)
			}
			if len(got) != len(m) || (len(m) > 0 && Count(Header(m)) != uint64(len(m))) {
				t.Fatalf("%d entries, round %d: read %d in place, the map has %d (count %d)", n, round, len(got), len(m), Count(Header(m)))
			}
			for k, v := range m {
				if got[k] != v {
					t.Fatalf("%d entries, round %d: %q read as %q in place, %q by the map", n, round, k, got[k], v)
				}
			}
			if _, small := SmallGroup(Header(m)); len(m) > 0 && small != (n <= GroupSlots) {
				t.Fatalf("%d entries: small %v", n, small)
			}
		}
	}
}

// TestDirectoryOfSeveralTables: a big map grows into a directory whose first two entries
// name one table (a table not split yet), which EachGroup walks once.
func TestDirectoryOfSeveralTables(t *testing.T) {
	m := map[string]string{}
	for i := 0; ; i++ {
		if i == 20000 {
			t.Fatal("no map of up to 20,000 entries has a table at two entries of its directory")
		}
		m["key-"+strconv.Itoa(i)] = "v"
		if dir := Directory(Header(m)); len(dir) >= 2 && dir[0] == dir[1] {
			break
		}
	}
	got, ok := entriesInPlace(m)
	if !ok || len(got) != len(m) {
		t.Fatalf("read %d entries of %d in place (ok %v)", len(got), len(m), ok)
	}
}
