package informer

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/informersim/informersim/internal/invariant"
)

// Stepper is the deterministic driver's handle on an informer built by this package: the same
// logic Run drives with goroutines, exposed as single units of work, so that a simulator can
// choose, one step at a time, which component acts (style rule 6). Nothing here starts a
// goroutine, blocks, or reads the clock except through the informer's injected clock.
//
// The usage loop (see also the package documentation):
//
//	st, _ := informer.Steps(inf)  // before any Run; Run is refused afterwards
//	reg, _ := inf.AddEventHandler(h)
//	st.Start()
//	for each step, pick ONE enabled action:
//	  - st.Reflector().HasRequest(): req, _ := st.Reflector().NextRequest(); perform it against
//	    the apiserver and feed the outcome (ListDone, WatchOpened), and later the stream's events
//	    (WatchEvent, WatchClosed) while st.Reflector().Watching();
//	  - st.QueueLen() > 0: st.ProcessNext()  (pop, update the cache, buffer notifications);
//	  - a listener has Buffered > 0: st.DeliverNext(reg)  (calls the handler once);
//	  - a timer is due (st.NextDeadline() ≤ now, after advancing the fake clock): st.Tick().
//	st.Stop()
//
// Every method must be called from one goroutine at a time. Misuse (processing an empty queue,
// delivering to a listener with nothing pending, starting twice) panics with an
// invariant.Violation (style rule 7); a panic in a user handler propagates out of DeliverNext
// unchanged, with the informer's state consistent (that notification is consumed and, if it was
// an initial-list add, the registration never syncs; informer.md §13 rule 7).
type Stepper struct {
	s       *sharedIndexInformer
	started bool
	stopped bool
}

// Steps returns the step API of inf, which must have been built by this package's constructors
// and not been started by Run. Calling it again returns the same Stepper. After Steps, Run
// panics: one informer has one driver.
func Steps(inf SharedIndexInformer) (*Stepper, error) {
	s, ok := inf.(*sharedIndexInformer)
	if !ok {
		return nil, fmt.Errorf("informer: Steps: %T is not an informer built by this package", inf)
	}
	s.startedLock.Lock()
	defer s.startedLock.Unlock()
	switch {
	case s.driver == driverRun:
		return nil, errors.New("informer: Steps: the informer is driven by Run")
	case s.stepper != nil:
		return s.stepper, nil
	case s.started || s.stopped:
		return nil, errors.New("informer: Steps: the informer has already started")
	}
	s.driver = driverStep
	s.stepper = &Stepper{s: s}
	return s.stepper, nil
}

// SetObserver installs fn to receive a [StepEvent] for everything the informer does: pops,
// cache writes, notifications buffered and delivered, resync checks, joins, removals, sync
// latches, and the Reflector's decisions. Events are emitted synchronously, in a deterministic
// order, from the goroutine calling the Stepper (or AddEventHandler/RemoveEventHandler). fn must
// not call back into the informer. It must be set before Start (the Reflector's events are wired
// then); nil removes it.
func (st *Stepper) SetObserver(fn func(StepEvent)) {
	invariant.Check(!st.started, "informer: SetObserver after Start")
	st.s.observer = fn
}

// Start does what Run does at start, without goroutines (informer.md §1.6): it freezes the
// resync check period, builds the queue and the Reflector, and starts the Reflector, whose first
// request (a LIST) is then pending. Handlers registered before Start stay registered; handlers
// registered afterwards join late (§3). Start on a started or stopped informer panics.
func (st *Stepper) Start() {
	invariant.Check(!st.started && !st.stopped, "informer: Stepper.Start called twice or after Stop")
	s := st.s
	s.startedLock.Lock()
	s.start_locked(context.Background(), nil, nil)
	st.started = true
	s.startedLock.Unlock()
	s.reflector.Start()
}

// Reflector returns the informer's Reflector, nil before Start. The driver performs its
// requests and feeds their outcomes (see [Reflector]); the Reflector writes to the queue.
func (st *Stepper) Reflector() *Reflector {
	return st.s.reflector
}

// QueueLen is the number of items ProcessNext can still pop: 0 before Start and after Stop (the
// process loop has exited; what was queued is dropped, informer.md §6.1).
func (st *Stepper) QueueLen() int {
	if !st.started || st.stopped {
		return 0
	}
	return st.s.queue.Len()
}

