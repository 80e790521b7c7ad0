package jsonvalue

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// randJSON draws a small JSON-like value with the corner cases reflect.DeepEqual distinguishes:
// nil and empty maps and slices, NaN, int64 versus float64 of the same number, and other types.
func randJSON(r *rand.Rand, depth int) any {
	k := r.IntN(12)
	if depth > 2 && k >= 8 {
		k = r.IntN(8)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return []string{"a", "b"}[r.IntN(2)]
	case 2:
		return r.IntN(2) == 0
	case 3:
		return int64(r.IntN(2))
	case 4:
		return []float64{0, 1, math.NaN()}[r.IntN(3)]
	case 5:
		return int32(r.IntN(2)) // not produced by normalize: the DeepEqual fallback
	case 6:
		return map[string]any(nil)
	case 7:
		return []any(nil)
	case 8, 9:
		m := map[string]any{}
		for i := r.IntN(3); i > 0; i-- {
			m[[]string{"x", "y", "z"}[r.IntN(3)]] = randJSON(r, depth+1)
		}
		return m
	default:
		l := []any{}
		for i := r.IntN(3); i > 0; i-- {
			l = append(l, randJSON(r, depth+1))
		}
		return l
	}
}

// TestEqualIsDeepEqual checks Equal against reflect.DeepEqual on random pairs, on a value
// against itself (the shared-pointer shortcut, NaN included) and on shared subtrees.
func TestEqualIsDeepEqual(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 200000; i++ {
		a, b := randJSON(r, 0), randJSON(r, 0)
		if i%3 == 0 {
			b = a
		}
		if got, want := Equal(a, b), reflect.DeepEqual(a, b); got != want {
			t.Fatalf("Equal(%#v, %#v) = %v, DeepEqual = %v", a, b, got, want)
		}
		wa := map[string]any{"spec": a, "metadata": map[string]any{"name": "n"}}
		wb := map[string]any{"spec": b, "metadata": map[string]any{"name": "n"}}
		if got, want := MapsEqual(wa, wb), reflect.DeepEqual(wa, wb); got != want {
			t.Fatalf("MapsEqual(%#v, %#v) = %v, DeepEqual = %v", wa, wb, got, want)
		}
	}
}
