package oracle_test

import (
	"testing"
	"time"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/oracle"
)

func ptr[T any](v T) *T { return &v }

// busyWorld builds a world that exercises every oracle: a random workload with watch drops,
// 410s, compactions and failed requests; an informer resyncing every 3s with handlers asking for
// 0, the default and 7s; and a handler joining late, mid-workload.
func busyWorld(t *testing.T, seed uint64, attach bool) (*world.World, *oracle.Handle, *world.Generator) {
	t.Helper()
	w, err := world.NewFromConfig(sim.Config{Seed: seed, FaultSiteProbability: 0.5}, fakeapi.Config{}, world.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var h *oracle.Handle
	if attach {
		if h, err = oracle.Attach(w); err != nil {
			t.Fatal(err)
		}
	}
	inf, err := w.AddInformer("inf1", world.InformerOptions{Informer: informer.SharedIndexInformerOptions{ResyncPeriod: 3 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		name string
		p    *time.Duration
	}{{"none", ptr(time.Duration(0))}, {"dflt", nil}, {"slow", ptr(7 * time.Second)}} {
		if _, err := w.AddHandler(inf, r.name, nil, world.HandlerOptions{ResyncPeriod: r.p}); err != nil {
			t.Fatal(err)
		}
	}
	if err := inf.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.After(20*time.Second, "test", "late-join", func() {
		if _, err := w.AddHandler(inf, "late", nil, world.HandlerOptions{ResyncPeriod: ptr(2 * time.Second)}); err != nil {
			t.Error(err)
		}
	}); err != nil {
		t.Fatal(err)
	}
	gen, err := w.Generate(world.GenConfig{Namespaces: []string{"default", "other"}, Ops: 60, Disruptions: true, Faults: true})
	if err != nil {
		t.Fatal(err)
	}
	return w, h, gen
}

func runBusy(t *testing.T, w *world.World, h *oracle.Handle, gen *world.Generator) error {
	t.Helper()
	err := w.Sim().RunUntil(gen.Done, time.Hour)
	if h != nil {
		err = h.Check(err)
	}
	if err != nil {
		return err
	}
	w.Sim().SetFaultsEnabled(false)
	if h != nil {
		return h.RunUntilConverged(time.Hour)
	}
	return w.RunUntilConverged(time.Hour)
}

// Goal: on correct runs every oracle holds. Method: busy worlds over many seeds, every oracle
// attached.
func TestOraclesHoldOnCorrectRuns(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		w, h, gen := busyWorld(t, seed, true)
		if err := runBusy(t, w, h, gen); err != nil {
			var v *world.Violation
			if vv := h.Violation(); vv != nil {
				v = vv
				t.Fatalf("seed %d: %s", seed, v.Report())
			}
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}
