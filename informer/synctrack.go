package informer

import (
	"sync"
	"sync/atomic"

	"github.com/informersim/informersim/internal/invariant"
)

// syncTracker is the per-registration "has this handler synced?" latch of informer.md §4.6
// (client-go's synctrack.SingleFileTracker).
//
// It counts the initial-list adds that were pushed to the handler's listener and have not yet
// returned from OnAdd, remembers whether the informer itself has synced ("upstream"), and latches
// synced, once and for all, when upstream has synced and the count is zero. Both conditions are
// checked whenever either changes, so the order in which they become true does not matter.
//
// The counter and the upstream flag have no lock: the step driver is single-threaded and the
// goroutine driver changes them only under the processor lock. The latch is atomic because
// [ResourceEventHandlerRegistration.HasSynced] reads it from any goroutine without a lock; done is
// closed when it latches, so that a tracker is also the registration's [DoneChecker]. Build one
// with newSyncTracker: the zero value has no done channel.
type syncTracker struct {
	// name is the DoneChecker name (informer.md §4.6), or, until the first Name call, "" with
	// nameFunc set to compute it: building it (the handler's name by reflection, the informer's
	// by fmt) is most of a registration's cost, and only WaitFor and tests ever ask. nameOnce
	// guards the two, since Name may be called from any goroutine.
	name     string
	nameFunc func() string
	nameOnce sync.Once
	// done is closed when synced latches.
	done chan struct{}
	// count is the number of initial-list adds pushed and not yet finished; never negative.
	count int
	// upstreamSynced is true once the informer has synced (informer.md §1.4).
	upstreamSynced bool
	// synced is the one-shot latch: once true, it stays true.
	synced atomic.Bool
}

func newSyncTracker(name string) syncTracker {
	return syncTracker{name: name, done: make(chan struct{})}
}

var _ DoneChecker = (*syncTracker)(nil)

// Name implements DoneChecker.
func (t *syncTracker) Name() string {
	t.nameOnce.Do(func() {
		if t.nameFunc != nil {
			t.name, t.nameFunc = t.nameFunc(), nil
		}
	})
	return t.name
}

// Done implements DoneChecker: the channel is closed once the tracker has latched synced.
func (t *syncTracker) Done() <-chan struct{} { return t.done }

// Start records that one initial-list add was pushed. It must be called before the add can be
// delivered, so that the handle can never appear synced too early (informer.md §3 step 4).
func (t *syncTracker) Start() {
	t.count++
}

// Finished records that one initial-list add returned from OnAdd. It reports whether this call
// latched the tracker. A call without a matching Start panics: it would mean a notification was
// delivered twice or invented (informer.md §4.6, test TestSingleFileCounting).
func (t *syncTracker) Finished() (latched bool) {
	t.count--
	invariant.Check(t.count >= 0, "synctrack: negative counter (Finished without Start)")
	return t.check()
}

// UpstreamSynced records that the informer has synced. It reports whether this call latched the
// tracker. Calling it again is harmless.
func (t *syncTracker) UpstreamSynced() (latched bool) {
	t.upstreamSynced = true
	return t.check()
}

// HasSynced reports the latch. It is safe to call from any goroutine.
func (t *syncTracker) HasSynced() bool {
	return t.synced.Load()
}

func (t *syncTracker) check() bool {
	if t.synced.Load() || !t.upstreamSynced || t.count != 0 {
		return false
	}
	t.synced.Store(true)
	close(t.done)
	return true
}
