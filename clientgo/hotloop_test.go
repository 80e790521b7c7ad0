package clientgo_test

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim/world"
)

// deletingRequests is batchRequests with three requests deleted at seeded instants of the
// safety phase (their Jobs go with them through the garbage collector), watches closed and a
// status write and an update refused: the faults a correct runner must ride out.
func deletingRequests(w *world.World) error {
	if err := batchRequests(w); err != nil {
		return err
	}
	r := w.Sim().Rand("requests")
	for _, name := range []string{"r1", "r3", "r6"} {
		at := time.Duration(6+r.IntN(20)) * time.Second
		if _, err := w.Script(at, world.Op{Kind: world.OpDelete, Resource: cmsGVR, Name: name}); err != nil {
			return err
		}
	}
	_, err := w.Script(time.Duration(1+r.IntN(20))*time.Second,
		world.Op{Kind: world.OpCloseWatches},
		world.Op{Kind: world.OpFailNext, Verb: fakeapi.VerbUpdate, Code: 409},
		world.Op{Kind: world.OpSleep, Duration: 3 * time.Second},
		world.Op{Kind: world.OpCloseWatches, Code: 410})
	return err
}

// runnerConfig runs the batch runner, with the planted bug or without, on seed.
func runnerConfig(seed uint64, planted bool, hot clientgo.HotLoop) clientgo.Config {
	return clientgo.Config{
		Seed:    seed,
		Cluster: clientgo.Cluster{ControlPlane: clientgo.ControlPlane{Config: controlplane.Config{Jobs: controlplane.JobConfig{MinDuration: time.Second, MaxDuration: 10 * time.Second}}}},
		Setup:   deletingRequests,
		Controller: clientgo.Constructor{New: func(ctx context.Context, env *clientgo.Env) (clientgo.Controller, error) {
			c, err := newBatchRunner(ctx, env)
			if c != nil {
				c.notFoundIsAnError = planted
			}
			return c, err
		}},
		Phases: clientgo.Phases{FaultsFor: 30 * time.Second},
		Checks: clientgo.Checks{Outcome: batchDone, HotLoop: hot},
	}
}

// TestHotLoopCaughtBySweep: a client-go workqueue controller that returns the lister's NotFound
// for a deleted request, instead of nil, retries the key forever with a growing backoff. It
// converges in every other respect (its Jobs and results are right, the world becomes quiet),
// so without counting the reconciles a sweep passes. The harness counts each key's errors (the
// key the controller hands utilruntime.HandleErrorWithContext) and fails the run with the
// hot-loop violation: the key, the count, the last error, the seed and the replay line. The
// sweep's figure is logged; the correct runner passes every seed of the sweep with no hot loop,
// and each seed's counts are the same on a second run.
func TestHotLoopCaughtBySweep(t *testing.T) {
	const seeds = 20
	caught := 0
	var first string
	for seed := uint64(1); seed <= seeds; seed++ {
		rep, err := clientgo.Run(t, runnerConfig(seed, true, clientgo.HotLoop{}))
		if err == nil {
			continue
		}
		if !strings.Contains(err.Error(), "hot loop") {
			t.Fatalf("seed %d: the plant failed otherwise: %v", seed, err)
		}
		caught++
		if first == "" {
			first = rep.Failure
			if !regexp.MustCompile(`failed 1\d times in a row`).MatchString(rep.Failure) {
				t.Errorf("seed %d: the failure does not give the count:\n%s", seed, rep.Failure)
			}
			for _, want := range []string{"hot loop: the controller's reconcile of default/r", `configmap "r`, "not found", fmt.Sprintf("seed: %d", seed), fmt.Sprintf("replay: INFORMERSIM_SEED=%d go test -run", seed)} {
				if !strings.Contains(rep.Failure, want) {
					t.Errorf("seed %d: the failure does not say %q:\n%s", seed, want, rep.Failure)
				}
			}
			if len(rep.Reconciles.HotLoops) == 0 || rep.Reconciles.HotLoops[0].Controller != "client-go" || rep.Reconciles.HotLoops[0].Errors < 10 {
				t.Errorf("seed %d: hot loops %v", seed, rep.Reconciles.HotLoops)
			}
		}
	}
	t.Logf("the NotFound-as-error plant caught on %d of %d seeds; the first failure:\n%s", caught, seeds, firstLines(first, 6))
	if strings.Contains(first, "timeline: not written") {
		t.Errorf("the failure's timeline was not written:\n%s", firstLines(first, 6))
	}
	if caught < seeds*3/4 {
		t.Errorf("caught on %d of %d seeds, want at least three quarters", caught, seeds)
	}

	var errorsSeen int
	for seed := uint64(1); seed <= seeds; seed++ {
		rep, err := clientgo.Run(t, runnerConfig(seed, false, clientgo.HotLoop{}))
		if err != nil {
			t.Fatalf("seed %d: the correct runner fails: %v\n%s", seed, err, rep.Failure)
		}
		if len(rep.Reconciles.HotLoops) != 0 {
			t.Fatalf("seed %d: the correct runner is in a hot loop: %v", seed, rep.Reconciles)
		}
		errorsSeen += rep.Reconciles.Errors
	}
	if errorsSeen == 0 {
		t.Errorf("the correct runner had no error over %d seeds with conflicts injected: the count sees nothing", seeds)
	}
	t.Logf("the correct runner: no hot loop on %d seeds, %d reconcile errors counted (the injected conflicts)", seeds, errorsSeen)
}

// TestHotLoopCountsDeterministic: a seed's reconcile counts are the same on two runs, and
// HotLoop.Allow reports the hot loop without failing the run; a larger HotLoop.Failures than
// the loop reached does not flag it.
func TestHotLoopCountsDeterministic(t *testing.T) {
	allow := clientgo.HotLoop{Allow: true}
	a, err := clientgo.Run(t, runnerConfig(3, true, allow))
	if err != nil {
		t.Fatalf("with Allow: %v", err)
	}
	b, err := clientgo.Run(t, runnerConfig(3, true, allow))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Reconciles, b.Reconciles) || a.Hash != b.Hash {
		t.Fatalf("seed 3, two runs:\n%v\n%v", a.Reconciles, b.Reconciles)
	}
	if len(a.Reconciles.HotLoops) == 0 {
		t.Fatalf("seed 3: no hot loop reported with Allow: %v", a.Reconciles)
	}
	if !strings.Contains(a.String(), "reconciles: ") || !strings.Contains(a.String(), "hot loops: ") {
		t.Errorf("the report's line does not tell the reconciles: %v", a)
	}
	longest := 0
	for _, k := range a.Reconciles.Keys {
		longest = max(longest, k.LongestStreak)
	}
	t.Logf("%v", a.Reconciles)
	high, err := clientgo.Run(t, runnerConfig(3, true, clientgo.HotLoop{Failures: longest + 1}))
	if err != nil || len(high.Reconciles.HotLoops) != 0 {
		t.Errorf("with Failures %d, above the longest streak: %v, %v", longest+1, err, high.Reconciles)
	}
	if _, err := clientgo.Run(t, runnerConfig(3, true, clientgo.HotLoop{Failures: -1})); err == nil || !strings.Contains(err.Error(), "Checks.HotLoop.Failures") {
		t.Errorf("a negative HotLoop.Failures: %v", err)
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
