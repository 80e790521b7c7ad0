package informer

import "github.com/informersim/informersim/internal/invariant"

// This file holds the informer's keyed processing: the deltas a RealFIFO pops with popKeyed,
// which come with the key each one was queued under, applied by the rules of process.go
// (applyDeltas, applyBatch, applyRelist; informer.md §6.2-§6.4) over a deltaTarget in keyed mode. The key of an
// object is needed five times on the way from the queue to the listeners (the cache lookup that
// decides add versus update, the cache write, and the pop, cache and buffer step events), and
// computing it builds a new string each time; here it is computed once, at enqueue. The rules
// being the same code, so are the cache writes and store RV, the notifications and the step
// events, in the same order. A relist (ReplacedAll) needs the key of every listed object four
// times (the deletions it implies, the lookup of each predecessor, the cache swap, the
// notification), and a resync (SyncAll) one per cached object; here, once, or never (a resync
// uses the cache's own keys). A popped item whose key does not compute goes through
// handleDeltas or handleBatchDeltas: the same rules over the informer's Store.

// handleKeyed is the informer's keyedProcessFunc: one delta is handled as handleDeltas would,
// several as handleBatchDeltas would, by applyDeltas and applyBatch over a keyed deltaTarget. keys[i]
// is deltas[i]'s cache key, or "" where the queue kept none; handleKeyed computes those with the
// cache's key function. Where a key does not compute, the pop goes to handleDeltas_locked or
// handleBatchDeltas_locked, the same rules over the informer's Store, which report the error.
func (s *sharedIndexInformer) handleKeyed(deltas []Delta, keys []string, isInInitialList bool) error {
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	t := &deltaTarget{s: s, keys: keys, init: isInInitialList}
	if len(deltas) == 1 {
		switch deltas[0].Type {
		case ReplacedAll:
			if info, ok := deltas[0].Object.(ReplacedAllInfo); ok && s.fillListKeys(info.Objects) {
				s.emitPopped(deltas, isInInitialList)
				s.latchIfQueueSynced()
				t.order = s.shuffle
				err := applyDeltas(t, deltas)
				clear(s.listKeys)
				s.listKeys = s.listKeys[:0]
				return err
			}
		case SyncAll:
			s.emitPopped(deltas, isInInitialList)
			s.latchIfQueueSynced()
			return applyDeltas(t, deltas)
		}
	}
	if !s.fillKeys(deltas, keys) {
		if len(deltas) == 1 {
			return s.handleDeltas_locked(Deltas{deltas[0]}, isInInitialList)
		}
		return s.handleBatchDeltas_locked(deltas, isInInitialList)
	}
	s.poppedRVs = append(s.poppedRVs[:0], make([]objRV, len(deltas))...)
	defer func() {
		clear(s.poppedRVs) // the texts point into the objects
		s.poppedRVs = s.poppedRVs[:0]
	}()
	s.emitPoppedKeyed(deltas, keys, isInInitialList)
	if len(deltas) == 1 {
		s.latchIfQueueSynced() // as handleDeltas does: a no-op for a RealFIFO (§5.3)
		return applyDeltas(t, deltas)
	}
	txns, calls, err := applyBatch(t, deltas, s.batchTxns[:0], s.batchCalls[:0])
	clear(txns)
	clear(calls)
	s.batchTxns, s.batchCalls = txns, calls
	return err
}

// writeKeyed is deltaTarget.write in keyed mode.
func (t *deltaTarget) writeKeyed(i int, typ TransactionType, obj any) {
	rv := t.s.poppedRV(i, obj) // for the cache's RV, its event and the notification
	key := t.keys[i]
	if typ == TransactionTypeDelete {
		t.s.cache.deleteKeyed(key, obj, rv)
	} else {
		t.s.cache.setKeyed(key, obj, rv)
	}
	t.s.emitCacheWrite(cacheWriteKind(typ), key, obj, rv)
}

// transactionKeyed is deltaTarget.transaction in keyed mode.
func (t *deltaTarget) transactionKeyed(txns []Transaction) {
	s := t.s
	last := len(txns) - 1
	s.cache.transactionKeyed(txns, t.keys, s.poppedRV(last, txns[last].Object))
	if s.observer != nil {
		for i, txn := range txns {
			s.emitCacheWrite(cacheWriteKind(txn.Type), t.keys[i], txn.Object, s.poppedRV(i, txn.Object))
		}
	}
}

// relistKeyed is deltaTarget.relist in keyed mode, for a relist whose objects' keys
// fillListKeys put in s.listKeys.
func (t *deltaTarget) relistKeyed(info ReplacedAllInfo) ([]DeletedFinalStateUnknown, []any) {
	s := t.s
	keys := s.listKeys
	listed := make(map[string]struct{}, len(keys))
	for _, key := range keys {
		listed[key] = struct{}{}
	}
	var tombs []DeletedFinalStateUnknown
	for _, key := range s.cache.ListKeys() {
		if _, ok := listed[key]; ok {
			continue
		}
		obj, exists, _ := s.cache.GetByKey(key)
		if !exists {
			obj = nil
		}
		tombs = append(tombs, DeletedFinalStateUnknown{Key: key, Obj: obj})
	}
	olds := make([]any, len(info.Objects))
	for i, key := range keys {
		if old, exists, _ := s.cache.GetByKey(key); exists {
			olds[i] = old
		}
	}
	return tombs, olds
}

