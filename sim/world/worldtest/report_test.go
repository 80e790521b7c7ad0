package worldtest_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/worldtest"
)

// Goal: HaveConverged's failure message states the seed and the replay command once each, for
// every way a run fails (the errors themselves carry both), and tells the failing object's
// story when there is one.
func TestConvergedFailureStatesSeedAndReplayOnce(t *testing.T) {
	for _, c := range []struct {
		name    string
		budget  time.Duration
		setup   func(w *world.World, inf *world.Informer)
		history bool
	}{
		{"a failed check", time.Minute, func(w *world.World, _ *world.Informer) {
			_ = w.AddCheck("c", func() error { return errors.New("boom") })
		}, false},
		{"a panicking handler", time.Minute, func(w *world.World, inf *world.Informer) {
			_, _ = w.AddHandler(inf, "p", informer.ResourceEventHandlerFuncs{AddFunc: func(any) { panic("x") }}, world.HandlerOptions{})
		}, false},
		{"a world that does not quiesce in time", time.Millisecond, func(*world.World, *world.Informer) {}, false},
		{"an eventual-consistency violation", time.Minute, func(w *world.World, inf *world.Informer) {
			_ = w.RunUntilConverged(time.Minute)
			_ = inf.SharedIndexInformer().GetStore().Delete(inf.SharedIndexInformer().GetStore().List()[0])
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newExampleWorld(1)
			_ = w.Apply(world.Op{Kind: world.OpCreate, Name: "a"})
			inf, _ := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
			_ = inf.Start()
			c.setup(w, inf)
			m := worldtest.HaveConverged(c.budget)
			if ok, err := m.Match(w); ok || err != nil {
				t.Fatalf("Match = %v, %v; want a failure", ok, err)
			}
			msg := m.FailureMessage(w)
			// "seed 1" is in the replay command; the errors carry "(seed 1; repro: ...)" too.
			for _, once := range []string{"seed 1", "seed: 1", "informersim run example --seed 1"} {
				if n := strings.Count(msg, once); n != 1 {
					t.Errorf("%q appears %d times, want once:\n%s", once, n, msg)
				}
			}
			if got := strings.Contains(msg, "history of default/a"); got != c.history {
				t.Errorf("history shown: %v, want %v:\n%s", got, c.history, msg)
			}
		})
	}
}

// Goal: converging with an informer the spec never started is the spec's mistake: HaveConverged
// returns it as the matcher's error (Gomega reports it as such), not as a failed run with a
// replay line.
func TestConvergedUsageErrorIsTheMatchersError(t *testing.T) {
	w := newExampleWorld(1)
	if _, err := w.AddInformer("inf1", world.InformerSpec{}); err != nil {
		t.Fatal(err)
	}
	ok, err := worldtest.HaveConverged(time.Minute).Match(w)
	if ok || err == nil || !errors.Is(err, world.ErrUsage) || !strings.Contains(err.Error(), "informer inf1 was never started") || strings.Contains(err.Error(), "replay") {
		t.Errorf("Match = %v, %v; want the usage error as the matcher's error", ok, err)
	}
}
