package workqueue

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	testingclock "k8s.io/utils/clock/testing"
)

var epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// stepQueue returns a step-driven delaying queue on a fake clock: no goroutine, the test moves
// due items with FireDue, as a simulator's timer does.
func stepQueue() (*DelayingQueue[string], *testingclock.FakeClock) {
	clk := testingclock.NewFakeClock(epoch)
	return NewTypedDelayingQueueWithConfig[string](DelayingQueueConfig{Clock: clk, StepDriven: true}), clk
}

// advance steps clk by d and fires what is due, like a driver that woke at NextDeadline.
func advance(q *DelayingQueue[string], clk *testingclock.FakeClock, d time.Duration) {
	clk.Step(d)
	q.FireDue()
}

// TestSimpleQueue restates client-go's TestSimpleQueue: an item added after 50ms is not waiting
// in the queue before, and is after.
func TestSimpleQueue(t *testing.T) {
	q, clk := stepQueue()
	q.AddAfter("foo", 50*time.Millisecond)
	if q.Len() != 0 {
		t.Fatal("added before its time")
	}
	if at, ok := q.NextDeadline(); !ok || !at.Equal(epoch.Add(50*time.Millisecond)) {
		t.Fatalf("NextDeadline = %v, %v; want epoch+50ms", at, ok)
	}
	advance(q, clk, 49*time.Millisecond)
	if q.Len() != 0 {
		t.Fatal("added 1ms early")
	}
	advance(q, clk, time.Millisecond)
	if q.Len() != 1 {
		t.Fatalf("Len = %d at its time, want 1", q.Len())
	}
	if _, ok := q.NextDeadline(); ok {
		t.Error("NextDeadline still set with nothing waiting")
	}
	item, _ := q.Get()
	q.Done(item)
	q.ShutDown()
}

// TestDeduping restates client-go's TestDeduping: a later AddAfter never postpones a waiting
// item, an earlier one brings it forward.
func TestDeduping(t *testing.T) {
	q, clk := stepQueue()
	q.AddAfter("foo", 50*time.Millisecond)
	q.AddAfter("foo", 70*time.Millisecond)
	if q.Waiting() != 1 {
		t.Fatalf("Waiting = %d, want 1", q.Waiting())
	}
	advance(q, clk, 60*time.Millisecond)
	if q.Len() != 1 {
		t.Fatal("not added at 50ms")
	}
	item, _ := q.Get()
	q.Done(item)
	advance(q, clk, 20*time.Millisecond)
	if q.Len() != 0 {
		t.Fatal("the 70ms AddAfter fired separately")
	}
	q.AddAfter("foo", 50*time.Millisecond)
	q.AddAfter("foo", 30*time.Millisecond)
	advance(q, clk, 40*time.Millisecond)
	if q.Len() != 1 {
		t.Fatal("not added at 30ms")
	}
	item, _ = q.Get()
	q.Done(item)
	advance(q, clk, 20*time.Millisecond)
	if q.Len() != 0 {
		t.Fatal("the 50ms AddAfter fired separately")
	}
}

// TestAddTwoFireEarly restates client-go's test: the item due first comes out first, whatever
// the order of the AddAfter calls.
func TestAddTwoFireEarly(t *testing.T) {
	q, clk := stepQueue()
	q.AddAfter("foo", time.Second)
	q.AddAfter("bar", 50*time.Millisecond)
	advance(q, clk, 60*time.Millisecond)
	if got := drainAll(q.Queue); !cmp.Equal(got, []string{"bar"}) {
		t.Fatalf("at 60ms got %v, want [bar]", got)
	}
	q.AddAfter("baz", 2*time.Second)
	advance(q, clk, time.Second)
	if got := drainAll(q.Queue); !cmp.Equal(got, []string{"foo"}) {
		t.Fatalf("at 1.06s got %v, want [foo]", got)
	}
	advance(q, clk, 2*time.Second)
	if got := drainAll(q.Queue); !cmp.Equal(got, []string{"baz"}) {
		t.Fatalf("at 3.06s got %v, want [baz]", got)
	}
}

