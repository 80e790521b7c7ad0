package oracle_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/oracle"
)

var configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func ptr[T any](v T) *T { return &v }

// busyWorld builds a world that exercises every oracle: a random workload with watch drops,
// 410s, compactions and failed requests; an informer resyncing every 3s with handlers asking for
// 0, the default and 7s; and a handler joining late, mid-workload.
func busyWorld(t testing.TB, seed uint64, attach bool) (*world.World, *oracle.Handle, *world.Generator) {
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
	inf, err := w.AddInformer("inf1", world.InformerSpec{Informer: informer.SharedIndexInformerOptions{ResyncPeriod: 3 * time.Second}})
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
	gen, err := w.Generate(world.GenConfig{Namespaces: []string{"default", "other"}, Ops: 60, FaultOps: true, FaultPoints: true})
	if err != nil {
		t.Fatal(err)
	}
	return w, h, gen
}

func runBusy(t testing.TB, w *world.World, h *oracle.Handle, gen *world.Generator) error {
	t.Helper()
	err := w.Sim().RunUntil(gen.Finished, time.Hour)
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

// Goal: no oracle cries wolf on any configuration the world runs: every queue mode, single
// pops, watch-list start-up, a label selector (objects moving in and out), pods (graceful
// deletes), two informers, a handler removed and an informer stopped mid-run. Method: a random
// workload with faults under each configuration, several seeds, every oracle attached.
func TestOraclesHoldAcrossConfigurations(t *testing.T) {
	type config struct {
		name string
		opts world.InformerSpec
		res  bool // configmaps instead of pods
	}
	configs := []config{
		{"deltafifo", world.InformerSpec{Informer: informer.SharedIndexInformerOptions{QueueMode: informer.QueueDeltaFIFO, ResyncPeriod: 2 * time.Second}}, false},
		{"realfifo-nonatomic", world.InformerSpec{Informer: informer.SharedIndexInformerOptions{QueueMode: informer.QueueRealFIFONonAtomic, ResyncPeriod: 2 * time.Second}}, true},
		{"single-pop", world.InformerSpec{Informer: informer.SharedIndexInformerOptions{DisableBatchPop: true, ResyncPeriod: 1500 * time.Millisecond}}, true},
		{"watch-list", world.InformerSpec{WatchList: true, Informer: informer.SharedIndexInformerOptions{ResyncPeriod: 5 * time.Second}}, false},
		{"selector", world.InformerSpec{Namespace: "default", LabelSelector: "v!=1", Informer: informer.SharedIndexInformerOptions{ResyncPeriod: 4 * time.Second}}, true},
	}
	for _, c := range configs {
		for seed := uint64(1); seed <= 8; seed++ {
			wcfg := world.Config{}
			if c.res {
				wcfg.DefaultResource = configMapsGVR
			}
			w, err := world.NewFromConfig(sim.Config{Seed: seed, FaultSiteProbability: 0.5}, fakeapi.Config{}, wcfg)
			if err != nil {
				t.Fatal(err)
			}
			h, err := oracle.Attach(w)
			if err != nil {
				t.Fatal(err)
			}
			inf, err := w.AddInformer("inf1", c.opts)
			if err != nil {
				t.Fatal(err)
			}
			other, err := w.AddInformer("inf2", world.InformerSpec{Namespace: "other", Informer: informer.SharedIndexInformerOptions{ResyncPeriod: 3 * time.Second}})
			if err != nil {
				t.Fatal(err)
			}
			var removable *world.Handler
			for i, p := range []*time.Duration{nil, ptr(time.Duration(0)), ptr(1200 * time.Millisecond)} {
				hd, err := w.AddHandler(inf, "", nil, world.HandlerOptions{ResyncPeriod: p})
				if err != nil {
					t.Fatal(err)
				}
				if i == 1 {
					removable = hd
				}
			}
			if _, err := w.AddHandler(other, "o1", nil, world.HandlerOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, n := range []*world.Informer{inf, other} {
				if err := n.Start(); err != nil {
					t.Fatal(err)
				}
			}
			at := func(d time.Duration, what string, fn func()) {
				if _, err := w.After(d, "test", what, fn); err != nil {
					t.Fatal(err)
				}
			}
			at(7*time.Second, "join", func() {
				if _, err := w.AddHandler(inf, "late", nil, world.HandlerOptions{ResyncPeriod: ptr(500 * time.Millisecond)}); err != nil {
					t.Error(err)
				}
			})
			at(15*time.Second, "remove", func() {
				if err := removable.Remove(); err != nil {
					t.Error(err)
				}
			})
			at(40*time.Second, "stop", other.Stop)
			gen, err := w.Generate(world.GenConfig{Namespaces: []string{"default", "other"}, Ops: 50, FaultOps: true, FaultPoints: true})
			if err != nil {
				t.Fatal(err)
			}
			err = h.Check(w.Sim().RunUntil(gen.Finished, time.Hour))
			if err == nil {
				w.Sim().SetFaultsEnabled(false)
				err = h.RunUntilConverged(time.Hour)
			}
			if err != nil {
				if v := h.Violation(); v != nil {
					t.Fatalf("%s seed %d: %s", c.name, seed, v.Report())
				}
				t.Fatalf("%s seed %d: %v", c.name, seed, err)
			}
		}
	}
}
