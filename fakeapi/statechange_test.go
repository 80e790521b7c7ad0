package fakeapi

import (
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Goal: OnStateChange observers hear of every change that can move NextDeadline's answer, so a
// driver may keep that answer between calls at one clock time. Method: a server with a watch
// (bookmarks, a timeout) and a counting observer; after each operation (creates, a watch opened,
// events pulled, a bookmark due, a compaction, a close) NextDeadline is asked: whenever its answer
// differs from the last at the same clock time, the observer must have been called in between;
// each operation that writes must call it, and the pure reads (NextDeadline, Ready) must not.
func TestOnStateChangeSeesEveryDeadlineMove(t *testing.T) {
	s, clk := newTestServer(t, nil)
	calls := 0
	s.OnStateChange(func() { calls++ })
	lastAt, lastOK := s.NextDeadline()
	lastNow, seen := clk.Now(), calls
	step := func(what string, wantCall bool, op func()) {
		t.Helper()
		op()
		at, ok := s.NextDeadline()
		called := calls > seen
		if clk.Now().Equal(lastNow) && (!at.Equal(lastAt) || ok != lastOK) && !called {
			t.Fatalf("%s: NextDeadline moved from %v %v to %v %v with no observer call", what, lastAt, lastOK, at, ok)
		}
		if wantCall && !called {
			t.Fatalf("%s: no observer call", what)
		}
		lastAt, lastOK, lastNow, seen = at, ok, clk.Now(), calls
	}
	var w *Watcher
	step("create", true, func() { mustCreate(t, s, cmGVR, cm("a", "x", nil)) })
	step("open a watch with bookmarks and a timeout", true, func() {
		w = mustWatch(t, s, cmGVR, "a", metav1.ListOptions{ResourceVersion: strconv.FormatUint(s.Revision(), 10),
			AllowWatchBookmarks: true, TimeoutSeconds: ptr(int64(300))})
	})
	step("update", true, func() { mustCreate(t, s, cmGVR, cm("a", "y", nil)) })
	step("pull", true, func() { w.Next() })
	step("pure reads", false, func() {
		s.NextDeadline()
		w.Ready()
	})
	if calls != seen {
		t.Fatal("a pure read called the observer")
	}
	step("bookmark due", true, func() {
		clk.SetTime(lastAt.Add(time.Millisecond))
		s.Advance()
	})
	step("compaction", true, func() {
		if err := s.Faults().Compact(s.Revision()); err != nil {
			t.Fatal(err)
		}
	})
	step("close", true, func() {
		if err := s.Faults().CloseWatch(w.ID(), nil); err != nil {
			t.Fatal(err)
		}
	})
}
