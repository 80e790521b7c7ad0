package informer

import (
	"fmt"
	"slices"
	"strings"
)

// This file holds delta processing (informer.md §6.2–§6.4): how a popped item mutates the
// informer's cache and which notifications it produces. The rules are written once, in
// applyDeltas, applyRelist and applyBatch, over a deltaTarget that carries them out: on any Store
// and ResourceEventHandler (processDeltas, processDeltasInBatch), or on the informer's own cache
// and listeners with the keys the queue kept (process_keyed.go). They hold no state of their own.
//
// The one rule every path keeps (informer.md §13 rule 1): the cache is mutated before the
// handler hears of the change; for an atomic relist, the whole cache is swapped before the first
// notification.

// deltaTarget is where a popped item is applied: the cache written and the handler told. It has
// two modes. With s set it is the informer's keyed path (process_keyed.go): s's own cache,
// written under keys[i] for delta i (keys the queue kept or fillKeys computed; the listed
// objects' keys of a relist are in s.listKeys), each popped object's RV read once (poppedRV), the
// writes reported to s's observer and every call made by s.notify; none of its writes can fail.
// Without s it works on any store and handler, which compute keys as they need them (keyFunc
// keys a relist's objects), and writes may fail. One concrete type rather than an interface, so
// that the keyed path's calls stay direct (a generic function's method calls would go through
// its dictionary).
type deltaTarget struct {
	s    *sharedIndexInformer
	keys []string

	store   Store
	handler ResourceEventHandler
	keyFunc KeyFunc
	order   func(n int, swap func(i, j int)) // permutes a relist's sorted tombstones; may be nil

	init bool // the pop's isInInitialList
}

// processDeltas applies deltas, oldest first, to store and notifies handler (informer.md §6.2),
// as applyDeltas says. order permutes the relist tombstones of a ReplacedAll, whose order
// client-go leaves to map iteration; it has rand.Shuffle's signature and may be nil (keep them
// sorted by key). keyFunc keys the objects of a ReplacedAll. The first store or key error
// abandons the rest of deltas and is returned (§6.2); the informer drops it.
func processDeltas(handler ResourceEventHandler, store Store, deltas Deltas, isInInitialList bool, keyFunc KeyFunc, order func(n int, swap func(i, j int))) error {
	return applyDeltas(&deltaTarget{store: store, handler: handler, keyFunc: keyFunc, order: order, init: isInInitialList}, deltas)
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
func applyDeltas(t *deltaTarget, deltas []Delta) error {
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
//     its cached predecessor, if any;
//  2. swap the whole cache for the list before any notification;
//  3. OnDelete(tombstone) for each deletion, then OnUpdate(old, new) or OnAdd(new,
//     isInInitialList) for each listed object, in list order.
//
// Tombstones are sorted by key, then permuted by t.order (the informer's shuffle in keyed mode). A key error in step 1 or a
// failed swap returns before the cache or handler is touched. Every listed object is classified
// against the pre-replace cache, so duplicate keys in a list give one notification each (§16).
func applyRelist(t *deltaTarget, info ReplacedAllInfo) error {
	tombs, olds, keys, err := t.relist(info)
	if err != nil {
		return err
	}
	orderTombstones(tombs, t.order)
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
	t := &deltaTarget{store: store, handler: handler, keyFunc: keyFunc, init: isInInitialList}
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
func applyBatch(t *deltaTarget, deltas []Delta, txns []Transaction, calls []batchCall) ([]Transaction, []batchCall, error) {
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

// The operations of a deltaTarget; i is the index, in the pop, of the delta an operation is about.

// cached returns the cached object under the key of delta i, whose object is obj; a key that
// does not compute is not cached.
func (t *deltaTarget) cached(i int, obj any) (any, bool) {
	if t.s != nil {
		old, exists, _ := t.s.cache.GetByKey(t.keys[i])
		return old, exists
	}
	if old, exists, err := t.store.Get(obj); err == nil && exists {
		return old, true
	}
	return nil, false
}

// write applies one cache write of delta i's object.
func (t *deltaTarget) write(i int, typ TransactionType, obj any) error {
	if t.s != nil {
		t.writeKeyed(i, typ, obj)
		return nil
	}
	switch typ {
	case TransactionTypeAdd:
		return t.store.Add(obj)
	case TransactionTypeUpdate:
		return t.store.Update(obj)
	default:
		return t.store.Delete(obj)
	}
}

// canBatch reports whether transaction can apply a batch at once.
func (t *deltaTarget) canBatch() bool {
	if t.s != nil {
		return true
	}
	_, ok := t.store.(TransactionStore)
	return ok
}

// transaction applies the writes of a batch, txns[i] from delta i, under one lock.
func (t *deltaTarget) transaction(txns []Transaction) *TransactionError {
	if t.s != nil {
		t.transactionKeyed(txns)
		return nil
	}
	return t.store.(TransactionStore).Transaction(txns...)
}

// tell makes one handler call about delta i's object.
func (t *deltaTarget) tell(i int, kind NotificationKind, old, obj any) {
	if t.s != nil {
		// The objRV as far as it was read: notify reads what it needs and is still unread.
		t.s.notify(kind, old, obj, t.s.poppedRVs[i], t.keys[i], t.init)
		return
	}
	t.tellKey("", kind, old, obj)
}

// tellKey makes one handler call about an object that is not a popped delta's (a relist's, a
// resync's), whose cache key is key in keyed mode (else "").
func (t *deltaTarget) tellKey(key string, kind NotificationKind, old, obj any) {
	if t.s != nil {
		t.s.notify(kind, old, obj, objRV{}, key, t.init)
		return
	}
	switch kind {
	case NotificationUpdate:
		t.handler.OnUpdate(old, obj)
	case NotificationAdd:
		t.handler.OnAdd(obj, t.init)
	case NotificationDelete:
		t.handler.OnDelete(obj)
	}
}

// relist classifies a relist's objects against the cache before the swap (informer.md §6.3
// step 1): a tombstone for every cached key the list lacks, the cached predecessor (or nil) of
// every listed object, and in keyed mode the listed objects' keys (else nil).
func (t *deltaTarget) relist(info ReplacedAllInfo) ([]DeletedFinalStateUnknown, []any, []string, error) {
	if t.s != nil {
		tombs, olds := t.relistKeyed(info)
		return tombs, olds, t.s.listKeys, nil
	}
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

// replace swaps the whole cache for the relist's objects.
func (t *deltaTarget) replace(info ReplacedAllInfo) error {
	if t.s != nil {
		t.s.cache.replaceKeyed(info.Objects, t.s.listKeys, info.ResourceVersion)
		t.s.emit(StepEvent{Kind: StepCacheReplaced, Count: len(info.Objects), ResourceVersion: info.ResourceVersion})
		return nil
	}
	return t.store.Replace(info.Objects, info.ResourceVersion)
}

// list returns the cached objects in key order, and in keyed mode their keys (else nil).
func (t *deltaTarget) list() ([]string, []any) {
	if t.s != nil {
		return t.s.cache.listKeyed()
	}
	return nil, t.store.List()
}

// bookmark records a bookmark's resourceVersion.
func (t *deltaTarget) bookmark(resourceVersion string) {
	if t.s != nil {
		t.s.cache.Bookmark(resourceVersion)
		return
	}
	t.store.Bookmark(resourceVersion)
}
