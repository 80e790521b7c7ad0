package informer

import (
	"time"
)

// processor fans notifications out to the listeners: client-go's sharedProcessor (informer.md
// §4.1–§4.3) as a step-driven core. It has no lock and no goroutines; distribution only appends
// to each listener's buffer, and the driver decides when each listener delivers.
//
// Fan-out order: client-go iterates a Go map, so the order in which listeners receive one
// notification is unspecified (§4.2). Here distribution appends to independent buffers in
// registration order, and that order is unobservable: what a handler sees depends only on its
// own buffer, and when each buffer is drained is the driver's choice (the simulator draws it
// from the seed; the goroutine driver leaves it to the Go scheduler).
type processor struct {
	// listeners are the current registrations in registration order; removal deletes in
	// place. nil after stop: listeners can never be reused (§4.3).
	listeners []*listener
	// ids are the listeners' ids in registration order, nil when there are none: what
	// distribute reports when every listener received a notification. Never modified in place:
	// every change of listeners builds a new slice, so one already handed to an observer stays
	// as it was.
	ids []int
	// nextID is the id the next registration gets (ids start at 1).
	nextID int
	// stopped is true after stop; the processor then accepts no listeners.
	stopped bool
}

func newProcessor() *processor {
	return &processor{nextID: 1}
}

// newID reserves the next listener id.
func (p *processor) newID() int {
	id := p.nextID
	p.nextID++
	return id
}

// addListener registers l (informer.md §3 step 3: with isSyncing true, which newListener sets).
func (p *processor) addListener(l *listener) {
	p.listeners = append(p.listeners, l)
	p.rebuildIDs()
}

// rebuildIDs builds ids anew from listeners.
func (p *processor) rebuildIDs() {
	p.ids = nil
	if len(p.listeners) > 0 {
		p.ids = make([]int, len(p.listeners))
		for i, l := range p.listeners {
			p.ids[i] = l.id
		}
	}
}

// removeListener unregisters l and drops its buffer. An unknown listener (foreign, already
// removed, or the processor stopped) is ignored: removal is idempotent (informer.md §1.3).
// It reports whether l was found.
func (p *processor) removeListener(l *listener) bool {
	for i, x := range p.listeners {
		if x == l {
			p.listeners = append(p.listeners[:i:i], p.listeners[i+1:]...)
			p.rebuildIDs()
			l.remove()
			return true
		}
	}
	return false
}

// distribute appends n to every listener's buffer, except that a sync-class notification
// (isSync) only reaches listeners whose isSyncing flag is set (informer.md §4.2, §2.5).
// If collect is set, it returns the ids of the listeners that received n, in registration
// order, for traces (nil if none did); otherwise nil. When every listener received n, the
// usual case, that is p.ids itself, shared rather than built for each notification: the
// caller must not modify it.
func (p *processor) distribute(n *notification, isSync, collect bool) []int {
	all := true
	for _, l := range p.listeners {
		if isSync && !l.isSyncing {
			all = false
			continue
		}
		l.add(n)
	}
	if !collect {
		return nil
	}
	if all {
		return p.ids
	}
	var ids []int
	for _, l := range p.listeners {
		if l.isSyncing {
			ids = append(ids, l.id)
		}
	}
	return ids
}

// shouldResync is evaluated at every resync tick of the Reflector (informer.md §2.4): for every
// listener, due = its effective period is non-zero and now has reached its nextResync; the
// flag isSyncing is set to due (so it persists until the next tick), and a due listener's
// nextResync moves to now plus its period. It reports whether any listener is due; if none is,
// the Reflector skips the queue resync entirely (§2.3).
func (p *processor) shouldResync(now time.Time) bool {
	anyDue := false
	for _, l := range p.listeners {
		due := l.resyncPeriod != 0 && !now.Before(l.nextResync)
		l.isSyncing = due
		if due {
			anyDue = true
			l.nextResync = now.Add(l.resyncPeriod)
		}
	}
	return anyDue
}

// upstreamSynced tells every listener's sync tracker that the informer has synced (client-go's
// per-listener sync watcher, §4.4). It returns the ids of the listeners this latched.
func (p *processor) upstreamSynced(ids []int) []int {
	for _, l := range p.listeners {
		if l.tracker.UpstreamSynced() {
			ids = append(ids, l.id)
		}
	}
	return ids
}

// stop drops every listener's buffer and forgets the listeners (informer.md §4.3, §14 T9).
func (p *processor) stop() {
	for _, l := range p.listeners {
		l.remove()
	}
	p.listeners = nil
	p.ids = nil
	p.stopped = true
}
