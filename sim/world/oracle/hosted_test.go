package oracle_test

import (
	"testing"
	"time"

	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/oracle"
)

// Goal: registrations made on an informer before the world hosts it (a factory's, a
// controller's own) are known to every oracle: no gap is reported for them, and their resyncs
// are held to their periods. Method: build the informer from a Source, register two handlers on
// it (one with its own period), host it, run a workload with resyncs and a relist, every oracle
// attached.
func TestOraclesKnowRegistrationsMadeBeforeHosting(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		w, err := world.New(seed, world.Config{DefaultResource: configMapsGVR})
		if err != nil {
			t.Fatal(err)
		}
		h, err := oracle.Attach(w)
		if err != nil {
			t.Fatal(err)
		}
		src, err := w.NewSource("inf1", world.InformerSpec{Namespace: "default"})
		if err != nil {
			t.Fatal(err)
		}
		inf := informer.NewSharedIndexInformerWithOptions(src.ListerWatcher(), src.ExampleObject(), src.Options(informer.SharedIndexInformerOptions{ResyncPeriod: 4 * time.Second}))
		if _, err := inf.AddEventHandler(informer.ResourceEventHandlerFuncs{}); err != nil {
			t.Fatal(err)
		}
		if _, err := inf.AddEventHandlerWithResyncPeriod(informer.ResourceEventHandlerFuncs{}, 9*time.Second); err != nil {
			t.Fatal(err)
		}
		n, err := w.HostInformer(src, inf)
		if err != nil {
			t.Fatal(err)
		}
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		gen, err := w.Generate(world.GenConfig{Ops: 30, FaultOps: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Check(w.Sim().RunUntil(gen.Finished, time.Hour)); err != nil {
			if v := h.Violation(); v != nil {
				t.Fatalf("seed %d: %s", seed, v.Report())
			}
			t.Fatal(err)
		}
		if err := h.RunUntilConverged(time.Hour); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}
