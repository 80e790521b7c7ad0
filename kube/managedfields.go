package kube

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/informersim/informersim/internal/fastpath"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The managedFields of an object cross between the Go types and fakeapi's unstructured form on
// every protobuf write: its body's object is converted to maps, its answer back to the Go type.
// apimachinery's converter takes each entry by reflection and each fieldsV1 through a JSON round
// trip (a marshal and encoding/json's decoder), so that a ConfigMap's one entry cost more than
// the rest of the object: 34 of its 61 allocations to maps, 25 of 45 back. The functions below
// convert the entries to maps in the forms writes produce directly, to exactly what the
// converter gives (TestManagedFieldsConvertAsTheConverter), and encode a fieldsV1's maps back as
// encoding/json does for FromUnstructured (fromunstructured.go); any other form is left to the
// converter.

// toUnstructuredObject is runtime.DefaultUnstructuredConverter.ToUnstructured(obj): by its Go
// type's plan (tounstructured.go) when it can, else with obj's managedFields converted by
// managedFieldsToUnstructured when it can. obj may be changed on
// the way but is as it was when this returns.
func toUnstructuredObject(obj runtime.Object) (map[string]any, error) {
	if !fastpath.Use(fastpath.ConversionPlans) { // a plain build: the converter only
		return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	}
	if m, ok := toUnstructuredByPlan(obj); ok {
		return m, nil
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	}
	entries := acc.GetManagedFields()
	items, ok := managedFieldsToUnstructured(entries)
	if !ok {
		return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	}
	acc.SetManagedFields(nil)
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	acc.SetManagedFields(entries)
	if err != nil {
		return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	}
	md, isMap := m["metadata"].(map[string]any)
	if !isMap {
		return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	}
	md["managedFields"] = items
	return m, nil
}

// managedFieldsToUnstructured is what the converter makes of a non-empty list of entries: one
// map per entry holding its non-empty strings, its time as RFC 3339 text in UTC, its fieldsV1
// decoded from JSON into nested maps. ok is false for an empty list (the converter omits it) and
// for entries with a zero time or a fieldsV1 that is not a JSON object of objects
// (parseFieldsV1).
func managedFieldsToUnstructured(entries []metav1.ManagedFieldsEntry) (items []any, ok bool) {
	return managedFieldsToUnstructuredWith(entries, parseFieldsV1)
}

// managedFieldsToUnstructuredWith is managedFieldsToUnstructured with parse, parseFieldsV1 or
// one that gives what it gives, decoding each fieldsV1.
func managedFieldsToUnstructuredWith(entries []metav1.ManagedFieldsEntry, parse func([]byte) (map[string]any, bool)) (items []any, ok bool) {
	if len(entries) == 0 {
		return nil, false
	}
	items = make([]any, len(entries))
	for i := range entries {
		e := &entries[i]
		m := make(map[string]any, 7)
		for _, f := range [...]struct{ name, v string }{
			{"manager", e.Manager}, {"operation", string(e.Operation)}, {"apiVersion", e.APIVersion},
			{"fieldsType", e.FieldsType}, {"subresource", e.Subresource},
		} {
			if f.v != "" {
				m[f.name] = f.v
			}
		}
		if e.Time != nil {
			if e.Time.IsZero() {
				return nil, false
			}
			m["time"] = e.Time.UTC().Format(time.RFC3339)
		}
		if e.FieldsV1 != nil {
			fields, ok := parse(e.FieldsV1.Raw)
			if !ok {
				return nil, false
			}
			m["fieldsV1"] = fields
		}
		items[i] = m
	}
	return items, true
}

// parseFieldsV1 decodes data, a JSON object whose values are all such objects (every fieldsV1
// a field manager writes), as encoding/json decodes it into a map[string]any: the last of
// duplicate keys wins; a key with an escape, a control character or a byte past ASCII is decoded
// by encoding/json itself. ok is false for anything else: another kind of value, invalid JSON,
// space before the object or anything but space after it, nesting past maxFieldsDepth.
func parseFieldsV1(data []byte) (map[string]any, bool) {
	p := fieldsParser{data: data} // no space before: the converter takes that for a number
	m, ok := p.object(0)
	if !ok {
		return nil, false
	}
	p.space()
	return m, p.off == len(p.data)
}

// maxFieldsDepth bounds the nesting parseFieldsV1 takes (a field path is far shorter).
const maxFieldsDepth = 100

type fieldsParser struct {
	data []byte
	off  int
}

