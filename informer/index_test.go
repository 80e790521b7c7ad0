package informer

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// dataByLabel indexes an object by the comma-separated values of its "users" label (a
// multi-value index, as client-go's TestMultiIndexKeys uses).
func dataByLabel(obj any) ([]string, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, errors.New("not unstructured")
	}
	v := u.GetLabels()["users"]
	if v == "" {
		return nil, nil
	}
	return strings.Split(v, ","), nil
}

func dataUsers(name, rv, users string) *unstructured.Unstructured {
	return dataLabeled("ns", name, rv, map[string]string{"users": users})
}

// client-go TestMultiIndexKeys and TestThreadSafeStoreIndexingFunctionsWithMultipleValues
// (informer.md §8.3): a multi-value index is maintained across add, update and delete; Index
// dedups; IndexKeys is sorted; values with no objects disappear.
func TestIndexMultiValue(t *testing.T) {
	s := NewIndexer(MetaNamespaceKeyFunc, Indexers{"users": dataByLabel})
	mustStore(t, s.Add(dataUsers("one", "1", "ernie,bert")))
	mustStore(t, s.Add(dataUsers("two", "2", "bert,oscar")))
	mustStore(t, s.Add(dataUsers("tre", "3", "elmo")))

	keys, err := s.IndexKeys("users", "bert")
	if diff := cmp.Diff([]string{"ns/one", "ns/two"}, keys); diff != "" || err != nil {
		t.Errorf("IndexKeys(bert): err %v (-want +got):\n%s", err, diff)
	}
	objs, err := s.Index("users", dataUsers("q", "", "ernie,oscar,bert"))
	if diff := cmp.Diff([]string{"ns/one@1", "ns/two@2"}, dataDescribeAll(objs)); diff != "" || err != nil {
		t.Errorf("Index(ernie,oscar,bert) must dedup: err %v (-want +got):\n%s", err, diff)
	}
	if diff := cmp.Diff([]string{"bert", "elmo", "ernie", "oscar"}, s.ListIndexFuncValues("users")); diff != "" {
		t.Errorf("ListIndexFuncValues (-want +got):\n%s", diff)
	}

	mustStore(t, s.Update(dataUsers("two", "4", "oscar")))
	keys, _ = s.IndexKeys("users", "bert")
	if diff := cmp.Diff([]string{"ns/one"}, keys); diff != "" {
		t.Errorf("after update, IndexKeys(bert) (-want +got):\n%s", diff)
	}
	mustStore(t, s.Delete(dataUsers("one", "5", "")))
	// client-go TestThreadSafeStoreDeleteRemovesEmptySetsFromIndex.
	if diff := cmp.Diff([]string{"elmo", "oscar"}, s.ListIndexFuncValues("users")); diff != "" {
		t.Errorf("after delete, empty values must vanish (-want +got):\n%s", diff)
	}
	// client-go TestThreadSafeStoreAddKeepsNonEmptySetPostDeleteFromIndex.
	mustStore(t, s.Add(dataUsers("four", "6", "oscar")))
	mustStore(t, s.Delete(dataUsers("two", "7", "")))
	keys, _ = s.IndexKeys("users", "oscar")
	if diff := cmp.Diff([]string{"ns/four"}, keys); diff != "" {
		t.Errorf("IndexKeys(oscar) (-want +got):\n%s", diff)
	}
}

// informer.md §8.3: unknown index names give client-go's error for Index/ByIndex/IndexKeys and an
// empty list for ListIndexFuncValues; an unknown value gives an empty list, no error.
func TestIndexUnknown(t *testing.T) {
	s := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	mustStore(t, s.Add(dataObj("ns", "a", "1")))
	const want = "Index with name nope does not exist"
	if _, err := s.ByIndex("nope", "x"); err == nil || err.Error() != want {
		t.Errorf("ByIndex(nope) error = %v, want %q", err, want)
	}
	if _, err := s.Index("nope", dataObj("ns", "a", "")); err == nil || err.Error() != want {
		t.Errorf("Index(nope) error = %v, want %q", err, want)
	}
	if _, err := s.IndexKeys("nope", "x"); err == nil {
		t.Errorf("IndexKeys(nope) succeeded")
	}
	if got := s.ListIndexFuncValues("nope"); len(got) != 0 {
		t.Errorf("ListIndexFuncValues(nope) = %v, want none", got)
	}
	got, err := s.ByIndex(NamespaceIndex, "elsewhere")
	if err != nil || len(got) != 0 {
		t.Errorf("ByIndex(unknown value) = %v, %v; want empty, nil", got, err)
	}
}

