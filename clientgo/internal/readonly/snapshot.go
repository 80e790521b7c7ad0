package readonly

import (
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"
)

// memPlan is how to find, from a value of one Go type, the memory it reaches beyond its own
// bytes: its fields (at any depth of inline structs and arrays) that are strings, pointers,
// slices, maps or interfaces. A type without such fields has an empty plan.
type memPlan struct {
	size uintptr
	deep []memField
	// plain are the byte ranges of a value that hold neither a deep field nor padding
	// (numbers, booleans...), in order, adjacent ones merged: what the first comparison of an
	// object with its copy compares as bytes (Verified).
	plain []byteRange
	// inexactOnce computes inexact: whether a value can reach (through its fields, pointers,
	// slices and arrays; maps and interfaces are compared by DeepEqual) a float, a complex or
	// a function, whose bytes can be equal where DeepEqual is not (NaN; a non-nil function).
	inexactOnce sync.Once
	inexact     bool
	// largest holds the lengths of the largest snapshot of the type taken so far in the
	// process, the room a new one starts with: grown by append from nothing, a snapshot's
	// slices allocated about twice what they kept.
	largest [snapshotParts]atomic.Int64
}

// The parts of a snapshot that largest sizes.
const (
	partBlocks = iota
	partSaved
	partStringMaps
	partStrs
	partOpaque
	partWords
	snapshotParts
)

type memKind uint8

const (
	memString  memKind = iota // the string's bytes
	memPointer                // the pointee's bytes, then its plan
	memSlice                  // the elements' bytes, then each element's plan
	memArray                  // n elements inline, each by its plan
	memOpaque                 // a map or an interface: compared with the copy's by DeepEqual
)

// byteRange is n bytes at off.
type byteRange struct{ off, n uintptr }

type memField struct {
	kind memKind
	off  uintptr
	elem *memPlan     // the pointee's, a slice's or an array's element
	n    uintptr      // an array's length
	typ  reflect.Type // an opaque field's type
}

// memPlans caches the plans by type for the process: plans are only read once built.
var (
	memPlans   sync.Map // reflect.Type -> *memPlan
	memPlansMu sync.Mutex
)

func memPlanFor(t reflect.Type) *memPlan {
	if p, ok := memPlans.Load(t); ok {
		return p.(*memPlan)
	}
	memPlansMu.Lock()
	defer memPlansMu.Unlock()
	if p, ok := memPlans.Load(t); ok {
		return p.(*memPlan)
	}
	building := map[reflect.Type]*memPlan{}
	p := buildMemPlan(t, building)
	for typ, bp := range building {
		memPlans.Store(typ, bp)
	}
	return p
}

// buildMemPlan builds t's plan; building holds the plans of this build (a recursive type's
// pointer field refers to its plan while it is being built).
func buildMemPlan(t reflect.Type, building map[reflect.Type]*memPlan) *memPlan {
	if p, ok := memPlans.Load(t); ok {
		return p.(*memPlan)
	}
	if p, ok := building[t]; ok {
		return p
	}
	p := &memPlan{size: t.Size()}
	building[t] = p
	p.deep = deepFields(t, 0, building)
	p.plain = plainRanges(t, 0, nil)
	return p
}

// plainRanges appends the ranges of a value of type t at offset off that are neither deep
// fields nor padding, merging adjacent ones.
func plainRanges(t reflect.Type, off uintptr, out []byteRange) []byteRange {
	switch t.Kind() {
	case reflect.String, reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		return out
	case reflect.Array:
		for i := range uintptr(t.Len()) {
			out = plainRanges(t.Elem(), off+i*t.Elem().Size(), out)
		}
		return out
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			out = plainRanges(f.Type, off+f.Offset, out)
		}
		return out
	default:
		if t.Size() == 0 {
			return out
		}
		if n := len(out); n > 0 && out[n-1].off+out[n-1].n == off {
			out[n-1].n += t.Size()
			return out
		}
		return append(out, byteRange{off, t.Size()})
	}
}

