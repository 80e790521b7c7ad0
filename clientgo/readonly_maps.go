package clientgo

import (
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// A small map[string]string (the labels, annotations and selectors of nearly every object) in a
// read-only snapshot as two blocks of memory, instead of its entries looked up one by one at
// every comparison (readonly_snapshot.go): a map lookup costs about as much as comparing a few
// hundred bytes, and a Deployment has three such maps.
//
// Go's maps (swiss tables, Go 1.24 and later) keep a map of at most eight entries as a header
// (its count, hash seed and a pointer to its one group) and one group of slots, each slot a key
// and a value in place (for strings, their headers) behind a word of control bytes that says
// which slots are full. Every write that changes the map's content (a value set, an entry added
// or deleted, a clear, a growth into a bigger table) changes a byte of the header or of the
// group, so a map whose header and group hold the bytes they held is the same map with the same
// entries. The layout is the runtime's, not a promise of the language: smallMapLayout checks it
// once per process on maps of its own (where each entry is, what each kind of write changes),
// and when anything is not as expected the snapshot keeps looking the entries up.

const (
	// mapHeaderSize is the size of the runtime's map header (internal/runtime/maps.Map): used,
	// seed, dirPtr, dirLen, four bytes of depth, shift and flags, clearSeq.
	mapHeaderSize = 48
	// mapDirPtrOffset and mapDirLenOffset locate, in the header, the group of a small map and
	// the length of a big map's directory of tables (0 for a small map).
	mapDirPtrOffset = 16
	mapDirLenOffset = 24
	// mapGroupSlots is the number of slots of a group; a string map's group is a word of control
	// bytes then the slots, each a key and a value string header.
	mapGroupSlots           = 8
	stringMapSlotSize       = 32
	stringMapGroupSize      = 8 + mapGroupSlots*stringMapSlotSize
	mapCtrlEmptyBit    byte = 0x80 // set in the control byte of a slot that holds no entry
)

// smallMapLayout reports whether the runtime's map[string]string has the layout above, checked
// once.
var smallMapLayout = sync.OnceValue(checkSmallMapLayout)

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
	header = *(*unsafe.Pointer)(unsafe.Pointer(&m))
	if *(*int)(unsafe.Add(header, mapDirLenOffset)) != 0 {
		return header, nil, false
	}
	return header, *(*unsafe.Pointer)(unsafe.Add(header, mapDirPtrOffset)), true
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
	for n := 1; n <= mapGroupSlots; n++ {
		m := entries(n)
		header, group, small := stringMapMemory(m)
		if *(*uint64)(header) != uint64(n) || !small || group == nil {
			return false
		}
		found := map[string]bool{}
		for slot := range mapGroupSlots {
			if *(*byte)(unsafe.Add(group, slot))&mapCtrlEmptyBit != 0 {
				continue
			}
			k := *(*string)(unsafe.Add(group, 8+slot*stringMapSlotSize))
			v := *(*string)(unsafe.Add(group, 8+slot*stringMapSlotSize+16))
			if w, ok := m[k]; !ok || w != v || found[k] {
				return false
			}
			found[k] = true
		}
		if len(found) != n {
			return false
		}
	}
	if _, _, small := stringMapMemory(entries(mapGroupSlots + 1)); small {
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
		before := string(unsafe.Slice((*byte)(header), mapHeaderSize)) + string(unsafe.Slice((*byte)(group), stringMapGroupSize))
		write(m)
		if string(unsafe.Slice((*byte)(header), mapHeaderSize))+string(unsafe.Slice((*byte)(group), stringMapGroupSize)) == before {
			return false
		}
	}
	return true
}
