package workqueue

import (
	"k8s.io/utils/clock"
)

// TypedRateLimitingInterface is a delaying queue whose retries a [TypedRateLimiter] paces, with
// the method set of client-go's workqueue.TypedRateLimitingInterface[T]: a value of this
// interface converts to client-go's interface with no adapter (informer.md §11.3).
type TypedRateLimitingInterface[T comparable] interface {
	TypedDelayingInterface[T]
	// AddRateLimited adds item after the delay the limiter gives it now.
	AddRateLimited(item T)
	// Forget tells the limiter to stop tracking item (its retries succeeded or were given
	// up); it does not remove item from the queue.
	Forget(item T)
	// NumRequeues is the limiter's count of item's retries.
	NumRequeues(item T) int
}

// RateLimitingQueueConfig configures a [RateLimitingQueue]. The zero value is valid.
type RateLimitingQueueConfig struct {
	// Name identifies the queue.
	Name string
	// Clock is the delaying queue's clock; default clock.RealClock{}. A limiter with a clock of
	// its own (the token bucket) should be given the same one.
	Clock clock.WithTicker
	// StepDriven: see [DelayingQueueConfig].
	StepDriven bool
}

// RateLimitingQueue is client-go's rate-limited work queue (informer.md §11.3): a
// [DelayingQueue] plus a limiter consulted by AddRateLimited.
type RateLimitingQueue[T comparable] struct {
	*DelayingQueue[T]
	limiter TypedRateLimiter[T]
}

var _ TypedRateLimitingInterface[string] = (*RateLimitingQueue[string])(nil)

// NewTypedRateLimitingQueue returns a rate-limited queue on the real clock.
func NewTypedRateLimitingQueue[T comparable](limiter TypedRateLimiter[T]) *RateLimitingQueue[T] {
	return NewTypedRateLimitingQueueWithConfig(limiter, RateLimitingQueueConfig{})
}

// NewTypedRateLimitingQueueWithConfig returns a rate-limited queue configured by config. A nil
// limiter is replaced by DefaultTypedControllerRateLimiter on the queue's clock.
func NewTypedRateLimitingQueueWithConfig[T comparable](limiter TypedRateLimiter[T], config RateLimitingQueueConfig) *RateLimitingQueue[T] {
	dq := NewTypedDelayingQueueWithConfig[T](DelayingQueueConfig{Name: config.Name, Clock: config.Clock, StepDriven: config.StepDriven})
	if limiter == nil {
		limiter = DefaultTypedControllerRateLimiter[T](dq.clock)
	}
	return &RateLimitingQueue[T]{DelayingQueue: dq, limiter: limiter}
}

// AddRateLimited implements TypedRateLimitingInterface.
func (q *RateLimitingQueue[T]) AddRateLimited(item T) {
	q.AddAfter(item, q.limiter.When(item))
}

// NumRequeues implements TypedRateLimitingInterface.
func (q *RateLimitingQueue[T]) NumRequeues(item T) int { return q.limiter.NumRequeues(item) }

// Forget implements TypedRateLimitingInterface.
func (q *RateLimitingQueue[T]) Forget(item T) { q.limiter.Forget(item) }
