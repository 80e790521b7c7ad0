package informer

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// backlogEvents is well beyond the listener's initial 1,024 slots (informer.md §4.4), so the
// ring must grow, possibly several times, while wrapped around.
const backlogEvents = 5000

// informer.md §4.4, §4.5 (issue: "a handler that falls more than 1,024 notifications behind
// loses none of them"), step driver: one handler delivers nothing while 5,000 watch events are
// processed, then catches up; it sees every notification in order, and the other handler,
// delivered to all along, saw the same sequence.
func TestListenerBacklogBeyond1024LosesNothing(t *testing.T) {
	e := newInfStep(t, SharedIndexInformerOptions{})
	lagging, lagReg := e.handler(nil)
	prompt, promptReg := e.handler(nil)
	e.st.Start()
	e.quiesce()
	for i := range backlogEvents {
		e.lw.set("p" + strconv.Itoa(i%50))
		for e.serveOne() {
		}
		for e.st.QueueLen() > 0 {
			_ = e.st.ProcessNext()
		}
		for e.st.Buffered(promptReg) > 0 {
			e.st.DeliverNext(promptReg)
		}
	}
	if got := e.st.Buffered(lagReg); got != backlogEvents {
		t.Fatalf("lagging handler has %d pending, want %d", got, backlogEvents)
	}
	for e.st.Buffered(lagReg) > 0 {
		e.st.DeliverNext(lagReg)
	}
	got, want := lagging.take(), prompt.take()
	if len(got) != backlogEvents {
		t.Fatalf("lagging handler saw %d notifications, want %d", len(got), backlogEvents)
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("lagging vs prompt handler (-lagging +prompt):\n%s", diff)
	}
	// The sequence is exactly the writes, in order.
	for i, c := range got {
		name := "p" + strconv.Itoa(i%50)
		var w string
		if i < 50 {
			w = fmt.Sprintf("add ns/%s@%d", name, i+1)
		} else {
			w = fmt.Sprintf("update ns/%s@%d->ns/%s@%d", name, i+1-50, name, i+1)
		}
		if c != w {
			t.Fatalf("notification %d is %q, want %q", i, c, w)
		}
	}
}

// The same under the goroutine driver: a handler blocked in its first callback while 5,000
// events are processed gets every one of them, in order, once released.
func TestListenerBacklogBeyond1024GoroutineDriver(t *testing.T) {
	lw := newInfLW()
	e := newInfRunEnv(lw, SharedIndexInformerOptions{})
	release := make(chan struct{})
	var mu sync.Mutex
	var seen []string
	first := true
	h := ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if first {
				first = false
				<-release
			}
			mu.Lock()
			seen = append(seen, "add "+infDescribe(obj))
			mu.Unlock()
		},
		UpdateFunc: func(_, obj any) {
			mu.Lock()
			seen = append(seen, "update "+infDescribe(obj))
			mu.Unlock()
		},
	}
	if _, err := e.inf.AddEventHandler(h); err != nil {
		t.Fatal(err)
	}
	lw.set("p0")
	e.start()
	defer e.stop()
	waitWithin(t, "the informer to sync", e.inf.HasSynced)
	for i := 1; i <= backlogEvents; i++ {
		lw.set("p0")
	}
	// Wait until the cache holds the last write: every notification has been buffered.
	waitWithin(t, "the cache to hold the last write", func() bool {
		obj, ok, _ := e.inf.GetStore().GetByKey("ns/p0")
		return ok && infDescribe(obj) == "ns/p0@"+strconv.Itoa(backlogEvents+1)
	})
	close(release)
	waitWithin(t, fmt.Sprintf("the handler to get all %d notifications", backlogEvents+1), func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) >= backlogEvents+1
	})
	mu.Lock()
	if len(seen) != backlogEvents+1 {
		t.Fatalf("the handler got %d notifications, want %d", len(seen), backlogEvents+1)
	}
	defer mu.Unlock()
	for i, c := range seen {
		want := "update ns/p0@" + strconv.Itoa(i+1)
		if i == 0 {
			want = "add ns/p0@1"
		}
		if c != want {
			t.Fatalf("notification %d is %q, want %q", i, c, want)
		}
	}
}

// backlogWait bounds each wait of the goroutine-driver test: far above what the wait takes on a
// loaded machine (milliseconds), far below the test binary's timeout, so a lost notification
// fails the test with what it was waiting for instead of hanging it.
const backlogWait = 30 * time.Second

// waitWithin polls cond every millisecond and fails the test if it is still false after
// backlogWait, saying what it waited for.
func waitWithin(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(backlogWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %v waiting for %s", backlogWait, what)
		}
		time.Sleep(time.Millisecond)
	}
}
