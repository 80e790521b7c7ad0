package operator_test

import (
	"crypto/sha256"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/examples/operator"
	"github.com/informersim/informersim/examples/operator/internal/controller"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim/world"
)

// TestConverges runs the operator's Main, unchanged, in the world under each condition (410
// relists, compaction, stale replica routing, conflicts) with the control plane's garbage
// collector and workload status: every WebApp converges to its Deployment and status, WebApps
// deleted by the workload take their Deployments with them, no status generation ever goes
// back, and the run shows the condition happened. INFORMERSIM_OPERATOR_SEEDS seeds per
// condition (default 3).
func TestConverges(t *testing.T) {
	n := envInt(t, "INFORMERSIM_OPERATOR_SEEDS", 3)
	for _, s := range specs {
		t.Run(strings.ReplaceAll(s.name, " ", "_"), func(t *testing.T) {
			collected := 0
			for _, seed := range seeds(t, n) {
				var w *world.World
				rep, err := clientgo.Run(t, runConfig(t, s, seed, correct, &w))
				if err != nil {
					t.Fatalf("%s: %v\n%s", s.name, err, rep.Failure)
				}
				if err := s.evidence(w.Server(), rep); err != nil {
					t.Errorf("seed %d: the run did not exercise %q: %v", seed, s.name, err)
				}
				kinds := map[string]bool{}
				for _, k := range rep.Diagnostics.Streams {
					kinds[k.String()] = true
				}
				if !kinds["webapps.apps.example.com/v1 (json)"] || !kinds["deployments.apps/v1 (protobuf)"] {
					t.Errorf("seed %d: the manager's informers were not served by the world: %v", seed, rep.Diagnostics.Streams)
				}
				collected += w.ControlPlane().GC.Stats().Writes
				t.Logf("%v; informers served: %v", rep, rep.Diagnostics.Streams)
			}
			if collected == 0 {
				t.Errorf("%s: the garbage collector deleted nothing over %d seeds: no WebApp deletion was followed through", s.name, n)
			}
		})
	}
}

// TestDeterminism runs each seed twice: of the mixed condition with controller-runtime's default
// priority queue and with a FIFO queue, and of the restarts condition with a FIFO queue. Two runs
// of a seed must give the same trace hash, unless the Report counted an unordered batch (a
// relist reaching the priority queue, whose order is a race between its goroutines; a manager
// starting while the world holds objects, which client-go hands its late handlers in map
// order; a relist finding several objects gone, whose tombstones client-go hands over in map
// order). INFORMERSIM_OPERATOR_DETERMINISM_SEEDS sets the
// number of seeds (default 5); the hash over every run's hash is logged, to compare across
// processes and GOMAXPROCS.
func TestDeterminism(t *testing.T) {
	n := envInt(t, "INFORMERSIM_OPERATOR_DETERMINISM_SEEDS", 5)
	for _, q := range []struct {
		name string
		spec spec
		opts operator.Options
		// min is the fraction of seeds that must replay. What the Report counts is a race
		// between goroutines, whose outcome depends on the machine's load: only the FIFO queue
		// without restarts, with nothing to count, is held to a fraction.
		min float64
	}{
		{"priority queue", mixed, correct, 0},
		{"FIFO queue", mixed, fifo, 0.9},
		{"FIFO queue, crash-restarts", restarts, fifo, 0},
	} {
		t.Run(strings.ReplaceAll(q.name, " ", "_"), func(t *testing.T) {
			all := sha256.New()
			start := time.Now()
			equal, counted, batches := 0, 0, 0
			for _, seed := range seeds(t, n) {
				a, errA := clientgo.Run(t, runConfig(t, q.spec, seed, q.opts, nil))
				b, errB := clientgo.Run(t, runConfig(t, q.spec, seed, q.opts, nil))
				if errA != nil || errB != nil {
					t.Fatalf("seed %d: %v / %v\n%s", seed, errA, errB, a.Failure)
				}
				batches += a.Diagnostics.UnorderedBatches
				switch {
				case a.Hash == b.Hash:
					equal++
				case a.Diagnostics.UnorderedBatches > 0 || b.Diagnostics.UnorderedBatches > 0:
					counted++
				default:
					t.Errorf("seed %d: trace hashes differ (%s, %s) with no unordered batch counted", seed, a.Hash[:16], b.Hash[:16])
				}
				fmt.Fprintln(all, a.Hash)
			}
			t.Logf("%s: %d of %d seeds gave equal hashes on 2 runs, %d differed with unordered batches counted (%d batches in all); GOMAXPROCS %d, %v wall time, hash of hashes %x",
				q.name, equal, n, counted, batches, runtime.GOMAXPROCS(0), time.Since(start).Round(time.Millisecond), all.Sum(nil)[:8])
			if float64(equal) < q.min*float64(n) {
				t.Errorf("%s: only %d of %d seeds replayed from their seed", q.name, equal, n)
			}
		})
	}
}

