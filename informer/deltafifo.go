package informer

import (
	"fmt"

	"github.com/informersim/informersim/internal/invariant"
)

// This file holds DeltaFIFO, client-go's legacy queue (informer.md §5.2), used when the
// InOrderInformers gate is off. Each key has one entry holding its Deltas; a key keeps its place in
// line while it accumulates deltas. Like RealFIFO it is a step-driven core: no lock, no blocking.
//
// Determinism: items is a map, but nothing observable iterates it. Replace walks the queue slice
// (the order keys were queued) instead of client-go's map order, and knownObjects.ListKeys(),
// which our cache returns sorted.

// DeltaFIFOOptions configures a [DeltaFIFO].
type DeltaFIFOOptions struct {
	// KeyFunction computes keys; nil means [MetaNamespaceKeyFunc].
	KeyFunction KeyFunc
	// KnownObjects is the informer's cache, or nil. With it, Delete of a key neither known nor
	// queued is dropped, Replace makes tombstones for known keys missing from the list, and
	// Resync has something to resync.
	KnownObjects KeyListerGetter
	// EmitDeltaTypeReplaced makes Replace emit Replaced deltas instead of Sync; the informer sets it.
	EmitDeltaTypeReplaced bool
	// Transformer, if set, rewrites each object as it is enqueued (not tombstones, not resyncs).
	Transformer TransformFunc
}

// DeltaFIFO is client-go's DeltaFIFO as a step-driven core (informer.md §5.2).
//
// It is not safe for concurrent use: the caller serialises every call.
type DeltaFIFO struct {
	keyFunc      KeyFunc
	knownObjects KeyListerGetter
	emitReplaced bool
	transformer  TransformFunc

	// items maps each queued key to its deltas, oldest first.
	// Invariant: a key is in items iff it is in queue, exactly once, and its Deltas are non-empty.
	items map[string]Deltas
	queue []string

	populated              bool
	initialPopulationCount int
	synced                 bool
	closed                 bool
}

var _ Queue = (*DeltaFIFO)(nil)

// NewDeltaFIFOWithOptions returns an empty DeltaFIFO.
func NewDeltaFIFOWithOptions(opts DeltaFIFOOptions) *DeltaFIFO {
	if opts.KeyFunction == nil {
		opts.KeyFunction = MetaNamespaceKeyFunc
	}
	return &DeltaFIFO{
		keyFunc:      opts.KeyFunction,
		knownObjects: opts.KnownObjects,
		emitReplaced: opts.EmitDeltaTypeReplaced,
		transformer:  opts.Transformer,
		items:        map[string]Deltas{},
	}
}

// KeyOf returns the key of an object, of the newest object of a Deltas, or of a tombstone
// (informer.md §5.2; client-go TestDeltaFIFO_KeyOf).
func (f *DeltaFIFO) KeyOf(obj any) (string, error) {
	return queuedKeyOf(f.keyFunc, obj)
}

// queuedKeyOf is the key of something a queue holds: the newest object of a Deltas (an empty
// one is a KeyError), a tombstone's Key, or keyFunc of a plain object (informer.md §5.2, §5.3).
func queuedKeyOf(keyFunc KeyFunc, obj any) (string, error) {
	if d, ok := obj.(Deltas); ok {
		if len(d) == 0 {
			return "", KeyError{Obj: obj, Err: ErrZeroLengthDeltas}
		}
		obj = d.Newest().Object
	}
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return d.Key, nil
	}
	return keyFunc(obj)
}

func (f *DeltaFIFO) checkSynced() {
	if f.populated && f.initialPopulationCount == 0 {
		f.synced = true
	}
}

// Add appends an Added delta to the object's key.
func (f *DeltaFIFO) Add(obj any) error {
	f.populated = true
	f.checkSynced()
	return f.queueAction(Added, Added, obj)
}

// Update appends an Updated delta to the object's key.
func (f *DeltaFIFO) Update(obj any) error {
	f.populated = true
	f.checkSynced()
	return f.queueAction(Updated, Updated, obj)
}

// Delete appends a Deleted delta, unless the key is neither known nor queued, in which case it is
// silently ignored (informer.md §5.2, §16; client-go TestDeltaFIFO_enqueueingNoLister).
func (f *DeltaFIFO) Delete(obj any) error {
	key, err := f.KeyOf(obj)
	if err != nil {
		return KeyError{Obj: obj, Err: err}
	}
	f.populated = true
	f.checkSynced()
	_, queued := f.items[key]
	if f.knownObjects == nil {
		if !queued {
			return nil
		}
	} else {
		_, known, err := f.knownObjects.GetByKey(key)
		if err == nil && !known && !queued {
			return nil
		}
	}
	return f.queueAction(Deleted, Deleted, obj)
}

// queueAction appends Delta{t, obj} to obj's key, queuing the key if new. internal is the type
// that decides transformation: Replace passes Replaced even when it emits Sync, because listed
// objects are new and must be transformed, whereas resynced ones come from the cache and already
// are (informer.md §5.2).
func (f *DeltaFIFO) queueAction(t, internal DeltaType, obj any) error {
	key, err := f.KeyOf(obj)
	if err != nil {
		return KeyError{Obj: obj, Err: err}
	}
	if f.transformer != nil && internal != Sync {
		if _, tomb := obj.(DeletedFinalStateUnknown); !tomb {
			if obj, err = f.transformer(obj); err != nil {
				return err
			}
		}
	}
	old, queued := f.items[key]
	f.items[key] = dedupDeltas(append(old, Delta{Type: t, Object: obj}))
	if !queued {
		f.queue = append(f.queue, key)
	}
	return nil
}

