package informer

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/informersim/informersim/internal/invariant"
)

// This file holds RealFIFO, client-go's default queue since v0.33 (informer.md §5.3): an ordered
// list of individual deltas, one per event, nothing merged.
//
// It is a step-driven core (style.md rules 4 and 21): no mutex, no goroutine, no blocking. Pop and
// PopBatch hand out at most one unit of work and return ErrQueueEmpty when there is none. The
// goroutine driver wraps it with its own lock and condition variable; the simulator calls it
// directly. process callbacks run with the popped items already removed and the sync bookkeeping
// still pending, so a driver may release its lock while process runs (client-go's
// UnlockWhileProcessing) and producers may append concurrently under that lock.

// realFIFOBatchSize is the most deltas PopBatch hands out at once (client-go's defaultBatchSize).
const realFIFOBatchSize = 1000

// ErrZeroLengthDeltas is the key error for an empty Deltas (client-go's ErrZeroLengthDeltasObject).
var ErrZeroLengthDeltas = errors.New("0 length Deltas object; can't get key")

// RealFIFOOptions configures a [RealFIFO].
type RealFIFOOptions struct {
	// KeyFunction computes keys; nil means [MetaNamespaceKeyFunc], and then the queue keeps the
	// key it computes for each item instead of computing it again when it pops.
	KeyFunction KeyFunc
	// KnownObjects is the informer's cache. Required when AtomicEvents is false (non-atomic
	// Replace and Resync consult it); must be nil when AtomicEvents is true.
	KnownObjects KeyListerGetter
	// Transformer, if set, rewrites each object as it is enqueued (not tombstones, not Sync).
	Transformer TransformFunc
	// AtomicEvents selects client-go's AtomicFIFO mode, the default path the informer uses:
	// Replace appends one ReplacedAll item and Resync one SyncAll item.
	AtomicEvents bool
	// EmitDeltaTypeBookmark makes Bookmark append a Bookmark item (atomic mode only).
	EmitDeltaTypeBookmark bool
}

// RealFIFO is client-go's RealFIFO as a step-driven core (informer.md §5.3). Every Add, Update and
// Delete appends one item; Replace and Resync append per the mode; Pop hands out one item,
// PopBatch up to realFIFOBatchSize items with distinct keys.
//
// It is not safe for concurrent use: the caller serialises every call.
type RealFIFO struct {
	keyFunc      KeyFunc
	knownObjects KeyListerGetter
	transformer  TransformFunc
	atomic       bool
	emitBookmark bool
	batchSize    int

	// buf[head:] are the queued deltas, oldest first; buf[:head] are popped slots, already
	// zeroed. Popping advances head instead of reslicing buf, so that the array is reused:
	// when the queue empties, buf and head go back to its start, and push moves the queued
	// items to the front when the popped slots are at least half of a full array, rather than
	// letting append allocate a bigger one (a queue that is drained as fast as it is filled,
	// the usual case, then never allocates). Use queued() for the queued items.
	buf  []Delta
	head int
	// bufKeys runs parallel to buf (same length, same order; push, popHead and compaction keep
	// them in step): the queue key of each item as enqueue already computed it, so that
	// PopBatch need not compute it again, or "" where none was kept (transformed objects,
	// non-object items, or a caller's own key function), which batchLen then computes as
	// before. Keys are kept only with the default key function (keepKeys), a pure function of
	// the object's metadata, and the queue holds the very object the key was computed from, so
	// the kept key is the one batchLen would compute, unless the object is one user code can
	// reach: a non-atomic Resync queues cached objects, which a handler could rename (it must
	// not); so a kept key is checked (checkKeptKey) before use. A caller's key function may answer
	// differently later (a test's does). The informer's process loop also reuses a kept key as
	// the cache key (popKeyed), so a key is kept only where the cache's key function,
	// DeletionHandlingMetaNamespaceKeyFunc, gives the same key: not for a Delta or Deltas
	// pushed as an object, which keyOf unwraps and the cache does not.
	bufKeys  []string
	keepKeys bool
	// recentKeys hands out the keys enqueue builds with the default key function (keepKeys),
	// reusing the string of a key built before.
	recentKeys keyTable
	// popped and poppedKeys hold what popKeyed hands its process function: reused from pop to
	// pop (only the popper touches them), zeroed after each.
	popped     []Delta
	poppedKeys []string
	// populated becomes true on the first Add/Update/Delete or Replace (informer.md §5.1).
	populated bool
	// initialPopulationCount is how many items of the first Replace are still to be processed.
	// Invariant: 0 <= initialPopulationCount.
	initialPopulationCount int
	// synced latches populated && initialPopulationCount == 0; never goes back (sticky). It is
	// atomic only so that HasSynced may be read while a producer writes: the goroutine driver
	// releases its queue lock while processing a popped item (client-go's
	// UnlockWhileProcessing), and the informer's sync check inside processing reads HasSynced.
	// Every write still happens under the caller's serialisation.
	synced atomic.Bool
	closed bool
}

