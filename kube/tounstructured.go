package kube

import (
	"encoding/base64"
	"math"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// The other way: a protobuf write's body, decoded into its Go type, is converted to fakeapi's
// unstructured form by runtime.DefaultUnstructuredConverter.ToUnstructured, which looks each
// struct field's JSON name and tags up in a shared cache and each value's type up in another.
// toUnstructuredByPlan gives the converter's maps from a plan made once per Go type: each
// struct's fields with their names and omitempty/omitzero rules as the converter reads them, the
// converter's rules per kind (a struct field of a simple kind taken as it is; any other value
// first offered to its type's own conversion, structured-merge-diff's, which the converter
// calls too, a fieldsV1 of nested objects parsed by parseFieldsV1), and gives up (ok false) on
// anything that would be an error or that it does not take (a map with keys of another kind, an
// array, an inlined field that is no struct): the caller then runs the converter.

// encodeFunc converts sv, a value of the plan's type, to its unstructured value (nil for none).
type encodeFunc func(sv reflect.Value) (any, bool)

// toPlan is how values of one Go type become unstructured; fill, for a struct (or a pointer to
// one) without a conversion of its own, writes its fields into a map, as an inlined field does.
type toPlan struct {
	encode encodeFunc
	fill   func(sv reflect.Value, m map[string]any) bool
}

// toPlans holds the plan of each type converted so far.
var toPlans planCache[*toPlan]

// toUnstructuredByPlan is runtime.DefaultUnstructuredConverter.ToUnstructured(obj) for obj, a
// non-nil pointer to a struct, when ok.
func toUnstructuredByPlan(obj any) (map[string]any, bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	p := toPlanOf(v.Elem().Type())
	if p.fill == nil {
		return nil, false
	}
	m := map[string]any{}
	if !p.fill(v.Elem(), m) {
		return nil, false
	}
	return m, true
}

func toPlanOf(t reflect.Type) *toPlan {
	return toPlans.get(t, func(made map[reflect.Type]*toPlan) *toPlan { return buildToPlan(t, made) })
}

// buildToPlan makes t's plan, and the plans of the types its values hold, into made.
func buildToPlan(t reflect.Type, made map[reflect.Type]*toPlan) *toPlan {
	if p, ok := made[t]; ok {
		return p
	}
	if p, ok := toPlans.load(t); ok {
		return p
	}
	p := &toPlan{}
	made[t] = p // before the parts: a type may hold itself
	if entry := value.TypeReflectEntryOf(t); entry.CanConvertToUnstructured() {
		p.encode = ownConversion(t, entry)
		return p
	}
	switch t.Kind() {
	case reflect.String:
		p.encode = func(sv reflect.Value) (any, bool) { return sv.String(), true }
	case reflect.Bool:
		p.encode = func(sv reflect.Value) (any, bool) { return sv.Bool(), true }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		p.encode = func(sv reflect.Value) (any, bool) { return sv.Int(), true }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		p.encode = func(sv reflect.Value) (any, bool) {
			u := sv.Uint()
			return int64(u), u <= math.MaxInt64 // else the converter's overflow error
		}
	case reflect.Float32, reflect.Float64:
		p.encode = func(sv reflect.Value) (any, bool) { return sv.Float(), true }
	case reflect.Interface:
		p.encode = func(sv reflect.Value) (any, bool) {
			if sv.IsNil() {
				return nil, true
			}
			e := sv.Elem()
			if ep := toPlanOf(e.Type()); ep.encode != nil {
				return ep.encode(e)
			}
			return nil, false
		}
	case reflect.Pointer:
		pointerPlan(p, t, made)
	case reflect.Slice:
		p.encode = sliceEncode(t, made)
	case reflect.Map:
		p.encode = mapEncode(t, made)
	case reflect.Struct:
		p.fill = structFill(t, made)
		if p.fill != nil {
			fill := p.fill
			n := t.NumField()
			p.encode = func(sv reflect.Value) (any, bool) {
				m := make(map[string]any, n)
				return m, fill(sv, m)
			}
		}
	}
	return p
}

// pointerPlan fills in p, the plan of pointer type t: its target's encoding (nil for a nil
// pointer) and, to a struct, its target's fill (nothing for a nil pointer), as an inlined pointer
// to a struct is written.
func pointerPlan(p *toPlan, t reflect.Type, made map[reflect.Type]*toPlan) {
	elem := buildToPlan(t.Elem(), made)
	p.encode = func(sv reflect.Value) (any, bool) {
		if sv.IsNil() {
			return nil, true
		}
		if elem.encode == nil {
			return nil, false
		}
		return elem.encode(sv.Elem())
	}
	if t.Elem().Kind() == reflect.Struct {
		p.fill = func(sv reflect.Value, m map[string]any) bool {
			if sv.IsNil() {
				return true
			}
			return elem.fill != nil && elem.fill(sv.Elem(), m)
		}
	}
}

// sliceEncode encodes slice type t: []byte as base64 text, any other as a list of its elements'
// encodings; nil is none.
func sliceEncode(t reflect.Type, made map[reflect.Type]*toPlan) encodeFunc {
	if t.Elem().Kind() == reflect.Uint8 {
		// encoding/json's base64, which the converter decodes back into a string.
		return func(sv reflect.Value) (any, bool) {
			if sv.IsNil() {
				return nil, true
			}
			return base64.StdEncoding.EncodeToString(sv.Bytes()), true
		}
	}
	elem := buildToPlan(t.Elem(), made)
	return func(sv reflect.Value) (any, bool) {
		if sv.IsNil() {
			return nil, true
		}
		if elem.encode == nil && sv.Len() > 0 {
			return nil, false
		}
		out := make([]any, sv.Len(), sv.Cap())
		for i := range out {
			v, ok := elem.encode(sv.Index(i))
			if !ok {
				return nil, false
			}
			out[i] = v
		}
		return out, true
	}
}

// mapEncode encodes map type t, with string keys, as a map of its values' encodings; nil is none.
// It is nil for keys of another kind: the converter's error.
func mapEncode(t reflect.Type, made map[reflect.Type]*toPlan) encodeFunc {
	if t.Key().Kind() != reflect.String {
		return nil // the converter's error
	}
	elem := buildToPlan(t.Elem(), made)
	return func(sv reflect.Value) (any, bool) {
		if sv.IsNil() {
			return nil, true
		}
		if elem.encode == nil && sv.Len() > 0 {
			return nil, false
		}
		out := make(map[string]any, sv.Len())
		for it := sv.MapRange(); it.Next(); {
			v, ok := elem.encode(it.Value())
			if !ok {
				return nil, false
			}
			out[it.Key().String()] = v
		}
		return out, true
	}
}

// toField is one field of a struct as the converter writes it.
type toField struct {
	index     int
	name      string // "" for an inlined field
	omitempty bool
	omitzero  func(reflect.Value) bool
	kind      reflect.Kind
	plan      *toPlan
}

func structFill(t reflect.Type, made map[reflect.Type]*toPlan) func(sv reflect.Value, m map[string]any) bool {
	var fields []toField
	for i := range t.NumField() {
		f := t.Field(i)
		name, omitempty, omitzero, ok := toJSONTag(f)
		if !ok {
			return nil
		}
		if name == "-" {
			continue
		}
		fields = append(fields, toField{index: i, name: name, omitempty: omitempty, omitzero: omitzero, kind: f.Type.Kind(), plan: buildToPlan(f.Type, made)})
	}
	return func(sv reflect.Value, m map[string]any) bool {
		for i := range fields {
			f := &fields[i]
			fv := sv.Field(f.index)
			if f.omitempty && isEmptyValue(fv) || f.omitzero != nil && f.omitzero(fv) {
				continue
			}
			if f.name == "" {
				if f.plan.fill == nil || !f.plan.fill(fv, m) {
					return false
				}
				continue
			}
			switch f.kind { // a field of a simple kind is written as it is, whatever its type
			case reflect.String:
				m[f.name] = fv.String()
			case reflect.Bool:
				m[f.name] = fv.Bool()
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				m[f.name] = fv.Int()
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				u := fv.Uint()
				if u > math.MaxInt64 {
					return false
				}
				m[f.name] = int64(u)
			case reflect.Float32, reflect.Float64:
				m[f.name] = fv.Float()
			default:
				if f.plan.encode == nil {
					return false
				}
				v, ok := f.plan.encode(fv)
				if !ok {
					return false
				}
				m[f.name] = v
			}
		}
		return true
	}
}

// toJSONTag reads f's JSON tag as the converter does for ToUnstructured: its name (the Go name
// without one, "" inlined for an embedded field), omitempty, omitzero. ok is false for what
// depends on the Go version ("embed").
func toJSONTag(f reflect.StructField) (name string, omitempty bool, omitzero func(reflect.Value) bool, ok bool) {
	name, ok = jsonName(f)
	if !ok {
		return "", false, nil, false
	}
	tag := f.Tag.Get("json")
	items := strings.Split(tag, ",")
	for _, item := range items[1:] {
		switch item {
		case "omitempty":
			omitempty = true
		case "omitzero":
			omitzero = value.OmitZeroFunc(f.Type)
		}
	}
	return name, omitempty, omitzero, true
}

// isEmptyValue is the converter's omitempty test.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Map, reflect.Slice:
		return v.IsNil() || v.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	}
	return false
}

var fieldsV1Ptr = reflect.TypeFor[*metav1.FieldsV1]()

// ownConversion is the plan of a type with a conversion of its own (a JSON marshaller, an
// unstructured converter): structured-merge-diff's, as the converter calls it; a fieldsV1 of
// nested objects is parsed here.
func ownConversion(t reflect.Type, entry *value.TypeReflectCacheEntry) encodeFunc {
	if t == fieldsV1Type || t == fieldsV1Ptr {
		return func(sv reflect.Value) (any, bool) {
			f := sv
			if t == fieldsV1Ptr {
				if sv.IsNil() {
					return nil, true
				}
				f = sv.Elem()
			}
			if m, ok := parseFieldsV1(f.Interface().(metav1.FieldsV1).Raw); ok {
				return m, true
			}
			v, err := entry.ToUnstructured(sv)
			return v, err == nil
		}
	}
	return func(sv reflect.Value) (any, bool) {
		v, err := entry.ToUnstructured(sv)
		return v, err == nil
	}
}
