package workqueue

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	testingclock "k8s.io/utils/clock/testing"
)

func whens(l TypedRateLimiter[string], item string, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = l.When(item)
	}
	return out
}

// TestItemExponentialFailureRateLimiter restates client-go's test: 1ms doubling per failure up
// to the 1s cap, per item; Forget resets one item.
func TestItemExponentialFailureRateLimiter(t *testing.T) {
	l := NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second)
	ms := time.Millisecond
	if got, want := whens(l, "one", 5), []time.Duration{ms, 2 * ms, 4 * ms, 8 * ms, 16 * ms}; !cmp.Equal(got, want) {
		t.Errorf("one: got %v, want %v", got, want)
	}
	if got := l.NumRequeues("one"); got != 5 {
		t.Errorf("NumRequeues(one) = %d, want 5", got)
	}
	if got, want := whens(l, "two", 2), []time.Duration{ms, 2 * ms}; !cmp.Equal(got, want) {
		t.Errorf("two: got %v, want %v", got, want)
	}
	l.Forget("one")
	if got := l.NumRequeues("one"); got != 0 {
		t.Errorf("NumRequeues(one) after Forget = %d", got)
	}
	if got := l.When("one"); got != ms {
		t.Errorf("one after Forget: %v, want 1ms", got)
	}
	for range 20 {
		l.When("two")
	}
	if got := l.When("two"); got != time.Second {
		t.Errorf("two after 22 failures: %v, want the 1s cap", got)
	}
}

// TestItemExponentialFailureRateLimiterOverFlow restates client-go's test: 2^failures overflows
// int64 and float64 ranges and still answers the cap.
func TestItemExponentialFailureRateLimiterOverFlow(t *testing.T) {
	l := NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, 1000*time.Hour)
	for range 5 {
		l.When("one")
	}
	if got := l.When("one"); got != 32*time.Millisecond {
		t.Errorf("6th = %v, want 32ms", got)
	}
	for range 1000 {
		l.When("overflow1")
	}
	if got := l.When("overflow1"); got != 1000*time.Hour {
		t.Errorf("after 1000 failures: %v, want the cap", got)
	}
	l2 := NewTypedItemExponentialFailureRateLimiter[string](time.Minute, 1000*time.Hour)
	for range 2 {
		l2.When("two")
	}
	if got := l2.When("two"); got != 4*time.Minute {
		t.Errorf("3rd = %v, want 4m", got)
	}
	for range 1000 {
		l2.When("overflow2")
	}
	if got := l2.When("overflow2"); got != 1000*time.Hour {
		t.Errorf("after 1000 failures: %v, want the cap", got)
	}
}

// TestItemFastSlowRateLimiter restates client-go's test: maxFast fast delays, then slow ones.
func TestItemFastSlowRateLimiter(t *testing.T) {
	l := NewTypedItemFastSlowRateLimiter[string](5*time.Millisecond, 10*time.Second, 3)
	f, s := 5*time.Millisecond, 10*time.Second
	if got, want := whens(l, "one", 5), []time.Duration{f, f, f, s, s}; !cmp.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := l.NumRequeues("one"); got != 5 {
		t.Errorf("NumRequeues = %d, want 5", got)
	}
	l.Forget("one")
	if got := l.When("one"); got != f {
		t.Errorf("after Forget: %v, want fast", got)
	}
}

// TestMaxOfRateLimiter restates client-go's test: the larger delay and requeue count win; Forget
// reaches every limiter.
func TestMaxOfRateLimiter(t *testing.T) {
	l := NewTypedMaxOfRateLimiter[string](
		NewTypedItemFastSlowRateLimiter[string](5*time.Millisecond, 3*time.Second, 3),
		NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second),
	)
	ms := time.Millisecond
	if got, want := whens(l, "one", 5), []time.Duration{5 * ms, 5 * ms, 5 * ms, 3 * time.Second, 3 * time.Second}; !cmp.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := l.NumRequeues("one"); got != 5 {
		t.Errorf("NumRequeues = %d, want 5", got)
	}
	l.Forget("one")
	if got := l.NumRequeues("one"); got != 0 {
		t.Errorf("NumRequeues after Forget = %d", got)
	}
	if got := l.When("one"); got != 5*ms {
		t.Errorf("after Forget: %v, want 5ms", got)
	}
}

// TestWithMaxWaitRateLimiter restates client-go's test: delays are capped.
func TestWithMaxWaitRateLimiter(t *testing.T) {
	l := NewTypedWithMaxWaitRateLimiter[string](NewTypedItemExponentialFailureRateLimiter[string](time.Second, time.Hour), 3*time.Second)
	s := time.Second
	if got, want := whens(l, "one", 4), []time.Duration{s, 2 * s, 3 * s, 3 * s}; !cmp.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := l.NumRequeues("one"); got != 4 {
		t.Errorf("NumRequeues = %d, want 4", got)
	}
	l.Forget("one")
	if got := l.NumRequeues("one"); got != 0 {
		t.Errorf("NumRequeues after Forget = %d", got)
	}
}

