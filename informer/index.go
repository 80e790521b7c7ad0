package informer

import (
	"fmt"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
)

// This file holds the indices of informer.md §8.3: named IndexFuncs that map each cached object
// to a set of values, and for each value the set of keys of the objects that produce it.

// NamespaceIndex is the name of the index that [MetaNamespaceIndexFunc] computes, which
// [ListAllByNamespace] uses when it is present.
const NamespaceIndex = "namespace"

// MetaNamespaceIndexFunc indexes an object by its namespace. An object without metadata gives
// [""] and the error (informer.md §8.3).
func MetaNamespaceIndexFunc(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return []string{""}, fmt.Errorf("object has no meta: %v", err)
	}
	return []string{m.GetNamespace()}, nil
}

// IndexFuncToKeyFuncAdapter turns an IndexFunc that yields exactly one value into a KeyFunc;
// any other number of values is an error (informer.md §8.3).
func IndexFuncToKeyFuncAdapter(indexFunc IndexFunc) KeyFunc {
	return func(obj any) (string, error) {
		values, err := indexFunc(obj)
		if err != nil {
			return "", err
		}
		if len(values) != 1 {
			return "", fmt.Errorf("there should be exactly one index value for object %v, got %d", obj, len(values))
		}
		return values[0], nil
	}
}

// keySet is a set of store keys.
type keySet map[string]struct{}

// sorted returns the keys in ascending order, so no map order reaches a caller.
func (s keySet) sorted() []string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// storeIndex holds the indexers and what they computed. It has no lock: the thread-safe map that
// owns it calls every method with its lock held.
//
// Invariant: for every index name in indices there is an indexer of that name, and no value maps
// to an empty set (empty sets are deleted, so ListIndexFuncValues never reports a value that no
// object has; client-go issue 84959).
type storeIndex struct {
	indexers Indexers
	// names are the indexer names, sorted, so writes visit indices in a fixed order.
	names []string
	// byNamespace holds the names whose IndexFunc is MetaNamespaceIndexFunc, the index every
	// factory informer has: update computes its one value without the function's one-element
	// slice (two allocations per write otherwise).
	byNamespace map[string]bool
	// indices maps index name → indexed value → keys of the objects with that value.
	indices map[string]map[string]keySet
}

func newStoreIndex(indexers Indexers) *storeIndex {
	// The maps are made when first written (add, updateOne): a store without indexers, such as
	// the Reflector's temporary store of each watch-list attempt, then allocates none.
	i := &storeIndex{}
	for name, f := range indexers {
		i.add(name, f)
	}
	slices.Sort(i.names)
	return i
}

// add registers indexer f under name; the caller sorts names.
func (i *storeIndex) add(name string, f IndexFunc) {
	if i.indexers == nil {
		i.indexers = Indexers{}
	}
	i.indexers[name] = f
	i.names = append(i.names, name)
	if isMetaNamespaceIndexFunc(f) {
		if i.byNamespace == nil {
			i.byNamespace = map[string]bool{}
		}
		i.byNamespace[name] = true
	}
}

// isMetaNamespaceIndexFunc reports whether f is MetaNamespaceIndexFunc itself. Go cannot compare
// funcs with ==; a top-level function's code pointer identifies it.
func isMetaNamespaceIndexFunc(f IndexFunc) bool {
	return reflect.ValueOf(f).Pointer() == reflect.ValueOf(MetaNamespaceIndexFunc).Pointer()
}

// reset forgets every computed value, keeping the indexers (Replace rebuilds from scratch).
func (i *storeIndex) reset() {
	i.indices = nil
}

// index returns the values of the named index, made if need be.
func (i *storeIndex) index(name string) map[string]keySet {
	idx := i.indices[name]
	if idx == nil {
		if i.indices == nil {
			i.indices = map[string]map[string]keySet{}
		}
		idx = map[string]keySet{}
		i.indices[name] = idx
	}
	return idx
}

func noSuchIndex(name string) error {
	return fmt.Errorf("Index with name %s does not exist", name) //nolint:staticcheck // client-go's text (informer.md §8.3)
}