var (
	_ Queue         = (*RealFIFO)(nil)
	_ BatchQueue    = (*RealFIFO)(nil)
	_ BookmarkQueue = (*RealFIFO)(nil)
)

// NewRealFIFO returns an empty RealFIFO. Options that contradict the mode are a programming error
// and panic, as in client-go (informer.md §5.3): atomic mode with KnownObjects, or non-atomic mode
// without KnownObjects or with EmitDeltaTypeBookmark.
func NewRealFIFO(opts RealFIFOOptions) *RealFIFO {
	keepKeys := opts.KeyFunction == nil
	if opts.KeyFunction == nil {
		opts.KeyFunction = MetaNamespaceKeyFunc
	}
	if opts.AtomicEvents {
		invariant.Check(opts.KnownObjects == nil, "informer.md §5.3: RealFIFO knownObjects must not be provided when AtomicEvents is true")
	} else {
		invariant.Check(opts.KnownObjects != nil, "informer.md §5.3: RealFIFO knownObjects must be provided when AtomicEvents is false")
		invariant.Check(!opts.EmitDeltaTypeBookmark, "informer.md §5.3: RealFIFO EmitDeltaTypeBookmark must be false when AtomicEvents is false")
	}
	return &RealFIFO{
		keyFunc:      opts.KeyFunction,
		knownObjects: opts.KnownObjects,
		transformer:  opts.Transformer,
		atomic:       opts.AtomicEvents,
		emitBookmark: opts.EmitDeltaTypeBookmark,
		batchSize:    realFIFOBatchSize,
		keepKeys:     keepKeys,
	}
}

// keyOf returns the key of an object, a Delta, the newest object of a Deltas, or a tombstone.
func (f *RealFIFO) keyOf(obj any) (string, error) {
	if d, ok := obj.(Delta); ok {
		obj = d.Object
	}
	return queuedKeyOf(f.keyFunc, obj)
}

// checkSynced latches synced once populated and the initial population is processed.
func (f *RealFIFO) checkSynced() {
	if f.populated && f.initialPopulationCount == 0 {
		f.synced.Store(true)
	}
}

// enqueue appends one delta after checking its key; tombstones and skipTransform objects are not
// transformed (informer.md §5.3).
func (f *RealFIFO) enqueue(t DeltaType, obj any, skipTransform bool) error {
	key, ok := "", false
	if f.keepKeys {
		key, ok = f.recentKeys.keyOf(obj)
	}
	if !ok {
		var err error
		if key, err = f.keyOf(obj); err != nil {
			return KeyError{Obj: obj, Err: err}
		}
	}
	if !f.keepKeys || !cacheKeyable(obj) {
		key = ""
	}
	if f.transformer != nil && !skipTransform {
		if _, tomb := obj.(DeletedFinalStateUnknown); !tomb {
			var err error
			if obj, err = f.transformer(obj); err != nil {
				return err
			}
			key = "" // the transformed object may have another key: batchLen computes it
		}
	}
	f.push(Delta{Type: t, Object: obj}, key)
	return nil
}

// cacheKeyable says whether the queue key of obj is also its cache key (see bufKeys): keyOf
// unwraps a Delta or Deltas pushed as an object, the cache's key function does not.
func cacheKeyable(obj any) bool {
	switch obj.(type) {
	case Delta, Deltas:
		return false
	}
	return true
}