// isInexact reports memPlan.inexact of t's plan.
func (p *memPlan) isInexact(t reflect.Type) bool {
	p.inexactOnce.Do(func() { p.inexact = reachesInexact(t, map[reflect.Type]bool{}) })
	return p.inexact
}

func reachesInexact(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false // being looked at: what it holds is found there
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.Func:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return reachesInexact(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if reachesInexact(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}

// deepFields lists the fields of a value of type t at offset off that reach memory outside it.
func deepFields(t reflect.Type, off uintptr, building map[reflect.Type]*memPlan) []memField {
	switch t.Kind() {
	case reflect.String:
		return []memField{{kind: memString, off: off}}
	case reflect.Pointer:
		return []memField{{kind: memPointer, off: off, elem: buildMemPlan(t.Elem(), building), typ: t}}
	case reflect.Slice:
		return []memField{{kind: memSlice, off: off, elem: buildMemPlan(t.Elem(), building)}}
	case reflect.Map, reflect.Interface:
		return []memField{{kind: memOpaque, off: off, typ: t}}
	case reflect.Array:
		if t.Len() == 0 {
			return nil
		}
		// Whether the element reaches memory outside itself is looked at when walking: its plan
		// may still be under construction here.
		return []memField{{kind: memArray, off: off, elem: buildMemPlan(t.Elem(), building), n: uintptr(t.Len())}}
	case reflect.Struct:
		var out []memField
		for i := range t.NumField() {
			f := t.Field(i)
			out = append(out, deepFields(f.Type, off+f.Offset, building)...)
		}
		return out
	default:
		// Numbers, booleans: their bytes. Channels, functions and unsafe pointers: DeepEqual
		// compares what the value itself holds (a channel's identity; a function only when
		// nil), which are its bytes too.
		return nil
	}
}

// maxSnapshotDepth bounds the pointers followed from an object: deeper, a pointer is compared as
// an opaque value (DeepEqual), which also covers a cyclic graph.
const maxSnapshotDepth = 64

// Snapshot is a lent object's memory, saved when it was DeepEqual to its copy.
type Snapshot struct {
	// The blocks, in the order they were saved, and their saved bytes: each block's from the
	// word after the previous block's, so that both sides of a comparison are word-aligned
	// (a block's memory is, but for a string's bytes). blocks holds the pointers, so the
	// blocks stay allocated.
	blocks []memBlock
	saved  []uint64
	// words are the small blocks (smallBlockWords aligned words at most: a pointer's target, a
	// short slice; most of an object's blocks), kept word by word with the address of each: a
	// comparison reads them in one loop, without a block's own set-up (smallBlock). A word's
	// address keeps its block allocated, as blocks do.
	words []savedWord
	// stringMaps are the non-nil map[string]string the object reaches: where each is (its
	// pointer is in a block) and its entries when saved, keys and values in turn in
	// strs[from:to].
	stringMaps []savedStringMap
	strs       []string
	// opaque are the other maps and the interfaces, each with the copy's value at the same
	// place.
	opaque []opaquePair
	// verify is set while a Verified walks.
	verify bool
}

// samePlain reports whether the plain bytes of the values at p and q, of plan's type, are equal.
func samePlain(p, q unsafe.Pointer, plan *memPlan) bool {
	for _, r := range plan.plain {
		if !sameMemory(unsafe.Add(p, r.off), unsafe.Add(q, r.off), r.n) {
			return false
		}
	}
	return true
}

// savedWord is the aligned word at p and the value it held.
type savedWord struct {
	p unsafe.Pointer
	v uint64
}

// smallBlockWords is the size, in words, of the largest block kept word by word: a larger one
// costs less compared at once (sameMemory).
const smallBlockWords = 8

// smallBlock reports whether the n bytes at p are whole aligned words, at most smallBlockWords.
func smallBlock(p unsafe.Pointer, n uintptr) bool {
	return n <= smallBlockWords*8 && n%8 == 0 && uintptr(p)%8 == 0
}

// memBlock is n bytes of memory at p, saved from the byte at of the snapshot's saved words.
type memBlock struct {
	p     unsafe.Pointer
	n, at uintptr
}

type savedStringMap struct {
	at       unsafe.Pointer
	from, to int
}

type opaquePair struct {
	typ        reflect.Type
	live, copy unsafe.Pointer // where the value is, in the object and in its copy
}

// Of takes obj's snapshot, obj and cp being DeepEqual pointers to one struct type. It
// returns nil when obj is not a pointer or the two differ in shape (the check then keeps using
// DeepEqual).
func Of(obj, cp any) *Snapshot {
	return takeSnapshot(obj, cp, false)
}

// Verified is the first comparison of obj with its copy cp, and obj's snapshot, in one
// walk: it returns the snapshot when it finds the two DeepEqual, and nil when they differ or it
// cannot tell (a type that reaches floats or functions, pointers deeper than
// maxSnapshotDepth, values not pointers to one type): the check then asks reflect.DeepEqual,
// as it did for every first comparison (a tenth of the cost here). It compares what DeepEqual
// compares: the plain bytes of each struct, pointee and slice element, strings by their bytes,
// pointers and slices by nil-ness and length, then what they point to (equal at once when the
// very same), maps and interfaces by DeepEqual (a map[string]string by its entries); padding
// that differs only makes it unsure.
func Verified(obj, cp any) *Snapshot {
	return takeSnapshot(obj, cp, true)
}

func takeSnapshot(obj, cp any, verify bool) *Snapshot {
	lv, cv := reflect.ValueOf(obj), reflect.ValueOf(cp)
	if lv.Kind() != reflect.Pointer || lv.Type() != cv.Type() || lv.IsNil() || cv.IsNil() {
		return nil
	}
	plan := memPlanFor(lv.Type().Elem())
	if verify && plan.isInexact(lv.Type().Elem()) {
		return nil
	}
	room := func(part int) int { return int(plan.largest[part].Load()) }
	s := &Snapshot{
		blocks: make([]memBlock, 0, room(partBlocks)),
		saved:  make([]uint64, 0, room(partSaved)), stringMaps: make([]savedStringMap, 0, room(partStringMaps)),
		strs: make([]string, 0, room(partStrs)), opaque: make([]opaquePair, 0, room(partOpaque)),
		words: make([]savedWord, 0, room(partWords)),
	}
	live, c := lv.UnsafePointer(), cv.UnsafePointer()
	s.verify = verify
	if verify && !samePlain(live, c, plan) {
		return nil
	}
	s.block(live, plan.size)
	if !s.walk(live, c, plan, 0) {
		return nil
	}
	for part, n := range [snapshotParts]int{len(s.blocks), len(s.saved), len(s.stringMaps), len(s.strs), len(s.opaque), len(s.words)} {
		raiseTo(&plan.largest[part], int64(n))
	}
	return s
}

// raiseTo sets l to n if n is larger (runs of a sweep take snapshots at once).
func raiseTo(l *atomic.Int64, n int64) {
	for {
		old := l.Load()
		if n <= old || l.CompareAndSwap(old, n) {
			return
		}
	}
}

func (s *Snapshot) block(p unsafe.Pointer, n uintptr) {
	if n == 0 {
		return
	}
	if smallBlock(p, n) {
		for i := uintptr(0); i < n; i += 8 {
			w := unsafe.Add(p, i)
			s.words = append(s.words, savedWord{w, *(*uint64)(w)})
		}
		return
	}
	at := len(s.saved)
	s.blocks = append(s.blocks, memBlock{p, n, uintptr(at) * 8})
	s.saved = append(s.saved, make([]uint64, (n+7)/8)...)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&s.saved[at])), n), unsafe.Slice((*byte)(p), n))
}

