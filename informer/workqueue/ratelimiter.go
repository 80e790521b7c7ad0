package workqueue

import (
	"math"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// TypedRateLimiter decides how long an item waits before it is retried, with the method set of
// client-go's workqueue.TypedRateLimiter[T] (informer.md §11.3).
type TypedRateLimiter[T comparable] interface {
	// When returns how long item should wait now; it counts one more failure of item.
	When(item T) time.Duration
	// Forget clears what the limiter remembers of item (its failures), without touching any
	// queue.
	Forget(item T)
	// NumRequeues is the number of failures counted for item.
	NumRequeues(item T) int
}

// The default controller limiter's constants (informer.md §11.3): per-item exponential backoff
// from 5ms to 1000s, and a token bucket of 10 per second with a burst of 100 shared by all items.
const (
	DefaultControllerBaseDelay = 5 * time.Millisecond
	DefaultControllerMaxDelay  = 1000 * time.Second
	DefaultControllerQPS       = 10
	DefaultControllerBurst     = 100
	// DefaultItemBaseDelay is the base delay of DefaultTypedItemBasedRateLimiter (the max is
	// DefaultControllerMaxDelay).
	DefaultItemBaseDelay = time.Millisecond
)

// InfiniteDelay is what a token bucket answers when it can never grant a token (burst < 1, or
// a rate of 0 with the bucket empty), as golang.org/x/time/rate's InfDuration.
const InfiniteDelay = time.Duration(math.MaxInt64)

// DefaultTypedControllerRateLimiter is client-go's default for controllers: the larger of a
// per-item exponential backoff (5ms·2^failures, at most 1000s) and an overall token bucket
// (10 qps, burst 100) on clk.
func DefaultTypedControllerRateLimiter[T comparable](clk clock.PassiveClock) TypedRateLimiter[T] {
	return NewTypedMaxOfRateLimiter(
		NewTypedItemExponentialFailureRateLimiter[T](DefaultControllerBaseDelay, DefaultControllerMaxDelay),
		NewTypedBucketRateLimiter[T](clk, DefaultControllerQPS, DefaultControllerBurst),
	)
}

// DefaultTypedItemBasedRateLimiter is client-go's per-item exponential backoff from 1ms to 1000s.
func DefaultTypedItemBasedRateLimiter[T comparable]() TypedRateLimiter[T] {
	return NewTypedItemExponentialFailureRateLimiter[T](DefaultItemBaseDelay, DefaultControllerMaxDelay)
}

// ItemExponentialFailureRateLimiter waits baseDelay·2^failures for an item, capped at maxDelay
// (an overflow is maxDelay too). Each When counts a failure; Forget clears the item's count.
type ItemExponentialFailureRateLimiter[T comparable] struct {
	mu        sync.Mutex
	failures  map[T]int
	baseDelay time.Duration
	maxDelay  time.Duration
}

// NewTypedItemExponentialFailureRateLimiter returns a per-item exponential limiter.
func NewTypedItemExponentialFailureRateLimiter[T comparable](baseDelay, maxDelay time.Duration) *ItemExponentialFailureRateLimiter[T] {
	return &ItemExponentialFailureRateLimiter[T]{failures: map[T]int{}, baseDelay: baseDelay, maxDelay: maxDelay}
}

// When implements TypedRateLimiter.
func (r *ItemExponentialFailureRateLimiter[T]) When(item T) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	exp := r.failures[item]
	r.failures[item] = exp + 1
	backoff := float64(r.baseDelay.Nanoseconds()) * math.Pow(2, float64(exp))
	if backoff > math.MaxInt64 {
		return r.maxDelay
	}
	if d := time.Duration(backoff); d <= r.maxDelay {
		return d
	}
	return r.maxDelay
}

// NumRequeues implements TypedRateLimiter.
func (r *ItemExponentialFailureRateLimiter[T]) NumRequeues(item T) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures[item]
}

// Forget implements TypedRateLimiter.
func (r *ItemExponentialFailureRateLimiter[T]) Forget(item T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.failures, item)
}

// ItemFastSlowRateLimiter waits fastDelay for an item's first maxFastAttempts failures, then
// slowDelay.
type ItemFastSlowRateLimiter[T comparable] struct {
	mu              sync.Mutex
	failures        map[T]int
	fastDelay       time.Duration
	slowDelay       time.Duration
	maxFastAttempts int
}

// NewTypedItemFastSlowRateLimiter returns a fast-then-slow per-item limiter.
func NewTypedItemFastSlowRateLimiter[T comparable](fastDelay, slowDelay time.Duration, maxFastAttempts int) *ItemFastSlowRateLimiter[T] {
	return &ItemFastSlowRateLimiter[T]{failures: map[T]int{}, fastDelay: fastDelay, slowDelay: slowDelay, maxFastAttempts: maxFastAttempts}
}

// When implements TypedRateLimiter.
func (r *ItemFastSlowRateLimiter[T]) When(item T) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures[item]++
	if r.failures[item] <= r.maxFastAttempts {
		return r.fastDelay
	}
	return r.slowDelay
}