// client-go TestGetIndexFuncValues and AddIndexers (informer.md §8.3): added indexers index the
// existing objects at once; a name conflict is an error and adds nothing.
func TestIndexAddIndexers(t *testing.T) {
	s := NewIndexer(MetaNamespaceKeyFunc, Indexers{})
	mustStore(t, s.Add(dataObj("a", "x", "1")))
	mustStore(t, s.Add(dataObj("b", "y", "2")))
	mustStore(t, s.Add(dataObj("a", "z", "3")))
	if err := s.AddIndexers(Indexers{NamespaceIndex: MetaNamespaceIndexFunc}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b"}, s.ListIndexFuncValues(NamespaceIndex)); diff != "" {
		t.Errorf("values of the added index (-want +got):\n%s", diff)
	}
	objs, _ := s.ByIndex(NamespaceIndex, "a")
	if diff := cmp.Diff([]string{"a/x@1", "a/z@3"}, dataDescribeAll(objs)); diff != "" {
		t.Errorf("ByIndex(a) (-want +got):\n%s", diff)
	}
	err := s.AddIndexers(Indexers{NamespaceIndex: MetaNamespaceIndexFunc, "other": MetaNamespaceIndexFunc})
	if err == nil || !strings.HasPrefix(err.Error(), "indexer conflict: ") {
		t.Errorf("conflicting AddIndexers error = %v", err)
	}
	if _, ok := s.GetIndexers()["other"]; ok {
		t.Errorf("a conflicting AddIndexers added %q", "other")
	}
}

// informer.md §8.3 and §16: an IndexFunc error during a write panics.
func TestIndexFuncErrorPanics(t *testing.T) {
	s := NewIndexer(MetaNamespaceKeyFunc, Indexers{"users": dataByLabel})
	defer func() {
		if recover() == nil {
			t.Errorf("Add with a failing IndexFunc did not panic")
		}
		// The lock must have been released on the way out.
		_ = s.ListKeys()
	}()
	_ = s.Add(dataMeta("ns", "m", "1")) // dataByLabel rejects non-unstructured objects
}

// informer.md §8.3: IndexFuncToKeyFuncAdapter requires exactly one value.
func TestIndexFuncToKeyFuncAdapter(t *testing.T) {
	kf := IndexFuncToKeyFuncAdapter(dataByLabel)
	if got, err := kf(dataUsers("a", "1", "bert")); err != nil || got != "bert" {
		t.Errorf("one value: %q, %v", got, err)
	}
	if _, err := kf(dataUsers("a", "1", "bert,ernie")); err == nil {
		t.Errorf("two values: no error")
	}
}

// The namespace index is maintained without calling MetaNamespaceIndexFunc (storeIndex.
// updateNamespace); it must hold exactly what calling it holds. Method: two indexers, one with
// MetaNamespaceIndexFunc itself and one with a wrapper around it (which the fast path does not
// recognise), get the same random adds, updates that move objects between namespaces (a key
// function that ignores the namespace makes that possible), deletes, replaces and AddIndexers;
// after every write both must report the same values and the same keys for each value.
func TestIndexNamespaceFastPath(t *testing.T) {
	byName := func(obj any) (string, error) {
		n, err := ObjectToName(obj)
		return n.Name, err
	}
	wrapped := func(obj any) ([]string, error) { return MetaNamespaceIndexFunc(obj) }
	fast := NewIndexer(byName, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	slow := NewIndexer(byName, Indexers{NamespaceIndex: wrapped})
	if !fast.(*cache).index.byNamespace[NamespaceIndex] || slow.(*cache).index.byNamespace[NamespaceIndex] {
		t.Fatal("the fast path must recognise MetaNamespaceIndexFunc and only it")
	}
	state := func(c Indexer) string {
		var b strings.Builder
		for _, name := range []string{NamespaceIndex, "late"} {
			for _, v := range c.ListIndexFuncValues(name) {
				keys, err := c.IndexKeys(name, v)
				b.WriteString(name + ":" + v + "=" + strings.Join(keys, ",") + " ")
				if err != nil {
					b.WriteString(err.Error())
				}
			}
		}
		return b.String()
	}
	namespaces := []string{"a", "b", "c", ""}
	obj := func(i int) any {
		return dataObj(namespaces[(i/7)%len(namespaces)], "o"+strconv.Itoa(i%5), strconv.Itoa(i))
	}
	for i := range 400 {
		for _, c := range []Indexer{fast, slow} {
			switch i % 11 {
			case 3:
				mustStore(t, c.Delete(obj(i)))
			case 7:
				mustStore(t, c.Replace([]any{obj(i), obj(i + 13), obj(i + 29)}, strconv.Itoa(i)))
			case 9:
				if i == 97 { // a second namespace index, added while objects are cached
					f := IndexFunc(MetaNamespaceIndexFunc)
					if c == slow {
						f = wrapped
					}
					mustStore(t, c.AddIndexers(Indexers{"late": f}))
				}
				mustStore(t, c.Update(obj(i)))
			default:
				mustStore(t, c.Add(obj(i)))
			}
		}
		if diff := cmp.Diff(state(slow), state(fast)); diff != "" {
			t.Fatalf("write %d: the namespace index differs (-called +fast path):\n%s", i, diff)
		}
	}
}
