package workqueue

import (
	"sync"
)

// TypedInterface is the basic queue's contract, with the method set of client-go's
// workqueue.TypedInterface[T] (informer.md §11.1).
type TypedInterface[T comparable] interface {
	// Add marks item as needing processing. Adding an item that is already waiting does
	// nothing; adding an item that is being processed makes it run once more after Done.
	// Ignored after ShutDown.
	Add(item T)
	// Len is the number of items waiting to be handed out (not those being processed).
	Len() int
	// Get hands out the oldest waiting item, blocking while none is waiting; shutdown is true
	// (and item the zero value) once the queue is shut down and empty.
	Get() (item T, shutdown bool)
	// Done says the caller finished processing item.
	Done(item T)
	// ShutDown makes Get return shutdown=true once the waiting items are handed out; it does
	// not wait for work in progress.
	ShutDown()
	// ShutDownWithDrain is ShutDown, then waits until every item handed out is Done.
	ShutDownWithDrain()
	// ShuttingDown reports whether ShutDown or ShutDownWithDrain was called.
	ShuttingDown() bool
}

// QueueConfig configures a basic [Queue]. The zero value is valid.
type QueueConfig struct {
	// Name identifies the queue (client-go uses it for metrics; here it names the queue in
	// errors and in [Queue.String]).
	Name string
}

// Queue is client-go's basic work queue (informer.md §11.1): a FIFO of distinct items with a
// dirty set (items that need processing) and a processing set (items handed out and not yet
// Done). Its guarantees:
//   - an item is never handed to two workers at once;
//   - any number of Adds of a waiting item collapse into one;
//   - an Add while the item is processed makes it run exactly once more, after Done.
//
// It is safe for concurrent use. Get blocks while the queue is empty; a deterministic driver
// calls it only when Len() > 0, so it never blocks there (see the package documentation).
type Queue[T comparable] struct {
	name string

	// mu guards the fields below; cond wakes Get and ShutDownWithDrain.
	mu   sync.Mutex
	cond *sync.Cond

	// queue holds the waiting items in order; every one of them is in dirty and none in
	// processing (invariant).
	queue      []T
	dirty      map[T]struct{}
	processing map[T]struct{}

	shuttingDown bool
	// drain: ShutDownWithDrain is waiting for processing to empty; a later ShutDown cancels it.
	drain bool
}

var _ TypedInterface[string] = (*Queue[string])(nil)

// NewTyped returns an empty basic queue.
func NewTyped[T comparable]() *Queue[T] {
	return NewTypedWithConfig[T](QueueConfig{})
}

// NewTypedWithConfig returns an empty basic queue configured by config.
func NewTypedWithConfig[T comparable](config QueueConfig) *Queue[T] {
	q := &Queue[T]{
		name:       config.Name,
		dirty:      map[T]struct{}{},
		processing: map[T]struct{}{},
	}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// Name returns the queue's configured name.
func (q *Queue[T]) Name() string { return q.name }

// Add implements TypedInterface.
func (q *Queue[T]) Add(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.add_locked(item)
}

func (q *Queue[T]) add_locked(item T) {
	if q.shuttingDown {
		return
	}
	if _, ok := q.dirty[item]; ok {
		return // already waiting, or re-queued at Done: dedup
	}
	q.dirty[item] = struct{}{}
	if _, ok := q.processing[item]; ok {
		return // Done re-queues it
	}
	q.queue = append(q.queue, item)
	q.cond.Signal()
}

// Len implements TypedInterface.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queue)
}

// Get implements TypedInterface.
func (q *Queue[T]) Get() (item T, shutdown bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.queue) == 0 && !q.shuttingDown {
		q.cond.Wait()
	}
	return q.pop_locked()
}

// TryGet is Get without blocking: ok is false when no item is waiting (shutdown then says
// whether the queue has also shut down). It is the deterministic driver's Get.
func (q *Queue[T]) TryGet() (item T, ok, shutdown bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) == 0 {
		return item, false, q.shuttingDown
	}
	item, _ = q.pop_locked()
	return item, true, false
}

func (q *Queue[T]) pop_locked() (item T, shutdown bool) {
	if len(q.queue) == 0 {
		return item, true
	}
	item = q.queue[0]
	var zero T
	q.queue[0] = zero
	q.queue = q.queue[1:]
	q.processing[item] = struct{}{}
	delete(q.dirty, item)
	return item, false
}

// Done implements TypedInterface.
func (q *Queue[T]) Done(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.processing, item)
	if _, ok := q.dirty[item]; ok {
		q.queue = append(q.queue, item)
		q.cond.Signal()
	} else if len(q.processing) == 0 {
		// Broadcast rather than client-go's Signal: the waiter to wake is ShutDownWithDrain,
		// and a Signal could wake a blocked Get instead.
		q.cond.Broadcast()
	}
}

// ShutDown implements TypedInterface.
func (q *Queue[T]) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.drain = false
	q.shuttingDown = true
	q.cond.Broadcast()
}

// ShutDownWithDrain implements TypedInterface: it blocks until Processing() is 0 (or a
// concurrent ShutDown cancels the wait). Items re-added while being processed are still
// re-queued by Done and handed out by Get. A single-goroutine driver uses
// [Queue.BeginShutDownWithDrain] and [Queue.Drained] instead, since nothing could call Done
// while it blocks.
func (q *Queue[T]) ShutDownWithDrain() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.beginDrain_locked()
	for len(q.processing) != 0 && q.drain {
		q.cond.Wait()
	}
}

// BeginShutDownWithDrain is the non-blocking half of ShutDownWithDrain: the queue shuts down
// in drain mode and the caller polls Drained between steps.
func (q *Queue[T]) BeginShutDownWithDrain() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.beginDrain_locked()
}

func (q *Queue[T]) beginDrain_locked() {
	q.drain = true
	q.shuttingDown = true
	q.cond.Broadcast()
}

// Drained reports whether a ShutDownWithDrain would return now: the queue is shut down and
// no item is being processed (or a ShutDown cancelled the drain).
func (q *Queue[T]) Drained() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown && (len(q.processing) == 0 || !q.drain)
}

// ShuttingDown implements TypedInterface.
func (q *Queue[T]) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}

// Processing is the number of items handed out by Get and not yet Done.
func (q *Queue[T]) Processing() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.processing)
}