// ProcessNext is one turn of the process loop (informer.md §6.1): pop one item, or one batch when
// the queue supports it and batch pop is on, as client-go would; under blockDeltas update the
// cache, then append the notifications to the listeners' buffers (§6.2–§6.4). It latches the
// informer synced once the queue's initial population has been processed (§1.4), which may latch
// registrations too: a DeltaFIFO latches as it pops the last initial item, before processing it
// (§5.2), a RealFIFO after processing it. It returns the processing error, which client-go drops: the driver
// may log it, nothing is retried. ProcessNext with QueueLen() == 0 panics.
func (st *Stepper) ProcessNext() error {
	invariant.Check(st.QueueLen() > 0, "informer: ProcessNext with an empty queue")
	return st.s.popOnce()
}

// ListenerState describes one current registration.
type ListenerState struct {
	// Registration is the handle AddEventHandler returned.
	Registration ResourceEventHandlerRegistration
	// ID numbers the informer's registrations from 1 in registration order; traces say "h<ID>".
	ID int
	// Buffered is the number of buffered notifications DeliverNext can deliver.
	Buffered int
	// Synced is Registration.HasSynced().
	Synced bool
	// ResyncPeriod is the effective resync period (informer.md §2.2); 0 means never.
	ResyncPeriod time.Duration
}

// Listeners returns the current registrations in registration order (removed ones and, after
// Stop, all are gone).
func (st *Stepper) Listeners() []ListenerState {
	s := st.s
	s.procLock.Lock()
	defer s.procLock.Unlock()
	out := make([]ListenerState, 0, len(s.processor.listeners))
	for _, l := range s.processor.listeners {
		out = append(out, ListenerState{Registration: l, ID: l.id, Buffered: l.pending(), Synced: l.HasSynced(), ResyncPeriod: l.resyncPeriod})
	}
	return out
}

// Buffered is the number of notifications buffered for reg; 0 for a removed or foreign handle.
func (st *Stepper) Buffered(reg ResourceEventHandlerRegistration) int {
	l, ok := reg.(*listener)
	if !ok {
		return 0
	}
	st.s.procLock.Lock()
	defer st.s.procLock.Unlock()
	return l.pending()
}

// DeliverNext delivers the oldest notification buffered for reg to its handler, synchronously:
// one OnAdd, OnUpdate or OnDelete call (informer.md §4.4). Notifications reach each handler in
// exactly the order they were distributed (§4.5). When it returns, an initial-list add counts as
// finished, which may latch reg synced (§4.6). Calling it with Buffered(reg) == 0 panics.
func (st *Stepper) DeliverNext(reg ResourceEventHandlerRegistration) {
	l, ok := reg.(*listener)
	invariant.Check(ok, "informer: DeliverNext: foreign registration %T", reg)
	st.s.deliver(l)
}

// NextDeadline returns the earliest pending timer: the Reflector's backoff end or resync tick
// (informer.md §2.3, §7.1). false means none.
func (st *Stepper) NextDeadline() (time.Time, bool) {
	if !st.started || st.stopped {
		return time.Time{}, false
	}
	return st.s.reflector.NextDeadline()
}

// Tick fires every timer due at the informer clock's Now (see [Reflector.Tick]): a resync tick
// runs the processor's shouldResync (setting each listener's isSyncing flag, §2.4) and, if any
// listener is due, the queue's Resync. If a stream was open and the Reflector is no longer
// Watching afterwards, the driver must stop the watcher.
func (st *Stepper) Tick() {
	if !st.started || st.stopped {
		return
	}
	st.s.reflector.Tick()
}

// Stop is the context being cancelled (informer.md §14 T9): the Reflector stops (the driver stops
// any open watcher), the queue closes and is no longer processed, the informer is stopped, and
// every listener is removed with its buffer. Afterwards AddEventHandler fails, RemoveEventHandler
// is a no-op, and Start and Run do nothing. Stop is idempotent.
func (st *Stepper) Stop() {
	if st.stopped {
		return
	}
	st.stopped = true
	s := st.s
	if st.started {
		s.reflector.Stop()
		s.queue.Close()
	}
	s.stop()
}

// StepEventKind is the kind of a [StepEvent].
type StepEventKind int

