package informer

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/informersim/informersim/internal/invariant"
)

// This file is the goroutine driver (design.md "one logic, two drivers"; style rule 5): Run
// gives the step-driven components client-go's goroutines, locks and channels. Each loop body
// calls one step of the shared logic; no informer logic lives here. It is the only non-test
// file of the package allowed to start goroutines.
//
// Goroutines: the reflector loop (requests through the ListerWatcher, reads the watch channel,
// sleeps on the informer's clock), the process loop (waits on a condition variable while the
// queue is empty), and one run goroutine per listener (waits on its condition variable, calls the
// handler outside every lock). Locks: startedLock → reflectorLock → queueLock → blockDeltas →
// procLock → the cache's lock; a method that needs one held ends in _locked (style rule 21).

// runDriver is the goroutine driver's state of one informer.
type runDriver struct {
	s *sharedIndexInformer

	// queueLock serialises the queue between the reflector loop (producer) and the process
	// loop (the single consumer); queueCond wakes the process loop.
	queueLock sync.Mutex
	queueCond *sync.Cond
	// queueClosed is set when ctx ends: the process loop exits (informer.md §6.1).
	queueClosed bool

	// processBatch and processSingle are what the process loop passes to the queue: the
	// informer's own process functions, or, for the atomic RealFIFO, unlockedBatch and
	// unlockedSingle (client-go's UnlockWhileProcessing). Built once in Run.
	processBatch  ProcessBatchFunc
	processSingle PopProcessFunc
	processKeyed  keyedProcessFunc

	// listeners counts the listener run goroutines.
	listeners sync.WaitGroup
}

// Run implements SharedInformer (informer.md §1.6): it starts the goroutine driver and blocks
// until ctx is done and every goroutine it started has returned. A second Run, or Run on a
// stopped informer, returns at once. Run on an informer driven by [Steps] panics.
func (s *sharedIndexInformer) Run(ctx context.Context) {
	s.startedLock.Lock()
	if s.driver == driverStep {
		s.startedLock.Unlock()
		invariant.Check(false, "informer: Run on an informer driven by Steps")
	}
	if s.started || s.stopped {
		s.startedLock.Unlock()
		return
	}
	s.driver = driverRun
	d := &runDriver{s: s}
	d.queueCond = sync.NewCond(&d.queueLock)
	s.start_locked(ctx, &d.queueLock, d.queueCond.Signal)
	d.processBatch, d.processSingle, d.processKeyed = s.processBatch, s.processSingle, s.processKeyed
	if s.queueMode == QueueRealFIFO {
		d.processBatch, d.processSingle, d.processKeyed = d.unlockedBatch, d.unlockedSingle, d.unlockedKeyed
	}
	s.run = d
	s.procLock.Lock()
	for _, l := range s.processor.listeners {
		d.startListener_locked(l)
	}
	s.procLock.Unlock()
	s.reflectorLock.Lock()
	s.reflector.Start()
	s.reflectorLock.Unlock()
	s.startedLock.Unlock()

	if s.direct != nil {
		d.runDirect(ctx)
		return
	}

	var loops sync.WaitGroup
	loops.Add(2)
	go func() {
		defer loops.Done()
		d.reflectorLoop(ctx)
	}()
	go func() {
		defer loops.Done()
		d.processLoop(ctx)
	}()
	loops.Wait()

	// informer.md §1.6 step 4: stopped first, then every listener closed (buffers dropped),
	// then wait for their goroutines.
	s.stop()
	d.listeners.Wait()
}

// startListener_locked starts l's run goroutine. Must hold procLock (and startedLock, so that a
// concurrent stop cannot miss it).
func (d *runDriver) startListener_locked(l *listener) {
	l.wake = sync.NewCond(&d.s.procLock)
	d.listeners.Add(1)
	go func() {
		defer d.listeners.Done()
		defer close(l.runFinished)
		d.runListener(l)
	}()
}

// listenerBatchMax is the most notifications a listener's run goroutine takes from its buffer
// under one acquisition of the processor lock. It bounds the run goroutine's private batch (the
// buffer itself stays the one place a backlog grows); 128 already makes the lock cost per
// notification negligible.
const listenerBatchMax = 128