// walk saves the memory the value at live reaches by plan; c is the same value in the copy. It
// reports false when the two differ in shape, and, verifying, when they differ at all (or it
// cannot tell).
func (s *Snapshot) walk(live, c unsafe.Pointer, plan *memPlan, depth int) bool {
	for i := range plan.deep {
		f := &plan.deep[i]
		lf, cf := unsafe.Add(live, f.off), unsafe.Add(c, f.off)
		switch f.kind {
		case memString:
			str, cstr := *(*string)(lf), *(*string)(cf)
			if s.verify && str != cstr {
				return false
			}
			if unsafe.StringData(str) == unsafe.StringData(cstr) {
				continue // the copy shares the bytes (see "Shared memory" above)
			}
			s.block(unsafe.Pointer(unsafe.StringData(str)), uintptr(len(str)))
		case memPointer:
			lp, cp := *(*unsafe.Pointer)(lf), *(*unsafe.Pointer)(cf)
			if lp == cp {
				continue
			}
			if lp == nil || cp == nil {
				return false
			}
			if depth >= maxSnapshotDepth {
				if s.verify {
					return false
				}
				s.opaque = append(s.opaque, opaquePair{typ: f.typ, live: lf, copy: cf})
				continue
			}
			if s.verify && !samePlain(lp, cp, f.elem) {
				return false
			}
			s.block(lp, f.elem.size)
			if !s.walk(lp, cp, f.elem, depth+1) {
				return false
			}
		case memSlice:
			lh, ch := (*sliceHeader)(lf), (*sliceHeader)(cf)
			if s.verify && (lh.data == nil) != (ch.data == nil) {
				return false // nil and empty differ for DeepEqual
			}
			if ch.len != lh.len {
				return false
			}
			if lh.len == 0 {
				continue
			}
			if lh.data == ch.data {
				continue
			}
			switch {
			case s.verify && len(f.elem.plain) == 1 && f.elem.plain[0] == byteRange{0, f.elem.size}:
				// Elements all plain bytes (a []byte, a []int32): compared at once.
				if !sameMemory(lh.data, ch.data, uintptr(lh.len)*f.elem.size) {
					return false
				}
			case s.verify:
				for j := range uintptr(lh.len) {
					if !samePlain(unsafe.Add(lh.data, j*f.elem.size), unsafe.Add(ch.data, j*f.elem.size), f.elem) {
						return false
					}
				}
			}
			s.block(lh.data, uintptr(lh.len)*f.elem.size)
			if len(f.elem.deep) == 0 {
				continue
			}
			for j := range uintptr(lh.len) {
				if !s.walk(unsafe.Add(lh.data, j*f.elem.size), unsafe.Add(ch.data, j*f.elem.size), f.elem, depth+1) {
					return false
				}
			}
		case memArray:
			if len(f.elem.deep) == 0 {
				continue // the elements' bytes are the enclosing block's
			}
			for j := range f.n {
				if !s.walk(unsafe.Add(lf, j*f.elem.size), unsafe.Add(cf, j*f.elem.size), f.elem, depth) {
					return false
				}
			}
		case memOpaque:
			if !s.opaqueField(f, lf, cf) {
				return false
			}
		}
	}
	return true
}