// NumRequeues implements TypedRateLimiter.
func (r *ItemFastSlowRateLimiter[T]) NumRequeues(item T) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures[item]
}

// Forget implements TypedRateLimiter.
func (r *ItemFastSlowRateLimiter[T]) Forget(item T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.failures, item)
}

// MaxOfRateLimiter answers the largest delay and the largest requeue count of its limiters;
// Forget forgets in all of them. Every limiter's When is called, so each counts the failure.
type MaxOfRateLimiter[T comparable] struct {
	limiters []TypedRateLimiter[T]
}

// NewTypedMaxOfRateLimiter combines limiters.
func NewTypedMaxOfRateLimiter[T comparable](limiters ...TypedRateLimiter[T]) *MaxOfRateLimiter[T] {
	return &MaxOfRateLimiter[T]{limiters: append([]TypedRateLimiter[T](nil), limiters...)}
}

// When implements TypedRateLimiter.
func (r *MaxOfRateLimiter[T]) When(item T) time.Duration {
	var out time.Duration
	for _, l := range r.limiters {
		out = max(out, l.When(item))
	}
	return out
}

// NumRequeues implements TypedRateLimiter.
func (r *MaxOfRateLimiter[T]) NumRequeues(item T) int {
	out := 0
	for _, l := range r.limiters {
		out = max(out, l.NumRequeues(item))
	}
	return out
}

// Forget implements TypedRateLimiter.
func (r *MaxOfRateLimiter[T]) Forget(item T) {
	for _, l := range r.limiters {
		l.Forget(item)
	}
}

// WithMaxWaitRateLimiter caps another limiter's delay at maxDelay.
type WithMaxWaitRateLimiter[T comparable] struct {
	limiter  TypedRateLimiter[T]
	maxDelay time.Duration
}

// NewTypedWithMaxWaitRateLimiter caps limiter's delays at maxDelay.
func NewTypedWithMaxWaitRateLimiter[T comparable](limiter TypedRateLimiter[T], maxDelay time.Duration) *WithMaxWaitRateLimiter[T] {
	return &WithMaxWaitRateLimiter[T]{limiter: limiter, maxDelay: maxDelay}
}

// When implements TypedRateLimiter.
func (r *WithMaxWaitRateLimiter[T]) When(item T) time.Duration {
	return min(r.limiter.When(item), r.maxDelay)
}

// NumRequeues implements TypedRateLimiter.
func (r *WithMaxWaitRateLimiter[T]) NumRequeues(item T) int { return r.limiter.NumRequeues(item) }

// Forget implements TypedRateLimiter.
func (r *WithMaxWaitRateLimiter[T]) Forget(item T) { r.limiter.Forget(item) }

// BucketRateLimiter is a token bucket shared by every item, on an injected clock: it holds up to
// burst tokens, starts full and refills at qps tokens per second. Each When takes one token,
// going into debt if none is left, and answers how long until that token exists. It behaves as
// client-go's BucketRateLimiter over golang.org/x/time/rate's Limiter.Reserve().Delay(), which
// this project may not import; NumRequeues is always 0 and Forget does nothing.
type BucketRateLimiter[T comparable] struct {
	clock clock.PassiveClock
	qps   float64
	burst int

	mu     sync.Mutex
	filled bool      // the first When fills the bucket
	tokens float64   // may be negative: tokens already promised to waiting items
	last   time.Time // when tokens was last brought up to date
}

// NewTypedBucketRateLimiter returns a token bucket of burst tokens refilled at qps per second on
// clk.
func NewTypedBucketRateLimiter[T comparable](clk clock.PassiveClock, qps float64, burst int) *BucketRateLimiter[T] {
	return &BucketRateLimiter[T]{clock: clk, qps: qps, burst: burst}
}

// When implements TypedRateLimiter.
func (r *BucketRateLimiter[T]) When(T) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.burst < 1 {
		return InfiniteDelay // a token can never be granted; nothing is reserved
	}
	now := r.clock.Now()
	tokens := float64(r.burst)
	if r.filled {
		last := r.last
		if now.Before(last) {
			last = now
		}
		tokens = min(float64(r.burst), r.tokens+now.Sub(last).Seconds()*r.qps)
	}
	tokens--
	var wait time.Duration
	if tokens < 0 {
		wait = durationOfTokens(-tokens, r.qps)
	}
	r.filled, r.tokens, r.last = true, tokens, now
	return wait
}

// durationOfTokens is how long qps takes to produce tokens.
func durationOfTokens(tokens, qps float64) time.Duration {
	if qps <= 0 {
		return InfiniteDelay
	}
	ns := tokens / qps * float64(time.Second)
	if ns > float64(math.MaxInt64) {
		return InfiniteDelay
	}
	return time.Duration(ns)
}

// NumRequeues implements TypedRateLimiter: the bucket keeps no per-item memory.
func (r *BucketRateLimiter[T]) NumRequeues(T) int { return 0 }

// Forget implements TypedRateLimiter: nothing to forget.
func (r *BucketRateLimiter[T]) Forget(T) {}
