package fakeapi

import (
	"math/bits"
	"strconv"
	"strings"
	"unsafe"
)

// The entries of a map[string]any read from its memory, for fingerprint: most maps of a
// stored object hold a handful of entries (a fieldsV1 tree of managedFields is dozens of maps of
// one or two), and ranging over one costs the runtime's iterator set-up (a random starting
// point, an iterator to fill) and a call per entry: about half of what fingerprinting an object
// cost. A fingerprint combines a map's entries by addition, so any order of visiting them gives
// the same value, and reading the slots in place gives what ranging gives.
//
// Go's maps (swiss tables, Go 1.24 and later) keep a map of at most eight entries as a header
// (its count of entries, hash seed, and a pointer to its one group) and one group: a word of
// control bytes, one per slot, whose high bit is clear for a full slot, then the eight slots,
// each the key and the value in place. A bigger map has a directory of tables, each an array of
// such groups (walkBigMap): an object's metadata, a Deployment's spec. The layout is the
// runtime's, not a promise of the language: smallAnyMapLayout checks it once per process on
// maps of its own, small and big, and when it is not as expected, or a map's full slots do not
// number its count, fingerprint ranges over the map as before.

const (
	// anyMapDirPtrOffset and anyMapDirLenOffset locate in the header (internal/runtime/maps.Map:
	// used, seed, dirPtr, dirLen...) the group of a small map and the length of a big map's
	// directory of tables, 0 for a small map.
	anyMapDirPtrOffset = 16
	anyMapDirLenOffset = 24
	anyMapGroupSlots   = 8
	// anyMapSlotSize is a slot of a map[string]any: the key's string header, then the value's
	// interface (two words each).
	anyMapSlotSize = 32
	// ctrlHighBits selects the high bit of each control byte, set for an empty or deleted slot.
	ctrlHighBits = 0x8080808080808080
	// A big map's directory (at dirPtr, dirLen entries) points to its tables, a table taking
	// consecutive entries from the one its index names; a table
	// (internal/runtime/maps.table: used, capacity, growthLeft, localDepth, index, groups) has
	// its index and its groups (an array of groups, and the array's length less one) at these
	// offsets. Each group is laid out as a small map's.
	anyMapTableIndexOffset  = 8
	anyMapTableGroupsOffset = 16
	anyMapTableMaskOffset   = 24
	anyMapGroupSize         = 8 + anyMapGroupSlots*anyMapSlotSize
)

// smallAnyMapLayout says whether the runtime's map[string]any has the layout above, checked
// once when the package is initialised (a few microseconds; asked at every map fingerprinted,
// where a sync.OnceValue's call cost a tenth of what reading in place saves).
var smallAnyMapLayout = checkSmallAnyMapLayout()

// smallMapGroup returns the group of m when it is a small map whose full slots number its
// count, with the bits of its full slots (the high bit of each one's control byte), and false
// for a big map, or when the layout is not the one expected. An empty map may have no group:
// it returns a nil group and no bits.
func smallMapGroup(m map[string]any) (group unsafe.Pointer, full uint64, ok bool) {
	header := *(*unsafe.Pointer)(unsafe.Pointer(&m))
	if header == nil {
		return nil, 0, true
	}
	if *(*int)(unsafe.Add(header, anyMapDirLenOffset)) != 0 {
		return nil, 0, false
	}
	used := *(*uint64)(header)
	group = *(*unsafe.Pointer)(unsafe.Add(header, anyMapDirPtrOffset))
	if group == nil {
		return nil, 0, used == 0
	}
	full = ^*(*uint64)(group) & ctrlHighBits
	return group, full, uint64(bits.OnesCount64(full)) == used
}

// walkBigMap calls visit with each entry of m, a big map (not smallMapGroup's), read from its
// tables' groups, and reports whether the entries it found number m's count; false means the
// layout is not the one expected (what visit was given then is no answer).
func walkBigMap(m map[string]any, visit func(k string, v any)) bool {
	header := *(*unsafe.Pointer)(unsafe.Pointer(&m))
	dir := *(*unsafe.Pointer)(unsafe.Add(header, anyMapDirPtrOffset))
	dirLen := *(*int)(unsafe.Add(header, anyMapDirLenOffset))
	if dir == nil || dirLen <= 0 {
		return false
	}
	found := uint64(0)
	for i := range dirLen {
		table := *(*unsafe.Pointer)(unsafe.Add(dir, uintptr(i)*unsafe.Sizeof(dir)))
		if table == nil {
			return false
		}
		if *(*int)(unsafe.Add(table, anyMapTableIndexOffset)) != i {
			continue // a later entry of a table already walked
		}
		groups := *(*unsafe.Pointer)(unsafe.Add(table, anyMapTableGroupsOffset))
		mask := *(*uint64)(unsafe.Add(table, anyMapTableMaskOffset))
		for g := uint64(0); g <= mask; g++ {
			group := unsafe.Add(groups, uintptr(g)*anyMapGroupSize)
			full := ^*(*uint64)(group) & ctrlHighBits
			found += uint64(bits.OnesCount64(full))
			for ; full != 0; full &= full - 1 {
				visit(anyMapSlot(group, bits.TrailingZeros64(full)))
			}
		}
	}
	return found == *(*uint64)(header)
}

// anyMapSlot returns the key and the value in the slot of group whose control byte's high bit
// is bit (a bit of smallMapGroup's full).
func anyMapSlot(group unsafe.Pointer, bit int) (string, any) {
	slot := unsafe.Add(group, 8+uintptr(bit/8)*anyMapSlotSize)
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
	for n := 0; n <= anyMapGroupSlots; n++ {
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
	if _, _, ok := smallMapGroup(entries(anyMapGroupSlots + 1)); ok {
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
