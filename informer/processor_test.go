package informer

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var infEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// informer.md §2.4, §2.5: shouldResync marks due listeners, moves their nextResync, and the flag
// (which starts true) decides who receives sync-class notifications until the next check.
func TestProcessorShouldResyncFlags(t *testing.T) {
	p := newProcessor()
	l0 := newListener(p.newID(), &infRecorder{}, 0, 0, infEpoch)
	l2 := newListener(p.newID(), &infRecorder{}, 2*time.Second, 2*time.Second, infEpoch)
	l3 := newListener(p.newID(), &infRecorder{}, 3*time.Second, 3*time.Second, infEpoch)
	for _, l := range []*listener{l0, l2, l3} {
		p.addListener(l)
	}
	sync := notification{kind: NotificationUpdate, oldObj: "x", newObj: "x"}
	// Before any check every flag is true: a same-RV update reaches all three (§2.5).
	if diff := cmp.Diff(p.distribute(&sync, true, true), []int{1, 2, 3}); diff != "" {
		t.Errorf("before first tick (-got +want):\n%s", diff)
	}
	type tick struct {
		at   time.Duration
		due  bool
		recv []int
	}
	for _, tc := range []tick{
		{1 * time.Second, false, nil},
		{2 * time.Second, true, []int{2}},
		{3 * time.Second, true, []int{3}},
		{4 * time.Second, true, []int{2}},
		{5 * time.Second, false, nil},
		{6 * time.Second, true, []int{2, 3}},
	} {
		if got := p.shouldResync(infEpoch.Add(tc.at)); got != tc.due {
			t.Errorf("at %v: shouldResync %v, want %v", tc.at, got, tc.due)
		}
		if diff := cmp.Diff(p.distribute(&sync, true, true), tc.recv); diff != "" {
			t.Errorf("at %v: sync receivers (-got +want):\n%s", tc.at, diff)
		}
	}
	// Non-sync notifications reach everyone regardless of flags (§4.2).
	if diff := cmp.Diff(p.distribute(&notification{kind: NotificationAdd, newObj: "y"}, false, true), []int{1, 2, 3}); diff != "" {
		t.Errorf("non-sync receivers (-got +want):\n%s", diff)
	}
}

// informer.md §1.3: removing an unknown or already removed listener is a no-op; after stop the
// processor has no listeners and every buffer is dropped (§4.3, §14 T9).
func TestProcessorRemoveAndStop(t *testing.T) {
	p := newProcessor()
	a := newListener(p.newID(), &infRecorder{}, 0, 0, infEpoch)
	b := newListener(p.newID(), &infRecorder{}, 0, 0, infEpoch)
	p.addListener(a)
	p.addListener(b)
	p.distribute(&notification{kind: NotificationAdd, newObj: "x"}, false, true)
	if !p.removeListener(a) {
		t.Error("removing a registered listener reported not found")
	}
	if p.removeListener(a) {
		t.Error("removing twice reported found")
	}
	if got := a.pending(); got != 0 {
		t.Errorf("removed listener still holds %d notifications", got)
	}
	p.stop()
	if got := b.pending(); got != 0 || len(p.listeners) != 0 {
		t.Errorf("after stop: pending %d, listeners %d; want 0, 0", got, len(p.listeners))
	}
}
