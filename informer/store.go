package informer

import (
	"slices"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
)

// This file holds the informer's cache (informer.md §8.2): a key function over a thread-safe map
// with indices.
//
// Thread safety: the cache is the one informer component that keeps its own lock. User code reads
// it (listers, GetByKey) from its own goroutines while the process loop writes it, exactly as with
// client-go's ThreadSafeStore, so a lock is part of its contract rather than of a driver. The lock
// is never held while calling out to user code other than key and index functions.
//
// Order: client-go's List and ListKeys return map order, which is unspecified. Ours return
// entries sorted by key so replays are stable; where the informer wants client-go's "any order"
// explored, it shuffles with its own seeded rand (informer.md §15, style.md rule 9).

// KeyListerGetter is what a queue needs from the informer's cache in non-atomic mode: the cached
// keys and the object under a key (informer.md §5.2, §5.3).
type KeyListerGetter interface {
	ListKeys() []string
	GetByKey(key string) (item any, exists bool, err error)
}

// NewStore returns an empty thread-safe [Store] keyed by keyFunc.
func NewStore(keyFunc KeyFunc) Store {
	return newCache(keyFunc, Indexers{})
}

// NewIndexer returns an empty thread-safe [Indexer] keyed by keyFunc with the given indexers.
// The result also implements [TransactionStore]. The informer builds its cache with
// NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, indexers) (informer.md §1.1).
func NewIndexer(keyFunc KeyFunc, indexers Indexers) Indexer {
	return newCache(keyFunc, indexers)
}

func newCache(keyFunc KeyFunc, indexers Indexers) *cache {
	return &cache{
		keyFunc: keyFunc,
		items:   map[string]any{},
		index:   newStoreIndex(indexers),
	}
}

// cache implements Indexer and TransactionStore.
type cache struct {
	keyFunc KeyFunc

	// lock guards everything below. Readers take it shared; writes, including index
	// maintenance, take it exclusively so a reader never sees an object without its index entries.
	lock  sync.RWMutex
	items map[string]any
	index *storeIndex
	// rv is the resourceVersion last written (informer.md §8.2: "last written", not the maximum):
	// Add/Update set it to the object's RV, Delete to the deleted object's RV, Replace to the list
	// RV, Bookmark to the bookmark's RV. Tombstones and objects without metadata leave it alone.
	rv string
	// generation counts the writes that may have changed items (every set, every delete of a
	// present key, every swap). It is written under lock, and atomic so that Generation reads it
	// without the lock.
	generation atomic.Uint64
}

var (
	_ Indexer          = (*cache)(nil)
	_ TransactionStore = (*cache)(nil)
	_ KeyListerGetter  = (*cache)(nil)
)

// rvOf returns obj's resourceVersion and whether obj has metadata at all.
func rvOf(obj any) (string, bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", false
	}
	return m.GetResourceVersion(), true
}

// Add inserts obj, overwriting any object with the same key (informer.md §8.2).
func (c *cache) Add(obj any) error { return c.set(obj) }

// Update sets obj, inserting it if its key is absent (informer.md §8.2).
func (c *cache) Update(obj any) error { return c.set(obj) }

func (c *cache) set(obj any) error {
	return c.write(obj, c.setLocked)
}

// write is one single-object write: key obj, then under the lock apply it and record obj's RV as
// the store RV, unless obj is a tombstone or has no metadata (informer.md §8.2).
func (c *cache) write(obj any, apply func(key string, obj any)) error {
	key, err := c.keyFunc(obj)
	if err != nil {
		return KeyError{Obj: obj, Err: err}
	}
	rv, hasMeta := rvOf(obj)
	c.lock.Lock()
	defer c.lock.Unlock()
	apply(key, obj)
	if hasMeta {
		c.rv = rv
	}
	return nil
}

// The keyed writes below are Add/Update, Delete and Transaction for a caller that already has
// each object's key, which must be what c.keyFunc returns for the object: the informer's process
// loop, which has the key its queue computed at enqueue (RealFIFO.popKeyed). They do exactly
// what the unkeyed forms do for a key that computes, without computing it again.

// setKeyed is Add or Update of obj under key; rv is obj's objRV (readRV): the store RV it sets
// is read by the caller, who needs it for more than the cache.
func (c *cache) setKeyed(key string, obj any, rv objRV) {
	c.lock.Lock()
	defer c.lock.Unlock()
	c.setLocked(key, obj)
	if rv.meta {
		c.rv = rv.rv
	}
}

// deleteKeyed is Delete of obj, whose key is key and objRV rv.
func (c *cache) deleteKeyed(key string, obj any, rv objRV) {
	c.lock.Lock()
	defer c.lock.Unlock()
	c.deleteLocked(key)
	if rv.meta {
		c.rv = rv.rv
	}
}