func (p *fieldsParser) space() {
	for p.off < len(p.data) {
		switch p.data[p.off] {
		case ' ', '\t', '\n', '\r':
			p.off++
		default:
			return
		}
	}
}

// object reads an object at p.off, whose values are objects.
func (p *fieldsParser) object(depth int) (map[string]any, bool) {
	if depth > maxFieldsDepth || p.off >= len(p.data) || p.data[p.off] != '{' {
		return nil, false
	}
	p.off++
	m := map[string]any{}
	p.space()
	if p.off < len(p.data) && p.data[p.off] == '}' {
		p.off++
		return m, true
	}
	for {
		p.space()
		key, ok := p.key()
		if !ok {
			return nil, false
		}
		p.space()
		if p.off >= len(p.data) || p.data[p.off] != ':' {
			return nil, false
		}
		p.off++
		p.space()
		v, ok := p.object(depth + 1)
		if !ok {
			return nil, false
		}
		m[key] = v
		p.space()
		if p.off >= len(p.data) {
			return nil, false
		}
		switch p.data[p.off] {
		case ',':
			p.off++
		case '}':
			p.off++
			return m, true
		default:
			return nil, false
		}
	}
}

// key reads a string at p.off.
func (p *fieldsParser) key() (string, bool) {
	if p.off >= len(p.data) || p.data[p.off] != '"' {
		return "", false
	}
	start := p.off
	plain := true
	for i := start + 1; i < len(p.data); i++ {
		switch c := p.data[i]; {
		case c == '"':
			p.off = i + 1
			if plain {
				return string(p.data[start+1 : i]), true
			}
			var s string
			if err := json.Unmarshal(p.data[start:p.off], &s); err != nil {
				return "", false
			}
			return s, true
		case c == '\\':
			plain = false
			i++ // the escaped byte cannot end the string
		case c < 0x20 || c >= 0x80:
			plain = false
		}
	}
	return "", false
}

// appendFieldsV1 appends json.Marshal's encoding of v, a map whose values are all such maps,
// none nil: keys sorted, each key as appendJSONKey writes it.
func appendFieldsV1(dst []byte, v any, depth int) ([]byte, bool) {
	m, isMap := v.(map[string]any)
	if !isMap || m == nil || depth > maxFieldsDepth {
		return nil, false
	}
	type entry struct {
		key   string
		value any
	}
	var room [8]entry // most objects of a fieldsV1 have a few keys: no allocation for them
	entries := room[:0]
	for k, v := range m {
		entries = append(entries, entry{k, v})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	dst = append(dst, '{')
	for i := range entries {
		if i > 0 {
			dst = append(dst, ',')
		}
		var ok bool
		if dst, ok = appendJSONKey(dst, entries[i].key); !ok {
			return nil, false
		}
		dst = append(dst, ':')
		if dst, ok = appendFieldsV1(dst, entries[i].value, depth+1); !ok {
			return nil, false
		}
	}
	return append(dst, '}'), true
}

// appendJSONKey appends s quoted as json.Marshal writes it (with its HTML escapes): printable
// ASCII as it is but for a quote and a backslash, escaped with a backslash, and <, > and &,
// written as \u003c, \u003e and \u0026; a key with any other byte is written by json.Marshal.
func appendJSONKey(dst []byte, s string) ([]byte, bool) {
	start := len(dst)
	dst = append(dst, '"')
	plain := 0 // s[plain:i] is still to append as it is
	for i := 0; i < len(s); i++ {
		c := s[i]
		if plainByte[c] {
			continue
		}
		if c < 0x20 || c >= 0x7f {
			quoted, err := json.Marshal(s)
			if err != nil {
				return nil, false
			}
			return append(dst[:start], quoted...), true
		}
		dst = append(dst, s[plain:i]...)
		plain = i + 1
		if c == '"' || c == '\\' {
			dst = append(dst, '\\', c)
		} else {
			dst = append(dst, '\\', 'u', '0', '0', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		}
	}
	dst = append(dst, s[plain:]...)
	return append(dst, '"'), true
}

// plainASCII says s is printable ASCII without a character encoding/json escapes or that a
// JSON string must escape (", \, and the HTML characters <, > and &).
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if !plainByte[s[i]] {
			return false
		}
	}
	return true
}

// plainByte says which bytes plainASCII takes.
var plainByte = func() (plain [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		switch c {
		case '"', '\\', '<', '>', '&':
		default:
			plain[c] = true
		}
	}
	return plain
}()