// TestBucketRateLimiter: the token bucket on a fake clock, as golang.org/x/time/rate's
// Reserve().Delay() answers: burst tokens at once, then one every 1/qps, debts accumulate, and
// idle time refills up to burst only.
func TestBucketRateLimiter(t *testing.T) {
	clk := testingclock.NewFakeClock(epoch)
	l := NewTypedBucketRateLimiter[string](clk, 10, 3)
	ms := time.Millisecond
	if got, want := whens(l, "x", 5), []time.Duration{0, 0, 0, 100 * ms, 200 * ms}; !cmp.Equal(got, want) {
		t.Fatalf("burst then debt: got %v, want %v", got, want)
	}
	clk.Step(250 * ms) // pays back 2.5 tokens of the 2 owed
	if got, want := whens(l, "x", 2), []time.Duration{50 * ms, 150 * ms}; !cmp.Equal(got, want) {
		t.Fatalf("after 250ms: got %v, want %v", got, want)
	}
	clk.Step(time.Hour) // refills to burst, not beyond
	if got, want := whens(l, "y", 4), []time.Duration{0, 0, 0, 100 * ms}; !cmp.Equal(got, want) {
		t.Fatalf("after an idle hour: got %v, want %v", got, want)
	}
	if l.NumRequeues("y") != 0 {
		t.Error("the bucket counts requeues")
	}
	if got := NewTypedBucketRateLimiter[string](clk, 10, 0).When("z"); got != InfiniteDelay {
		t.Errorf("burst 0: %v, want InfiniteDelay", got)
	}
	empty := NewTypedBucketRateLimiter[string](clk, 0, 1)
	if got := whens(empty, "z", 2); !cmp.Equal(got, []time.Duration{0, InfiniteDelay}) {
		t.Errorf("qps 0: %v, want [0 InfiniteDelay]", got)
	}
}

// TestDefaultControllerRateLimiter: client-go's constants (informer.md §11.3): per-item 5ms
// doubling, and the shared 10 qps / burst 100 bucket that takes over after 100 quick failures.
func TestDefaultControllerRateLimiter(t *testing.T) {
	clk := testingclock.NewFakeClock(epoch)
	l := DefaultTypedControllerRateLimiter[int](clk)
	ms := time.Millisecond
	for i := range 3 {
		if got, want := l.When(0), 5*ms<<i; got != want {
			t.Errorf("item 0 failure %d: %v, want %v", i+1, got, want)
		}
	}
	for i := 1; i < 97; i++ {
		if got := l.When(i); got != 5*ms {
			t.Fatalf("item %d first failure: %v, want 5ms (bucket has tokens)", i, got)
		}
	}
	// 99 tokens used; the 100th is free, the 101st costs 100ms (1/10 qps).
	if got := l.When(1000); got != 5*ms {
		t.Errorf("100th token: %v, want 5ms", got)
	}
	if got := l.When(1001); got != 100*ms {
		t.Errorf("101st: %v, want 100ms from the bucket", got)
	}
	if got := DefaultTypedItemBasedRateLimiter[int]().When(1); got != ms {
		t.Errorf("item-based first failure: %v, want 1ms", got)
	}
}

// TestRateLimitingQueue restates client-go's TestRateLimitingQueue: AddRateLimited waits the
// limiter's delay, counts requeues, and Forget resets them; on a step-driven queue.
func TestRateLimitingQueue(t *testing.T) {
	clk := testingclock.NewFakeClock(epoch)
	q := NewTypedRateLimitingQueueWithConfig[string](NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second),
		RateLimitingQueueConfig{Clock: clk, StepDriven: true})
	q.AddRateLimited("one")
	if at, _ := q.NextDeadline(); !at.Equal(epoch.Add(time.Millisecond)) {
		t.Errorf("one waits until %v, want +1ms", at.Sub(epoch))
	}
	q.AddRateLimited("one") // 2ms: later than 1ms, so it does not postpone
	if at, _ := q.NextDeadline(); !at.Equal(epoch.Add(time.Millisecond)) {
		t.Errorf("one waits until %v, want still +1ms", at.Sub(epoch))
	}
	if q.NumRequeues("one") != 2 {
		t.Errorf("NumRequeues = %d, want 2", q.NumRequeues("one"))
	}
	q.AddRateLimited("two")
	q.Forget("one")
	if q.NumRequeues("one") != 0 {
		t.Errorf("NumRequeues after Forget = %d", q.NumRequeues("one"))
	}
	if q.Waiting() != 2 {
		t.Errorf("Waiting = %d, want 2 (Forget keeps the item queued)", q.Waiting())
	}
	clk.Step(time.Millisecond)
	q.FireDue()
	if got := drainAll(q.Queue); !cmp.Equal(got, []string{"one", "two"}) {
		t.Errorf("got %v, want [one two]", got)
	}
	q.ShutDown()
}