// plantedBug is a bug of the reconciler and what catching it looks like.
type plantedBug struct {
	name string
	spec spec
	bugs controller.Bugs
	// caughtBy is a part of the run's error that says which check caught it.
	caughtBy string
}

var plantedBugs = []plantedBug{
	// Mutating the cache's Deployment before a write that fails leaves the cache saying the
	// write happened: the Deployment keeps its old replicas, and the run does not converge.
	{name: "mutate cache", spec: mixed, bugs: controller.Bugs{MutateCache: true}, caughtBy: "did not converge"},
	// A status patched from a stale read (a restarted operator's cache listed from a lagging
	// replica) makes an observed generation go back: the check on every write (Checks.OnWrite)
	// stops the run at that write.
	{name: "stale status", spec: restarts, bugs: controller.Bugs{StaleStatus: true}, caughtBy: "breaks Checks.OnWrite"},
}

// TestPlantedBugsCaught sweeps seeds with each planted bug until the expected check catches it
// on a seed whose replay line reproduces the same failure (at most
// INFORMERSIM_OPERATOR_BUG_SEEDS, default 150; seeds failing otherwise, or caught but not
// reproduced, which the Report's unordered batches explain, are counted), and checks that the
// correct operator passes on that seed. The operator runs with a FIFO queue.
func TestPlantedBugsCaught(t *testing.T) {
	n := envInt(t, "INFORMERSIM_OPERATOR_BUG_SEEDS", 150)
	for _, pb := range plantedBugs {
		t.Run(strings.ReplaceAll(pb.name, " ", "_"), func(t *testing.T) {
			opts := fifo
			opts.Bugs = pb.bugs
			var caught uint64
			var first error
			tried, otherwise, notReplayed := 0, 0, 0
			for _, seed := range seeds(t, n) {
				tried++
				_, err := clientgo.Run(t, runConfig(t, pb.spec, seed, opts, nil))
				if err == nil {
					continue
				}
				if !strings.Contains(err.Error(), pb.caughtBy) || !strings.Contains(err.Error(), world.TestRepro(t.Name(), seed)) {
					otherwise++
					continue
				}
				again, err2 := clientgo.Run(t, runConfig(t, pb.spec, seed, opts, nil))
				if err2 == nil || err2.Error() != err.Error() {
					notReplayed++
					t.Logf("seed %d caught the bug but did not replay it (unordered batches %d): %v, then %v", seed, again.Diagnostics.UnorderedBatches, err, err2)
					continue
				}
				caught, first = seed, err
				break
			}
			if first == nil {
				t.Fatalf("the planted bug %q was caught by %q and replayed on none of %d seeds (%d failed otherwise, %d not replayed)", pb.name, pb.caughtBy, n, otherwise, notReplayed)
			}
			if _, err := clientgo.Run(t, runConfig(t, pb.spec, caught, fifo, nil)); err != nil {
				t.Fatalf("seed %d fails with the correct operator too: %v", caught, err)
			}
			t.Logf("caught and replayed on seed %d after %d seeds (%d failed otherwise, %d not replayed); replay: %s\n%v", caught, tried, otherwise, notReplayed, world.TestRepro(t.Name(), caught), first)
		})
	}
}

