package swissmap

import (
	"math/bits"
	"unsafe"
)

const (
	// HeaderSize is the size of the runtime's map header (internal/runtime/maps.Map): used,
	// seed, dirPtr, dirLen, four bytes of depth, shift and flags, clearSeq.
	HeaderSize = 48
	// dirPtrOffset and dirLenOffset locate in the header the group of a small map, or the
	// directory of a big map's tables, and the directory's length (0 for a small map).
	dirPtrOffset = 16
	dirLenOffset = 24
	// GroupSlots is the number of slots of a group.
	GroupSlots = 8
	// SlotSize is a slot of a map whose keys are strings and whose values are two words: the
	// key's string header, then the value.
	SlotSize = 32
	// GroupSize is a group of such a map: its word of control bytes, then its slots.
	GroupSize = 8 + GroupSlots*SlotSize
	// emptyBits selects the high bit of each control byte, set for a slot that holds no entry.
	emptyBits = 0x8080808080808080
	// A table (internal/runtime/maps.table: used, capacity, growthLeft, localDepth, index,
	// groups) has its index in the directory, and its groups (an array, and the array's length
	// less one) at these offsets.
	tableIndexOffset  = 8
	tableGroupsOffset = 16
	tableMaskOffset   = 24
)

// Header returns the address of m's header, nil for a nil map.
func Header[K comparable, V any](m map[K]V) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&m))
}

// Count is the count of entries the header at header holds.
func Count(header unsafe.Pointer) uint64 {
	return *(*uint64)(header)
}

// SmallGroup returns the group of the small map whose header is at header (nil when it never
// held an entry: its group is made at the first write), and small false for a big map.
func SmallGroup(header unsafe.Pointer) (group unsafe.Pointer, small bool) {
	if *(*int)(unsafe.Add(header, dirLenOffset)) != 0 {
		return nil, false
	}
	return *(*unsafe.Pointer)(unsafe.Add(header, dirPtrOffset)), true
}

// Full returns the bits of group's full slots: the high bit of each one's control byte. A
// slot's bit is bit 8*i+7 for slot i (Slot takes it).
func Full(group unsafe.Pointer) uint64 {
	return ^*(*uint64)(group) & emptyBits
}

// Slot returns the address of the slot of group whose bit in Full's answer is bit: its key's
// string header, and 16 bytes further its value.
func Slot(group unsafe.Pointer, bit int) unsafe.Pointer {
	return unsafe.Add(group, 8+uintptr(bit/8)*SlotSize)
}

// EachGroup calls visit with each group of each table of the big map whose header is at
// header, each table once, and reports false when its directory is not as the layout says
// (what visit was given then is no answer). It does not check the count: a caller counting
// the full slots it was given compares them with Count.
func EachGroup(header unsafe.Pointer, visit func(group unsafe.Pointer)) bool {
	dir := Directory(header)
	if len(dir) == 0 {
		return false
	}
	for i, table := range dir {
		if table == nil {
			return false
		}
		if *(*int)(unsafe.Add(table, tableIndexOffset)) != i {
			continue // a later entry of a table already walked
		}
		groups := *(*unsafe.Pointer)(unsafe.Add(table, tableGroupsOffset))
		mask := *(*uint64)(unsafe.Add(table, tableMaskOffset))
		for g := uint64(0); g <= mask; g++ {
			visit(unsafe.Add(groups, uintptr(g)*GroupSize))
		}
	}
	return true
}

// Directory returns the directory of the big map whose header is at header: its entries, each
// the address of a table, a table split by no growth yet at several consecutive entries. It is
// empty for a small map.
func Directory(header unsafe.Pointer) []unsafe.Pointer {
	dir := *(*unsafe.Pointer)(unsafe.Add(header, dirPtrOffset))
	dirLen := *(*int)(unsafe.Add(header, dirLenOffset))
	if dir == nil || dirLen <= 0 {
		return nil
	}
	return unsafe.Slice((*unsafe.Pointer)(dir), dirLen)
}

// FullCount is the number of full slots in Full's answer.
func FullCount(full uint64) int {
	return bits.OnesCount64(full)
}