// queued returns the queued items, oldest first. The slice aliases the queue's array.
func (f *RealFIFO) queued() []Delta { return f.buf[f.head:] }

// push appends d, with its key if known (see bufKeys). When the array is full and at least
// half of it is popped slots, the queued items move to the front first, so append has room
// without allocating (amortised: each move copies at most half an array, after at least half
// an array of pops).
func (f *RealFIFO) push(d Delta, key string) {
	if len(f.buf) == cap(f.buf) && f.head > 0 && f.head >= len(f.buf)/2 {
		n := copy(f.buf, f.buf[f.head:])
		copy(f.bufKeys, f.bufKeys[f.head:])
		clear(f.buf[n:])
		clear(f.bufKeys[n:])
		f.buf, f.bufKeys, f.head = f.buf[:n], f.bufKeys[:n], 0
	}
	f.buf = append(f.buf, d)
	f.bufKeys = append(f.bufKeys, key)
}

// popHead removes the n oldest items (and their keys), dropping the references so the objects
// can be collected. An emptied queue starts again at the front of its array.
func (f *RealFIFO) popHead(n int) {
	clear(f.buf[f.head : f.head+n])
	clear(f.bufKeys[f.head : f.head+n])
	f.head += n
	if f.head == len(f.buf) {
		f.buf, f.bufKeys, f.head = f.buf[:0], f.bufKeys[:0], 0
	}
}

// Add appends an Added delta.
func (f *RealFIFO) Add(obj any) error { return f.write(Added, obj) }

// Update appends an Updated delta.
func (f *RealFIFO) Update(obj any) error { return f.write(Updated, obj) }

// Delete appends a Deleted delta, whether or not the key is known: unlike DeltaFIFO, a delete for
// an unknown object reaches processing and produces OnDelete (informer.md §5.3, §16).
func (f *RealFIFO) Delete(obj any) error { return f.write(Deleted, obj) }

func (f *RealFIFO) write(t DeltaType, obj any) error {
	f.populated = true
	f.checkSynced()
	return f.enqueue(t, obj, false)
}

// Replace enqueues a relist (informer.md §5.3). Atomic mode appends one ReplacedAll item holding
// the transformed objects; keys are not checked until processing (§6.3). Non-atomic mode appends
// tombstone deletions first, then one Replaced item per listed object, in list order. On the first
// population, every item then queued counts towards the initial population.
func (f *RealFIFO) Replace(list []any, resourceVersion string) error {
	var err error
	if f.atomic {
		err = f.enqueueReplacedAll(list, resourceVersion)
	} else {
		err = reconcileReplacement(f.queued(), f.knownObjects, list, f.keyOf,
			func(tomb DeletedFinalStateUnknown) error { return f.enqueue(Deleted, tomb, true) },
			func(obj any) error { return f.enqueue(Replaced, obj, false) })
	}
	if err != nil {
		return err
	}
	if !f.populated {
		f.populated = true
		f.initialPopulationCount = f.Len()
		f.checkSynced()
	}
	return nil
}

func (f *RealFIFO) enqueueReplacedAll(list []any, resourceVersion string) error {
	objs := list
	if f.transformer != nil {
		objs = make([]any, len(list))
		for i, obj := range list {
			t, err := f.transformer(obj)
			if err != nil {
				return err
			}
			objs[i] = t
		}
	}
	f.push(Delta{Type: ReplacedAll, Object: ReplacedAllInfo{ResourceVersion: resourceVersion, Objects: objs}}, "")
	return nil
}

