package workqueue

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// drainAll takes every waiting item with TryGet, marking each Done, and returns them in order.
func drainAll[T comparable](q *Queue[T]) []T {
	var out []T
	for {
		item, ok, _ := q.TryGet()
		if !ok {
			return out
		}
		out = append(out, item)
		q.Done(item)
	}
}

// TestBasic restates client-go's TestBasic (informer.md §12.7): producers and consumers on
// goroutines; every distinct item added is processed exactly once, and Get reports shutdown
// once the queue is shut down and empty.
func TestBasic(t *testing.T) {
	q := NewTyped[int]()
	const producers, perProducer = 5, 50
	var prod sync.WaitGroup
	for p := range producers {
		prod.Add(1)
		go func() {
			defer prod.Done()
			for i := range perProducer {
				q.Add(p*perProducer + i)
			}
		}()
	}
	var mu sync.Mutex
	seen := map[int]int{}
	var cons sync.WaitGroup
	for range 3 {
		cons.Add(1)
		go func() {
			defer cons.Done()
			for {
				item, shutdown := q.Get()
				if shutdown {
					return
				}
				mu.Lock()
				seen[item]++
				mu.Unlock()
				q.Done(item)
			}
		}()
	}
	prod.Wait()
	q.ShutDownWithDrain()
	cons.Wait()
	if len(seen) != producers*perProducer {
		t.Fatalf("processed %d distinct items, want %d", len(seen), producers*perProducer)
	}
	for item, n := range seen {
		if n != 1 {
			t.Errorf("item %d processed %d times, want 1", item, n)
		}
	}
}

// TestAddWhileProcessing restates client-go's test: an item added again while it is processed
// is handed out once more, after Done, and never to two workers at once.
func TestAddWhileProcessing(t *testing.T) {
	q := NewTyped[string]()
	q.Add("a")
	item, ok, _ := q.TryGet()
	if !ok || item != "a" {
		t.Fatalf("TryGet = %q, %v; want a, true", item, ok)
	}
	q.Add("a")
	q.Add("a")
	if got := q.Len(); got != 0 {
		t.Fatalf("Len while a is processed = %d, want 0 (re-queued at Done)", got)
	}
	if _, ok, _ := q.TryGet(); ok {
		t.Fatal("a was handed out twice while being processed")
	}
	q.Done("a")
	if got := drainAll(q); !cmp.Equal(got, []string{"a"}) {
		t.Fatalf("after Done got %v, want [a] once", got)
	}
	if got := drainAll(q); len(got) != 0 {
		t.Fatalf("a ran a third time: %v", got)
	}
}

// TestLen restates client-go's TestLen: Len counts waiting items, deduplicated.
func TestLen(t *testing.T) {
	q := NewTyped[string]()
	q.Add("foo")
	q.Add("bar")
	q.Add("foo")
	if got := q.Len(); got != 2 {
		t.Errorf("Len = %d, want 2", got)
	}
}

// TestReinsert restates client-go's TestReinsert: Get, Add again, Done: the item comes back.
func TestReinsert(t *testing.T) {
	q := NewTyped[string]()
	q.Add("foo")
	i, _ := q.Get()
	q.Add(i)
	q.Done(i)
	i, _ = q.Get()
	if i != "foo" {
		t.Errorf("Get = %q, want foo", i)
	}
	q.Done(i)
	if q.Len() != 0 {
		t.Errorf("Len = %d, want 0", q.Len())
	}
}

// TestCollapse restates client-go's TestCollapse: two Adds of a waiting item are one.
func TestCollapse(t *testing.T) {
	q := NewTyped[string]()
	q.Add("bar")
	q.Add("bar")
	if got := drainAll(q); !cmp.Equal(got, []string{"bar"}) {
		t.Errorf("got %v, want [bar]", got)
	}
}

