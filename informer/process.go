package informer

import (
	"fmt"
	"slices"
	"strings"
)

// This file holds delta processing (informer.md §6.2–§6.4): how a popped item mutates the
// informer's cache and which notifications it produces. The rules are written once, in
// applyDeltas, applyRelist and applyBatch, over a deltaTarget that carries them out: storeTarget
// for any Store and ResourceEventHandler (processDeltas, processDeltasInBatch), keyedTarget for
// the informer's own cache and listeners with the keys the queue kept (process_keyed.go). They
// hold no state of their own.
//
// The one rule every path keeps (informer.md §13 rule 1): the cache is mutated before the
// handler hears of the change; for an atomic relist, the whole cache is swapped before the first
// notification.

// deltaTarget is where a popped item is applied: the cache written and the handler told. i is
// the index, in the pop, of the delta an operation is about; a target that kept the pop's keys
// (keyedTarget) finds the key there, one that did not (storeTarget) computes it as it needs it.
type deltaTarget interface {
	// cached returns the cached object under the key of delta i, whose object is obj; a key
	// that does not compute is not cached.
	cached(i int, obj any) (old any, exists bool)
	// write applies one cache write of delta i's object.
	write(i int, t TransactionType, obj any) error
	// canBatch reports whether transaction can apply a batch at once.
	canBatch() bool
	// transaction applies the writes of a batch, txns[i] from delta i, under one lock.
	transaction(txns []Transaction) *TransactionError
	// tell makes one handler call about delta i's object.
	tell(i int, kind NotificationKind, old, obj any)
	// tellKey makes one handler call about an object that is not a popped delta's (a relist's,
	// a resync's), whose cache key is key if the target kept keys (else "").
	tellKey(key string, kind NotificationKind, old, obj any)
	// relist classifies a relist's objects against the cache before the swap (informer.md §6.3
	// step 1): a tombstone for every cached key the list lacks, the cached predecessor (or nil)
	// of every listed object, and the listed objects' keys if the target keeps keys (else nil).
	relist(info ReplacedAllInfo) (tombs []DeletedFinalStateUnknown, olds []any, keys []string, err error)
	// tombstoneOrder permutes a relist's sorted tombstones, as rand.Shuffle; nil keeps them.
	tombstoneOrder() func(n int, swap func(i, j int))
	// replace swaps the whole cache for the relist's objects.
	replace(info ReplacedAllInfo) error
	// list returns the cached objects in key order, with their keys if the target keeps keys.
	list() (keys []string, objs []any)
	// bookmark records a bookmark's resourceVersion.
	bookmark(resourceVersion string)
}

// processDeltas applies deltas, oldest first, to store and notifies handler (informer.md §6.2),
// as applyDeltas says. order permutes the relist tombstones of a ReplacedAll, whose order
// client-go leaves to map iteration; it has rand.Shuffle's signature and may be nil (keep them
// sorted by key). keyFunc keys the objects of a ReplacedAll. The first store or key error
// abandons the rest of deltas and is returned (§6.2); the informer drops it.
func processDeltas(handler ResourceEventHandler, store Store, deltas Deltas, isInInitialList bool, keyFunc KeyFunc, order func(n int, swap func(i, j int))) error {
	return applyDeltas(storeTarget{store: store, handler: handler, keyFunc: keyFunc, order: order, init: isInInitialList}, deltas)
}

// applyDeltas applies deltas, oldest first, to t (informer.md §6.2):
//
//   - Added, Updated, Replaced, Sync: if the key is cached, an update write and OnUpdate(cached,
//     obj); otherwise an add write and OnAdd(obj, isInInitialList). The cache, not the event
//     type, decides between add and update (§13 rule 2).
//   - Deleted: a delete write (a tombstone deletes its Key) and OnDelete(obj), even if the key
//     was not cached.
//   - ReplacedAll: a whole relist, see applyRelist (§6.3).
//   - SyncAll: OnUpdate(o, o) for every cached object in key order, then the rest of deltas is
//     skipped, as in client-go.
//   - Bookmark: the cache records its RV, no notification.
//
// The first write error abandons the rest of deltas and is returned.
func applyDeltas[T deltaTarget](t T, deltas []Delta) error {
	for i, d := range deltas {
		obj := d.Object
		switch d.Type {
		case Added, Updated, Replaced, Sync:
			if old, exists := t.cached(i, obj); exists {
				if err := t.write(i, TransactionTypeUpdate, obj); err != nil {
					return err
				}
				t.tell(i, NotificationUpdate, old, obj)
			} else {
				// A key error from the lookup comes back from the add as well.
				if err := t.write(i, TransactionTypeAdd, obj); err != nil {
					return err
				}
				t.tell(i, NotificationAdd, nil, obj)
			}
		case Deleted:
			if err := t.write(i, TransactionTypeDelete, obj); err != nil {
				return err
			}
			t.tell(i, NotificationDelete, nil, obj)
		case ReplacedAll:
			info, ok := obj.(ReplacedAllInfo)
			if !ok {
				return fmt.Errorf("ReplacedAll did not contain ReplacedAllInfo: %T", obj)
			}
			if err := applyRelist(t, info); err != nil {
				return err
			}
		case SyncAll:
			keys, objs := t.list()
			for j, o := range objs {
				key := ""
				if keys != nil {
					key = cachedKey(keys[j], o)
				}
				t.tellKey(key, NotificationUpdate, o, o)
			}
			return nil
		case Bookmark:
			info, ok := obj.(BookmarkInfo)
			if !ok {
				return fmt.Errorf("bookmark delta did not contain BookmarkInfo: %T", obj)
			}
			t.bookmark(info.ResourceVersion)
		default:
			// client-go skips unknown types silently; ours says so, since only a bug makes one.
			return fmt.Errorf("informer: unknown delta type %q", d.Type)
		}
	}
	return nil
}

