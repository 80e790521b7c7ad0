package workqueue

import (
	"testing"

	testingclock "k8s.io/utils/clock/testing"
)

// BenchmarkQueueAddGetDone: one item through the basic queue (Add, Get, Done) per op, on one
// goroutine, as a step-driven worker uses it; 1,024 distinct keys cycle so the maps stay warm.
func BenchmarkQueueAddGetDone(b *testing.B) {
	q := NewTyped[int]()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		q.Add(i & 1023)
		item, _ := q.Get()
		q.Done(item)
	}
}

// BenchmarkRateLimitedRetry: one failed item per op through the step-driven rate-limited queue
// with the default controller limiter: AddRateLimited, advance the fake clock to the deadline,
// FireDue, Get, Forget, Done.
func BenchmarkRateLimitedRetry(b *testing.B) {
	clk := testingclock.NewFakeClock(epoch)
	q := NewTypedRateLimitingQueueWithConfig[int](DefaultTypedControllerRateLimiter[int](clk),
		RateLimitingQueueConfig{Clock: clk, StepDriven: true})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		key := i & 1023
		q.AddRateLimited(key)
		at, _ := q.NextDeadline()
		clk.SetTime(at)
		q.FireDue()
		item, _ := q.Get()
		q.Forget(item)
		q.Done(item)
	}
}
