package informer

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/informersim/informersim/internal/invariant"
)

// NotificationKind says which handler method a notification calls (informer.md §4.4).
type NotificationKind int

// The notification kinds. They start at 1 so that the zero value is never a valid kind.
const (
	NotificationAdd NotificationKind = iota + 1
	NotificationUpdate
	NotificationDelete
)

// String returns "add", "update" or "delete".
func (k NotificationKind) String() string {
	switch k {
	case NotificationAdd:
		return "add"
	case NotificationUpdate:
		return "update"
	case NotificationDelete:
		return "delete"
	}
	return "NotificationKind(" + strconv.Itoa(int(k)) + ")"
}

// notification is one pending handler call. For adds newObj is the object; for deletes oldObj
// is the object (possibly a DeletedFinalStateUnknown); for updates both are set.
type notification struct {
	kind            NotificationKind
	oldObj, newObj  any
	isInInitialList bool
	// rvsRead says rv and oldRV below are set already: the keyed processing path (notify) read
	// them once for the sync classification and the step events of the pop. (Next to the other
	// bool, where it takes no room: every listener's buffer holds notifications by value.)
	rvsRead bool
	// key is the object's key for the observer's events, computed once when the notification
	// is distributed (withKey; the keyed processing path passes the key it has) rather than
	// again at each handler's delivery, where building it would allocate once per handler.
	// Nobody reads it without an observer.
	key string
	// rv and oldRV are the resourceVersions of the object the handler is given and, for an
	// update, of the old one, for the observer's events: read once when the notification is
	// distributed (withKey) rather than from the objects' metadata at each handler's delivery.
	// A handler may not change the objects it is given (they are the cache's own, shared by
	// every handler; client-go forbids it), so for a correct handler this is what a read at
	// delivery would find. Nobody reads them without an observer.
	rv, oldRV string
}

// initialAdd reports whether n is an initial-list add: the one kind the sync tracker counts
// (informer.md §4.6), and so the one kind whose delivery has bookkeeping after the handler call.
func (n notification) initialAdd() bool {
	return n.kind == NotificationAdd && n.isInInitialList
}

// minRingSlots is the number of slots a listener's ring gets at its first push. client-go's
// ring starts with 1,024 (initialBufferSize, informer.md §4.4); the capacity is not observable,
// only the order and the unboundedness are, and 1,024 slots (of 64 bytes then) made registering a
// handler cost 64 KiB, most of a short simulated run's allocations. So ours starts empty and
// grows as the backlog does.
const minRingSlots = 16

// ring is a growable FIFO ring buffer of notifications: it starts empty, takes minRingSlots
// slots at the first push, doubles when full and never shrinks, like k8s.io/utils
// buffer.RingGrowing, which client-go uses for the same purpose (informer.md §4.4). It is
// unbounded by design, as client-go's is: a slow handler only grows its own backlog (§4.5); the
// simulator bounds it by bounding the run. The zero ring is empty and ready to use.
type ring struct {
	slots []notification
	head  int // index of the oldest element
	n     int // number of elements
}

func newRing(size int) ring {
	return ring{slots: make([]notification, size)}
}

func (r *ring) len() int { return r.n }

func (r *ring) push(x *notification) {
	if r.n == len(r.slots) {
		size := 2 * len(r.slots)
		if size == 0 {
			size = minRingSlots
		}
		grown := make([]notification, size)
		// Unwrap into the new slice so the oldest element lands at index 0.
		k := copy(grown, r.slots[r.head:])
		copy(grown[k:], r.slots[:r.head])
		r.slots = grown
		r.head = 0
	}
	// Wrapped by a comparison rather than %, which divides, at every push and pop of every
	// handler's ring.
	i := r.head + r.n
	if i >= len(r.slots) {
		i -= len(r.slots)
	}
	r.slots[i] = *x
	r.n++
}

func (r *ring) pop() notification {
	invariant.Check(r.n > 0, "ring: pop from an empty ring")
	x := r.slots[r.head]
	r.slots[r.head] = notification{} // let the objects be collected
	if r.head++; r.head == len(r.slots) {
		r.head = 0
	}
	r.n--
	return x
}

// drainInto moves up to max of the oldest elements, in order, to the end of dst and returns
// it. The vacated slots are zeroed so the ring keeps no reference to what it handed out.
// It is pop in a loop, without the per-element checks (the goroutine driver's batch drain).
func (r *ring) drainInto(dst []notification, max int) []notification {
	k := min(r.n, max)
	for k > 0 {
		seg := min(k, len(r.slots)-r.head) // contiguous run from head, up to the wrap
		dst = append(dst, r.slots[r.head:r.head+seg]...)
		clear(r.slots[r.head : r.head+seg])
		r.head = (r.head + seg) % len(r.slots)
		r.n -= seg
		k -= seg
	}
	if r.n == 0 {
		r.head = 0 // keep the next run contiguous
	}
	return dst
}

