package informer

import (
	"testing"

	"github.com/informersim/informersim/internal/invariant"
)

// informer.md §4.6 (client-go TestSingleFile): synced only when upstream has synced and every
// started initial add has finished, whichever happens last; then sticky.
func TestSyncTrackerLatchesWhenBothHold(t *testing.T) {
	tr := newSyncTracker("test")
	tr.Start()
	tr.Start()
	if tr.HasSynced() {
		t.Fatal("synced with two adds outstanding and upstream not synced")
	}
	if tr.UpstreamSynced() {
		t.Fatal("latched with two adds outstanding")
	}
	if tr.Finished() {
		t.Fatal("latched with one add outstanding")
	}
	if got := tr.Finished(); !got {
		t.Fatal("last Finished after upstream sync did not latch")
	}
	if !tr.HasSynced() {
		t.Fatal("HasSynced false after latch")
	}
	// Sticky: more initial work later (a late-join-like push) does not unlatch.
	tr.Start()
	if !tr.HasSynced() {
		t.Fatal("latch reverted")
	}
}

// informer.md §4.6: with no initial adds, upstream sync alone latches.
func TestSyncTrackerUpstreamOnly(t *testing.T) {
	tr := newSyncTracker("test")
	if got := tr.UpstreamSynced(); !got {
		t.Fatal("upstream sync with zero count did not latch")
	}
	if tr.UpstreamSynced() {
		t.Fatal("second upstream sync reported a new latch")
	}
}

// informer.md §4.6 (client-go TestSingleFileCounting): an extra Finished panics "negative
// counter".
func TestSyncTrackerNegativeCounterPanics(t *testing.T) {
	tr := newSyncTracker("test")
	tr.Start()
	tr.Finished()
	defer func() {
		r := recover()
		v, ok := r.(invariant.Violation)
		if !ok {
			t.Fatalf("recovered %v, want an invariant.Violation", r)
		}
		if got, want := v.Message, "synctrack: negative counter (Finished without Start)"; got != want {
			t.Errorf("message %q, want %q", got, want)
		}
	}()
	tr.Finished()
}
