package fakeapi

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/informersim/informersim/internal/jsonvalue"
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
		if !ok || !jsonvalue.Equal(av, bv) {
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
		m := make(map[string]any, len(md))
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
		if cv, ok := cur.Object[k]; ok && jsonvalue.Equal(nv, cv) {
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
		if cv, ok := cmd[k]; ok && jsonvalue.Equal(nv, cv) {
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
