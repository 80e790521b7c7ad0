package workqueue_test

import (
	"fmt"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/informersim/informersim/informer/workqueue"
)

// A controller loop on a fake clock, step-driven: the worker runs only while an item waits, and
// the clock jumps to the next retry when nothing does. Reconciling "b" fails twice, so it is
// retried after the default controller limiter's 5ms, then 10ms; "a" is added twice while
// waiting and reconciled once.
func ExampleRateLimitingQueue() {
	start := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := testingclock.NewFakeClock(start)
	q := workqueue.NewTypedRateLimitingQueueWithConfig[string](
		workqueue.DefaultTypedControllerRateLimiter[string](clk),
		workqueue.RateLimitingQueueConfig{Clock: clk, StepDriven: true})
	failures := map[string]int{"b": 2}
	reconcile := func(key string) error {
		if failures[key] > 0 {
			failures[key]--
			return fmt.Errorf("%s not ready", key)
		}
		return nil
	}

	q.Add("a")
	q.Add("b")
	q.Add("a")
	for {
		if q.Len() > 0 {
			key, _ := q.Get()
			if err := reconcile(key); err != nil {
				q.AddRateLimited(key)
				fmt.Printf("%v %s: %v; retry %d\n", clk.Since(start), key, err, q.NumRequeues(key))
			} else {
				q.Forget(key)
				fmt.Printf("%v %s: done\n", clk.Since(start), key)
			}
			q.Done(key)
			continue
		}
		at, ok := q.NextDeadline()
		if !ok {
			break
		}
		clk.SetTime(at)
		q.FireDue()
	}
	q.ShutDown()
	// Output:
	// 0s a: done
	// 0s b: b not ready; retry 1
	// 5ms b: b not ready; retry 2
	// 15ms b: done
}
