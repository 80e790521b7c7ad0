package fakeapi

import (
	"maps"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// This file holds the helpers behind the ownership rule of stored objects (see the package
// documentation, "Ownership of objects"): values the server commits are immutable and may be
// shared between versions, log entries and watch queues; only copies leave the package.

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
		if !ok || !reflect.DeepEqual(av, bv) {
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
	top := maps.Clone(o.Object)
	if md, ok := o.Object["metadata"].(map[string]any); ok {
		setField(top, "metadata", maps.Clone(md))
	}
	return &unstructured.Unstructured{Object: top}
}

// shareUnchanged makes next, a private object about to be committed in place of the stored cur,
// reuse cur's values wherever they are equal: top-level fields other than metadata, and the
// nested values of metadata (labels, annotations, finalizers, owner references). Versions of one
// key then share what a write did not change, which keeps the history small. next's top-level
// and metadata maps stay its own, so committing may still set its resourceVersion.
func shareUnchanged(next, cur *unstructured.Unstructured) {
	shareEqualValues(next.Object, cur.Object, "metadata")
	nmd, _ := next.Object["metadata"].(map[string]any)
	cmd, _ := cur.Object["metadata"].(map[string]any)
	if nmd == nil || cmd == nil {
		return
	}
	shareEqualValues(nmd, cmd, "")
}

// shareEqualValues replaces each map or list value of the private map m (except at key skip)
// by the value old holds at the same key when the two are equal. Values that input already
// shared are left alone, so that the common case writes nothing (a write into a full small map
// would grow it; see setField). The keys to change are gathered first: the map is not written
// while it is iterated.
func shareEqualValues(m, old map[string]any, skip string) {
	var buf [smallMapEntries]string
	keys := buf[:0]
	for k, v := range m {
		if k == skip || !isComposite(v) {
			continue
		}
		if ov, ok := old[k]; ok && !sameComposite(v, ov) && reflect.DeepEqual(v, ov) {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		setField(m, k, old[k])
	}
}

// sameComposite reports whether a and b are the very same map or list (not merely equal ones).
func sameComposite(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && x != nil && y != nil && reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer()
	case []any:
		y, ok := b.([]any)
		return ok && len(x) > 0 && len(x) == len(y) && &x[0] == &y[0]
	}
	return false
}

// smallMapEntries is the number of entries a Go map keeps in its small form, a single group of
// slots (the runtime's internal/runtime/maps: eight slots a group). The runtime (swiss tables, Go 1.24 and later) turns a small map that holds that many
// entries into a full table on any assignment, even one to a key already present: about 650
// bytes and three allocations more, kept for as long as the map lives. A pod's metadata has
// eight fields, so every write of a pod used to pay it once per field it set.
const smallMapEntries = 8

// setField sets m[k] = v for a map the server may write (see "Ownership of objects"). Deleting k
// first leaves a full small map room for the assignment, so it stays small when k was there;
// the result is the same map content either way.
func setField(m map[string]any, k string, v any) {
	if len(m) == smallMapEntries {
		delete(m, k)
	}
	m[k] = v
}

// setMeta sets metadata.<k> = v in the private object u, creating metadata if it is absent, as
// unstructured.SetNestedField would, without copying v (values are immutable once normalised)
// and through setField. u's metadata, if present, is a map (input checks it).
func setMeta(u *unstructured.Unstructured, k string, v any) {
	md, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		md = make(map[string]any, 1)
		setField(u.Object, "metadata", md)
	}
	setField(md, k, v)
}

// removeMeta deletes metadata.<k> from the private object u.
func removeMeta(u *unstructured.Unstructured, k string) {
	if md, ok := u.Object["metadata"].(map[string]any); ok {
		delete(md, k)
	}
}

// setMetaString is setMeta for a string field that the unstructured setters (SetUID,
// SetResourceVersion, SetName, SetNamespace) remove when empty.
func setMetaString(u *unstructured.Unstructured, k, v string) {
	if v == "" {
		removeMeta(u, k)
		return
	}
	setMeta(u, k, v)
}

// setGeneration is u.SetGeneration(g) through setMeta: zero removes the field.
func setGeneration(u *unstructured.Unstructured, g int64) {
	if g == 0 {
		removeMeta(u, "generation")
		return
	}
	setMeta(u, "generation", g)
}

// setFinalizers is u.SetFinalizers(f) through setMeta: nil removes the field, anything else is
// stored as a new list of strings.
func setFinalizers(u *unstructured.Unstructured, f []string) {
	if f == nil {
		removeMeta(u, "finalizers")
		return
	}
	l := make([]any, len(f))
	for i, s := range f {
		l[i] = s
	}
	setMeta(u, "finalizers", l)
}

// copyMeta sets each metadata field of dst to the value src holds (shared: stored values are
// immutable), or removes it where src has none. A field that already holds the same string or
// integer is left alone (the usual case: a client sends back the uid and timestamps it read).
func copyMeta(dst, src *unstructured.Unstructured, fields ...string) {
	smd, _ := src.Object["metadata"].(map[string]any)
	dmd, _ := dst.Object["metadata"].(map[string]any)
	for _, f := range fields {
		v, ok := smd[f]
		if !ok {
			removeMeta(dst, f)
			continue
		}
		if dv, has := dmd[f]; has && sameScalar(dv, v) {
			continue
		}
		setMeta(dst, f, v)
	}
}

// sameScalar reports whether a and b are equal strings or equal int64s (the types of the system
// metadata fields), without comparing interfaces, which panics on maps and lists.
func sameScalar(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	}
	return false
}

func isComposite(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// copyObject returns the caller's own deep copy of an object the server holds, the copy every
// result, list item and watch event is (see "Ownership of objects").
func copyObject(u *unstructured.Unstructured) *unstructured.Unstructured {
	if u == nil {
		return nil
	}
	return u.DeepCopy()
}
