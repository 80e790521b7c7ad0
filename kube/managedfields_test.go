package kube

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// fieldsKeys are keys of fieldsV1 objects: plain ones as field managers write them, and ones
// encoding/json escapes or decodes specially (quotes of a list item's key, HTML characters,
// non-ASCII, invalid UTF-8, control characters, an escaped slash and a surrogate pair).
var fieldsKeys = []string{
	`"f:data"`, `"f:n"`, `"."`, `"f:metadata"`, `"f:labels"`,
	`"k:{\"name\":\"main\"}"`, `"v:\"a\u003cb\""`, `"f:a<b&c>"`, `"f:é"`, "\"f:\xff\"", `"f:\n"`,
	`"f:\/x"`, `"f:\ud83d\ude00"`, `"f:\u00e9"`,
}

// randomFieldsV1 draws the Raw of a fieldsV1: mostly an object of objects, sometimes with
// spaces, a duplicate key, or something a field manager never writes.
func randomFieldsV1(r *rand.Rand, depth int) string {
	if depth > 0 && r.IntN(3) == 0 {
		return "{}"
	}
	var b strings.Builder
	b.WriteString("{")
	for i := range r.IntN(3) + 1 {
		if i > 0 {
			b.WriteString([]string{",", " , ", ",\n"}[r.IntN(3)])
		}
		b.WriteString(fieldsKeys[r.IntN(len(fieldsKeys))])
		b.WriteString([]string{":", " : "}[r.IntN(2)])
		if depth < 3 {
			b.WriteString(randomFieldsV1(r, depth+1))
		} else {
			b.WriteString("{}")
		}
	}
	b.WriteString("}")
	return b.String()
}

func randomEntryTyped(r *rand.Rand) metav1.ManagedFieldsEntry {
	e := metav1.ManagedFieldsEntry{
		Manager:    []string{"", "kubectl", "clientgo.test", "a<b&c", "é"}[r.IntN(5)],
		Operation:  metav1.ManagedFieldsOperationType([]string{"", "Update", "Apply"}[r.IntN(3)]),
		APIVersion: []string{"", "v1", "apps/v1"}[r.IntN(3)],
		FieldsType: []string{"", "FieldsV1"}[r.IntN(2)],
	}
	if r.IntN(5) == 0 {
		e.Subresource = "status"
	}
	switch r.IntN(6) {
	case 0: // no time
	case 1:
		e.Time = &metav1.Time{}
	case 2:
		e.Time = &metav1.Time{Time: time.Date(2026, 11, 26, 15, 4, 5, 123456789, time.FixedZone("x", 3600))}
	default:
		e.Time = &metav1.Time{Time: time.Date(2026, 11, 26, 15, 4, r.IntN(60), 0, time.UTC)}
	}
	switch r.IntN(12) {
	case 0: // none
	case 1:
		e.FieldsV1 = &metav1.FieldsV1{}
	case 2:
		e.FieldsV1 = &metav1.FieldsV1{Raw: []byte([]string{`null`, `[]`, `"x"`, `{"f:a":1}`, `{"f:a":{}} x`, `{"f:a":{}`, `{"f:a":[]}`, ` {"f:a":{}} `}[r.IntN(8)])}
	default:
		e.FieldsV1 = &metav1.FieldsV1{Raw: []byte(randomFieldsV1(r, 0))}
	}
	return e
}

func randomManagedConfigMap(r *rand.Rand) *corev1.ConfigMap {
	c := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", ResourceVersion: "7", Labels: map[string]string{"a": "b"}},
		Data:       map[string]string{"k": "v"},
	}
	for range r.IntN(4) {
		c.ManagedFields = append(c.ManagedFields, randomEntryTyped(r))
	}
	return c
}

// typedByConverter is ProtobufCodec.typed for one object by the converter alone, as it was
// before managedFields took their own path.
func typedByConverter(content map[string]any) (runtime.Object, error) {
	out := &corev1.ConfigMap{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, out); err != nil {
		if err := intoJSON(content, out); err != nil {
			return nil, err
		}
	}
	out.GetObjectKind().SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	return out, nil
}

