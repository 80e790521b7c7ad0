package sim_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/informersim/informersim/internal/invariant"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/simtest"
)

// Goal: an actor added with AddCachedActor, whose host wakes it at every change, makes the very
// run it makes when polled at every step. Method: the determinism toy with its producers and
// consumers cached (simtest.ToyConfig.Cached) hashes, for seeds 1..100 under every policy, as
// the polled toy does (whose hashes TestPinnedHashes pins), with the thorough checks on (the
// test binary's default) and off.
func TestCachedActorsMakeTheSameRun(t *testing.T) {
	defer invariant.SetThorough(true)
	for _, p := range []sim.Policy{sim.PolicyRandom, sim.PolicyFIFO, sim.PolicyPCT} {
		for seed := uint64(1); seed <= 100; seed++ {
			want := mustHash(t, seed, p)
			for _, thorough := range []bool{true, false} {
				invariant.SetThorough(thorough)
				cfg := simtest.DeterminismToy()
				cfg.Cached = true
				s, _, err := simtest.Run(sim.Config{Seed: seed, Policy: p, Trace: sim.TraceHashOnly}, cfg)
				if err != nil {
					t.Fatalf("seed %d policy %v: %v", seed, p, err)
				}
				if got := s.Trace().Hash(); got != want {
					t.Fatalf("seed %d policy %v thorough=%v: the cached toy hashes %s, the polled toy %s", seed, p, thorough, got, want)
				}
			}
		}
	}
}

// flag is a cached actor whose offer follows a shared variable; its host may forget to wake it.
type flag struct {
	name string
	on   *bool
}

func (f flag) Name() string { return f.name }
func (f flag) Actions(add func(sim.Action)) {
	if *f.on {
		add(sim.Action{Name: "go", Run: func() { *f.on = false }})
	}
}

// Goal: a host that misses a Wake is caught by the thorough checks, naming the actor. Method: a
// cached actor offers "go" while a variable is true; a timer sets it without waking the actor.
// With the checks on, the next step panics with an invariant.Violation naming the actor; with
// them off, the engine offers the stale cache (nothing), so the run ends idle: the checks are
// what tells the two apart.
func TestMissedWakeIsCaught(t *testing.T) {
	run := func() (err error) {
		s, err := sim.New(sim.Config{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		on := false
		s.AddCachedActor(flag{name: "flag", on: &on})
		s.AfterFunc(1, "setter", "set", func() { on = true }) // no Wake: the bug
		defer func() {
			if p := recover(); p != nil {
				v, ok := p.(invariant.Violation)
				if !ok {
					panic(p)
				}
				err = v
			}
		}()
		if err := s.RunUntilQuiescent(); err != nil {
			t.Fatal(err)
		}
		if on {
			return errors.New("stale: the flag was never run")
		}
		return nil
	}
	invariant.SetThorough(true)
	err := run()
	if err == nil || !strings.Contains(err.Error(), "cached actor flag offers [go], but its cache holds []") {
		t.Fatalf("thorough: got %v, want the missed wake reported", err)
	}
	invariant.SetThorough(false)
	defer invariant.SetThorough(true)
	if err := run(); err == nil || err.Error() != "stale: the flag was never run" {
		t.Fatalf("not thorough: got %v, want the stale cache to hide the action", err)
	}
}

// Goal: Wake makes a cached actor offer what changed, at the next step. Method: as in
// TestMissedWakeIsCaught, with the setter waking the actor: "go" runs at the step after "set".
func TestWakeRefreshesTheCache(t *testing.T) {
	s, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	on := false
	wk := s.AddCachedActor(flag{name: "flag", on: &on})
	s.AfterFunc(1, "setter", "set", func() { on = true; wk.Wake() })
	if err := s.RunUntilQuiescent(); err != nil {
		t.Fatal(err)
	}
	if on || s.StepCount() != 2 {
		t.Fatalf("after %d steps on=%v, want the flag run at step 2", s.StepCount(), on)
	}
	var zero sim.Waker
	zero.Wake() // does nothing
}