// dedupDeltas collapses the last two deltas when both are Deleted, keeping the older one unless it
// is a tombstone (informer.md §5.2). Nothing else is merged.
func dedupDeltas(d Deltas) Deltas {
	n := len(d)
	if n < 2 || d[n-1].Type != Deleted || d[n-2].Type != Deleted {
		return d
	}
	if _, tomb := d[n-2].Object.(DeletedFinalStateUnknown); tomb {
		d[n-2] = d[n-1]
	}
	d[n-1] = Delta{}
	return d[:n-1]
}

// Replace enqueues a relist (informer.md §5.2); resourceVersion is ignored:
//  1. Replaced (or Sync without EmitDeltaTypeReplaced) for each listed object, transformed;
//  2. for each queued key not listed, in queue order, Deleted(tombstone{key, newest queued object,
//     unwrapped if itself a tombstone});
//  3. with knownObjects, for each known key (ListKeys order) neither listed nor queued,
//     Deleted(tombstone{key, cached object or nil});
//  4. on the first population, initialPopulationCount = distinct listed keys + deletions queued.
func (f *DeltaFIFO) Replace(list []any, _ string) error {
	action := Sync
	if f.emitReplaced {
		action = Replaced
	}
	listed := make(map[string]struct{}, len(list))
	for _, obj := range list {
		key, err := f.KeyOf(obj)
		if err != nil {
			return KeyError{Obj: obj, Err: err}
		}
		listed[key] = struct{}{}
		if err := f.queueAction(action, Replaced, obj); err != nil {
			return fmt.Errorf("couldn't enqueue object: %w", err)
		}
	}

	deletions := 0
	// Snapshot: queueAction does not add keys here (they are all queued already), but keep the
	// iteration independent of appends anyway.
	for _, key := range append([]string(nil), f.queue...) {
		if _, ok := listed[key]; ok {
			continue
		}
		var last any
		if n := f.items[key].Newest(); n != nil {
			last = n.Object
			if t, ok := last.(DeletedFinalStateUnknown); ok {
				last = t.Obj
			}
		}
		deletions++
		if err := f.queueAction(Deleted, Deleted, DeletedFinalStateUnknown{Key: key, Obj: last}); err != nil {
			return err
		}
	}

	if f.knownObjects != nil {
		for _, key := range f.knownObjects.ListKeys() {
			if _, ok := listed[key]; ok {
				continue
			}
			if len(f.items[key]) > 0 {
				continue
			}
			obj, exists, err := f.knownObjects.GetByKey(key)
			if err != nil || !exists {
				obj = nil
			}
			deletions++
			if err := f.queueAction(Deleted, Deleted, DeletedFinalStateUnknown{Key: key, Obj: obj}); err != nil {
				return err
			}
		}
	}

	if !f.populated {
		f.populated = true
		f.initialPopulationCount = len(listed) + deletions
		f.checkSynced()
	}
	return nil
}

// Resync appends Sync(cached object), untransformed, for each known key with no queued deltas
// (informer.md §5.2; client-go TestDeltaFIFO_ResyncNonExisting, _UpdateResyncRace).
func (f *DeltaFIFO) Resync() error {
	if f.knownObjects == nil {
		return nil
	}
	for _, key := range f.knownObjects.ListKeys() {
		obj, exists, err := f.knownObjects.GetByKey(key)
		if err != nil || !exists {
			continue
		}
		id, err := f.KeyOf(obj)
		if err != nil {
			return KeyError{Obj: obj, Err: err}
		}
		if len(f.items[id]) > 0 {
			continue
		}
		if err := f.queueAction(Sync, Sync, obj); err != nil {
			return fmt.Errorf("couldn't queue object: %w", err)
		}
	}
	return nil
}

// Len is the number of queued keys.
func (f *DeltaFIFO) Len() int { return len(f.queue) }

// Keys returns the queued keys in pop order, for traces and tests.
func (f *DeltaFIFO) Keys() []string { return append([]string(nil), f.queue...) }

// Deltas returns a copy of the deltas queued under key.
func (f *DeltaFIFO) Deltas(key string) Deltas { return append(Deltas(nil), f.items[key]...) }

// HasSynced reports whether the first population has been popped (sticky; informer.md §5.1).
func (f *DeltaFIFO) HasSynced() bool { return f.synced }

// Close marks the queue closed. Queued keys still pop; then Pop returns ErrFIFOClosed.
func (f *DeltaFIFO) Close() { f.closed = true }

// IsClosed reports whether Close was called.
func (f *DeltaFIFO) IsClosed() bool { return f.closed }

// Pop removes the first key and calls process(its Deltas, isInInitialList), returning the Deltas
// and process's error. Unlike RealFIFO, the initial-population count drops and the sync latch may
// close BEFORE process runs, so HasSynced can be true while the last initial item is still being
// processed (informer.md §5.2). An empty queue gives ErrQueueEmpty, or ErrFIFOClosed once closed.
func (f *DeltaFIFO) Pop(process PopProcessFunc) (any, error) {
	invariant.Check(process != nil, "informer.md §5.2: DeltaFIFO.Pop needs a process func")
	if len(f.queue) == 0 {
		if f.closed {
			return nil, ErrFIFOClosed
		}
		return nil, ErrQueueEmpty
	}
	isInInitialList := !f.synced
	key := f.queue[0]
	f.queue[0] = ""
	f.queue = f.queue[1:]
	if f.initialPopulationCount > 0 {
		f.initialPopulationCount--
		f.checkSynced()
	}
	item, ok := f.items[key]
	if !ok { // checked first: Check would box key even when it passes
		invariant.Check(false, "informer.md §5.2: DeltaFIFO key %q queued but not in items", key)
	}
	delete(f.items, key)
	return item, process(item, isInInitialList)
}
