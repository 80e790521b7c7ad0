package deepequal

import (
	"reflect"
	"sync"
	"unsafe"

	"github.com/informersim/informersim/internal/fastpath"
)

// Equal reports whether a and b are deeply equal: reflect.DeepEqual(a, b).
func Equal(a, b any) bool {
	if !fastpath.Use(fastpath.TypedEqual) {
		return reflect.DeepEqual(a, b) // the plain build: no plans
	}
	if a == nil || b == nil {
		return a == b
	}
	ta := reflect.TypeOf(a)
	if ta != reflect.TypeOf(b) {
		return false
	}
	if ta.Kind() != reflect.Pointer {
		return reflect.DeepEqual(a, b)
	}
	eq := planOf(ta.Elem())
	if eq == nil {
		return reflect.DeepEqual(a, b)
	}
	// As the plan of a pointer does, with the pointers the interfaces hold.
	pa, pb := reflect.ValueOf(a).UnsafePointer(), reflect.ValueOf(b).UnsafePointer()
	switch {
	case pa == pb:
		return true
	case pa == nil || pb == nil:
		return false
	}
	equal, decided := eq(pa, pb, 1)
	if !decided {
		return reflect.DeepEqual(a, b)
	}
	return equal
}

// eqFunc compares the values of one type at p and q. decided is false when the walk went
// deeper than maxDepth (a cycle, or a structure too deep to be an object): the caller then asks
// reflect.DeepEqual, which stops in cycles.
type eqFunc func(p, q unsafe.Pointer, depth int) (equal, decided bool)

// maxDepth bounds the pointers, slices and maps a walk descends through.
const maxDepth = 100

var (
	mu    sync.Mutex
	plans sync.Map // reflect.Type -> eqFunc, nil for a type the plans do not cover
)

// planOf is t's comparison, or nil when t can hold a value the plans do not cover.
func planOf(t reflect.Type) eqFunc {
	if f, ok := plans.Load(t); ok {
		return f.(eqFunc)
	}
	mu.Lock()
	defer mu.Unlock()
	b := &builder{cells: map[reflect.Type]*eqFunc{}}
	f := b.build(t)
	if b.unsupported {
		f = nil
	}
	plans.Store(t, f)
	return f
}

// builder makes the plans of a type and every type it reaches. cells holds each type's plan as
// it is being built, so that a type reaching itself (through a pointer, slice or map) calls its
// own plan once built.
type builder struct {
	cells       map[reflect.Type]*eqFunc
	unsupported bool
}

func (b *builder) build(t reflect.Type) eqFunc {
	if cell, ok := b.cells[t]; ok {
		return func(p, q unsafe.Pointer, depth int) (bool, bool) { return (*cell)(p, q, depth) }
	}
	cell := new(eqFunc)
	b.cells[t] = cell
	*cell = b.make(t)
	return *cell
}

func (b *builder) make(t reflect.Type) eqFunc {
	switch t.Kind() {
	case reflect.Bool, reflect.Int8, reflect.Uint8:
		return func(p, q unsafe.Pointer, _ int) (bool, bool) { return *(*uint8)(p) == *(*uint8)(q), true }
	case reflect.Int16, reflect.Uint16:
		return func(p, q unsafe.Pointer, _ int) (bool, bool) { return *(*uint16)(p) == *(*uint16)(q), true }
	case reflect.Int32, reflect.Uint32:
		return func(p, q unsafe.Pointer, _ int) (bool, bool) { return *(*uint32)(p) == *(*uint32)(q), true }
	case reflect.Int, reflect.Uint, reflect.Int64, reflect.Uint64, reflect.Uintptr:
		if t.Size() == 8 {
			return func(p, q unsafe.Pointer, _ int) (bool, bool) { return *(*uint64)(p) == *(*uint64)(q), true }
		}
		return func(p, q unsafe.Pointer, _ int) (bool, bool) { return *(*uint32)(p) == *(*uint32)(q), true }
	case reflect.Float32: // as ==: NaN differs from itself, -0 equals 0
		return func(p, q unsafe.Pointer, _ int) (bool, bool) { return *(*float32)(p) == *(*float32)(q), true }
	case reflect.Float64:
		return func(p, q unsafe.Pointer, _ int) (bool, bool) { return *(*float64)(p) == *(*float64)(q), true }
	case reflect.Complex64:
		return func(p, q unsafe.Pointer, _ int) (bool, bool) { return *(*complex64)(p) == *(*complex64)(q), true }
	case reflect.Complex128:
		return func(p, q unsafe.Pointer, _ int) (bool, bool) { return *(*complex128)(p) == *(*complex128)(q), true }
	case reflect.String:
		return func(p, q unsafe.Pointer, _ int) (bool, bool) { return *(*string)(p) == *(*string)(q), true }
	case reflect.Chan, reflect.UnsafePointer: // the same channel, the same address
		return func(p, q unsafe.Pointer, _ int) (bool, bool) {
			return *(*unsafe.Pointer)(p) == *(*unsafe.Pointer)(q), true
		}
	case reflect.Func: // equal only when both are nil
		return func(p, q unsafe.Pointer, _ int) (bool, bool) {
			return *(*unsafe.Pointer)(p) == nil && *(*unsafe.Pointer)(q) == nil, true
		}
	case reflect.Pointer:
		return b.pointer(t)
	case reflect.Slice:
		return b.slice(t)
	case reflect.Array:
		return b.array(t)
	case reflect.Map:
		return b.mapOf(t)
	case reflect.Struct:
		return b.structOf(t)
	}
	// An interface: its dynamic type decides the comparison.
	b.unsupported = true
	return nil
}

