package informer

import (
	"github.com/informersim/informersim/internal/invariant"
)

// This file holds the informer's keyed processing: what handleDeltas and handleBatchDeltas do
// (informer.md §6.2, §6.4), for the deltas a RealFIFO pops with popKeyed, which come with the key
// each one was queued under. The key of an object is needed five times on the way from the queue
// to the listeners (the cache lookup that decides add versus update, the cache write, and the
// pop, cache and buffer step events), and computing it builds a new string each time; here it is
// computed once, at enqueue. Everything else is the same: the same cache writes and store RV,
// the same notifications, the same step events, in the same order. A popped item whose key does
// not compute, or of a type the keyed path does not handle (ReplacedAll, SyncAll, Bookmark), goes
// through handleDeltas or handleBatchDeltas unchanged.

// batchCall is one handler call of a batch, recorded as data until the whole batch is in the
// cache (informer.md §6.4).
type batchCall struct {
	kind     NotificationKind
	old, obj any
}

// handleKeyed is the informer's keyedProcessFunc: one delta is handled as handleDeltas would,
// several as handleBatchDeltas would. keys[i] is deltas[i]'s cache key, or "" where the queue
// kept none; handleKeyed computes those with the cache's key function.
func (s *sharedIndexInformer) handleKeyed(deltas []Delta, keys []string, isInInitialList bool) error {
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	if !s.fillKeys(deltas, keys) {
		if len(deltas) == 1 {
			return s.handleDeltas_locked(Deltas{deltas[0]}, isInInitialList)
		}
		return s.handleBatchDeltas_locked(deltas, isInInitialList)
	}
	s.emitPoppedKeyed(deltas, keys, isInInitialList)
	if len(deltas) == 1 {
		s.latchIfQueueSynced() // as handleDeltas does: a no-op for a RealFIFO (§5.3)
		s.applyKeyed(deltas[0], keys[0], isInInitialList)
		return nil
	}
	s.applyBatchKeyed(deltas, keys, isInInitialList)
	return nil
}

// fillKeys computes the keys the queue did not keep, and reports whether every delta can take
// the keyed path: its type is one processDeltasInBatch accepts (every other type is handled
// alone, by processDeltas) and its key computes.
func (s *sharedIndexInformer) fillKeys(deltas []Delta, keys []string) bool {
	for i, d := range deltas {
		if !batchable(d.Type) {
			return false
		}
		if keys[i] == "" {
			key, err := s.cache.keyFunc(d.Object)
			if err != nil {
				return false
			}
			keys[i] = key
		}
	}
	return true
}

// applyKeyed is processDeltas for one delta with its key: look the key up, write the cache, then
// notify (informer.md §6.2). With a key that computes, no step of processDeltas can fail.
func (s *sharedIndexInformer) applyKeyed(d Delta, key string, isInInitialList bool) {
	obj := d.Object
	if d.Type == Deleted {
		s.cache.deleteKeyed(key, obj)
		s.emitCacheWrite(StepCacheDeleted, key, obj)
		s.notify(NotificationDelete, nil, obj, key, isInInitialList)
		return
	}
	old, exists, _ := s.cache.GetByKey(key)
	s.cache.setKeyed(key, obj)
	if exists {
		s.emitCacheWrite(StepCacheUpdated, key, obj)
		s.notify(NotificationUpdate, old, obj, key, isInInitialList)
		return
	}
	s.emitCacheWrite(StepCacheAdded, key, obj)
	s.notify(NotificationAdd, nil, obj, key, isInInitialList)
}

// applyBatchKeyed is processDeltasInBatch with the keys (informer.md §6.4): add versus update is
// decided from the cache as it was before the batch, every write is applied in one transaction,
// the cache events follow in order, then the handler calls.
func (s *sharedIndexInformer) applyBatchKeyed(deltas []Delta, keys []string, isInInitialList bool) {
	txns, calls := s.batchTxns[:0], s.batchCalls[:0]
	for i, d := range deltas {
		obj := d.Object
		if d.Type == Deleted {
			txns = append(txns, Transaction{Type: TransactionTypeDelete, Object: obj})
			calls = append(calls, batchCall{kind: NotificationDelete, obj: obj})
			continue
		}
		if old, exists, _ := s.cache.GetByKey(keys[i]); exists {
			txns = append(txns, Transaction{Type: TransactionTypeUpdate, Object: obj})
			calls = append(calls, batchCall{kind: NotificationUpdate, old: old, obj: obj})
		} else {
			txns = append(txns, Transaction{Type: TransactionTypeAdd, Object: obj})
			calls = append(calls, batchCall{kind: NotificationAdd, obj: obj})
		}
	}
	s.cache.transactionKeyed(txns, keys)
	if s.observer != nil {
		for i, t := range txns {
			kind := StepCacheUpdated
			switch t.Type {
			case TransactionTypeAdd:
				kind = StepCacheAdded
			case TransactionTypeDelete:
				kind = StepCacheDeleted
			}
			s.emitCacheWrite(kind, keys[i], t.Object)
		}
	}
	// Kept for the next batch only after the calls: a handler that panics (a Runner's) leaves
	// them to be overwritten.
	s.batchTxns, s.batchCalls = txns, calls
	for i, c := range calls {
		s.notify(c.kind, c.old, c.obj, keys[i], isInInitialList)
	}
	clear(txns)
	clear(calls)
}

// notify makes one handler call of processing (informer.md §6.5): a Runner's own handler, or the
// distribution to the listeners, with the object's key for the buffer step event (withKey).
func (s *sharedIndexInformer) notify(kind NotificationKind, old, obj any, key string, isInInitialList bool) {
	if s.direct != nil {
		switch kind {
		case NotificationAdd:
			s.direct.OnAdd(obj, isInInitialList)
		case NotificationUpdate:
			s.direct.OnUpdate(old, obj)
		case NotificationDelete:
			s.direct.OnDelete(obj)
		}
		return
	}
	switch kind {
	case NotificationAdd:
		s.distribute(notification{kind: NotificationAdd, newObj: obj, isInInitialList: isInInitialList, key: key}, false)
	case NotificationUpdate:
		s.distribute(notification{kind: NotificationUpdate, oldObj: old, newObj: obj, key: key}, isSyncUpdate(old, obj))
	case NotificationDelete:
		s.distribute(notification{kind: NotificationDelete, oldObj: obj, key: key}, false)
	default:
		invariant.Check(false, "informer: unknown notification kind %d", kind)
	}
}

// emitCacheWrite is observedCache's event for a successful write of obj under key.
func (s *sharedIndexInformer) emitCacheWrite(kind StepEventKind, key string, obj any) {
	if s.observer == nil {
		return
	}
	e := StepEvent{Kind: kind, Key: key}
	e.ResourceVersion, e.Tombstone = describeRVTombstone(obj)
	s.observer(e)
}

// emitPoppedKeyed is emitPopped for deltas of the keyed path, whose keys are known.
func (s *sharedIndexInformer) emitPoppedKeyed(deltas []Delta, keys []string, isInInitialList bool) {
	if s.observer == nil {
		return
	}
	for i, d := range deltas {
		e := StepEvent{Kind: StepPopped, Delta: d.Type, InInitialList: isInInitialList, Key: keys[i]}
		e.ResourceVersion, e.Tombstone = describeRVTombstone(d.Object)
		s.observer(e)
	}
}
