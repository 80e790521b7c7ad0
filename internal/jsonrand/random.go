// Package jsonrand draws random JSON-like values for tests: the values callers hand the fake
// apiserver, with the corner cases its normalising, copying and comparing must keep apart.
package jsonrand

import (
	"math"
	"math/rand/v2"
)

// Random draws a small JSON-like value with the corner cases reflect.DeepEqual distinguishes:
// nil and empty maps and slices, NaN, int64 versus float64 of the same number, and other types.
func Random(r *rand.Rand, depth int) any {
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
			m[[]string{"x", "y", "z"}[r.IntN(3)]] = Random(r, depth+1)
		}
		return m
	default:
		l := []any{}
		for i := r.IntN(3); i > 0; i-- {
			l = append(l, Random(r, depth+1))
		}
		return l
	}
}