// keysMatching returns the keys of the objects sharing at least one of obj's values for the named
// index, deduplicated.
func (i *storeIndex) keysMatching(name string, obj any) (keySet, error) {
	f := i.indexers[name]
	if f == nil {
		return nil, noSuchIndex(name)
	}
	values, err := f(obj)
	if err != nil {
		return nil, err
	}
	idx := i.indices[name]
	if len(values) == 1 {
		return idx[values[0]], nil
	}
	out := keySet{}
	for _, v := range values {
		for k := range idx[v] {
			out[k] = struct{}{}
		}
	}
	return out, nil
}

// keysByValue returns the keys of the objects with the given value for the named index.
func (i *storeIndex) keysByValue(name, value string) (keySet, error) {
	if i.indexers[name] == nil {
		return nil, noSuchIndex(name)
	}
	return i.indices[name][value], nil
}

// values returns the values the named index currently holds, sorted.
func (i *storeIndex) values(name string) []string {
	idx := i.indices[name]
	out := make([]string, 0, len(idx))
	for v := range idx {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// addIndexers adds new indexers; a name that already exists is a conflict and nothing is added
// (informer.md §8.3). The caller indexes the existing objects.
func (i *storeIndex) addIndexers(newIndexers Indexers) error {
	var conflicts []string
	for name := range newIndexers {
		if _, ok := i.indexers[name]; ok {
			conflicts = append(conflicts, name)
		}
	}
	if len(conflicts) > 0 {
		slices.Sort(conflicts)
		return fmt.Errorf("indexer conflict: %v", conflicts)
	}
	for name, f := range newIndexers {
		i.add(name, f)
	}
	slices.Sort(i.names)
	return nil
}

// update moves key from the values of oldObj to the values of newObj in every index. A nil oldObj
// is an insert, a nil newObj a delete. An IndexFunc error panics: the cache would otherwise be
// silently inconsistent with its indices (informer.md §8.3, §16 "IndexFunc error").
func (i *storeIndex) update(oldObj, newObj any, key string) {
	for _, name := range i.names {
		i.updateOne(name, oldObj, newObj, key)
	}
}

func (i *storeIndex) updateOne(name string, oldObj, newObj any, key string) {
	if i.byNamespace[name] && i.updateNamespace(name, oldObj, newObj, key) {
		return
	}
	f := i.indexers[name]
	var oldValues, newValues []string
	var err error
	if oldObj != nil {
		if oldValues, err = f(oldObj); err != nil {
			panic(fmt.Errorf("informer: unable to calculate an index entry for key %q on index %q: %v", key, name, err))
		}
	}
	if newObj != nil {
		if newValues, err = f(newObj); err != nil {
			panic(fmt.Errorf("informer: unable to calculate an index entry for key %q on index %q: %v", key, name, err))
		}
	}
	idx := i.index(name)
	// The common case: one value, unchanged by the write.
	if len(oldValues) == 1 && len(newValues) == 1 && oldValues[0] == newValues[0] {
		return
	}
	for _, v := range oldValues {
		set := idx[v]
		if set == nil {
			continue
		}
		delete(set, key)
		if len(set) == 0 {
			delete(idx, v)
		}
	}
	for _, v := range newValues {
		i.insert(idx, v, key)
	}
}

// updateNamespace is updateOne for an index by MetaNamespaceIndexFunc, whose one value is the
// object's namespace: the same changes, in the same order, without calling the function. It
// reports false, having changed nothing, if an object has no metadata; updateOne then calls the
// function, which gives the error updateOne panics with.
func (i *storeIndex) updateNamespace(name string, oldObj, newObj any, key string) bool {
	var oldNS, newNS string
	if oldObj != nil {
		m, err := meta.Accessor(oldObj)
		if err != nil {
			return false
		}
		oldNS = m.GetNamespace()
	}
	if newObj != nil {
		m, err := meta.Accessor(newObj)
		if err != nil {
			return false
		}
		newNS = m.GetNamespace()
	}
	idx := i.index(name)
	if oldObj != nil && newObj != nil && oldNS == newNS {
		return true
	}
	if oldObj != nil {
		if set := idx[oldNS]; set != nil {
			delete(set, key)
			if len(set) == 0 {
				delete(idx, oldNS)
			}
		}
	}
	if newObj != nil {
		i.insert(idx, newNS, key)
	}
	return true
}

// insert adds key to the set of value v in idx.
func (i *storeIndex) insert(idx map[string]keySet, v, key string) {
	set := idx[v]
	if set == nil {
		set = keySet{}
		idx[v] = set
	}
	set[key] = struct{}{}
}
