package fakeapi

import (
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Goal: OnReady is called whenever Ready may have turned true, so a driver that asks Ready only
// after a call (and after its own Next) never misses an event or the end: the simulator's watch
// actor relies on it. Method: a namespaced watch with bookmarks and a counting callback; after
// each operation (a create in scope, one out of scope, a bookmark, a duplicated event, Next,
// a close) Ready is compared with the last answer: it may only have turned true with a call in
// between, and turned false only through Next. The in-scope operations must call it.
func TestOnReadyCalledWheneverReadyMayTurnTrue(t *testing.T) {
	s, clk := newTestServer(t, nil)
	w := mustWatch(t, s, cmGVR, "a", metav1.ListOptions{ResourceVersion: strconv.FormatUint(s.Revision(), 10), AllowWatchBookmarks: true})
	calls := 0
	w.OnReady(func() { calls++ })
	ready, seen := w.Ready(), calls
	step := func(what string, wantCall bool, op func()) {
		t.Helper()
		op()
		now := w.Ready()
		called := calls > seen
		if now && !ready && !called {
			t.Fatalf("%s: Ready turned true without an OnReady call", what)
		}
		if wantCall && !called {
			t.Fatalf("%s: no OnReady call", what)
		}
		ready, seen = now, calls
	}
	next := func() {
		for {
			if _, ok := w.Next(); !ok {
				return
			}
		}
	}
	step("create in scope", true, func() { mustCreate(t, s, cmGVR, cm("a", "x", nil)) })
	step("drain", false, next)
	if ready {
		t.Fatal("Ready after draining an open watch")
	}
	step("create out of scope", false, func() { mustCreate(t, s, cmGVR, cm("b", "y", nil)) })
	if ready {
		t.Fatal("Ready after a change out of the watch's scope")
	}
	step("duplicate event", true, func() {
		if err := s.Faults().DuplicateEvent(w.ID()); err != nil {
			t.Fatal(err)
		}
	})
	step("drain", false, next)
	step("bookmark", true, func() {
		at, ok := s.NextDeadline()
		if !ok {
			t.Fatal("no bookmark deadline on a watch with bookmarks")
		}
		clk.SetTime(at.Add(time.Millisecond))
		s.Advance()
	})
	step("drain", false, next)
	step("close", true, func() {
		if err := s.Faults().CloseWatch(w.ID(), nil); err != nil {
			t.Fatal(err)
		}
	})
	if !ready || !w.Done() {
		t.Fatal("a closed watch is not Ready and Done")
	}
	w.OnReady(nil) // removing it is allowed; nothing calls it afterwards
}
