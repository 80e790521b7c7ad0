package samplecontroller_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/examples/samplecontroller"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim/world"
)

// perturbConfig is sample-controller over two replicas, wired by its main (main: restarts
// apply, and main.go's 30s resync heals a missed event late) or through the Env (no resync),
// with the checks of the hazard sweep: no Foo lacks its Deployment for long (Invariant), no
// status goes back (OnWrite), and the converged outcome. Its workload is the campaign's
// (perturbOps).
func perturbConfig(t *testing.T, bugs samplecontroller.Bugs, main bool) clientgo.Config {
	s := spec{name: "perturb", api: func(c *fakeapi.Config) { c.Replicas = 2 }}
	cfg := runConfig(t, s, 1, 2, bugs, nil)
	if main {
		cfg = mainConfig(t, s, 1, bugs, nil)
	}
	var w *world.World
	cfg.Setup = func(world *world.World) error { w = world; return nil }
	cfg.Checks.Invariant = deploymentNotMissingLong(func() time.Duration { return w.Sim().Now() })
	cfg.Checks.OnWrite = observedGenerationNeverGoesBack
	return cfg
}

// perturbOps is the reference workload: three Foos created, then Foo scales and deletes of their
// Deployments, drawn once from a fixed source.
func perturbOps() []world.Op {
	return workload{n: 8}.ops(rand.New(rand.NewPCG(3, 1)))
}

// Goal: a perturbation campaign on the harness (clientgo.Perturb) finds each planted bug with
// the pattern that exposes it, and the correct controller survives every perturbation: a
// restart mid-run breaks the controller that trusts its memory of the Deployments it created
// (RemembersOwnership: a later scale never reaches its Deployment), wired by its main or
// through the Env (New called again with a new Env); a delete seen only through
// a relist breaks the one that drops tombstones (IgnoreTombstones, wired through the Env: no
// resync heals it, the Foo stays without its Deployment). Each first breaking
// run is shrunk to a few ops that still fail.
func TestPerturbFindsThePlantedBugs(t *testing.T) {
	ops := perturbOps()
	for _, c := range []struct {
		name string
		bugs samplecontroller.Bugs
		main bool
		// kinds are the perturbations that expose the plant: a restart; a delete seen only
		// through a relist (hidden by a 410 and a compaction, or by a 410 whose relist a
		// lagging replica serves).
		kinds []string
	}{
		{"remembers ownership", samplecontroller.Bugs{RemembersOwnership: true}, true, []string{clientgo.PerturbRestart}},
		{"remembers ownership, env", samplecontroller.Bugs{RemembersOwnership: true}, false, []string{clientgo.PerturbRestart}},
		{"ignores tombstones", samplecontroller.Bugs{IgnoreTombstones: true}, false, []string{clientgo.PerturbUnobserved, clientgo.PerturbStale}},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			rep, err := clientgo.Perturb(t, perturbConfig(t, c.bugs, c.main), ops, clientgo.PerturbOptions{ShrinkRuns: 60})
			if err != nil {
				t.Fatal(err)
			}
			if rep.First == nil {
				t.Fatalf("no perturbation broke the planted controller (%d points, %d runs)", rep.Points, rep.Runs)
			}
			t.Logf("%d points; first breaking: %v, after %d runs (%v with the shrink): %v", rep.Points, rep.First, rep.Runs, time.Since(start).Round(time.Millisecond), rep.Failure)
			if !slices.Contains(c.kinds, rep.First.Kind) {
				t.Errorf("first breaking perturbation %v, want one of %v", rep.First, c.kinds)
			}
			if rep.Shrunk == nil {
				t.Fatalf("no shrink: %v", rep.ShrinkErr)
			}
			t.Logf("shrunk from %d ops to %d in %d runs:\n%s", rep.Shrunk.Ops[0], rep.Shrunk.Ops[1], rep.Shrunk.Runs, rep.Shrunk.Text)
			if rep.Shrunk.Ops[1] > 5 {
				t.Errorf("shrunk to %d ops, want at most 5", rep.Shrunk.Ops[1])
			}
		})
	}
	for _, main := range []bool{true, false} {
		rep, err := clientgo.Perturb(t, perturbConfig(t, samplecontroller.Bugs{}, main), ops, clientgo.PerturbOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.First != nil {
			t.Fatalf("main=%v: the correct controller broke under %v: %v", main, rep.First, rep.Failure)
		}
		if rep.Runs < 2*rep.Points {
			t.Errorf("main=%v: %d perturbed runs over %d points: the kinds did not all apply", main, rep.Runs, rep.Points)
		}
		t.Logf("main=%v: the correct controller survives %d perturbations over %d points", main, rep.Runs, rep.Points)
	}
}
