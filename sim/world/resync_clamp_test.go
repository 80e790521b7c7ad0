package world

import (
	"testing"
	"time"

	"github.com/informersim/informersim/informer"
)

// informer.md §2.2: a handler asking for a resync period under the 1s minimum gets 1s, as with
// client-go (which logs a warning): over 10s of a quiet world, a handler asking 500ms is told
// of its one object 10 times, not 20.
func TestResyncPeriodBelowTheMinimumIsRaisedToOneSecond(t *testing.T) {
	w := newTraceWorld(t, 1)
	// The informer resyncs (a zero default period would turn every handler's resync off).
	n, err := w.AddInformer("inf1", InformerSpec{Resource: configMaps, Informer: informer.SharedIndexInformerOptions{ResyncPeriod: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	asked := 500 * time.Millisecond
	h, err := w.AddHandler(n, "fast", nil, HandlerOptions{ResyncPeriod: &asked})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	mustApply(t, w, create(configMaps, "a"))
	mustConverge(t, w)
	from := len(h.Deliveries().Notifications())
	if err := w.Sim().RunFor(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	syncs := 0
	for _, note := range h.Deliveries().Notifications()[from:] {
		if note.OldResourceVersion == note.ResourceVersion {
			syncs++
		}
	}
	if syncs < 9 || syncs > 11 {
		t.Errorf("%d resyncs in 10s for a handler asking %v, want about 10 (the 1s minimum)", syncs, asked)
	}
}