// transactionKeyed is Transaction of txns, whose objects' keys are keys (same length), and
// lastRV the objRV of the last one's object (whose RV the store takes): every transaction
// applies, under one lock.
func (c *cache) transactionKeyed(txns []Transaction, keys []string, lastRV objRV) {
	c.lock.Lock()
	defer c.lock.Unlock()
	for i, t := range txns {
		c.applyLocked(t, keys[i])
	}
	if len(txns) > 0 && lastRV.meta {
		c.rv = lastRV.rv
	}
}

// applyLocked applies one transaction whose object's key is key.
func (c *cache) applyLocked(t Transaction, key string) {
	switch t.Type {
	case TransactionTypeAdd, TransactionTypeUpdate:
		c.setLocked(key, t.Object)
	case TransactionTypeDelete:
		c.deleteLocked(key)
	}
}

func (c *cache) setLocked(key string, obj any) {
	c.generation.Add(1)
	old := c.items[key]
	c.items[key] = obj
	c.index.update(old, obj, key)
}

// Delete removes the object with obj's key; an absent key is not an error. The store RV becomes
// obj's RV unless obj is a tombstone or has no metadata (informer.md §8.2).
func (c *cache) Delete(obj any) error {
	return c.write(obj, func(key string, _ any) { c.deleteLocked(key) })
}

func (c *cache) deleteLocked(key string) {
	if old, ok := c.items[key]; ok {
		c.generation.Add(1)
		c.index.update(old, nil, key)
		delete(c.items, key)
	}
}

// List returns every cached object, sorted by key (client-go: unspecified order).
func (c *cache) List() []any {
	_, objs := c.listKeyed()
	return objs
}

// ListKeys returns every cached key, sorted (client-go: unspecified order).
func (c *cache) ListKeys() []string {
	c.lock.RLock()
	defer c.lock.RUnlock()
	return c.sortedKeysLocked()
}

