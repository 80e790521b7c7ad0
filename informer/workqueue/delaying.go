package workqueue

import (
	"container/heap"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// TypedDelayingInterface is a queue that can add an item later, with the method set of
// client-go's workqueue.TypedDelayingInterface[T] (informer.md §11.2).
type TypedDelayingInterface[T comparable] interface {
	TypedInterface[T]
	// AddAfter adds item once duration has passed on the queue's clock; duration <= 0 adds it
	// at once. An item already waiting keeps the earlier of its two ready times. Ignored after
	// ShutDown.
	AddAfter(item T, duration time.Duration)
}

// DelayingQueueConfig configures a [DelayingQueue]. The zero value is valid.
type DelayingQueueConfig struct {
	// Name identifies the queue.
	Name string
	// Clock is the clock ready times are measured on; default clock.RealClock{}.
	Clock clock.WithTicker
	// StepDriven builds the queue for a deterministic driver: no goroutine is started, and the
	// driver moves waiting items into the queue by calling FireDue whenever the clock reaches
	// NextDeadline. Without it a goroutine does that on Clock, as client-go's does.
	StepDriven bool
}

// waitingLoopHeartbeat is how often the waiting goroutine wakes even with nothing due, as
// client-go's does (maxWait, 10s): a guard against a missed wake-up, never needed for
// correctness here.
const waitingLoopHeartbeat = 10 * time.Second

// DelayingQueue is client-go's delaying queue (informer.md §11.2): a [Queue] plus a set of items
// waiting for a ready time, earliest first. When an item's time comes it is Added (the basic
// queue's dedup applies). Items with equal ready times become ready in the order they were
// first scheduled, so a run replays.
type DelayingQueue[T comparable] struct {
	*Queue[T]
	clock      clock.WithTicker
	stepDriven bool

	// wmu guards waiting; lock order: wmu, then the basic queue's lock.
	wmu     sync.Mutex
	waiting waitHeap[T]
	entries map[T]*waitEntry[T]
	seq     uint64 // next waitEntry.seq

	// The waiting goroutine (goroutine mode only): wake has room for one pending signal,
	// stopCh closes on shut down, loopDone closes when the goroutine has returned.
	wake     chan struct{}
	stopCh   chan struct{}
	stopOnce sync.Once
	loopDone chan struct{}
}

var _ TypedDelayingInterface[string] = (*DelayingQueue[string])(nil)

// NewTypedDelayingQueue returns a delaying queue on the real clock, with its waiting goroutine.
func NewTypedDelayingQueue[T comparable]() *DelayingQueue[T] {
	return NewTypedDelayingQueueWithConfig[T](DelayingQueueConfig{})
}

// NewTypedDelayingQueueWithConfig returns a delaying queue configured by config.
func NewTypedDelayingQueueWithConfig[T comparable](config DelayingQueueConfig) *DelayingQueue[T] {
	c := config.Clock
	if c == nil {
		c = clock.RealClock{}
	}
	q := &DelayingQueue[T]{
		Queue:      NewTypedWithConfig[T](QueueConfig{Name: config.Name}),
		clock:      c,
		stepDriven: config.StepDriven,
		entries:    map[T]*waitEntry[T]{},
		wake:       make(chan struct{}, 1),
		stopCh:     make(chan struct{}),
		loopDone:   make(chan struct{}),
	}
	if q.stepDriven {
		close(q.loopDone)
	} else {
		q.startWaitingLoop()
	}
	return q
}

// AddAfter implements TypedDelayingInterface.
func (q *DelayingQueue[T]) AddAfter(item T, duration time.Duration) {
	if q.ShuttingDown() {
		return
	}
	if duration <= 0 {
		q.Add(item)
		return
	}
	readyAt := q.clock.Now().Add(duration)
	q.wmu.Lock()
	if e, ok := q.entries[item]; ok {
		// A later AddAfter never postpones an item (client-go's insert).
		if readyAt.Before(e.readyAt) {
			e.readyAt = readyAt
			heap.Fix(&q.waiting, e.index)
		}
	} else {
		e := &waitEntry[T]{item: item, readyAt: readyAt, seq: q.seq}
		q.seq++
		heap.Push(&q.waiting, e)
		q.entries[item] = e
	}
	q.wmu.Unlock()
	q.signal()
}

// NextDeadline returns the earliest ready time of a waiting item; false when none waits. A
// deterministic driver arms its timer there and calls FireDue when the clock reaches it.
func (q *DelayingQueue[T]) NextDeadline() (time.Time, bool) {
	q.wmu.Lock()
	defer q.wmu.Unlock()
	if len(q.waiting) == 0 {
		return time.Time{}, false
	}
	return q.waiting[0].readyAt, true
}

// Waiting is the number of items waiting for their ready time.
func (q *DelayingQueue[T]) Waiting() int {
	q.wmu.Lock()
	defer q.wmu.Unlock()
	return len(q.waiting)
}

// FireDue adds every waiting item whose ready time is not after the clock's Now, earliest first,
// and returns how many it moved. After shut down it moves nothing (client-go's waiting
// goroutine has exited by then).
func (q *DelayingQueue[T]) FireDue() int {
	if q.ShuttingDown() {
		return 0
	}
	now := q.clock.Now()
	var due []T
	q.wmu.Lock()
	for len(q.waiting) > 0 && !q.waiting[0].readyAt.After(now) {
		e := heap.Pop(&q.waiting).(*waitEntry[T])
		delete(q.entries, e.item)
		due = append(due, e.item)
	}
	q.wmu.Unlock()
	for _, item := range due {
		q.Add(item)
	}
	return len(due)
}

// ShutDown implements TypedInterface: the basic queue shuts down and the waiting goroutine
// stops; items still waiting are never added.
func (q *DelayingQueue[T]) ShutDown() {
	q.stop()
	q.Queue.ShutDown()
	<-q.loopDone
}

// ShutDownWithDrain implements TypedInterface (see [Queue.ShutDownWithDrain]).
func (q *DelayingQueue[T]) ShutDownWithDrain() {
	q.stop()
	q.Queue.ShutDownWithDrain()
	<-q.loopDone
}

// BeginShutDownWithDrain is [Queue.BeginShutDownWithDrain], stopping the waiting goroutine too.
func (q *DelayingQueue[T]) BeginShutDownWithDrain() {
	q.stop()
	q.Queue.BeginShutDownWithDrain()
	<-q.loopDone
}

func (q *DelayingQueue[T]) stop() {
	q.stopOnce.Do(func() { close(q.stopCh) })
}

// signal wakes the waiting goroutine without blocking.
func (q *DelayingQueue[T]) signal() {
	if q.stepDriven {
		return
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// waitEntry is one item waiting for its ready time.
type waitEntry[T comparable] struct {
	item    T
	readyAt time.Time
	seq     uint64 // scheduling order, the tie-break of equal ready times
	index   int    // position in the heap
}

// waitHeap is a container/heap of waiting items, earliest ready time first.
type waitHeap[T comparable] []*waitEntry[T]

func (h waitHeap[T]) Len() int { return len(h) }

func (h waitHeap[T]) Less(i, j int) bool {
	if !h[i].readyAt.Equal(h[j].readyAt) {
		return h[i].readyAt.Before(h[j].readyAt)
	}
	return h[i].seq < h[j].seq
}

func (h waitHeap[T]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *waitHeap[T]) Push(x any) {
	e := x.(*waitEntry[T])
	e.index = len(*h)
	*h = append(*h, e)
}

func (h *waitHeap[T]) Pop() any {
	old := *h
	n := len(old)
	e := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	return e
}