// The step event kinds.
const (
	// StepPopped: one delta was popped (Delta, Key, ResourceVersion, InInitialList; Count for a
	// ReplacedAll is the number of objects, Tombstone for a tombstone delete).
	StepPopped StepEventKind = iota + 1
	// StepCacheAdded, StepCacheUpdated, StepCacheDeleted: the cache wrote Key at
	// ResourceVersion (Tombstone for a delete by tombstone).
	StepCacheAdded
	StepCacheUpdated
	StepCacheDeleted
	// StepCacheReplaced: the cache was replaced by Count objects at ResourceVersion.
	StepCacheReplaced
	// StepDistributed: a notification was buffered for Handlers (empty for a sync-class update
	// no listener was due for; Sync says it was sync-class).
	StepDistributed
	// StepDelivered: a notification is being delivered to Handler (emitted just before the call).
	StepDelivered
	// StepResyncChecked: a resync tick ran shouldResync; Handlers are the listeners now due.
	StepResyncChecked
	// StepRegistered: Handler registered before start.
	StepRegistered
	// StepJoined: Handler registered after start; Count cached objects are replayed to it.
	StepJoined
	// StepRemoved: Handler was removed and its buffer dropped.
	StepRemoved
	// StepSynced: the informer latched synced.
	StepSynced
	// StepHandlerSynced: Handler's registration latched synced.
	StepHandlerSynced
	// StepReflector: a decision of the Reflector, in Reflector.
	StepReflector
	// StepStopped: the informer stopped and dropped every listener.
	StepStopped
)

var stepEventKindNames = [...]string{
	StepPopped: "pop", StepCacheAdded: "cache-add", StepCacheUpdated: "cache-update",
	StepCacheDeleted: "cache-delete", StepCacheReplaced: "cache-replace", StepDistributed: "buffer",
	StepDelivered: "deliver", StepResyncChecked: "resync-check", StepRegistered: "register",
	StepJoined: "join", StepRemoved: "remove", StepSynced: "synced",
	StepHandlerSynced: "handler-synced", StepReflector: "reflector", StepStopped: "stopped",
}

// String returns the kind's trace word, e.g. "deliver".
func (k StepEventKind) String() string {
	if k > 0 && int(k) < len(stepEventKindNames) {
		return stepEventKindNames[k]
	}
	return "StepEventKind(" + strconv.Itoa(int(k)) + ")"
}

// StepEvent is one observable thing the informer did, for traces. Only the fields its Kind
// documents are set. Its String form is deterministic: no pointers, maps or wall-clock times.
type StepEvent struct {
	Kind StepEventKind
	// Handler is a registration ID (StepDelivered, StepRegistered, StepJoined, StepRemoved,
	// StepHandlerSynced).
	Handler int
	// Handlers are registration IDs in ascending order (StepDistributed, StepResyncChecked).
	// The slice may be shared with other events (the informer does not build one per
	// notification): read it, keep it if you like, never modify it.
	Handlers []int
	// Notification is the handler call (StepDistributed, StepDelivered).
	Notification NotificationKind
	// Delta is the popped delta's type (StepPopped).
	Delta DeltaType
	// Key is the object's key; for a tombstone, its Key.
	Key string
	// OldResourceVersion is the old object's RV of an update.
	OldResourceVersion string
	// ResourceVersion is the object's RV (a tombstone's last known object's RV), or the list or
	// bookmark RV.
	ResourceVersion string
	// InInitialList is the add's isInInitialList, or the pop's.
	InInitialList bool
	// Tombstone says the object is a DeletedFinalStateUnknown.
	Tombstone bool
	// Sync says an update was classified sync (equal RVs, informer.md §2.5).
	Sync bool
	// Count is a number of objects (StepPopped of ReplacedAll, StepCacheReplaced, StepJoined).
	Count int
	// PopIndex and PopSize place a StepPopped delta in the Deltas one Pop of a DeltaFIFO handed
	// out (a key's deltas, grouped: informer.md §5): delta PopIndex of PopSize. Both are 0
	// when the Pop handed out one delta, and for a RealFIFO's batches.
	PopIndex, PopSize int
	// Reflector is the Reflector's event (StepReflector).
	Reflector ReflectorEvent
	// Object is the object the handler is given (StepDelivered): the new object of an add or
	// update, the deleted object or DeletedFinalStateUnknown of a delete. A driver checking
	// deliveries reads it; String leaves it out.
	Object any
	// OldObject is the old object of an update the handler is given (StepDelivered); String
	// leaves it out.
	OldObject any
	// RequestedResyncPeriod is the period the registration asked for, or the informer's default
	// when it asked for none, before informer.md §2.2 adjusts it; ResyncPeriod is the
	// registration's effective period as §2.2 set it at registration; CheckPeriod is the
	// informer's resync check period after the registration (StepRegistered, StepJoined). A
	// driver checking resync alignment reads them; String leaves them out.
	RequestedResyncPeriod time.Duration
	ResyncPeriod          time.Duration
	CheckPeriod           time.Duration
}