func (b *builder) pointer(t reflect.Type) eqFunc {
	elem := b.build(t.Elem())
	return func(p, q unsafe.Pointer, depth int) (bool, bool) {
		x, y := *(*unsafe.Pointer)(p), *(*unsafe.Pointer)(q)
		switch {
		case x == y:
			return true, true
		case x == nil || y == nil:
			return false, true
		case depth >= maxDepth:
			return false, false
		}
		return elem(x, y, depth+1)
	}
}

// sliceHeader is a slice's representation.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

func (b *builder) slice(t reflect.Type) eqFunc {
	elem := b.build(t.Elem())
	size := t.Elem().Size()
	return func(p, q unsafe.Pointer, depth int) (bool, bool) {
		x, y := (*sliceHeader)(p), (*sliceHeader)(q)
		switch {
		case (x.data == nil) != (y.data == nil) || x.len != y.len:
			return false, true
		case x.data == y.data:
			return true, true
		case depth >= maxDepth:
			return false, false
		}
		for i := range x.len {
			off := uintptr(i) * size
			if equal, decided := elem(unsafe.Add(x.data, off), unsafe.Add(y.data, off), depth+1); !equal || !decided {
				return equal, decided
			}
		}
		return true, true
	}
}

func (b *builder) array(t reflect.Type) eqFunc {
	elem := b.build(t.Elem())
	size, n := t.Elem().Size(), t.Len()
	return func(p, q unsafe.Pointer, depth int) (bool, bool) {
		for i := range n {
			off := uintptr(i) * size
			if equal, decided := elem(unsafe.Add(p, off), unsafe.Add(q, off), depth); !equal || !decided {
				return equal, decided
			}
		}
		return true, true
	}
}

func (b *builder) mapOf(t reflect.Type) eqFunc {
	if t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.String && t.Key().Size() == 16 && t.Elem().Size() == 16 {
		// Labels, annotations, selectors: map[string]string, or of named string types, which
		// share its representation.
		return func(p, q unsafe.Pointer, _ int) (bool, bool) {
			x, y := *(*map[string]string)(p), *(*map[string]string)(q)
			if (x == nil) != (y == nil) || len(x) != len(y) {
				return false, true
			}
			if *(*unsafe.Pointer)(p) == *(*unsafe.Pointer)(q) {
				return true, true
			}
			for k, v := range x {
				if w, ok := y[k]; !ok || v != w {
					return false, true
				}
			}
			return true, true
		}
	}
	b.build(t.Key())
	elem := b.build(t.Elem())
	return func(p, q unsafe.Pointer, depth int) (bool, bool) {
		x, y := reflect.NewAt(t, p).Elem(), reflect.NewAt(t, q).Elem()
		switch {
		case x.IsNil() != y.IsNil() || x.Len() != y.Len():
			return false, true
		case x.UnsafePointer() == y.UnsafePointer():
			return true, true
		case depth >= maxDepth:
			return false, false
		}
		// The values of a map cannot be addressed: each pair is copied into these to be compared.
		vx, vy := reflect.New(t.Elem()).Elem(), reflect.New(t.Elem()).Elem()
		for it := x.MapRange(); it.Next(); {
			w := y.MapIndex(it.Key())
			if !w.IsValid() {
				return false, true
			}
			vx.Set(it.Value())
			vy.Set(w)
			if equal, decided := elem(vx.Addr().UnsafePointer(), vy.Addr().UnsafePointer(), depth+1); !equal || !decided {
				return equal, decided
			}
		}
		return true, true
	}
}

func (b *builder) structOf(t reflect.Type) eqFunc {
	type field struct {
		offset uintptr
		eq     eqFunc
	}
	var fields []field
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type.Size() == 0 {
			continue // nothing to compare: reflect.DeepEqual finds it equal
		}
		fields = append(fields, field{f.Offset, b.build(f.Type)})
	}
	return func(p, q unsafe.Pointer, depth int) (bool, bool) {
		for _, f := range fields {
			if equal, decided := f.eq(unsafe.Add(p, f.offset), unsafe.Add(q, f.offset), depth); !equal || !decided {
				return equal, decided
			}
		}
		return true, true
	}
}
