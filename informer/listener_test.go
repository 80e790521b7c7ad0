package informer

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// informer.md §4.4: the ring doubles when full, never shrinks, and keeps FIFO order across
// wrap-around and growth. (client-go's starts at 1,024 slots; ours starts empty and takes
// minRingSlots at the first push, which nothing but memory can observe.)
func TestRingGrowsAndKeepsOrder(t *testing.T) {
	r := newRing(4)
	next, want := 0, 0
	push := func(k int) {
		for range k {
			r.push(&notification{kind: NotificationAdd, newObj: next})
			next++
		}
	}
	pop := func(k int) {
		for range k {
			got := r.pop().newObj.(int)
			if got != want {
				t.Fatalf("pop %d, want %d", got, want)
			}
			want++
		}
	}
	push(3)
	pop(2) // head moves so the next growth happens wrapped
	push(5)
	if got := len(r.slots); got != 8 {
		t.Errorf("slots %d after growth, want 8", got)
	}
	pop(6)
	if got := len(r.slots); got != 8 {
		t.Errorf("slots %d after draining, want 8 (never shrinks)", got)
	}
	var empty ring
	empty.push(&notification{kind: NotificationAdd, newObj: "x"})
	if got := len(empty.slots); got != minRingSlots {
		t.Errorf("slots %d after the first push into an empty ring, want %d", got, minRingSlots)
	}
	if got := empty.pop().newObj; got != "x" {
		t.Errorf("pop %v from a ring grown from empty, want x", got)
	}
}

// informer.md §4.4, §4.5: a listener delivers in exactly the order distributed; initial-list adds
// are counted before delivery and finished after OnAdd returns (§4.6).
func TestListenerOrderAndSyncCounting(t *testing.T) {
	rec := &infRecorder{}
	l := newListener(1, rec, 0, 0, time.Time{})
	l.add(&notification{kind: NotificationAdd, newObj: "a", isInInitialList: true})
	l.add(&notification{kind: NotificationUpdate, oldObj: "a", newObj: "b"})
	l.add(&notification{kind: NotificationDelete, oldObj: "b"})
	l.tracker.UpstreamSynced()
	if l.HasSynced() {
		t.Fatal("synced before the initial add was delivered")
	}
	for l.pending() > 0 {
		n := l.next()
		l.call(&n)
		l.finish(&n)
		if !l.HasSynced() {
			t.Fatal("not synced after the initial add returned")
		}
	}
	if diff := cmp.Diff(rec.calls, []string{"add a init", "update a->b", "delete b"}); diff != "" {
		t.Errorf("calls (-got +want):\n%s", diff)
	}
}

// informer.md §4.4, §13 rule 7: a panicking initial add propagates and leaves the registration
// unsynced forever.
func TestListenerPanicBlocksSync(t *testing.T) {
	l := newListener(1, ResourceEventHandlerFuncs{AddFunc: func(any) { panic("boom") }}, 0, 0, time.Time{})
	l.add(&notification{kind: NotificationAdd, newObj: "a", isInInitialList: true})
	l.tracker.UpstreamSynced()
	n := l.next()
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want boom", r)
			}
		}()
		l.call(&n)
		l.finish(&n)
	}()
	if l.HasSynced() {
		t.Error("synced although its initial add panicked")
	}
}

// informer.md §1.3: removal drops buffered notifications and later adds.
func TestListenerRemoveDropsBuffer(t *testing.T) {
	l := newListener(1, &infRecorder{}, 0, 0, time.Time{})
	l.add(&notification{kind: NotificationAdd, newObj: "a"})
	l.remove()
	l.add(&notification{kind: NotificationAdd, newObj: "b"})
	if got := l.pending(); got != 0 {
		t.Errorf("pending %d after remove, want 0", got)
	}
}