// listener is one handler registration: client-go's processorListener (informer.md §4.4) as a
// step-driven core. It buffers the notifications distributed to it, in order, and hands them to
// its handler one at a time when its driver asks ([listener.next], then [listener.finish]). It
// never calls the handler itself, never blocks, and has no lock: the step driver is
// single-threaded, and the goroutine driver touches it only under the processor lock (the
// handler call itself happens outside that lock).
//
// A *listener is the [ResourceEventHandlerRegistration] that AddEventHandler returns.
type listener struct {
	// id numbers registrations of one informer from 1 in registration order; traces call the
	// handler "h<id>".
	id      int
	handler ResourceEventHandler
	// self is []int{id} kept as an array, so the step events of a delivery and of a late
	// join's snapshot need no allocation. Never written after construction.
	self [1]int

	// buf holds the notifications distributed and not yet handed out, oldest first.
	buf ring

	// requestedResyncPeriod is what the registration asked for (after the 1 s minimum);
	// resyncPeriod is the effective period (informer.md §2.2); 0 means never.
	requestedResyncPeriod time.Duration
	resyncPeriod          time.Duration
	// nextResync is when this listener is next due for a resync (informer.md §2.4).
	nextResync time.Time
	// isSyncing is set by every resync check and decides whether sync-class notifications
	// reach this listener; it starts true and persists between checks (informer.md §2.5).
	isSyncing bool

	tracker syncTracker

	// removed is true once the registration was removed or the informer stopped: the buffer
	// was dropped and nothing more is delivered (informer.md §1.3, §14 T9).
	removed bool

	// wake is the goroutine driver's condition variable (on the processor lock) that its run
	// goroutine waits on; nil in the step driver and before Run starts the goroutine.
	wake *sync.Cond
	// runStop mirrors removed for the goroutine driver's run goroutine, which calls the
	// handler for a batch of notifications it took under the processor lock and checks, without
	// the lock, before each call whether the listener was removed in the meantime. Set under the
	// processor lock together with removed; only ever goes from false to true.
	runStop atomic.Bool

	// runFinished is closed once nothing can call the handler any more: when the run goroutine
	// exits, or, if there is none (step driver, informer never run), at removal. It is
	// client-go's runFinished, which ShutDownEventHandler waits on (informer.md §1.3).
	runFinished chan struct{}
}

func newListener(id int, handler ResourceEventHandler, requested, effective time.Duration, now time.Time) *listener {
	return &listener{
		id:                    id,
		handler:               handler,
		self:                  [1]int{id},
		requestedResyncPeriod: requested,
		resyncPeriod:          effective,
		nextResync:            now.Add(effective),
		isSyncing:             true,
		tracker:               syncTracker{nameFunc: handlerCheckerName(handler), done: make(chan struct{})},
		runFinished:           make(chan struct{}),
	}
}

// handlerCheckerName returns what computes a registration's checker name for handler, "event
// handler <name>" (informer.md §4.6), when it is first asked for. A *ResourceEventHandlerFuncs is
// named now: its funcs, which name it, may change afterwards; anything else names itself the
// same at any time (a type, or the funcs of a ResourceEventHandlerFuncs value).
func handlerCheckerName(handler ResourceEventHandler) func() string {
	if _, ok := handler.(*ResourceEventHandlerFuncs); ok {
		name := "event handler " + handlerName(handler)
		return func() string { return name }
	}
	return func() string { return "event handler " + handlerName(handler) }
}

// HasSyncedChecker returns the registration's [DoneChecker]: Done is closed when HasSynced
// latches (informer.md §1.2, §4.6).
func (l *listener) HasSyncedChecker() DoneChecker {
	return &l.tracker
}

// ShutdownChan is closed once the handler can no longer be called (informer.md §1.3); see
// [ShutDownEventHandler].
func (l *listener) ShutdownChan() <-chan struct{} {
	return l.runFinished
}

// HasSynced reports whether the informer has synced and this handler has returned from every
// initial-list add it was given (informer.md §4.6). Sticky. Safe from any goroutine.
func (l *listener) HasSynced() bool {
	return l.tracker.HasSynced()
}

// add appends n to the buffer. Initial-list adds are counted by the sync tracker before they
// can be delivered (informer.md §3 step 4, §4.6). A removed listener drops n.
func (l *listener) add(n *notification) {
	if l.removed {
		return
	}
	if n.initialAdd() {
		l.tracker.Start()
	}
	l.buf.push(n)
	// The run goroutine waits only when the buffer is empty (under the processor lock, which
	// add's caller holds), so only the push that makes it non-empty can have a waiter to wake.
	if l.wake != nil && l.buf.len() == 1 {
		l.wake.Signal()
	}
}

// pending is the number of buffered notifications.
func (l *listener) pending() int {
	return l.buf.len()
}

// next removes and returns the oldest buffered notification. Calling it on an empty buffer is
// misuse and panics (style rule 7).
func (l *listener) next() notification {
	if l.buf.len() == 0 { // checked first: Check would box l.id even when it passes
		invariant.Check(false, "listener h%d: next with nothing pending", l.id)
	}
	return l.buf.pop()
}

// call invokes the handler for n. It touches no listener state, so drivers call it without any
// lock held; a panic in the handler propagates to the caller (informer.md §4.4: the listener
// neither recovers nor retries).
func (l *listener) call(n *notification) {
	switch n.kind {
	case NotificationAdd:
		l.handler.OnAdd(n.newObj, n.isInInitialList)
	case NotificationUpdate:
		l.handler.OnUpdate(n.oldObj, n.newObj)
	case NotificationDelete:
		l.handler.OnDelete(n.oldObj)
	default:
		invariant.Check(false, "listener h%d: unknown notification kind %d", l.id, n.kind)
	}
}

// finish records that the handler returned from n: an initial-list add is then no longer
// outstanding (informer.md §4.4: the counter drops after OnAdd returns). It reports whether
// this latched the registration synced. A handler that panicked never reaches finish, so its
// registration never syncs (informer.md §13 rule 7).
func (l *listener) finish(n *notification) (latched bool) {
	if n.initialAdd() {
		return l.tracker.Finished()
	}
	return false
}

// remove drops the buffer and marks the listener removed (informer.md §1.3: buffered
// notifications are discarded; a handler call in progress finishes).
func (l *listener) remove() {
	if l.removed {
		return
	}
	l.removed = true
	l.runStop.Store(true)
	l.buf = ring{}
	if l.wake != nil {
		l.wake.Broadcast() // the run goroutine exits and closes runFinished
	} else {
		close(l.runFinished) // no goroutine: nothing can call the handler any more
	}
}
