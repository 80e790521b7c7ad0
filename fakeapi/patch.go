package fakeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// decodeJSON decodes data keeping integers exact (json.Number), then normalises it.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return normalize(v, 0)
}

// mergePatch applies an RFC 7386 JSON merge patch: objects merge recursively, null deletes,
// anything else replaces (fakeapi.md §5.4).
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = mergePatch(t[k], v)
	}
	return t
}

// patchError is a patch that is well-formed but cannot be applied (a failed test, a missing
// path); the server answers it with 422.
type patchError struct{ msg string }

func (e *patchError) Error() string { return e.msg }

// Limits of a JSON patch, as kube-apiserver has them: at most maxJSONPatchOperations operations,
// and copies bounded in total size, since repeated copies of the whole document grow it
// exponentially.
const (
	maxJSONPatchOperations = 10000
	maxPatchCopyNodes      = 100000
)

// countNodes counts the JSON values in v, stopping once the count exceeds limit.
func countNodes(v any, limit int) int {
	n := 1
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if n > limit {
				break
			}
			n += countNodes(e, limit-n)
		}
	case []any:
		for _, e := range x {
			if n > limit {
				break
			}
			n += countNodes(e, limit-n)
		}
	}
	return n
}

// jsonPatch applies an RFC 6902 JSON patch to doc (already a private copy).
func jsonPatch(doc any, patch any) (any, error) {
	ops, ok := patch.([]any)
	if !ok {
		return nil, fmt.Errorf("a JSON patch must be a list of operations")
	}
	if len(ops) > maxJSONPatchOperations {
		return nil, &patchError{fmt.Sprintf("the allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, len(ops))}
	}
	copied := 0
	for i, o := range ops {
		op, ok := o.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("operation %d is not an object", i)
		}
		kind, _ := op["op"].(string)
		path, ok := op["path"].(string)
		if !ok {
			return nil, fmt.Errorf("operation %d has no path", i)
		}
		var err error
		switch kind {
		case "add":
			v, has := op["value"]
			if !has {
				return nil, fmt.Errorf("operation %d (add) has no value", i)
			}
			doc, err = pointerSet(doc, path, v, true)
		case "replace":
			v, has := op["value"]
			if !has {
				return nil, fmt.Errorf("operation %d (replace) has no value", i)
			}
			if _, err = pointerGet(doc, path); err == nil {
				doc, err = pointerSet(doc, path, v, false)
			}
		case "remove":
			doc, _, err = pointerRemove(doc, path)
		case "test":
			var got any
			if got, err = pointerGet(doc, path); err == nil && !reflect.DeepEqual(got, op["value"]) {
				err = &patchError{fmt.Sprintf("testing value %s failed", path)}
			}
		case "move", "copy":
			from, ok := op["from"].(string)
			if !ok {
				return nil, fmt.Errorf("operation %d (%s) has no from", i, kind)
			}
			var v any
			if kind == "move" {
				doc, v, err = pointerRemove(doc, from)
			} else if v, err = pointerGet(doc, from); err == nil {
				copied += countNodes(v, maxPatchCopyNodes+1)
				if copied > maxPatchCopyNodes {
					return nil, &patchError{"copy operations exceed the accumulated copy size limit"}
				}
				v, err = normalize(v, 0) // a deep copy, so the two places do not alias
			}
			if err == nil {
				doc, err = pointerSet(doc, path, v, true)
			}
		default:
			return nil, fmt.Errorf("operation %d has unknown op %q", i, kind)
		}
		if err != nil {
			return nil, err
		}
	}
	return doc, nil
}

func splitPointer(path string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("invalid JSON pointer %q", path)
	}
	parts := strings.Split(path[1:], "/")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
	}
	return parts, nil
}

func pointerGet(doc any, path string) (any, error) {
	parts, err := splitPointer(path)
	if err != nil {
		return nil, err
	}
	cur := doc
	for _, p := range parts {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[p]
			if !ok {
				return nil, &patchError{fmt.Sprintf("path %s not found", path)}
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(c) {
				return nil, &patchError{fmt.Sprintf("path %s not found", path)}
			}
			cur = c[i]
		default:
			return nil, &patchError{fmt.Sprintf("path %s not found", path)}
		}
	}
	return cur, nil
}

// pointerSet sets (or, with insert, adds: arrays shift, "-" appends) the value at path.
func pointerSet(doc any, path string, v any, insert bool) (any, error) {
	parts, err := splitPointer(path)
	if err != nil {
		return nil, err
	}
	if len(parts) == 0 {
		return v, nil
	}
	parent, err := pointerGet(doc, "/"+strings.Join(escape(parts[:len(parts)-1]), "/"))
	if len(parts) == 1 {
		parent, err = doc, nil
	}
	if err != nil {
		return nil, err
	}
	last := parts[len(parts)-1]
	switch c := parent.(type) {
	case map[string]any:
		c[last] = v
		return doc, nil
	case []any:
		var i int
		if last == "-" && insert {
			i = len(c)
		} else if i, err = strconv.Atoi(last); err != nil || i < 0 || i > len(c) || (!insert && i == len(c)) {
			return nil, &patchError{fmt.Sprintf("index %s out of range", path)}
		}
		var nc []any
		if insert {
			nc = append(append(append([]any{}, c[:i]...), v), c[i:]...)
		} else {
			c[i] = v
			return doc, nil
		}
		return pointerSet(doc, "/"+strings.Join(escape(parts[:len(parts)-1]), "/"), nc, false)
	}
	return nil, &patchError{fmt.Sprintf("path %s not found", path)}
}

func pointerRemove(doc any, path string) (any, any, error) {
	parts, err := splitPointer(path)
	if err != nil {
		return nil, nil, err
	}
	if len(parts) == 0 {
		return nil, nil, &patchError{"cannot remove the whole document"}
	}
	parentPath := "/" + strings.Join(escape(parts[:len(parts)-1]), "/")
	var parent any = doc
	if len(parts) > 1 {
		if parent, err = pointerGet(doc, parentPath); err != nil {
			return nil, nil, err
		}
	}
	last := parts[len(parts)-1]
	switch c := parent.(type) {
	case map[string]any:
		v, ok := c[last]
		if !ok {
			return nil, nil, &patchError{fmt.Sprintf("path %s not found", path)}
		}
		delete(c, last)
		return doc, v, nil
	case []any:
		i, err := strconv.Atoi(last)
		if err != nil || i < 0 || i >= len(c) {
			return nil, nil, &patchError{fmt.Sprintf("index %s out of range", path)}
		}
		v := c[i]
		nc := append(append([]any{}, c[:i]...), c[i+1:]...)
		if len(parts) == 1 {
			return nc, v, nil
		}
		d, err := pointerSet(doc, parentPath, nc, false)
		return d, v, err
	}
	return nil, nil, &patchError{fmt.Sprintf("path %s not found", path)}
}

func escape(parts []string) []string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~", "~0"), "/", "~1")
	}
	return out
}