// applyRelist applies an atomic relist (informer.md §6.3):
//  1. with the cache as the known objects and nothing queued, compute a tombstone
//     {key, cached object} for every cached key absent from the list, and for every listed object
//     its cached predecessor, if any (t.relist);
//  2. swap the whole cache for the list before any notification;
//  3. OnDelete(tombstone) for each deletion, then OnUpdate(old, new) or OnAdd(new,
//     isInInitialList) for each listed object, in list order.
//
// Tombstones are sorted by key, then permuted by t's tombstone order. A key error in step 1 or a
// failed swap returns before the cache or handler is touched. Every listed object is classified
// against the pre-replace cache, so duplicate keys in a list give one notification each (§16).
func applyRelist[T deltaTarget](t T, info ReplacedAllInfo) error {
	tombs, olds, keys, err := t.relist(info)
	if err != nil {
		return err
	}
	orderTombstones(tombs, t.tombstoneOrder())
	if err := t.replace(info); err != nil {
		return err
	}
	for _, tomb := range tombs {
		t.tellKey(tomb.Key, NotificationDelete, nil, tomb)
	}
	for i, obj := range info.Objects {
		key := ""
		if keys != nil {
			key = keys[i]
		}
		if olds[i] != nil {
			t.tellKey(key, NotificationUpdate, olds[i], obj)
		} else {
			t.tellKey(key, NotificationAdd, nil, obj)
		}
	}
	return nil
}

// orderTombstones puts the tombstones of a relist in the order their deletions are told
// (informer.md §6.3): sorted by key, then permuted by order if it is non-nil (client-go takes the
// order from a Go map; the informer passes a shuffle drawn from its injected rand).
func orderTombstones(tombs []DeletedFinalStateUnknown, order func(n int, swap func(i, j int))) {
	slices.SortFunc(tombs, func(a, b DeletedFinalStateUnknown) int { return strings.Compare(a.Key, b.Key) })
	if order != nil && len(tombs) > 1 {
		order(len(tombs), func(i, j int) { tombs[i], tombs[j] = tombs[j], tombs[i] })
	}
}

// processDeltasInBatch applies a batch of deltas with distinct keys to store and notifies
// handler (informer.md §6.4), as applyBatch says. Without transaction support the deltas are
// processed one at a time and the errors collected.
func processDeltasInBatch(handler ResourceEventHandler, store Store, deltas []Delta, isInInitialList bool, keyFunc KeyFunc) error {
	t := storeTarget{store: store, handler: handler, keyFunc: keyFunc, init: isInInitialList}
	if !t.canBatch() {
		var errs []error
		for _, d := range deltas {
			if err := applyDeltas(t, []Delta{d}); err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) > 0 {
			return fmt.Errorf("unexpected error when handling deltas: %v", errs)
		}
		return nil
	}
	_, _, err := applyBatch(t, deltas, nil, nil)
	return err
}