// TestCopyShifting restates client-go's test: three items due at once enter the queue by ready
// time.
func TestCopyShifting(t *testing.T) {
	q, clk := stepQueue()
	q.AddAfter("foo", time.Second)
	q.AddAfter("bar", 500*time.Millisecond)
	q.AddAfter("baz", 250*time.Millisecond)
	advance(q, clk, 2*time.Second)
	if got := drainAll(q.Queue); !cmp.Equal(got, []string{"baz", "bar", "foo"}) {
		t.Fatalf("got %v, want [baz bar foo]", got)
	}
}

// TestEqualReadyTimesKeepScheduleOrder: equal ready times come out in the order they were first
// scheduled, so a simulation replays (client-go's heap leaves this order unspecified).
func TestEqualReadyTimesKeepScheduleOrder(t *testing.T) {
	q, clk := stepQueue()
	names := []string{"e", "d", "c", "b", "a", "f"}
	for _, n := range names {
		q.AddAfter(n, time.Second)
	}
	advance(q, clk, time.Second)
	if got := drainAll(q.Queue); !cmp.Equal(got, names) {
		t.Fatalf("got %v, want %v", got, names)
	}
}

// TestAddAfterNonPositiveAndShutDown: AddAfter with d <= 0 adds at once; after ShutDown, AddAfter
// is ignored and waiting items never fire.
func TestAddAfterNonPositiveAndShutDown(t *testing.T) {
	q, clk := stepQueue()
	q.AddAfter("now", 0)
	q.AddAfter("neg", -time.Second)
	if q.Len() != 2 {
		t.Fatalf("Len = %d, want 2", q.Len())
	}
	q.AddAfter("later", time.Second)
	q.ShutDown()
	q.AddAfter("ignored", time.Millisecond)
	clk.Step(time.Hour)
	if n := q.FireDue(); n != 0 {
		t.Errorf("FireDue after ShutDown moved %d items", n)
	}
	if got := drainAll(q.Queue); !cmp.Equal(got, []string{"now", "neg"}) {
		t.Errorf("got %v, want [now neg]", got)
	}
}

// TestDelayingQueueGoroutineDriver: without StepDriven, the waiting goroutine adds the item when
// the fake clock reaches its time, and a blocked Get wakes up; ShutDown stops the goroutine
// (TestMain's goleak check fails otherwise).
func TestDelayingQueueGoroutineDriver(t *testing.T) {
	clk := testingclock.NewFakeClock(epoch)
	q := NewTypedDelayingQueueWithConfig[string](DelayingQueueConfig{Clock: clk})
	defer q.ShutDown()
	q.AddAfter("foo", 50*time.Millisecond)
	got := make(chan string)
	go func() {
		item, _ := q.Get()
		got <- item
	}()
	// The waiting goroutine arms a timer (plus its heartbeat) once it has seen the item.
	for !clk.HasWaiters() || q.Waiting() != 1 {
		time.Sleep(time.Millisecond)
	}
	var item string
	for item == "" {
		clk.Step(10 * time.Millisecond)
		select {
		case item = <-got:
		case <-time.After(time.Millisecond):
		}
	}
	if item != "foo" {
		t.Fatalf("Get = %q, want foo", item)
	}
	if now := clk.Since(epoch); now < 50*time.Millisecond {
		t.Errorf("added at %v, before its 50ms", now)
	}
	q.Done("foo")
}

// BeginShutDownWithDrain on a delaying queue with its goroutine stops that goroutine too
// (TestMain's goleak check fails otherwise) and still hands out what is queued.
func TestDelayingQueueBeginShutDownWithDrain(t *testing.T) {
	q := NewTypedDelayingQueueWithConfig[string](DelayingQueueConfig{Clock: testingclock.NewFakeClock(epoch)})
	q.Add("a")
	q.AddAfter("later", time.Hour)
	q.BeginShutDownWithDrain()
	if got := drainAll(q.Queue); !cmp.Equal(got, []string{"a"}) {
		t.Errorf("got %v, want [a]", got)
	}
	if !q.Drained() {
		t.Error("not drained")
	}
}