// mangle changes the unstructured managedFields of m into forms the conversion back to the Go
// type must leave to the converter (or may take itself, if it gives the same).
func mangle(r *rand.Rand, m map[string]any) {
	items, _ := m["metadata"].(map[string]any)["managedFields"].([]any)
	for _, item := range items {
		e := item.(map[string]any)
		switch r.IntN(12) {
		case 0:
			e["time"] = []any{"2026-11-26T15:04:05.5Z", "2026-11-26T16:04:05+01:00", nil, "yesterday", int64(3), "2026-11-26T15:04:05\u003cZ"}[r.IntN(6)]
		case 1:
			e["manager"] = int64(7)
		case 2:
			e["unknown"] = "x"
		case 3:
			e["fieldsV1"] = map[string]any{"f:a": map[string]any(nil)}
		case 4:
			e["fieldsV1"] = map[string]any{"f:a": []any{}}
		case 5:
			e["fieldsV1"] = map[string]any{"f:a<b": map[string]any{"\u2028": map[string]any{}}}
		case 6:
			e["fieldsV1"] = nil
		}
	}
}

// TestManagedFieldsConvertAsTheConverter checks the protobuf codec's own conversion of
// managedFields against apimachinery's converter on random objects: to maps (a body decoded into
// fakeapi's form) the same map, or the converter's error; back to the Go type (an answer
// encoded) the same protobuf bytes, or the converter's error, the maps left as they were. Both
// ways, the codec's path must have been taken often and left to the converter often.
func TestManagedFieldsConvertAsTheConverter(t *testing.T) {
	c := NewProtobufCodec()
	r := rand.New(rand.NewPCG(3, 4))
	toFast, fromFast := 0, 0
	for i := range 4000 {
		obj := randomManagedConfigMap(r)
		keep := obj.DeepCopy()
		want, wantErr := runtime.DefaultUnstructuredConverter.ToUnstructured(obj.DeepCopy())
		got, err := toUnstructuredObject(obj)
		if (err != nil) != (wantErr != nil) || err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: %v to maps:\ngot  %v, %v\nwant %v, %v", i, obj.ManagedFields, got, err, want, wantErr)
		}
		if !reflect.DeepEqual(obj, keep) {
			t.Fatalf("case %d: the conversion to maps changed the object", i)
		}
		if _, ok := managedFieldsToUnstructured(obj.ManagedFields); ok {
			toFast++
		}
		if wantErr != nil {
			continue
		}

		content := runtime.DeepCopyJSON(want)
		if r.IntN(3) == 0 {
			mangle(r, content)
		}
		before := runtime.DeepCopyJSON(content)
		ref, refErr := typedByConverter(runtime.DeepCopyJSON(content))
		typed, err := c.typed(&unstructured.Unstructured{Object: content})
		if (err != nil) != (refErr != nil) {
			t.Fatalf("case %d: back to the Go type: error %v, the converter's %v", i, err, refErr)
		}
		if !reflect.DeepEqual(content, before) {
			t.Fatalf("case %d: the conversion back changed the maps", i)
		}
		if err != nil {
			continue
		}
		gotPB, err1 := typed.(*corev1.ConfigMap).Marshal()
		wantPB, err2 := ref.(*corev1.ConfigMap).Marshal()
		if err1 != nil || err2 != nil || !bytes.Equal(gotPB, wantPB) {
			t.Fatalf("case %d: back to the Go type from %v:\ngot  %v\nwant %v", i, content["metadata"], typed, ref)
		}
		if planOf(reflect.TypeFor[corev1.ConfigMap]()).decode(content, reflect.New(reflect.TypeFor[corev1.ConfigMap]()).Elem()) {
			fromFast++
		}
	}
	t.Logf("to maps: %d of 4000 by the codec; back: %d by the codec", toFast, fromFast)
	if toFast < 400 || toFast > 3600 || fromFast < 400 {
		t.Fatalf("to maps %d of 4000 by the codec, back %d: each path must be taken often", toFast, fromFast)
	}
}