func (c *cache) sortedKeysLocked() []string {
	keys := make([]string, 0, len(c.items))
	for k := range c.items {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Get returns the object with obj's key. Only a key error is an error.
func (c *cache) Get(obj any) (item any, exists bool, err error) {
	key, err := c.keyFunc(obj)
	if err != nil {
		return nil, false, KeyError{Obj: obj, Err: err}
	}
	return c.GetByKey(key)
}

// GetByKey returns the object with the given key; it never returns an error.
func (c *cache) GetByKey(key string) (item any, exists bool, err error) {
	c.lock.RLock()
	defer c.lock.RUnlock()
	item, exists = c.items[key]
	return item, exists, nil
}

// Replace swaps the contents for list and sets the store RV to resourceVersion. Every key is
// computed first, so a key error leaves the store untouched; the indices are then rebuilt from
// scratch. With duplicate keys the last entry wins (informer.md §8.2, §16).
func (c *cache) Replace(list []any, resourceVersion string) error {
	items := make(map[string]any, len(list))
	for _, obj := range list {
		key, err := c.keyFunc(obj)
		if err != nil {
			return KeyError{Obj: obj, Err: err}
		}
		items[key] = obj
	}
	c.swap(items, resourceVersion)
	return nil
}

// replaceKeyed is Replace of list, whose objects' keys are keys (same length).
func (c *cache) replaceKeyed(list []any, keys []string, resourceVersion string) {
	items := make(map[string]any, len(list))
	for i, obj := range list {
		items[keys[i]] = obj
	}
	c.swap(items, resourceVersion)
}

// listKeyed is List with each object's key: both sorted by key, in one pass under the lock. The
// keys are the cache's own strings, so nothing is computed.
func (c *cache) listKeyed() (keys []string, objs []any) {
	c.lock.RLock()
	defer c.lock.RUnlock()
	keys = c.sortedKeysLocked()
	objs = make([]any, len(keys))
	for i, k := range keys {
		objs[i] = c.items[k]
	}
	return keys, objs
}

// swap makes items the contents, at resourceVersion, and rebuilds the indices.
func (c *cache) swap(items map[string]any, resourceVersion string) {
	c.lock.Lock()
	defer c.lock.Unlock()
	c.generation.Add(1)
	c.items = items
	c.rv = resourceVersion
	c.index.reset()
	if len(c.index.indexers) > 0 {
		// Sorted so that, if an IndexFunc panics, it panics on the same object every run.
		for _, k := range c.sortedKeysLocked() {
			c.index.update(nil, items[k], k)
		}
	}
}

// Generation returns a number that changes whenever the cache's contents (which keys it holds,
// which object each key maps to) may have changed, and only then: a reader that remembers what it
// looked up may reuse it while the generation is the same. It is not part of client-go's Store;
// the simulation's checks use it (the world's cache-before-notify check looks a notification's
// key up once for all the handlers it is delivered to, not once per handler). Changing an
// object in place, which client-go forbids, does not change it.
func (c *cache) Generation() uint64 { return c.generation.Load() }

// Resync does nothing: a cache has nothing to resync (informer.md §8.2).
func (c *cache) Resync() error { return nil }

// LastStoreSyncResourceVersion returns the resourceVersion last written (informer.md §8.2).
// client-go returns "" when its AtomicFIFO gate is off; ours always tracks it, and the informer
// decides whether to expose it.
func (c *cache) LastStoreSyncResourceVersion() string {
	c.lock.RLock()
	defer c.lock.RUnlock()
	return c.rv
}

// Bookmark sets the store RV without touching any object (informer.md §8.2, §6.2).
func (c *cache) Bookmark(resourceVersion string) {
	c.lock.Lock()
	defer c.lock.Unlock()
	c.rv = resourceVersion
}

// Transaction applies txns under one lock (informer.md §6.4, §8.2). Keys are computed first; a
// transaction whose key fails is skipped and reported in the returned error, whose
// SuccessfulIndices lists the ones applied. The store RV becomes that of the last applied
// transaction's object, when it has metadata. It returns nil when every transaction applied.
func (c *cache) Transaction(txns ...Transaction) *TransactionError {
	keys := make([]string, len(txns))
	ok := make([]int, 0, len(txns))
	var errs []error
	for i, t := range txns {
		key, err := c.keyFunc(t.Object)
		if err != nil {
			errs = append(errs, KeyError{Obj: t.Object, Err: err})
			continue
		}
		keys[i] = key
		ok = append(ok, i)
	}
	c.lock.Lock()
	defer c.lock.Unlock()
	for _, i := range ok {
		c.applyLocked(txns[i], keys[i])
	}
	if len(ok) > 0 {
		if rv, hasMeta := rvOf(txns[ok[len(ok)-1]].Object); hasMeta {
			c.rv = rv
		}
	}
	if len(errs) > 0 {
		return &TransactionError{SuccessfulIndices: ok, TotalTransactions: len(txns), Errors: errs}
	}
	return nil
}

// Index returns the objects that share at least one value with obj in the named index, sorted by
// key (informer.md §8.3).
func (c *cache) Index(indexName string, obj any) ([]any, error) {
	c.lock.RLock()
	defer c.lock.RUnlock()
	keys, err := c.index.keysMatching(indexName, obj)
	if err != nil {
		return nil, err
	}
	return c.objectsLocked(keys), nil
}

// ByIndex returns the objects with the given value in the named index, sorted by key. An unknown
// value gives an empty list; an unknown index an error (informer.md §8.3).
func (c *cache) ByIndex(indexName, indexedValue string) ([]any, error) {
	c.lock.RLock()
	defer c.lock.RUnlock()
	keys, err := c.index.keysByValue(indexName, indexedValue)
	if err != nil {
		return nil, err
	}
	return c.objectsLocked(keys), nil
}

func (c *cache) objectsLocked(keys keySet) []any {
	out := make([]any, 0, len(keys))
	for _, k := range keys.sorted() {
		out = append(out, c.items[k])
	}
	return out
}

// IndexKeys returns the keys of the objects with the given value in the named index, sorted
// (informer.md §8.3).
func (c *cache) IndexKeys(indexName, indexedValue string) ([]string, error) {
	c.lock.RLock()
	defer c.lock.RUnlock()
	keys, err := c.index.keysByValue(indexName, indexedValue)
	if err != nil {
		return nil, err
	}
	return keys.sorted(), nil
}

// ListIndexFuncValues returns the values the named index holds, sorted; an unknown index gives
// none (informer.md §8.3).
func (c *cache) ListIndexFuncValues(indexName string) []string {
	c.lock.RLock()
	defer c.lock.RUnlock()
	return c.index.values(indexName)
}

// GetIndexers returns a copy of the indexers.
func (c *cache) GetIndexers() Indexers {
	c.lock.RLock()
	defer c.lock.RUnlock()
	out := make(Indexers, len(c.index.indexers))
	for name, f := range c.index.indexers {
		out[name] = f
	}
	return out
}

// AddIndexers adds indexers and indexes the existing objects with them at once. A name that
// already exists gives "indexer conflict: [names]" and adds nothing (informer.md §8.3).
func (c *cache) AddIndexers(newIndexers Indexers) error {
	c.lock.Lock()
	defer c.lock.Unlock()
	if err := c.index.addIndexers(newIndexers); err != nil {
		return err
	}
	names := make([]string, 0, len(newIndexers))
	for name := range newIndexers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, k := range c.sortedKeysLocked() {
		for _, name := range names {
			c.index.updateOne(name, nil, c.items[k], k)
		}
	}
	return nil
}