// opaqueField snapshots a field the plan does not walk into (a map, a channel, a func, an
// interface...): a map[string]string by its entries, anything else kept to compare whole. It
// reports false when verifying and the object differs from its copy there.
func (s *Snapshot) opaqueField(f *memField, lf, cf unsafe.Pointer) bool {
	if f.typ == stringMapType {
		// Its entries now are the copy's (the whole object was DeepEqual to it, or is
		// found so here).
		if s.verify && !stringMapsEqual(*(*map[string]string)(lf), *(*map[string]string)(cf)) {
			return false
		}
		if m := *(*map[string]string)(lf); m != nil {
			from := len(s.strs)
			for k, v := range m {
				s.strs = append(s.strs, k, v)
			}
			s.stringMaps = append(s.stringMaps, savedStringMap{at: lf, from: from, to: len(s.strs)})
		}
		return true
	}
	o := opaquePair{typ: f.typ, live: lf, copy: cf}
	if s.verify && !o.equal() {
		return false
	}
	if o.isNil() {
		// Nil in the object and so in its copy (the two are equal): the object's is in
		// the enclosing block, and the copy's never changes.
		return true
	}
	s.opaque = append(s.opaque, o)
	return true
}

// stringMapsEqual is reflect.DeepEqual of two map[string]string.
func stringMapsEqual(a, b map[string]string) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// sliceHeader is the layout of a Go slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// unchanged reports whether every block still holds its saved bytes and every map and interface
// is DeepEqual to the copy's.
func (s *Snapshot) Unchanged() bool {
	for _, w := range s.words {
		if *(*uint64)(w.p) != w.v {
			return false
		}
	}
	if len(s.saved) > 0 {
		saved := unsafe.Pointer(&s.saved[0])
		for _, b := range s.blocks {
			if !sameMemory(b.p, unsafe.Add(saved, b.at), b.n) {
				return false
			}
		}
	}
	for _, sm := range s.stringMaps {
		// The same number of entries, each saved key with its saved value: the same map.
		m := *(*map[string]string)(sm.at)
		if 2*len(m) != sm.to-sm.from {
			return false
		}
		for i := sm.from; i < sm.to; i += 2 {
			if v, ok := m[s.strs[i]]; !ok || v != s.strs[i+1] {
				return false
			}
		}
	}
	for _, o := range s.opaque {
		if !o.equal() {
			return false
		}
	}
	return true
}

