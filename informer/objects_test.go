package informer

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Test objects for the data-structure tests (store, index, listers, queues, delta processing).
// The names are prefixed (dataObj, dataRecorder...) so they do not collide with helpers other
// test files of this package define.

// dataObj returns a ConfigMap-shaped unstructured object. Passing ns "" gives a cluster-scoped
// object, whose key is just its name.
func dataObj(ns, name, rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetResourceVersion(rv)
	return u
}

// dataLabeled is dataObj with labels.
func dataLabeled(ns, name, rv string, labels map[string]string) *unstructured.Unstructured {
	u := dataObj(ns, name, rv)
	u.SetLabels(labels)
	return u
}

// dataMeta returns a PartialObjectMetadata, the other object shape the informer handles.
func dataMeta(ns, name, rv string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv}}
}

// dataNoMeta is an object without Kubernetes metadata: every key function fails on it.
type dataNoMeta struct{ id string }

// dataDescribe renders an object compactly for comparisons: "ns/name@rv", a tombstone as
// "tomb(key, <obj>)", nil as "nil".
func dataDescribe(obj any) string {
	switch o := obj.(type) {
	case nil:
		return "nil"
	case DeletedFinalStateUnknown:
		return fmt.Sprintf("tomb(%s, %s)", o.Key, dataDescribe(o.Obj))
	case *unstructured.Unstructured:
		return fmt.Sprintf("%s@%s", ObjectName{o.GetNamespace(), o.GetName()}, o.GetResourceVersion())
	case *metav1.PartialObjectMetadata:
		return fmt.Sprintf("%s@%s", ObjectName{o.Namespace, o.Name}, o.ResourceVersion)
	case ReplacedAllInfo:
		s := "rv=" + o.ResourceVersion + " ["
		for i, x := range o.Objects {
			if i > 0 {
				s += " "
			}
			s += dataDescribe(x)
		}
		return s + "]"
	case BookmarkInfo:
		return "rv=" + o.ResourceVersion
	case dataNoMeta:
		return "nometa(" + o.id + ")"
	}
	return fmt.Sprintf("%T", obj)
}

// dataDeltaStrings renders deltas as "Type:obj" strings.
func dataDeltaStrings(ds []Delta) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = string(d.Type) + ":" + dataDescribe(d.Object)
	}
	return out
}

// dataDescribeAll renders objects with dataDescribe.
func dataDescribeAll(objs []any) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = dataDescribe(o)
	}
	return out
}

// dataRecorder is a ResourceEventHandler that records each notification as text and, when store
// is set, checks informer.md §13 rule 1: the cache already holds the notified state (or, for a
// delete, no longer holds the key) when the handler runs.
type dataRecorder struct {
	t     *testing.T
	store Store
	got   []string
}

func (r *dataRecorder) OnAdd(obj any, isInInitialList bool) {
	r.got = append(r.got, fmt.Sprintf("add %s init=%v", dataDescribe(obj), isInInitialList))
	r.checkPresent(obj)
}

func (r *dataRecorder) OnUpdate(oldObj, newObj any) {
	r.got = append(r.got, fmt.Sprintf("update %s -> %s", dataDescribe(oldObj), dataDescribe(newObj)))
	r.checkPresent(newObj)
}

func (r *dataRecorder) OnDelete(obj any) {
	r.got = append(r.got, "delete "+dataDescribe(obj))
	if r.store == nil {
		return
	}
	key, err := DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		r.t.Errorf("OnDelete(%s): key: %v", dataDescribe(obj), err)
		return
	}
	if _, exists, _ := r.store.GetByKey(key); exists {
		r.t.Errorf("informer.md §13 rule 1: OnDelete(%s) while the cache still holds %q", dataDescribe(obj), key)
	}
}

// checkPresent checks that the cache holds obj itself (the very same state) under its key. For a
// batch the cache may hold the whole batch applied, which still holds obj since keys are unique.
func (r *dataRecorder) checkPresent(obj any) {
	if r.store == nil {
		return
	}
	cached, exists, err := r.store.Get(obj)
	if err != nil || !exists {
		r.t.Errorf("informer.md §13 rule 1: notified of %s but the cache does not hold it (err %v)", dataDescribe(obj), err)
		return
	}
	if dataDescribe(cached) != dataDescribe(obj) {
		r.t.Errorf("informer.md §13 rule 1: notified of %s but the cache holds %s", dataDescribe(obj), dataDescribe(cached))
	}
}