// TestCollapseWhileProcessing restates client-go's test: while an item is processed, several
// Adds make exactly one more run, placed at the end of the queue at Done.
func TestCollapseWhileProcessing(t *testing.T) {
	q := NewTyped[string]()
	q.Add("foo")
	first, _ := q.Get()
	q.Add("foo")
	q.Add("bar")
	q.Add("foo")
	q.Done(first)
	if got := drainAll(q); !cmp.Equal(got, []string{"bar", "foo"}) {
		t.Errorf("got %v, want [bar foo]", got)
	}
}

// TestQueueDrainageUsingShutDownWithDrain restates client-go's test: ShutDownWithDrain returns
// only once the item in progress is Done.
func TestQueueDrainageUsingShutDownWithDrain(t *testing.T) {
	q := NewTyped[string]()
	q.Add("foo")
	q.Add("bar")
	first, _ := q.Get()
	second, _ := q.Get()
	returned := make(chan struct{})
	go func() {
		q.ShutDownWithDrain()
		close(returned)
	}()
	q.Done(first)
	select {
	case <-returned:
		t.Fatal("ShutDownWithDrain returned with an item still processed")
	case <-time.After(20 * time.Millisecond):
	}
	q.Done(second)
	<-returned
	if _, shutdown := q.Get(); !shutdown {
		t.Error("Get after drain: shutdown = false")
	}
}

// TestNoQueueDrainageUsingShutDown restates client-go's test: ShutDown does not wait for work in
// progress.
func TestNoQueueDrainageUsingShutDown(t *testing.T) {
	q := NewTyped[string]()
	q.Add("foo")
	item, _ := q.Get()
	q.ShutDown() // returns although item is not Done
	if !q.ShuttingDown() {
		t.Error("ShuttingDown = false after ShutDown")
	}
	q.Done(item)
}

// TestForceQueueShutdownUsingShutDown restates client-go's test: a ShutDown during a
// ShutDownWithDrain cancels the wait.
func TestForceQueueShutdownUsingShutDown(t *testing.T) {
	q := NewTyped[string]()
	q.Add("foo")
	item, _ := q.Get()
	returned := make(chan struct{})
	go func() {
		q.ShutDownWithDrain()
		close(returned)
	}()
	for !q.ShuttingDown() {
		time.Sleep(time.Millisecond)
	}
	q.ShutDown()
	<-returned
	q.Done(item)
}

// TestQueueDrainageUsingShutDownWithDrainWithDirtyItem restates client-go's test: an item
// re-added while processed during a drain is re-queued at Done and handed out after shut down.
func TestQueueDrainageUsingShutDownWithDrainWithDirtyItem(t *testing.T) {
	q := NewTyped[string]()
	q.Add("foo")
	item, _ := q.Get()
	q.Add("foo") // dirty while processed
	q.BeginShutDownWithDrain()
	if q.Drained() {
		t.Fatal("Drained while foo is processed")
	}
	q.Add("bar") // ignored: shutting down
	q.Done(item)
	again, shutdown := q.Get()
	if shutdown || again != "foo" {
		t.Fatalf("Get after Done = %q, %v; want foo, false", again, shutdown)
	}
	if q.Drained() {
		t.Fatal("Drained while foo is processed again")
	}
	q.Done(again)
	if !q.Drained() {
		t.Fatal("not Drained once nothing is processed")
	}
	if _, shutdown := q.Get(); !shutdown {
		t.Error("Get: shutdown = false, want true (bar was added after shut down)")
	}
}

// TestShutDownHandsOutWaitingItems: informer.md §16: after ShutDown the items still queued are
// handed out; only an empty queue reports shutdown.
func TestShutDownHandsOutWaitingItems(t *testing.T) {
	q := NewTyped[string]()
	q.Add("a")
	q.Add("b")
	q.ShutDown()
	q.Add("c")
	var got []string
	for {
		item, shutdown := q.Get()
		if shutdown {
			break
		}
		got = append(got, item)
		q.Done(item)
	}
	if !cmp.Equal(got, []string{"a", "b"}) {
		t.Errorf("got %v, want [a b]", got)
	}
}