// runListener is client-go's listener run goroutine (informer.md §4.4): one notification at a
// time, in order, the handler called outside every lock. A handler panic is not recovered: as
// with client-go's default HandleCrash, it crashes the process.
//
// It takes up to listenerBatchMax notifications per lock acquisition instead of one, and calls
// the handler for them in order outside the lock. This is safe because:
//   - order: the batch is the buffer's oldest notifications in buffer order, and the next batch
//     is taken only after this one is delivered, so the handler sees exactly the buffer's order;
//   - removal: remove sets runStop under the processor lock together with dropping the buffer;
//     the goroutine checks it before every call, so, as before, at most the call in progress
//     finishes after a removal and the rest of the batch is dropped with the buffer;
//   - sync tracking: finish only has work for initial-list adds (the tracker counts them), so
//     the goroutine retakes the lock after those only, right after the handler returns, as
//     before; for every other notification finish is a no-op;
//   - no lost wake-up: the goroutine waits only on an empty buffer, under the lock that add
//     holds, and add signals on the empty → non-empty push.
func (d *runDriver) runListener(l *listener) {
	s := d.s
	batch := make([]notification, 0, listenerBatchMax)
	s.procLock.Lock()
	for {
		for l.pending() == 0 && !l.removed {
			l.wake.Wait()
		}
		if l.removed {
			s.procLock.Unlock()
			return
		}
		batch = l.buf.drainInto(batch[:0], listenerBatchMax)
		s.procLock.Unlock()
		for i := range batch {
			if l.runStop.Load() {
				break
			}
			n := &batch[i]
			l.call(n)
			if n.initialAdd() {
				s.procLock.Lock()
				l.finish(n)
				s.procLock.Unlock()
			}
			batch[i] = notification{} // let the objects be collected
		}
		clear(batch) // the rest, if the loop stopped early
		s.procLock.Lock()
	}
}

// processLoop is client-go's controller.processLoop (informer.md §6.1): pop while there is
// something to pop; exit when ctx ends (what is still queued is dropped).
func (d *runDriver) processLoop(ctx context.Context) {
	s := d.s
	stopWake := context.AfterFunc(ctx, func() {
		d.queueLock.Lock()
		d.queueClosed = true
		d.queueCond.Broadcast()
		d.queueLock.Unlock()
	})
	defer stopWake()
	d.queueLock.Lock()
	defer d.queueLock.Unlock()
	for {
		for s.queue.Len() == 0 && !d.queueClosed {
			d.queueCond.Wait()
		}
		if d.queueClosed {
			s.queue.Close()
			return
		}
		_ = s.popWith(d.processBatch, d.processSingle, d.processKeyed) // errors are dropped, as client-go's process loop drops them
	}
}

// unlockedBatch, unlockedSingle and unlockedKeyed are the process functions the process loop
// gives an atomic RealFIFO (the default queue; it pops with popKeyed, so unlockedKeyed is the one
// in use, the other two are there for a queue popped with PopBatch or Pop): they release the queue lock while the popped deltas are handled,
// so the reflector loop can enqueue meanwhile instead of blocking behind the cache update and the
// distribution. This is client-go v0.37's UnlockWhileProcessing (feature gate
// UnlockWhileProcessingFIFO, beta and on by default since 1.36), which it applies to exactly this
// queue and, like it, only while fewer than two full batches are queued, so that a slow consumer
// still throttles the producer. It is safe because:
//   - the queue hands process items it has already removed (popKeyed in slices only the
//     consumer touches), and does its sync bookkeeping (processed) in a defer of
//     popKeyed/PopBatch/Pop, which runs after the lock is taken back here;
//   - handling touches no queue state except HasSynced, which RealFIFO keeps atomic for this;
//   - there is a single consumer (this loop), so no two process calls overlap;
//   - the lock order holds: the queue lock is released before handleDeltas takes blockDeltas;
//   - the lock is taken back in a defer, so a panicking handler (a Runner's) still leaves it
//     held for processLoop's deferred unlock.
//
// The caller holds queueLock, so the queue length is read under it.
func (d *runDriver) unlockedBatch(deltas []Delta, isInInitialList bool) error {
	if d.s.queue.Len() >= 2*realFIFOBatchSize {
		return d.s.handleBatchDeltas(deltas, isInInitialList)
	}
	d.queueLock.Unlock()
	defer d.queueLock.Lock()
	return d.s.handleBatchDeltas(deltas, isInInitialList)
}

func (d *runDriver) unlockedSingle(obj any, isInInitialList bool) error {
	if d.s.queue.Len() >= 2*realFIFOBatchSize {
		return d.s.handleDeltas(obj, isInInitialList)
	}
	d.queueLock.Unlock()
	defer d.queueLock.Lock()
	return d.s.handleDeltas(obj, isInInitialList)
}

func (d *runDriver) unlockedKeyed(deltas []Delta, keys []string, isInInitialList bool) error {
	if d.s.queue.Len() >= 2*realFIFOBatchSize {
		return d.s.handleKeyed(deltas, keys, isInInitialList)
	}
	d.queueLock.Unlock()
	defer d.queueLock.Lock()
	return d.s.handleKeyed(deltas, keys, isInInitialList)
}