// reconcileReplacement computes the deletions a relist implies and reports them, then every listed
// object (informer.md §5.3 non-atomic Replace, §6.3 step 1):
//  1. a tombstone for each key queued (first-appearance order) but not listed, unless its last
//     queued delta is already a Deleted; the tombstone carries that last queued object;
//  2. a tombstone for each known key (knownObjects.ListKeys order) neither listed nor queued,
//     carrying the known object, or nil if the lookup fails;
//  3. onReplace for each listed object, in list order.
//
// A listed object whose key fails aborts before anything is reported.
func reconcileReplacement(queued []Delta, known KeyListerGetter, list []any, keyOf KeyFunc,
	onDelete func(DeletedFinalStateUnknown) error, onReplace func(any) error) error {
	listed := make(map[string]struct{}, len(list))
	for _, obj := range list {
		key, err := keyOf(obj)
		if err != nil {
			return KeyError{Obj: obj, Err: err}
		}
		listed[key] = struct{}{}
	}

	var queuedKeys []string
	last := map[string]Delta{}
	for _, d := range queued {
		key, err := keyOf(d.Object)
		if err != nil {
			return KeyError{Obj: d.Object, Err: err}
		}
		if _, seen := last[key]; !seen {
			queuedKeys = append(queuedKeys, key)
		}
		last[key] = d
	}
	for _, key := range queuedKeys {
		if _, ok := listed[key]; ok {
			continue
		}
		d := last[key]
		if d.Type == Deleted {
			continue
		}
		if err := onDelete(DeletedFinalStateUnknown{Key: key, Obj: d.Object}); err != nil {
			return fmt.Errorf("couldn't enqueue object: %w", err)
		}
	}

	if known != nil {
		for _, key := range known.ListKeys() {
			if _, ok := listed[key]; ok {
				continue
			}
			if _, ok := last[key]; ok {
				continue
			}
			obj, exists, err := known.GetByKey(key)
			if err != nil || !exists {
				obj = nil
			}
			if err := onDelete(DeletedFinalStateUnknown{Key: key, Obj: obj}); err != nil {
				return fmt.Errorf("couldn't enqueue object: %w", err)
			}
		}
	}

	for _, obj := range list {
		if err := onReplace(obj); err != nil {
			return fmt.Errorf("couldn't enqueue object: %w", err)
		}
	}
	return nil
}

// Resync enqueues a periodic resync (informer.md §5.3): atomic mode appends one SyncAll item;
// non-atomic mode appends Sync(cached object), untransformed, for each known key that has no item
// anywhere in the queue.
func (f *RealFIFO) Resync() error {
	if f.atomic {
		f.push(Delta{Type: SyncAll}, "")
		return nil
	}
	if f.knownObjects == nil {
		return nil
	}
	queued := make(map[string]struct{}, f.Len())
	for _, d := range f.queued() {
		key, err := f.keyOf(d.Object)
		if err != nil {
			return KeyError{Obj: d, Err: err}
		}
		queued[key] = struct{}{}
	}
	for _, key := range f.knownObjects.ListKeys() {
		if _, ok := queued[key]; ok {
			continue
		}
		obj, exists, err := f.knownObjects.GetByKey(key)
		if err != nil || !exists {
			continue
		}
		if err := f.enqueue(Sync, obj, true); err != nil {
			return fmt.Errorf("couldn't queue object: %w", err)
		}
	}
	return nil
}

// Bookmark appends a Bookmark item when EmitDeltaTypeBookmark is set, and otherwise does nothing
// (informer.md §5.3).
func (f *RealFIFO) Bookmark(resourceVersion string) error {
	if f.emitBookmark {
		f.push(Delta{Type: Bookmark, Object: BookmarkInfo{ResourceVersion: resourceVersion}}, "")
	}
	return nil
}

// Len is the number of queued items.
func (f *RealFIFO) Len() int { return len(f.buf) - f.head }

// Items returns a copy of the queued items, oldest first, for traces and tests.
func (f *RealFIFO) Items() []Delta { return append([]Delta(nil), f.queued()...) }

// HasSynced reports whether the first population has been popped and processed (sticky;
// informer.md §5.1).
func (f *RealFIFO) HasSynced() bool { return f.synced.Load() }

// Close marks the queue closed. Queued items still pop; then Pop returns ErrFIFOClosed.
func (f *RealFIFO) Close() { f.closed = true }

// IsClosed reports whether Close was called.
func (f *RealFIFO) IsClosed() bool { return f.closed }

// emptyErr is what Pop and PopBatch return on an empty queue.
func (f *RealFIFO) emptyErr() error {
	if f.closed {
		return ErrFIFOClosed
	}
	return ErrQueueEmpty
}

