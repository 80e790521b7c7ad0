package informer

import (
	"fmt"
	"slices"
	"strings"
)

// This file holds delta processing (informer.md §6.2–§6.4): how a popped item mutates the
// informer's cache and which notifications it produces. The informer's process loop calls these
// functions; they hold no state of their own.
//
// The one rule every path keeps (informer.md §13 rule 1): the cache is mutated before the
// handler hears of the change; for an atomic relist, the whole cache is swapped before the first
// notification.

// processDeltas applies deltas, oldest first, to store and notifies handler (informer.md §6.2):
//
//   - Added, Updated, Replaced, Sync: if the key is cached, store.Update and OnUpdate(cached,
//     obj); otherwise store.Add and OnAdd(obj, isInInitialList). The cache, not the event type,
//     decides between add and update (§13 rule 2).
//   - Deleted: store.Delete (a tombstone deletes its Key) and OnDelete(obj), even if the key was
//     not cached.
//   - ReplacedAll: a whole relist, see processReplacedAll (§6.3).
//   - SyncAll: OnUpdate(o, o) for every cached object in store.List() order (sorted by key for our
//     cache), then the rest of deltas is skipped, as in client-go.
//   - Bookmark: store.Bookmark(rv), no notification.
//
// order permutes the relist tombstones of a ReplacedAll, whose order client-go leaves to map
// iteration; it has rand.Shuffle's signature and may be nil (keep them sorted by key). The informer
// passes a shuffle drawn from its injected rand so the simulator explores the orders.
//
// keyFunc keys the objects of a ReplacedAll (the informer passes its cache's key function).
// The first store or key error abandons the rest of deltas and is returned (§6.2); the informer
// drops it.
func processDeltas(handler ResourceEventHandler, store Store, deltas Deltas, isInInitialList bool, keyFunc KeyFunc, order func(n int, swap func(i, j int))) error {
	for _, d := range deltas {
		obj := d.Object
		switch d.Type {
		case Added, Updated, Replaced, Sync:
			if old, exists, err := store.Get(obj); err == nil && exists {
				if err := store.Update(obj); err != nil {
					return err
				}
				handler.OnUpdate(old, obj)
			} else {
				// A key error from Get comes back from Add as well.
				if err := store.Add(obj); err != nil {
					return err
				}
				handler.OnAdd(obj, isInInitialList)
			}
		case Deleted:
			if err := store.Delete(obj); err != nil {
				return err
			}
			handler.OnDelete(obj)
		case ReplacedAll:
			info, ok := obj.(ReplacedAllInfo)
			if !ok {
				return fmt.Errorf("ReplacedAll did not contain ReplacedAllInfo: %T", obj)
			}
			if err := processReplacedAll(handler, store, info, isInInitialList, keyFunc, order); err != nil {
				return err
			}
		case SyncAll:
			for _, o := range store.List() {
				handler.OnUpdate(o, o)
			}
			return nil
		case Bookmark:
			info, ok := obj.(BookmarkInfo)
			if !ok {
				return fmt.Errorf("bookmark delta did not contain BookmarkInfo: %T", obj)
			}
			store.Bookmark(info.ResourceVersion)
		default:
			// client-go skips unknown types silently; ours says so, since only a bug makes one.
			return fmt.Errorf("informer: unknown delta type %q", d.Type)
		}
	}
	return nil
}

// processReplacedAll applies an atomic relist (informer.md §6.3):
//  1. with the cache as the known objects and nothing queued, compute a tombstone
//     {key, cached object} for every cached key absent from the list, and for every listed object
//     its cached predecessor, if any;
//  2. store.Replace(objects, rv): the whole cache is swapped before any notification;
//  3. OnDelete(tombstone) for each deletion, then OnUpdate(old, new) or OnAdd(new,
//     isInInitialList) for each listed object, in list order.
//
// Tombstones are sorted by key, then permuted by order (if non-nil). A key error in step 1 or a
// failed Replace returns before the cache or handler is touched. Every listed object is classified
// against the pre-replace cache, so duplicate keys in a list give one notification each (§16).
func processReplacedAll(handler ResourceEventHandler, store Store, info ReplacedAllInfo, isInInitialList bool, keyFunc KeyFunc, order func(n int, swap func(i, j int))) error {
	type replacement struct{ old, new any }
	var tombs []DeletedFinalStateUnknown
	reps := make([]replacement, 0, len(info.Objects))
	err := reconcileReplacement(nil, store, info.Objects, keyFunc,
		func(t DeletedFinalStateUnknown) error {
			tombs = append(tombs, t)
			return nil
		},
		func(obj any) error {
			r := replacement{new: obj}
			if old, exists, err := store.Get(obj); err == nil && exists {
				r.old = old
			}
			reps = append(reps, r)
			return nil
		})
	if err != nil {
		return err
	}
	orderTombstones(tombs, order)
	if err := store.Replace(info.Objects, info.ResourceVersion); err != nil {
		return err
	}
	for _, t := range tombs {
		handler.OnDelete(t)
	}
	for _, r := range reps {
		if r.old != nil {
			handler.OnUpdate(r.old, r.new)
		} else {
			handler.OnAdd(r.new, isInInitialList)
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

// processDeltasInBatch applies a batch of deltas with distinct keys (informer.md §6.4). With a
// [TransactionStore] it decides add versus update for each delta from the cache as it was before
// the batch, applies all writes in one Transaction (one lock), then calls the handlers in order,
// so each handler call sees the whole batch applied. If some transactions fail (key errors), only
// the successful ones get callbacks and an error is returned. A delta type other than Added,
// Updated, Replaced, Sync or Deleted is an error and nothing is applied. Without transaction
// support the deltas are processed one at a time and the errors collected.
func processDeltasInBatch(handler ResourceEventHandler, store Store, deltas []Delta, isInInitialList bool, keyFunc KeyFunc) error {
	ts, ok := store.(TransactionStore)
	if !ok {
		var errs []error
		for _, d := range deltas {
			if err := processDeltas(handler, store, Deltas{d}, isInInitialList, keyFunc, nil); err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) > 0 {
			return fmt.Errorf("unexpected error when handling deltas: %v", errs)
		}
		return nil
	}

	txns := make([]Transaction, 0, len(deltas))
	calls := make([]batchCall, 0, len(deltas))
	for _, d := range deltas {
		if !batchable(d.Type) {
			return fmt.Errorf("Delta type %s is not supported in batch processing", d.Type) //nolint:staticcheck // client-go's text
		}
		var old any
		exists := false
		if d.Type != Deleted {
			if o, ok, err := store.Get(d.Object); err == nil && ok {
				old, exists = o, true
			}
		}
		t, c := batchEntry(d, old, exists)
		txns, calls = append(txns, t), append(calls, c)
	}
	if terr := ts.Transaction(txns...); terr != nil {
		for _, i := range terr.SuccessfulIndices {
			calls[i].tell(handler, isInInitialList)
		}
		return fmt.Errorf("not all items in the batch successfully processed: %s", terr.Error())
	}
	for _, c := range calls {
		c.tell(handler, isInInitialList)
	}
	return nil
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

// tell makes the call c on handler.
func (c batchCall) tell(handler ResourceEventHandler, isInInitialList bool) {
	switch c.kind {
	case NotificationUpdate:
		handler.OnUpdate(c.old, c.obj)
	case NotificationAdd:
		handler.OnAdd(c.obj, isInInitialList)
	case NotificationDelete:
		handler.OnDelete(c.obj)
	}
}
