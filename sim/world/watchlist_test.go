package world

import (
	"strings"
	"testing"

	"github.com/informersim/informersim/sim"
)

// Goal: the world runs an informer in the watch-list start-up (informer.md §7.5): the Reflector
// opens one WATCH with sendInitialEvents instead of LIST then WATCH, the initial events and the
// end-of-initial-events bookmark come over the simulated network, the informer syncs, and the
// world converges through writes and a 410, on every trace seed.
func TestWorldWatchList(t *testing.T) {
	for _, seed := range traceSeeds {
		w := newTraceWorld(t, seed)
		mustApply(t, w, create(configMaps, "a"), create(configMaps, "b"))
		n, err := w.AddInformer("inf1", InformerOptions{Resource: configMaps, Namespace: "default", WatchList: true})
		if err != nil {
			t.Fatal(err)
		}
		h := mustAddHandler(t, w, n, "h1", useInformerResync)
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		mustConverge(t, w)
		mustApply(t, w, update(configMaps, "a"), Op{Kind: OpCloseWatches, Code: 410}, del(configMaps, "b"), create(configMaps, "c"))
		mustConverge(t, w)
		narration := sim.Narrate(w.Sim().Trace().Events())
		if !strings.Contains(narration, "inf1/reflector: WATCH rv=") || !strings.Contains(narration, "sendInitialEvents=true") {
			t.Errorf("seed %d: no watch-list request in the narration:\n%s", seed, narration)
		}
		if strings.Contains(narration, "inf1/reflector: LIST") {
			t.Errorf("seed %d: the watch-list informer listed:\n%s", seed, narration)
		}
		if got := len(h.Recorder().Notifications()); got < 4 {
			t.Errorf("seed %d: %d notifications", seed, got)
		}
	}
}