// Pop removes the oldest item and calls process(Deltas{item}, isInInitialList), where
// isInInitialList is "not yet synced" at pop time. It returns the Deltas and process's error. The
// initial-population count drops, and the sync latch may close, only after process returns, so
// HasSynced never reports true while the last initial item is being processed (informer.md §5.3).
// An empty queue gives ErrQueueEmpty, or ErrFIFOClosed once closed; process is not called.
func (f *RealFIFO) Pop(process PopProcessFunc) (any, error) {
	invariant.Check(process != nil, "informer.md §5.3: RealFIFO.Pop needs a process func")
	if f.Len() == 0 {
		return nil, f.emptyErr()
	}
	isInInitialList := !f.synced.Load()
	item := f.buf[f.head]
	f.popHead(1)
	defer f.processed(1)
	out := Deltas{item}
	return out, process(out, isInInitialList)
}

// processed is the bookkeeping after n popped items were processed (or process panicked).
func (f *RealFIFO) processed(n int) {
	if f.initialPopulationCount > 0 {
		f.initialPopulationCount -= n
		invariant.Check(f.initialPopulationCount >= 0, "informer.md §5.3: a batch crossed the initial-population boundary")
		f.checkSynced()
	}
}

// batchable says which delta types PopBatch may group (informer.md §5.3).
func batchable(t DeltaType) bool {
	switch t {
	case Sync, Replaced, Added, Updated, Deleted:
		return true
	}
	return false
}

// PopBatch removes a run of items from the head and processes them (informer.md §5.3): up to
// realFIFOBatchSize items, never crossing the initial-population boundary, of batchable types,
// with distinct keys (a duplicate key ends the batch before it). An item whose key fails is
// included and ends the batch. A non-batchable item (ReplacedAll, SyncAll, Bookmark) is taken
// alone when it is first and otherwise ends the batch. One item goes to processSingle as Deltas,
// several to processBatch. As with Pop, the sync bookkeeping happens after processing, and an
// empty queue gives ErrQueueEmpty or ErrFIFOClosed.
func (f *RealFIFO) PopBatch(processBatch ProcessBatchFunc, processSingle PopProcessFunc) error {
	invariant.Check(processBatch != nil && processSingle != nil, "informer.md §5.3: RealFIFO.PopBatch needs both process funcs")
	if f.Len() == 0 {
		return f.emptyErr()
	}
	isInInitialList := !f.synced.Load()
	n := f.batchLen()
	defer f.processed(n)
	if n == 1 {
		d := f.buf[f.head]
		f.popHead(1)
		return processSingle(Deltas{d}, isInInitialList)
	}
	batch := make([]Delta, n)
	copy(batch, f.queued())
	f.popHead(n)
	return processBatch(batch, isInInitialList)
}

// keyedProcessFunc processes what popKeyed popped: deltas with, for each, the key it was queued
// under, or "" where the queue kept none (see RealFIFO.bufKeys). One delta is what Pop, or
// PopBatch's processSingle, would have been given; several, what processBatch would have been.
// Both slices belong to the queue and are reused by its next pop: the function must not keep
// them, and it may fill in a missing key.
type keyedProcessFunc func(deltas []Delta, keys []string, isInInitialList bool) error

// popKeyed is the informer's own pop: Pop (batch false) or PopBatch (batch true), taking the
// same items and doing the same bookkeeping at the same moments, but handing process the kept
// keys along with the items, in slices the queue reuses. The informer's process loop, which
// never keeps what it is given, so computes each delta's key once, when it is enqueued, instead
// of again for the cache lookup, the cache write and each step event, and allocates nothing
// per pop (informer.md §6.1, §6.4). Every key handed over is checked (checkKeptKey): it is the
// item's key at the pop, so process need not check it again.
func (f *RealFIFO) popKeyed(batch bool, process keyedProcessFunc) error {
	invariant.Check(process != nil, "informer.md §5.3: RealFIFO.popKeyed needs a process func")
	if f.Len() == 0 {
		return f.emptyErr()
	}
	isInInitialList := !f.synced.Load()
	n := 1
	if batch {
		n = f.batchLen() // checks the kept keys of the items it takes
	} else {
		f.checkKeptKey(f.head)
	}
	defer f.processed(n)
	f.popped = append(f.popped[:0], f.buf[f.head:f.head+n]...)
	f.poppedKeys = append(f.poppedKeys[:0], f.bufKeys[f.head:f.head+n]...)
	f.popHead(n)
	defer func() {
		clear(f.popped)
		clear(f.poppedKeys)
		f.popped, f.poppedKeys = f.popped[:0], f.poppedKeys[:0]
	}()
	return process(f.popped, f.poppedKeys, isInInitialList)
}