// String renders the event as one trace line, e.g.
// "deliver h2 update ns/p1@1->3", "pop ReplacedAll rv=2 n=2 init", "buffer h1,h2 add ns/p3@5".
func (e StepEvent) String() string {
	var b strings.Builder
	b.WriteString(e.Kind.String())
	switch e.Kind {
	case StepPopped:
		b.WriteString(" " + string(e.Delta))
		switch e.Delta {
		case ReplacedAll:
			fmt.Fprintf(&b, " rv=%s n=%d", e.ResourceVersion, e.Count)
		case Bookmark:
			fmt.Fprintf(&b, " rv=%s", e.ResourceVersion)
		case SyncAll:
		default:
			b.WriteString(" " + objText(e.Key, e.ResourceVersion, e.Tombstone))
		}
		if e.InInitialList {
			b.WriteString(" init")
		}
	case StepCacheAdded, StepCacheUpdated, StepCacheDeleted:
		b.WriteString(" " + objText(e.Key, e.ResourceVersion, e.Tombstone))
	case StepCacheReplaced:
		fmt.Fprintf(&b, " n=%d rv=%s", e.Count, e.ResourceVersion)
	case StepDistributed, StepDelivered:
		if e.Kind == StepDelivered {
			b.WriteString(" h" + strconv.Itoa(e.Handler))
		} else {
			b.WriteString(" " + handlerList(e.Handlers))
		}
		b.WriteString(" " + e.Notification.String() + " ")
		if e.Notification == NotificationUpdate {
			b.WriteString(e.Key + "@" + e.OldResourceVersion + "->" + e.ResourceVersion)
			if e.Sync {
				b.WriteString(" sync")
			}
		} else {
			b.WriteString(objText(e.Key, e.ResourceVersion, e.Tombstone))
		}
		if e.InInitialList {
			b.WriteString(" init")
		}
	case StepResyncChecked:
		b.WriteString(" due=" + handlerList(e.Handlers))
	case StepJoined:
		fmt.Fprintf(&b, " h%d snapshot=%d", e.Handler, e.Count)
	case StepRegistered, StepRemoved, StepHandlerSynced:
		b.WriteString(" h" + strconv.Itoa(e.Handler))
	case StepReflector:
		b.WriteString(" " + e.Reflector.String())
	}
	return b.String()
}

func objText(key, rv string, tomb bool) string {
	s := key + "@" + rv
	if tomb {
		return "tomb(" + s + ")"
	}
	return s
}

func handlerList(ids []int) string {
	if len(ids) == 0 {
		return "-"
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = "h" + strconv.Itoa(id)
	}
	return strings.Join(parts, ",")
}

// describeObj returns the key, RV and tombstone flag of an object for events.
func describeObj(obj any) (key, rv string, tomb bool) {
	rv, tomb = describeRVTombstone(obj)
	return describeKey(obj), rv, tomb
}

// describeRV is describeObj's resourceVersion alone: it builds no key, which would allocate.
func describeRV(obj any) string {
	if t, ok := obj.(DeletedFinalStateUnknown); ok {
		return describeRV(t.Obj)
	}
	if obj == nil {
		return ""
	}
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetResourceVersion()
	}
	return ""
}

func (s *sharedIndexInformer) emit(e StepEvent) {
	if s.observer != nil {
		s.observer(e)
	}
}

func (s *sharedIndexInformer) emitNotification(kind StepEventKind, n *notification, isSync bool, ids []int) {
	if s.observer == nil {
		return
	}
	e := StepEvent{Kind: kind, Notification: n.kind, InInitialList: n.isInInitialList, Sync: isSync}
	if kind == StepDelivered {
		e.Handler = ids[0]
		e.Object = n.newObj
		switch n.kind {
		case NotificationDelete:
			e.Object = n.oldObj
		case NotificationUpdate:
			e.OldObject = n.oldObj
		}
	} else {
		e.Handlers = ids
	}
	// Key and RV are set by withKey: the observer is set before anything is distributed.
	e.Key, e.ResourceVersion = n.key, n.rv
	switch n.kind {
	case NotificationAdd:
		_, e.Tombstone = n.newObj.(DeletedFinalStateUnknown)
	case NotificationUpdate:
		e.OldResourceVersion = n.oldRV
	case NotificationDelete:
		_, e.Tombstone = n.oldObj.(DeletedFinalStateUnknown)
	}
	s.observer(e)
}

// withKey returns n with its key and resourceVersions set for the observer's events
// (describeObj's key and RV of the object the handler is given, and describeRV of the old object
// of an update); without an observer n is returned unchanged, as nothing reads them. A key
// already set is kept: the keyed processing path (process_keyed.go) sets the key it has, which
// is the one describeKey computes (and an empty key is computed again, to the same ""); so are
// RVs it has read (rvsRead).
func (s *sharedIndexInformer) withKey(n notification) notification {
	if s.observer == nil {
		return n
	}
	obj := n.newObj
	if n.kind == NotificationDelete {
		obj = n.oldObj
	}
	if n.key == "" {
		n.key = describeKey(obj)
	}
	if n.rvsRead {
		return n
	}
	n.rv = describeRV(obj)
	if n.kind == NotificationUpdate {
		n.oldRV = describeRV(n.oldObj)
	}
	return n
}

