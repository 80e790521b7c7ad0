package informer

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func dataListerCache(t *testing.T, indexers Indexers) Indexer {
	c := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, indexers)
	mustStore(t, c.Add(dataLabeled("ns1", "a", "1", map[string]string{"app": "web"})))
	mustStore(t, c.Add(dataLabeled("ns1", "b", "2", map[string]string{"app": "db"})))
	mustStore(t, c.Add(dataLabeled("ns2", "c", "3", map[string]string{"app": "web"})))
	mustStore(t, c.Add(dataLabeled("", "node", "4", nil)))
	return c
}

func dataCollect(t *testing.T, list func(AppendFunc) error) []string {
	t.Helper()
	var got []any
	if err := list(func(o any) { got = append(got, o) }); err != nil {
		t.Fatal(err)
	}
	return dataDescribeAll(got)
}

// client-go TestListAll (informer.md §8.4): Nothing selects nothing, Everything everything, a
// selector matches labels; results in key order.
func TestListersListAll(t *testing.T) {
	c := dataListerCache(t, nil)
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	for _, tc := range []struct {
		name string
		sel  labels.Selector
		want []string
	}{
		{"nothing", labels.Nothing(), nil},
		{"everything", labels.Everything(), []string{"node@4", "ns1/a@1", "ns1/b@2", "ns2/c@3"}},
		{"app=web", web, []string{"ns1/a@1", "ns2/c@3"}},
	} {
		got := dataCollect(t, func(fn AppendFunc) error { return ListAll(c, tc.sel, fn) })
		if diff := cmp.Diff(tc.want, got, cmpEmptyNil); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

var cmpEmptyNil = cmp.Transformer("emptyNil", func(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
})

// informer.md §8.4: ListAllByNamespace uses the namespace index, falls back to a scan without it,
// and treats "" as all namespaces; both paths agree.
func TestListersByNamespace(t *testing.T) {
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	for _, indexers := range []Indexers{{NamespaceIndex: MetaNamespaceIndexFunc}, nil} {
		c := dataListerCache(t, indexers)
		got := dataCollect(t, func(fn AppendFunc) error { return ListAllByNamespace(c, "ns1", labels.Everything(), fn) })
		if diff := cmp.Diff([]string{"ns1/a@1", "ns1/b@2"}, got); diff != "" {
			t.Errorf("indexed=%v ns1 (-want +got):\n%s", indexers != nil, diff)
		}
		got = dataCollect(t, func(fn AppendFunc) error { return ListAllByNamespace(c, "ns1", web, fn) })
		if diff := cmp.Diff([]string{"ns1/a@1"}, got); diff != "" {
			t.Errorf("indexed=%v ns1 app=web (-want +got):\n%s", indexers != nil, diff)
		}
		got = dataCollect(t, func(fn AppendFunc) error { return ListAllByNamespace(c, "", web, fn) })
		if diff := cmp.Diff([]string{"ns1/a@1", "ns2/c@3"}, got); diff != "" {
			t.Errorf("indexed=%v all namespaces (-want +got):\n%s", indexers != nil, diff)
		}
	}
}

// informer.md §8.4: the generic lister's Get looks up "ns/name" (or "name") and returns a NotFound
// API error naming the resource when absent.
func TestListersGeneric(t *testing.T) {
	c := dataListerCache(t, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	gr := schema.GroupResource{Resource: "configmaps"}
	l := NewGenericLister(c, gr)
	objs, err := l.List(labels.Everything())
	if err != nil || len(objs) != 4 {
		t.Errorf("List = %d objects, %v; want 4", len(objs), err)
	}
	if o, err := l.Get("node"); err != nil || dataDescribe(o) != "node@4" {
		t.Errorf("Get(node) = %v, %v", o, err)
	}
	if o, err := l.ByNamespace("ns2").Get("c"); err != nil || dataDescribe(o) != "ns2/c@3" {
		t.Errorf("ByNamespace(ns2).Get(c) = %v, %v", o, err)
	}
	objs, err = l.ByNamespace("ns1").List(labels.Everything())
	if diff := cmp.Diff([]string{"ns1/a@1", "ns1/b@2"}, dataDescribeAll(dataToAny(objs))); diff != "" || err != nil {
		t.Errorf("ByNamespace(ns1).List: err %v (-want +got):\n%s", err, diff)
	}
	_, err = l.ByNamespace("ns1").Get("missing")
	if !apierrors.IsNotFound(err) || err.Error() != `configmaps "missing" not found` {
		t.Errorf("Get(missing) error = %v, want NotFound for configmaps", err)
	}
}

func dataToAny(objs []runtime.Object) []any {
	out := make([]any, len(objs))
	for i, o := range objs {
		out[i] = o
	}
	return out
}
