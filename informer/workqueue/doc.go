// Package workqueue is client-go v0.37.2's util/workqueue on an injected clock: the queue a
// controller puts between its informer's event handlers and its reconcile loop (informer.md §11).
// Names and method sets are client-go's, so a [TypedRateLimitingInterface] value is also a
// client-go workqueue.TypedRateLimitingInterface (the compare/ module checks this at compile
// time).
//
// # Contract
//
//   - [Queue] (§11.1): a FIFO of distinct items with a dirty set and a processing set. Adds of a
//     waiting item collapse into one; an item is never handed to two workers at once; an item
//     added while it is processed is handed out once more, after Done. ShutDown lets Get hand out
//     what is still waiting and then report shutdown; ShutDownWithDrain also waits until every
//     item handed out is Done.
//   - [DelayingQueue] (§11.2): AddAfter adds an item once a duration has passed on the queue's
//     clock; an item already waiting keeps its earlier ready time; items become ready earliest
//     first (equal times in scheduling order).
//   - [RateLimitingQueue] (§11.3): AddRateLimited waits what a [TypedRateLimiter] says; Forget
//     clears the limiter's memory of an item; NumRequeues reads it. The limiters are client-go's:
//     per-item exponential, token bucket (written here on the injected clock, since
//     golang.org/x/time/rate is not a dependency of this project), max-of, fast-slow, max-wait,
//     and [DefaultTypedControllerRateLimiter] with client-go's constants.
//
// # Usage
//
// With goroutines, as with client-go: workers loop on Get, process, then Forget or
// AddRateLimited, then Done; the delaying queue's own goroutine adds items when they are due.
//
// Step-driven, in a simulation, with no goroutine at all: build the queue with StepDriven and a
// fake clock. A worker is an actor whose action is enabled only while Len() > 0 (so Get never
// blocks); a waiting item is a timer at NextDeadline, whose firing calls FireDue:
//
//	q := workqueue.NewTypedRateLimitingQueueWithConfig[string](limiter,
//	    workqueue.RateLimitingQueueConfig{Clock: fakeClock, StepDriven: true})
//	for each step:
//	  if q.Len() > 0:  key, _ := q.Get(); reconcile(key) → q.Forget(key) or q.AddRateLimited(key); q.Done(key)
//	  else if at, ok := q.NextDeadline(); ok: advance the clock to at; q.FireDue()
//	  else: quiescent
//
// A single-goroutine driver shuts down with BeginShutDownWithDrain and polls Drained, since
// ShutDownWithDrain would block the only goroutine that could call Done.
//
// # Implementation notes
//
// Every queue is safe for concurrent use (one mutex, one condition variable for Get). The only
// goroutine is the delaying queue's waiting loop, in delaying_run.go, absent when StepDriven;
// ShutDown waits for it to exit. Deviations from client-go: no metrics; the wait for a drain is
// woken by Broadcast rather than Signal, so it cannot be missed; equal ready times keep their
// scheduling order, where client-go's heap leaves it unspecified.
package workqueue