// objRV is an object's resourceVersion as the informer's processing reads it: the text
// describeRV gives (a tombstone's last known object's) for the step events, and whether the
// object itself has metadata, which decides whether the cache takes its RV as the store RV
// (rvOf) and whether an update can be sync-class (isSyncUpdate). The zero objRV is "not read".
//
// The keyed path reads each popped object's RV at most once (poppedRV) and hands it to the pop
// event, the cache write, its event and the notification, where each used to read it again
// from the object's metadata (two nested map lookups on memory a hundred other events have
// since pushed out of the CPU's cache, about as costly as everything else the pop does). No user
// code runs between those reads but the cache's index functions, which may not change the
// object (client-go forbids changing a cached object), so they would all have found the same
// text.
type objRV struct {
	rv   string // describeRV(obj)
	meta bool   // meta.Accessor(obj) works: obj has metadata of its own (not a tombstone)
	read bool   // rv and meta are obj's; false: not read yet
}

// readRV reads obj's objRV.
func readRV(obj any) objRV {
	if t, ok := obj.(DeletedFinalStateUnknown); ok {
		return objRV{rv: describeRV(t.Obj), read: true}
	}
	rv, meta := rvOf(obj)
	return objRV{rv: rv, meta: meta, read: true}
}

// poppedRV returns the objRV of deltas[i] of the pop being processed, reading it the first time
// it is asked for (see objRV).
func (s *sharedIndexInformer) poppedRV(i int, obj any) objRV {
	r := &s.poppedRVs[i]
	if !r.read {
		*r = readRV(obj)
	}
	return *r
}

// fillKeys computes the keys the queue did not keep, and reports whether every delta can take
// the keyed path: its type is one applyBatch accepts (every other type is handled alone, by
// handleDeltas over the informer's Store) and its key computes. The queue has checked the keys it kept
// (RealFIFO.checkKeptKey): the object of a non-atomic resync's Sync delta is the cached object,
// which a handler may have renamed (it must not) after it was queued, and then the queue hands
// no key and it is computed here, as the unkeyed path computes it.
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

// notify makes one handler call of processing (informer.md §6.5): a Runner's own handler, or the
// distribution to the listeners, with the object's key for the buffer step event (withKey). rv
// is obj's objRV if the caller has read it (else the zero objRV): the notification's RVs, which
// the observer's events carry, and an update's sync class are worked out here, each object's
// RV read once.
func (s *sharedIndexInformer) notify(kind NotificationKind, old, obj any, rv objRV, key string, isInInitialList bool) {
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
	var n notification
	switch kind {
	case NotificationAdd:
		n = notification{kind: NotificationAdd, newObj: obj, isInInitialList: isInInitialList}
	case NotificationUpdate:
		n = notification{kind: NotificationUpdate, oldObj: old, newObj: obj}
	case NotificationDelete:
		n = notification{kind: NotificationDelete, oldObj: obj}
	default:
		invariant.Check(false, "informer: unknown notification kind %d", kind)
	}
	n.key = key
	isSync := false
	if kind == NotificationUpdate || s.observer != nil {
		if !rv.read {
			rv = readRV(obj)
		}
		n.rv, n.rvsRead = rv.rv, true
		if kind == NotificationUpdate {
			// isSyncUpdate's classification, from the RVs read once for it and the events.
			oldRV := readRV(old)
			n.oldRV = oldRV.rv
			isSync = oldRV.meta && rv.meta && oldRV.rv == rv.rv
		}
	}
	s.distribute(n, isSync)
}

// emitCacheWrite is observedCache's event for a successful write of obj, whose objRV is rv,
// under key.
func (s *sharedIndexInformer) emitCacheWrite(kind StepEventKind, key string, obj any, rv objRV) {
	if s.observer == nil {
		return
	}
	_, tomb := obj.(DeletedFinalStateUnknown)
	s.observer(StepEvent{Kind: kind, Key: key, ResourceVersion: rv.rv, Tombstone: tomb})
}

// emitPoppedKeyed is emitPopped for deltas of the keyed path, whose keys are known; each RV it
// reads is kept for the rest of the pop (poppedRV).
func (s *sharedIndexInformer) emitPoppedKeyed(deltas []Delta, keys []string, isInInitialList bool) {
	if s.observer == nil {
		return
	}
	for i, d := range deltas {
		e := StepEvent{Kind: StepPopped, Delta: d.Type, InInitialList: isInInitialList, Key: keys[i]}
		_, e.Tombstone = d.Object.(DeletedFinalStateUnknown)
		e.ResourceVersion = s.poppedRV(i, d.Object).rv
		s.observer(e)
	}
}

// fillListKeys computes the cache key of every object of a relist into s.listKeys, and reports
// whether they all computed; if one did not, applyRelist over the informer's Store reports it.
func (s *sharedIndexInformer) fillListKeys(objs []any) bool {
	keys := s.listKeys[:0]
	for _, obj := range objs {
		key, err := s.cache.keyFunc(obj)
		if err != nil {
			clear(keys)
			s.listKeys = keys[:0]
			return false
		}
		keys = append(keys, key)
	}
	s.listKeys = keys
	return true
}

// cachedKey returns the key the buffer step event of a notification about obj, found in the cache
// under key, names: key itself, unless obj no longer has that key (a handler changed the name of
// a cached object, which it must not do, but then the event says what describeKey says, as it
// always did). The check builds no string.
func cachedKey(key string, obj any) string {
	if hasKey(key, obj) {
		return key
	}
	return describeKey(obj)
}

// hasKey reports whether DeletionHandlingMetaNamespaceKeyFunc(obj) is key, without building the
// key.
func hasKey(key string, obj any) bool {
	switch o := obj.(type) {
	case DeletedFinalStateUnknown:
		return o.Key == key
	case ExplicitKey:
		return string(o) == key
	case nil:
		return false
	}
	ns, name, err := namespaceAndName(obj)
	return err == nil && isKey(key, ns, name)
}