// TestHotLoopPlantCaught: the operator with the NotFound of a deleted WebApp returned as an
// error (controller.Bugs.NotFoundIsAnError) retries that request forever; every other check
// passes (its Deployments, its status, the world quiet), so before the harness counted
// reconciles a sweep caught it on none of its seeds. Now the harness reads each reconcile's
// outcome from controller-runtime's logs and fails the run with the hot-loop oracle. The
// sweep's figure (INFORMERSIM_OPERATOR_HOTLOOP_SEEDS seeds of the mixed spec, default 12) is
// logged; the seeds whose workload deletes no WebApp cannot catch it. The correct operator runs
// the same seeds with no hot loop, and one seed's counts are equal on two runs.
func TestHotLoopPlantCaught(t *testing.T) {
	n := envInt(t, "INFORMERSIM_OPERATOR_HOTLOOP_SEEDS", 12)
	planted := fifo
	planted.Bugs = controller.Bugs{NotFoundIsAnError: true}
	caught, otherwise, noDelete := 0, 0, 0
	var first *clientgo.Report
	for _, seed := range seeds(t, n) {
		var w *world.World
		rep, err := clientgo.Run(t, runConfig(t, mixed, seed, planted, &w))
		deleted := count(w.Server(), func(rq fakeapi.RequestRecord) bool {
			return rq.Verb == fakeapi.VerbDelete && rq.Resource == webappsGVR && rq.Err == ""
		}) > 0
		switch {
		case err != nil && strings.Contains(err.Error(), "hot loop"):
			caught++
			if first == nil {
				first = rep
			}
		case err != nil:
			otherwise++
			t.Logf("seed %d failed otherwise: %v", seed, err)
		case !deleted:
			noDelete++
		default:
			t.Errorf("seed %d: a WebApp was deleted and the plant was not caught: %v", seed, rep.Reconciles)
		}
	}
	t.Logf("the NotFound-as-error plant caught on %d of %d seeds (%d failed otherwise, %d deleted no WebApp)", caught, n, otherwise, noDelete)
	if first == nil {
		t.Fatalf("caught on none of %d seeds", n)
	}
	if len(first.Reconciles.HotLoops) == 0 || first.Reconciles.HotLoops[0].Controller != "webapp" || len(first.Reconciles.Controllers) == 0 {
		t.Errorf("the report of the first catch: %v", first.Reconciles)
	}
	t.Logf("first catch:\n%s", strings.Join(strings.SplitN(first.Failure, "\n", 7)[:6], "\n"))
	if caught < n/2 {
		t.Errorf("caught on %d of %d seeds, want at least half", caught, n)
	}
	for _, seed := range seeds(t, n) {
		rep, err := clientgo.Run(t, runConfig(t, mixed, seed, fifo, nil))
		if err != nil {
			t.Fatalf("seed %d: the correct operator fails: %v", seed, err)
		}
		if len(rep.Reconciles.HotLoops) != 0 || rep.Reconciles.Reconciles == 0 {
			t.Fatalf("seed %d: the correct operator's reconciles: %v", seed, rep.Reconciles)
		}
	}
	a, errA := clientgo.Run(t, runConfig(t, mixed, first.Seed, planted, nil))
	b, errB := clientgo.Run(t, runConfig(t, mixed, first.Seed, planted, nil))
	if errA == nil || errB == nil || !reflect.DeepEqual(a.Reconciles, b.Reconciles) {
		t.Errorf("seed %d twice: %v / %v\n%v\n%v", first.Seed, errA, errB, a.Reconciles, b.Reconciles)
	}
}
