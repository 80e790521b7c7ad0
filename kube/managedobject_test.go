package kube

import (
	"context"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// randomManagedUnstructured draws an object in fakeapi's form whose managedFields are what
// writes store (random entries converted by apimachinery's converter), sometimes changed into
// forms no write stores (mangle), and sometimes with metadata or the list itself malformed.
func randomManagedUnstructured(r *rand.Rand) *unstructured.Unstructured {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(randomManagedConfigMap(r))
	if err != nil {
		// An entry the converter cannot take (a zero time): the object without managedFields.
		m = map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}
	}
	if r.IntN(3) == 0 {
		mangle(r, m)
	}
	md, _ := m["metadata"].(map[string]any)
	switch r.IntN(16) {
	case 0:
		delete(m, "metadata")
	case 1:
		m["metadata"] = "not a map"
	case 2:
		md["managedFields"] = map[string]any{"not": "a list"}
	case 3:
		md["managedFields"] = []any{}
	case 4:
		md["managedFields"] = []any(nil)
	case 5:
		md["managedFields"] = nil
	case 6:
		md["managedFields"] = []any{"not a map"}
	case 7:
		if items, _ := md["managedFields"].([]any); len(items) > 0 {
			items[r.IntN(len(items))] = map[string]any(nil)
		}
	}
	return &unstructured.Unstructured{Object: m}
}

// TestManagedObjectAccessorsAsUnstructured checks managedObject's managedFields accessors
// against Unstructured's own on random objects: the same entries read (nil and empty lists
// told apart, as the field manager tells a reset of managedFields by them), and the same object
// after a write of random entries, which must not share memory with the entries, and the same
// errors reported (Unstructured's accessors report an entry they cannot convert through
// utilruntime.HandleError). Both fast paths must have been taken often.
func TestManagedObjectAccessorsAsUnstructured(t *testing.T) {
	var reported []string
	handlers := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{func(_ context.Context, err error, _ string, _ ...any) {
		reported = append(reported, err.Error())
	}}
	t.Cleanup(func() { utilruntime.ErrorHandlers = handlers })
	reports := func(f func()) []string { // what f reported
		reported = nil
		f()
		return reported
	}

	r := rand.New(rand.NewPCG(25, 6))
	fastGets, fastSets, withReports := 0, 0, 0
	for i := range 3000 {
		u := randomManagedUnstructured(r)
		var want, got []metav1.ManagedFieldsEntry
		wantReports := reports(func() { want = u.DeepCopy().GetManagedFields() })
		keep := u.DeepCopy()
		gotReports := reports(func() { got = (&managedObject{u}).GetManagedFields() })
		if (got == nil) != (want == nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: GetManagedFields of %v:\ngot  %#v\nwant %#v", i, u.Object["metadata"], got, want)
		}
		if !slices.Equal(gotReports, wantReports) {
			t.Fatalf("case %d: GetManagedFields of %v reported %q, Unstructured's %q", i, u.Object["metadata"], gotReports, wantReports)
		}
		if len(wantReports) > 0 {
			withReports++
		}
		if !reflect.DeepEqual(u, keep) {
			t.Fatalf("case %d: GetManagedFields changed the object", i)
		}
		if len(got) > 0 {
			fastGets++
		}

		var entries []metav1.ManagedFieldsEntry
		switch r.IntN(8) {
		case 0: // nil: the field is removed
		case 1:
			entries = []metav1.ManagedFieldsEntry{}
		default:
			for range r.IntN(4) + 1 {
				entries = append(entries, randomEntryTyped(r))
			}
		}
		wantObj := u.DeepCopy()
		wantReports = reports(func() { wantObj.SetManagedFields(entries) })
		gotObj := u.DeepCopy()
		gotReports = reports(func() { (&managedObject{gotObj}).SetManagedFields(entries) })
		if !reflect.DeepEqual(gotObj, wantObj) {
			t.Fatalf("case %d: SetManagedFields(%v):\ngot  %v\nwant %v", i, entries, gotObj.Object["metadata"], wantObj.Object["metadata"])
		}
		if !slices.Equal(gotReports, wantReports) {
			t.Fatalf("case %d: SetManagedFields(%v) reported %q, Unstructured's %q", i, entries, gotReports, wantReports)
		}
		if _, ok := managedFieldsToUnstructured(entries); ok {
			if _, isMap := u.Object["metadata"].(map[string]any); isMap {
				fastSets++
			}
		}
		for _, e := range entries { // what was set must not share the entries' bytes
			if e.FieldsV1 != nil {
				for j := range e.FieldsV1.Raw {
					e.FieldsV1.Raw[j] = 'x'
				}
			}
		}
		if !reflect.DeepEqual(gotObj, wantObj) {
			t.Fatalf("case %d: the managedFields set share memory with the entries", i)
		}
	}
	t.Logf("%d reads and %d writes of 3000 by the fast paths, %d reads reported an error", fastGets, fastSets, withReports)
	if fastGets < 600 || fastSets < 600 || withReports < 100 {
		t.Fatalf("%d reads and %d writes of 3000 by the fast paths, %d reads reported an error: each must be seen often", fastGets, fastSets, withReports)
	}
}

// TestStoredFieldsV1ReadBackAsEncoded checks that a fieldsV1 map of the managedFields track
// writes (parseStoredFieldsV1) reads back into the Go type (FromUnstructured) as any equal map
// does, from its kept encoding: on random fieldsV1 texts (spaces, duplicate and unsorted keys,
// escapes: the encoding is appendFieldsV1's, not the text parsed), each read twice, and the
// bytes read are the reader's own to change.
func TestStoredFieldsV1ReadBackAsEncoded(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 8))
	kept := 0
	for i := range 2000 {
		text := randomFieldsV1(r, 0)
		m, ok := parseStoredFieldsV1([]byte(text))
		if !ok {
			continue
		}
		entry := func(fields any) map[string]any {
			return map[string]any{"manager": "m", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": fields}
		}
		var want metav1.ManagedFieldsEntry
		if err := FromUnstructured(entry(runtime.DeepCopyJSONValue(m)), &want); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		for range 2 {
			var got metav1.ManagedFieldsEntry
			if err := FromUnstructured(entry(m), &got); err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("case %d: %s read back as %s, %v; want %s", i, text, got.FieldsV1.Raw, err, want.FieldsV1.Raw)
			}
			for j := range got.FieldsV1.Raw {
				got.FieldsV1.Raw[j] = 'x'
			}
		}
		if _, ok := storedFieldsV1Raw(m); ok {
			kept++
		}
	}
	if kept < 1000 {
		t.Fatalf("%d of 2000 maps read from their kept encoding", kept)
	}
}