// describeKey is describeObj's key alone.
func describeKey(obj any) string {
	if t, ok := obj.(DeletedFinalStateUnknown); ok {
		return t.Key
	}
	if obj == nil {
		return ""
	}
	key, err := DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return "?"
	}
	return key
}

// describeRVTombstone is describeObj without the key: the resourceVersion, and whether obj is a
// tombstone.
func describeRVTombstone(obj any) (rv string, tomb bool) {
	_, tomb = obj.(DeletedFinalStateUnknown)
	return describeRV(obj), tomb
}

func (s *sharedIndexInformer) emitPopped(deltas []Delta, isInInitialList bool) {
	s.emitPoppedGroup(deltas, isInInitialList, false)
}

// emitPoppedGroup is emitPopped; grouped says deltas are what one Pop handed out (a DeltaFIFO
// key's Deltas), which PopIndex and PopSize then say when there are several.
func (s *sharedIndexInformer) emitPoppedGroup(deltas []Delta, isInInitialList, grouped bool) {
	if s.observer == nil {
		return
	}
	for i, d := range deltas {
		e := StepEvent{Kind: StepPopped, Delta: d.Type, InInitialList: isInInitialList}
		if grouped && len(deltas) > 1 {
			e.PopIndex, e.PopSize = i, len(deltas)
		}
		switch o := d.Object.(type) {
		case ReplacedAllInfo:
			e.ResourceVersion, e.Count = o.ResourceVersion, len(o.Objects)
		case BookmarkInfo:
			e.ResourceVersion = o.ResourceVersion
		case nil:
		default:
			e.Key, e.ResourceVersion, e.Tombstone = describeObj(o)
		}
		s.observer(e)
	}
}

// observedCache is the cache as processDeltas sees it while someone observes: every write is
// reported after it succeeds.
type observedCache struct {
	Indexer
	s *sharedIndexInformer
}

var _ TransactionStore = observedCache{}

func (c observedCache) write(kind StepEventKind, obj any, err error) error {
	if err == nil {
		e := StepEvent{Kind: kind}
		e.Key, e.ResourceVersion, e.Tombstone = describeObj(obj)
		c.s.emit(e)
	}
	return err
}

func (c observedCache) Add(obj any) error {
	return c.write(StepCacheAdded, obj, c.Indexer.Add(obj))
}

func (c observedCache) Update(obj any) error {
	return c.write(StepCacheUpdated, obj, c.Indexer.Update(obj))
}

func (c observedCache) Delete(obj any) error {
	return c.write(StepCacheDeleted, obj, c.Indexer.Delete(obj))
}

func (c observedCache) Replace(list []any, resourceVersion string) error {
	err := c.Indexer.Replace(list, resourceVersion)
	if err == nil {
		c.s.emit(StepEvent{Kind: StepCacheReplaced, Count: len(list), ResourceVersion: resourceVersion})
	}
	return err
}

func (c observedCache) Transaction(txns ...Transaction) *TransactionError {
	ts, ok := c.Indexer.(TransactionStore)
	invariant.Check(ok, "informer: the cache does not support transactions")
	terr := ts.Transaction(txns...)
	ok2 := make([]bool, len(txns))
	if terr == nil {
		for i := range ok2 {
			ok2[i] = true
		}
	} else {
		for _, i := range terr.SuccessfulIndices {
			ok2[i] = true
		}
	}
	for i, t := range txns {
		if !ok2[i] {
			continue
		}
		c.write(cacheWriteKind(t.Type), t.Object, nil)
	}
	return terr
}

// cacheWriteKind is the step event that reports a cache transaction of type t.
func cacheWriteKind(t TransactionType) StepEventKind {
	switch t {
	case TransactionTypeAdd:
		return StepCacheAdded
	case TransactionTypeDelete:
		return StepCacheDeleted
	default:
		return StepCacheUpdated
	}
}

// HasTransform reports whether the informer rewrites the objects it receives (SetTransform).
// client-go lets a transform change the very object it is given, so a host that would otherwise
// lend the apiserver's own objects to the informer must hand this one copies.
func (st *Stepper) HasTransform() bool {
	st.s.startedLock.Lock() // the lock SetTransform writes under
	defer st.s.startedLock.Unlock()
	return st.s.transform != nil
}