// applyBatch applies a batch of deltas with distinct keys (informer.md §6.4): it decides add
// versus update for each delta from the cache as it was before the batch, applies all writes in
// one transaction (one lock), then calls the handlers in order, so each handler call sees the
// whole batch applied. If some writes fail (key errors), only the successful ones get calls and
// an error is returned. A delta type other than Added, Updated, Replaced, Sync or Deleted is an
// error and nothing is applied. txns and calls are scratch space (may be nil), returned grown.
func applyBatch[T deltaTarget](t T, deltas []Delta, txns []Transaction, calls []batchCall) ([]Transaction, []batchCall, error) {
	for i, d := range deltas {
		if !batchable(d.Type) {
			return txns, calls, fmt.Errorf("Delta type %s is not supported in batch processing", d.Type) //nolint:staticcheck // client-go's text
		}
		var old any
		exists := false
		if d.Type != Deleted {
			old, exists = t.cached(i, d.Object)
		}
		txn, c := batchEntry(d, old, exists)
		txns, calls = append(txns, txn), append(calls, c)
	}
	if terr := t.transaction(txns); terr != nil {
		for _, i := range terr.SuccessfulIndices {
			t.tell(i, calls[i].kind, calls[i].old, calls[i].obj)
		}
		return txns, calls, fmt.Errorf("not all items in the batch successfully processed: %s", terr.Error())
	}
	for i, c := range calls {
		t.tell(i, c.kind, c.old, c.obj)
	}
	return txns, calls, nil
}

// batchCall is one handler call of a batch, recorded as data until the whole batch is in the
// cache (informer.md §6.4): one allocation per batch instead of client-go's closure per delta;
// the calls made, their arguments and their order are the same.
type batchCall struct {
	kind     NotificationKind
	old, obj any
}

// batchEntry is what a batch does with d (informer.md §6.4), whose type batchable accepts: its
// cache write and its handler call. old and exists are d's key's cached object as the cache was
// before the batch (not looked up for a Deleted delta); they decide add versus update.
func batchEntry(d Delta, old any, exists bool) (Transaction, batchCall) {
	switch {
	case d.Type == Deleted:
		return Transaction{Type: TransactionTypeDelete, Object: d.Object}, batchCall{kind: NotificationDelete, obj: d.Object}
	case exists:
		return Transaction{Type: TransactionTypeUpdate, Object: d.Object}, batchCall{kind: NotificationUpdate, old: old, obj: d.Object}
	default:
		return Transaction{Type: TransactionTypeAdd, Object: d.Object}, batchCall{kind: NotificationAdd, obj: d.Object}
	}
}

// storeTarget is a deltaTarget over any Store and ResourceEventHandler: keys are computed by the
// store as it needs them (keyFunc keys a relist's objects), writes may fail, and every call goes
// to handler. The informer uses it where the keyed path cannot go (a key that does not compute,
// a queue that kept none), with its cache wrapped to report writes (observedCache).
type storeTarget struct {
	store   Store
	handler ResourceEventHandler
	keyFunc KeyFunc
	order   func(n int, swap func(i, j int))
	init    bool // the pop's isInInitialList
}

func (t storeTarget) cached(_ int, obj any) (any, bool) {
	if old, exists, err := t.store.Get(obj); err == nil && exists {
		return old, true
	}
	return nil, false
}

func (t storeTarget) write(_ int, typ TransactionType, obj any) error {
	switch typ {
	case TransactionTypeAdd:
		return t.store.Add(obj)
	case TransactionTypeUpdate:
		return t.store.Update(obj)
	default:
		return t.store.Delete(obj)
	}
}

func (t storeTarget) canBatch() bool {
	_, ok := t.store.(TransactionStore)
	return ok
}

func (t storeTarget) transaction(txns []Transaction) *TransactionError {
	return t.store.(TransactionStore).Transaction(txns...)
}

func (t storeTarget) tell(_ int, kind NotificationKind, old, obj any) {
	t.tellKey("", kind, old, obj)
}

func (t storeTarget) tellKey(_ string, kind NotificationKind, old, obj any) {
	switch kind {
	case NotificationUpdate:
		t.handler.OnUpdate(old, obj)
	case NotificationAdd:
		t.handler.OnAdd(obj, t.init)
	case NotificationDelete:
		t.handler.OnDelete(obj)
	}
}

func (t storeTarget) relist(info ReplacedAllInfo) ([]DeletedFinalStateUnknown, []any, []string, error) {
	var tombs []DeletedFinalStateUnknown
	olds := make([]any, 0, len(info.Objects))
	err := reconcileReplacement(nil, t.store, info.Objects, t.keyFunc,
		func(tomb DeletedFinalStateUnknown) error {
			tombs = append(tombs, tomb)
			return nil
		},
		func(obj any) error {
			old, _ := t.cached(0, obj)
			olds = append(olds, old)
			return nil
		})
	return tombs, olds, nil, err
}

func (t storeTarget) tombstoneOrder() func(n int, swap func(i, j int)) { return t.order }

func (t storeTarget) replace(info ReplacedAllInfo) error {
	return t.store.Replace(info.Objects, info.ResourceVersion)
}

func (t storeTarget) list() ([]string, []any) { return nil, t.store.List() }

func (t storeTarget) bookmark(resourceVersion string) { t.store.Bookmark(resourceVersion) }