var stringMapType = reflect.TypeFor[map[string]string]()

// sameMemory reports whether the n bytes at p and q are equal. A small block of aligned words
// (a pointer's target, a slice of a few words: most of a snapshot's blocks) is compared word by
// word in place, which costs a fraction of the call that compares a large one.
func sameMemory(p, q unsafe.Pointer, n uintptr) bool {
	if n > 64 || (uintptr(p)|uintptr(q))%8 != 0 {
		return unsafe.String((*byte)(p), n) == unsafe.String((*byte)(q), n)
	}
	i := uintptr(0)
	for ; i+8 <= n; i += 8 {
		if *(*uint64)(unsafe.Add(p, i)) != *(*uint64)(unsafe.Add(q, i)) {
			return false
		}
	}
	for ; i < n; i++ {
		if *(*byte)(unsafe.Add(p, i)) != *(*byte)(unsafe.Add(q, i)) {
			return false
		}
	}
	return true
}

// isNil reports whether the live value is nil (a map or a pointer: one word; an interface:
// both).
func (o opaquePair) isNil() bool {
	if o.typ.Kind() == reflect.Interface {
		return *(*[2]unsafe.Pointer)(o.live) == [2]unsafe.Pointer{}
	}
	return *(*unsafe.Pointer)(o.live) == nil
}

func (o opaquePair) equal() bool {
	// Two nil maps, or nil interfaces, are equal; one map is equal to itself. (Both words of an
	// interface are its bytes; a map value is one pointer.)
	switch o.typ.Kind() {
	case reflect.Map:
		l, c := *(*unsafe.Pointer)(o.live), *(*unsafe.Pointer)(o.copy)
		if l == c {
			return true
		}
		if l == nil || c == nil {
			return false
		}
	case reflect.Interface:
		if *(*[2]unsafe.Pointer)(o.live) == ([2]unsafe.Pointer{}) && *(*[2]unsafe.Pointer)(o.copy) == ([2]unsafe.Pointer{}) {
			return true
		}
	}
	return reflect.DeepEqual(reflect.NewAt(o.typ, o.live).Elem().Interface(), reflect.NewAt(o.typ, o.copy).Elem().Interface())
}
