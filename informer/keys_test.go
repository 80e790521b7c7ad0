package informer

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// informer.md §8.1: key encoding of namespaced, cluster-scoped, explicit and metadata-less objects.
func TestKeysMetaNamespaceKeyFunc(t *testing.T) {
	for _, tc := range []struct {
		obj     any
		want    string
		wantErr bool
	}{
		{obj: dataObj("ns", "a", "1"), want: "ns/a"},
		{obj: dataObj("", "node1", "1"), want: "node1"},
		{obj: dataMeta("ns", "m", "1"), want: "ns/m"},
		{obj: ExplicitKey("x/y"), want: "x/y"},
		{obj: dataNoMeta{"z"}, wantErr: true},
		{obj: DeletedFinalStateUnknown{Key: "ns/a"}, wantErr: true},
	} {
		got, err := MetaNamespaceKeyFunc(tc.obj)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("MetaNamespaceKeyFunc(%s) = %q, %v; want %q, error %v", dataDescribe(tc.obj), got, err, tc.want, tc.wantErr)
		}
	}
}

// informer.md §8.1: the deletion-handling key function unwraps tombstones.
func TestKeysDeletionHandling(t *testing.T) {
	got, err := DeletionHandlingMetaNamespaceKeyFunc(DeletedFinalStateUnknown{Key: "ns/gone"})
	if err != nil || got != "ns/gone" {
		t.Errorf("tombstone key = %q, %v; want ns/gone", got, err)
	}
	got, err = DeletionHandlingMetaNamespaceKeyFunc(dataObj("ns", "a", "1"))
	if err != nil || got != "ns/a" {
		t.Errorf("object key = %q, %v; want ns/a", got, err)
	}
	// client-go TestDeletionHandlingObjectToName: a tombstone yields the parsed key name.
	n, err := DeletionHandlingObjectToName(DeletedFinalStateUnknown{Key: "ns/gone", Obj: nil})
	if diff := cmp.Diff(ObjectName{Namespace: "ns", Name: "gone"}, n); diff != "" || err != nil {
		t.Errorf("DeletionHandlingObjectToName: err %v, diff (-want +got):\n%s", err, diff)
	}
}

// informer.md §8.1: SplitMetaNamespaceKey's accepted forms and its error text; ObjectName
// round-trips.
func TestKeysSplitAndObjectName(t *testing.T) {
	for _, tc := range []struct {
		key, ns, name, err string
	}{
		{key: "ns/a", ns: "ns", name: "a"},
		{key: "a", name: "a"},
		{key: ""},
		{key: "a/b/c", err: `unexpected key format: "a/b/c"`},
	} {
		ns, name, err := SplitMetaNamespaceKey(tc.key)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if ns != tc.ns || name != tc.name || gotErr != tc.err {
			t.Errorf("SplitMetaNamespaceKey(%q) = %q, %q, %q; want %q, %q, %q", tc.key, ns, name, gotErr, tc.ns, tc.name, tc.err)
		}
	}
	for _, key := range []string{"ns/a", "a"} {
		n, err := ParseObjectName(key)
		if err != nil || n.String() != key {
			t.Errorf("ParseObjectName(%q).String() = %q, %v", key, n.String(), err)
		}
	}
}

// client-go TestKeyError: a KeyError unwraps to the key function's error.
func TestKeysKeyErrorUnwraps(t *testing.T) {
	s := NewStore(MetaNamespaceKeyFunc)
	err := s.Add(dataNoMeta{"x"})
	var ke KeyError
	if !errors.As(err, &ke) {
		t.Fatalf("Add(no meta) error = %v; want a KeyError", err)
	}
	if errors.Unwrap(err) == nil {
		t.Errorf("KeyError does not unwrap")
	}
}