// reflectorLoop drives the Reflector (informer.md §7.2): issue each request it asks for through
// the ListerWatcher, feed the outcomes back, and sleep on the informer's clock until its next
// deadline when it has nothing to ask.
func (d *runDriver) reflectorLoop(ctx context.Context) {
	s := d.s
	for {
		s.reflectorLock.Lock()
		if ctx.Err() != nil {
			s.reflector.Stop()
			s.reflectorLock.Unlock()
			return
		}
		req, ok := s.reflector.NextRequest()
		deadline, hasDeadline := s.reflector.NextDeadline()
		s.reflectorLock.Unlock()
		switch {
		case ok && req.Verb == RequestList:
			d.list(ctx, req)
		case ok:
			d.watch(ctx, req)
		case hasDeadline:
			d.sleepUntil(ctx, deadline)
		default:
			// Nothing to ask and no timer: cannot happen while running; wait for the end.
			<-ctx.Done()
		}
	}
}

func (d *runDriver) list(ctx context.Context, req Request) {
	s := d.s
	list, err := s.lw.ListWithContext(ctx, req.Options)
	if ctx.Err() != nil {
		return // informer.md §7.4: a LIST cut short by cancellation is discarded
	}
	s.reflectorLock.Lock()
	s.reflector.ListDone(list, err)
	s.reflectorLock.Unlock()
}

// watch opens a stream and feeds it until the Reflector or the server ends it. Timers (the
// resync tick) fire while the stream is open.
func (d *runDriver) watch(ctx context.Context, req Request) {
	s := d.s
	w, err := s.lw.WatchWithContext(ctx, req.Options)
	s.reflectorLock.Lock()
	s.reflector.WatchOpened(err)
	watching := s.reflector.Watching()
	s.reflectorLock.Unlock()
	if err != nil {
		return
	}
	defer w.Stop() // informer.md §7.6: watchers are always stopped when left
	if !watching {
		return
	}
	for {
		s.reflectorLock.Lock()
		deadline, hasDeadline := s.reflector.NextDeadline()
		s.reflectorLock.Unlock()
		var timerC <-chan time.Time
		var stopTimer func() bool
		if hasDeadline {
			wait := deadline.Sub(s.clock.Now())
			if wait <= 0 {
				if !d.tickStillWatching() {
					return
				}
				continue
			}
			t := s.clock.NewTimer(wait)
			timerC, stopTimer = t.C(), t.Stop
		}
		select {
		case <-ctx.Done():
			if stopTimer != nil {
				stopTimer()
			}
			return
		case ev, ok := <-w.ResultChan():
			if stopTimer != nil {
				stopTimer()
			}
			if !d.feed(ev, ok) {
				return
			}
		case <-timerC:
			if !d.tickStillWatching() {
				return
			}
		}
	}
}

// feed hands one stream outcome to the Reflector and reports whether the stream goes on.
func (d *runDriver) feed(ev watch.Event, ok bool) bool {
	s := d.s
	s.reflectorLock.Lock()
	defer s.reflectorLock.Unlock()
	if !ok {
		s.reflector.WatchClosed()
		return false
	}
	stop := s.reflector.WatchEvent(ev)
	return !stop && s.reflector.Watching()
}

func (d *runDriver) tickStillWatching() bool {
	s := d.s
	s.reflectorLock.Lock()
	defer s.reflectorLock.Unlock()
	s.reflector.Tick()
	return s.reflector.Watching()
}

// sleepUntil waits on the informer's clock until deadline (or ctx's end), then fires the
// Reflector's due timers.
func (d *runDriver) sleepUntil(ctx context.Context, deadline time.Time) {
	s := d.s
	if wait := deadline.Sub(s.clock.Now()); wait > 0 {
		t := s.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
	}
	s.reflectorLock.Lock()
	s.reflector.Tick()
	s.reflectorLock.Unlock()
}

// runDirect is Run for a [Runner] (client-go's controller.Run, informer.md §1.7): the reflector
// loop on its own goroutine, the process loop on the caller's, so that a panic in the handler,
// which the process loop calls, unwinds out of Run. On the way out, normal or not, the reflector
// loop is cancelled and waited for and the informer is marked stopped.
func (d *runDriver) runDirect(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	var loop sync.WaitGroup
	loop.Add(1)
	go func() {
		defer loop.Done()
		d.reflectorLoop(ctx)
	}()
	defer func() {
		cancel()
		loop.Wait()
		d.s.stop()
	}()
	d.processLoop(ctx)
}