// checkKeptKey forgets the kept key of buf[i] if its object no longer has it (see bufKeys: a
// cached object of a non-atomic resync, renamed by a handler after it was queued); the key is
// then computed again where it is needed, as the unkeyed path computes it. The check builds no
// string (hasKey). popKeyed checks each item it hands out, once, just before: nothing between
// the check and the processing can rename the object.
func (f *RealFIFO) checkKeptKey(i int) {
	if key := f.bufKeys[i]; key != "" && !hasKey(key, f.buf[i].Object) {
		f.bufKeys[i] = ""
	}
}

// batchLen is how many head items the next PopBatch takes; at least 1 on a non-empty queue. It
// checks the kept key of each item it looks at (checkKeptKey).
//
// Duplicate keys are found by a linear scan while the batch is short (the usual case when the
// process loop keeps up) and with a map once it passes batchSmall keys, which avoids allocating
// a map for every pop; the batch found is the same either way.
func (f *RealFIFO) batchLen() int {
	const batchSmall = 16
	var small [batchSmall]string
	var seen map[string]struct{}
	n := 0
	items, keys := f.queued(), f.bufKeys[f.head:]
	for i := 0; i < f.batchSize && i < len(items); i++ {
		if f.initialPopulationCount > 0 && i >= f.initialPopulationCount {
			break
		}
		d := items[i]
		if !batchable(d.Type) {
			if n == 0 {
				n = 1
			}
			break
		}
		f.checkKeptKey(f.head + i)
		key := keys[i]
		if key == "" {
			var err error
			if key, err = f.keyOf(d); err != nil {
				n++ // the broken item is popped with the batch and ends it, as in client-go
				break
			}
		}
		if seen != nil {
			if _, dup := seen[key]; dup {
				break
			}
			seen[key] = struct{}{}
		} else {
			if slices.Contains(small[:n], key) {
				break
			}
			if n < batchSmall {
				small[n] = key
			} else {
				seen = make(map[string]struct{}, 2*batchSmall)
				for _, k := range small {
					seen[k] = struct{}{}
				}
				seen[key] = struct{}{}
			}
		}
		n++
	}
	return n
}

// keyTableMax is the most keys a keyTable remembers: past it, it forgets them all and starts
// again, so that a queue that saw many objects come and go does not keep all their keys.
const keyTableMax = 4096

// keyTable remembers the keys built recently, so that an object queued under a key built before
// (an update, the usual event, is queued under its object's key every time) gets that same
// string rather than a new one: building a key allocates, and it was the one allocation the
// informer made per watch event. The lookup builds the key in a buffer on the stack, which a map
// index with a string conversion does not copy to the heap. The strings are equal whichever way
// they were made, so nothing but the allocation can tell them apart; the map is never iterated.
type keyTable struct {
	keys map[string]string // key -> the same key, the string kept
}

// keyOf returns MetaNamespaceKeyFunc(obj) for an object with metadata, ok false for anything
// else (ExplicitKey, tombstones, Deltas, objects without metadata: the caller computes those).
func (t *keyTable) keyOf(obj any) (key string, ok bool) {
	switch obj.(type) {
	case ExplicitKey, DeletedFinalStateUnknown, Delta, Deltas, nil:
		return "", false
	}
	ns, name, err := namespaceAndName(obj)
	if err != nil {
		return "", false
	}
	var buf [128]byte
	b := buf[:0]
	if ns != "" {
		b = append(append(b, ns...), '/')
	}
	b = append(b, name...)
	if k, ok := t.keys[string(b)]; ok {
		return k, true
	}
	if t.keys == nil || len(t.keys) >= keyTableMax {
		t.keys = make(map[string]string)
	}
	key = string(b)
	t.keys[key] = key
	return key, true
}
