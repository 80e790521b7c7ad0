// Package jsonvalue compares JSON-like values (the content of unstructured objects) exactly as
// reflect.DeepEqual does, without reflection or allocation for the types unstructured objects
// hold. DeepEqual allocates for every map entry it visits (reflect's MapIndex copies each
// interface value), which made object comparisons a large share of the fake apiserver's writes
// and of the world's convergence checks. A plain build (internal/fastpath) asks DeepEqual.
package jsonvalue

import (
	"reflect"

	"github.com/informersim/informersim/internal/fastpath"
)

// Equal reports whether two JSON-like values are equal, with exactly the result
// reflect.DeepEqual gives for them, but without reflection for the types unstructured objects
// hold (nil, string, bool, int64, float64, map[string]any, []any). Like DeepEqual it treats a
// nil map or slice as different from an empty one, compares floats with == (NaN differs from
// itself) and takes one map or slice as equal to itself. Any other type falls back to DeepEqual.
func Equal(a, b any) bool {
	if !fastpath.Use(fastpath.JSONValueEqual) {
		return reflect.DeepEqual(a, b)
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && MapsEqual(x, y)
	case []any:
		y, ok := b.([]any)
		if !ok || (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		if len(x) > 0 && &x[0] == &y[0] {
			return true
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// MapsEqual is Equal for two maps, such as the Object fields of two unstructured objects.
func MapsEqual(x, y map[string]any) bool {
	if !fastpath.Use(fastpath.JSONValueEqual) {
		return reflect.DeepEqual(x, y)
	}
	if (x == nil) != (y == nil) || len(x) != len(y) {
		return false
	}
	if reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer() {
		return true
	}
	for k, xv := range x {
		yv, ok := y[k]
		if !ok || !Equal(xv, yv) {
			return false
		}
	}
	return true
}
