package fakeapi

import (
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// This file holds the helpers behind the ownership rule of stored objects (see the package
// documentation, "Ownership of objects"): values the server commits are immutable and may be
// shared between versions, log entries and watch queues; only copies leave the package.

// jsonEqual reports whether two JSON-like values are equal, with exactly the result
// reflect.DeepEqual gives for them, but without reflection for the types normalize produces
// (nil, string, bool, int64, float64, map[string]any, []any). Like DeepEqual it treats a nil map
// or slice as different from an empty one, compares floats with == (NaN differs from itself)
// and takes one map or slice as equal to itself. Any other type falls back to DeepEqual.
func jsonEqual(a, b any) bool {
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
		return ok && mapsEqual(x, y)
	case []any:
		y, ok := b.([]any)
		if !ok || (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		if len(x) > 0 && &x[0] == &y[0] {
			return true
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

func mapsEqual(x, y map[string]any) bool {
	if (x == nil) != (y == nil) || len(x) != len(y) {
		return false
	}
	if reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer() {
		return true
	}
	for k, xv := range x {
		yv, ok := y[k]
		if !ok || !jsonEqual(xv, yv) {
			return false
		}
	}
	return true
}

// isSpecKey reports whether a top-level field is part of what bumps generation: everything but
// metadata, status and the type meta.
func isSpecKey(k string) bool {
	switch k {
	case "metadata", "status", "apiVersion", "kind":
		return false
	}
	return true
}

// specEqual reports whether a and b have equal spec fields (isSpecKey), as comparing the two
// filtered maps with reflect.DeepEqual would, without building them.
func specEqual(a, b *unstructured.Unstructured) bool {
	na, nb := 0, 0
	for k := range b.Object {
		if isSpecKey(k) {
			nb++
		}
	}
	for k, av := range a.Object {
		if !isSpecKey(k) {
			continue
		}
		na++
		bv, ok := b.Object[k]
		if !ok || !jsonEqual(av, bv) {
			return false
		}
	}
	return na == nb
}

// withOwnMeta returns a copy of the stored object o whose top-level map and metadata map are new
// and whose other values are shared with o (copy on write): the caller may set top-level fields
// and direct metadata fields of the copy, but must not change anything nested deeper, which o
// still owns. The result is as private as o: it must not leave the package without DeepCopy.
func withOwnMeta(o *unstructured.Unstructured) *unstructured.Unstructured {
	top := make(map[string]any, len(o.Object))
	for k, v := range o.Object {
		top[k] = v
	}
	if md, ok := o.Object["metadata"].(map[string]any); ok {
		m := make(map[string]any, len(md)+1)
		for k, v := range md {
			m[k] = v
		}
		top["metadata"] = m
	}
	return &unstructured.Unstructured{Object: top}
}

// shareUnchanged makes next, a private object about to be committed in place of the stored cur,
// reuse cur's values wherever they are equal: top-level fields other than metadata, and the
// nested values of metadata (labels, annotations, finalizers, owner references). Versions of one
// key then share what a write did not change, which keeps the history small. next's top-level
// and metadata maps stay its own, so committing may still set its resourceVersion.
func shareUnchanged(next, cur *unstructured.Unstructured) {
	for k, nv := range next.Object {
		if k == "metadata" || !isComposite(nv) {
			continue
		}
		if cv, ok := cur.Object[k]; ok && jsonEqual(nv, cv) {
			next.Object[k] = cv
		}
	}
	nmd, _ := next.Object["metadata"].(map[string]any)
	cmd, _ := cur.Object["metadata"].(map[string]any)
	if nmd == nil || cmd == nil {
		return
	}
	for k, nv := range nmd {
		if !isComposite(nv) {
			continue
		}
		if cv, ok := cmd[k]; ok && jsonEqual(nv, cv) {
			nmd[k] = cv
		}
	}
}

func isComposite(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}
