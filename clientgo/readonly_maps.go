package clientgo

import (
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/informersim/informersim/internal/swissmap"
)

// A small map[string]string (the labels, annotations and selectors of nearly every object) in a
// read-only snapshot as two blocks of memory, instead of its entries looked up one by one at
// every comparison (readonly_snapshot.go): a map lookup costs about as much as comparing a few
// hundred bytes, and a Deployment has three such maps.
//
// A map of at most eight entries is, in the runtime's layout (internal/swissmap), a header (its
// count, hash seed and a pointer to its one group) and one group of slots, each slot a key and a
// value in place (for strings, their headers) behind a word of control bytes that says which
// slots are full. Every write that changes the map's content (a value set, an entry added or
// deleted, a clear, a growth into a bigger table) changes a byte of the header or of the group,
// so a map whose header and group hold the bytes they held is the same map with the same
// entries. The layout is the runtime's, not a promise of the language: smallMapLayout checks it
// once per process on maps of its own (where each entry is, what each kind of write changes),
// and when anything is not as expected the snapshot keeps looking the entries up.

// smallMapLayout reports whether the runtime's map[string]string has the layout above, checked
// once; false in the plain build and on 32-bit platforms (swissmap.Enabled).
var smallMapLayout = sync.OnceValue(func() bool { return swissmap.Enabled && checkSmallMapLayout() })

// smallStringMap returns the header and group of a map[string]string kept as a small map, and
// false for a big one, a nil one, or when the layout was not found as expected. group is nil
// for a map that never held an entry (its group is made at the first write, which changes the
// header).
func smallStringMap(m map[string]string) (header, group unsafe.Pointer, ok bool) {
	if m == nil || !smallMapLayout() {
		return nil, nil, false
	}
	return stringMapMemory(m)
}

// stringMapMemory reads m's header and, when it is a small map, its group, as the layout says.
func stringMapMemory(m map[string]string) (header, group unsafe.Pointer, small bool) {
	header = swissmap.Header(m)
	group, small = swissmap.SmallGroup(header)
	return header, group, small
}

// checkSmallMapLayout finds, in maps of 1 to 8 entries, each entry in a full slot of the group
// where the layout says and the count in the header; in a map of 9 a directory; and that each
// kind of write changes the header or the group's bytes.
func checkSmallMapLayout() bool {
	entries := func(n int) map[string]string {
		m := map[string]string{}
		for i := range n {
			m[strings.Clone("key-"+strconv.Itoa(i))] = strings.Clone("value-" + strconv.Itoa(i))
		}
		return m
	}
	for n := 1; n <= swissmap.GroupSlots; n++ {
		m := entries(n)
		header, group, small := stringMapMemory(m)
		if swissmap.Count(header) != uint64(n) || !small || group == nil {
			return false
		}
		found := map[string]bool{}
		for full := swissmap.Full(group); full != 0; full &= full - 1 {
			slot := swissmap.Slot(group, bits.TrailingZeros64(full))
			k, v := *(*string)(slot), *(*string)(unsafe.Add(slot, 16))
			if w, ok := m[k]; !ok || w != v || found[k] {
				return false
			}
			found[k] = true
		}
		if len(found) != n {
			return false
		}
	}
	if _, _, small := stringMapMemory(entries(swissmap.GroupSlots + 1)); small {
		return false
	}
	for _, write := range []func(m map[string]string){
		func(m map[string]string) { m["key-1"] = "other" },
		func(m map[string]string) { m["key-9"] = "new" },
		func(m map[string]string) { delete(m, "key-2") },
		func(m map[string]string) { clear(m) },
	} {
		m := entries(3)
		header, group, small := stringMapMemory(m)
		if !small || group == nil {
			return false
		}
		before := string(unsafe.Slice((*byte)(header), swissmap.HeaderSize)) + string(unsafe.Slice((*byte)(group), swissmap.GroupSize))
		write(m)
		if string(unsafe.Slice((*byte)(header), swissmap.HeaderSize))+string(unsafe.Slice((*byte)(group), swissmap.GroupSize)) == before {
			return false
		}
	}
	return true
}
