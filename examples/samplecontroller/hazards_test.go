package samplecontroller_test

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/examples/samplecontroller"
	samplev1alpha1 "github.com/informersim/informersim/examples/samplecontroller/apis/v1alpha1"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim/world"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// hazardSpec is sample-controller under every hazard of the harness at once: three
// crash-restarts, six stale reads from a replica 10s behind (each LIST of a restarted
// informer takes one), four changes hidden in a relist,
// three conflicts and three slow calls, over a workload of Foo writes.
var hazardSpec = spec{
	name:     "hazards",
	workload: workload{n: 30},
	api:      func(c *fakeapi.Config) { c.Replicas = 3 },
}

var allHazards = clientgo.Hazards{Restarts: 3, StaleReads: 6, HiddenChanges: 4, Conflicts: 3, SlowCalls: 3}

// wiring is how sample-controller is handed to the harness: by its main.go (Main,
// client-go's own informers) or through the Env (Constructor.New, the world's informers), with the
// hazards that apply to it.
type wiring struct {
	name    string
	main    bool
	hazards clientgo.Hazards
}

// wirings are both, under every hazard: through the Env a restart calls New again with a new
// Env, stale reads route the first LIST of its new informers, hidden changes pick from their
// caches.
var wirings = []wiring{{"main", true, allHazards}, {"env", false, allHazards}}

var mainWiring, envWiring = wirings[0], wirings[1]

func hazardConfig(t *testing.T, wr wiring, seed uint64, bugs samplecontroller.Bugs) clientgo.Config {
	cfg := runConfig(t, hazardSpec, seed, 2, bugs, nil)
	if wr.main {
		cfg = mainConfig(t, hazardSpec, seed, bugs, nil)
	}
	cfg.Hazards = wr.hazards
	cfg.Checks.OnWrite = observedGenerationNeverGoesBack
	var w *world.World
	setup := cfg.Setup
	cfg.Setup = func(world *world.World) error { w = world; return setup(world) }
	cfg.Checks.Invariant = deploymentNotMissingLong(func() time.Duration { return w.Sim().Now() })
	return cfg
}

// missingFor is how long a Foo may lack its Deployment: the correct controller re-creates it at
// the event of its deletion (or, after a crash, at its restart's LIST); a controller that misses
// the event waits for main.go's 30s resync.
const missingFor = 25 * time.Second

// deploymentNotMissingLong is checked after every step: no Foo lacks its Deployment for more
// than missingFor (a run's own state: a new one for each run).
func deploymentNotMissingLong(clock func() time.Duration) func(*fakeapi.Server) error {
	since := map[string]time.Duration{}
	return func(srv *fakeapi.Server) error {
		now := clock()
		foos, err := typedList[samplev1alpha1.Foo](srv, foosGVR)
		if err != nil {
			return err
		}
		deps, err := typedList[appsv1.Deployment](srv, depsGVR)
		if err != nil {
			return err
		}
		have := map[string]bool{}
		for _, d := range deps {
			have[d.Namespace+"/"+d.Name] = true
		}
		missing := map[string]bool{}
		for _, foo := range foos {
			key := foo.Namespace + "/" + foo.Spec.DeploymentName
			if have[key] {
				continue
			}
			missing[key] = true
			if _, ok := since[key]; !ok {
				since[key] = now
			}
			if d := now - since[key]; d > missingFor {
				return fmt.Errorf("Foo %s/%s has had no Deployment %s for %v", foo.Namespace, foo.Name, foo.Spec.DeploymentName, d)
			}
		}
		for key := range since {
			if !missing[key] {
				delete(since, key)
			}
		}
		return nil
	}
}

// observedGenerationNeverGoesBack is checked on every write of the controller while it runs: a
// Foo's status.observedGeneration never moves back (a status written from a stale read would).
func observedGenerationNeverGoesBack(w clientgo.Write) error {
	if w.Resource != foosGVR || w.Before == nil || w.After == nil {
		return nil
	}
	before, _, _ := unstructured.NestedInt64(w.Before.Object, "status", "observedGeneration")
	after, _, _ := unstructured.NestedInt64(w.After.Object, "status", "observedGeneration")
	if after < before {
		return fmt.Errorf("Foo %s/%s: status.observedGeneration went back from %d to %d", w.Namespace, w.Name, before, after)
	}
	return nil
}

// TestHazardsConverge: under every hazard, sample-controller wired by its main and wired
// through the Env (whose crash-restarts call New again with a new Env) converges on each seed,
// each seed replays (equal trace hashes on two runs, or a counted map-order batch), and over
// the sweep every hazard configured fired at least once (a hazard that never fired would make
// the sweep a lie).
func TestHazardsConverge(t *testing.T) {
	seeds := mainSeeds(t)
	for _, wr := range wirings {
		t.Run(wr.name, func(t *testing.T) {
			fired := map[string]int{}
			for _, seed := range seeds {
				rep, err := clientgo.Run(t, hazardConfig(t, wr, seed, samplecontroller.Bugs{}))
				if err != nil {
					t.Fatalf("seed %d: %v\n%s", seed, err, rep.Failure)
				}
				for _, h := range rep.Hazards {
					fired[h.Name] += h.Fired
				}
				again, err := clientgo.Run(t, hazardConfig(t, wr, seed, samplecontroller.Bugs{}))
				if err != nil {
					t.Fatalf("seed %d, second run: %v", seed, err)
				}
				if again.Hash != rep.Hash && rep.MapOrdered()+again.MapOrdered() == 0 {
					t.Errorf("seed %d: trace hashes differ (%s, %s) with nothing counted", seed, rep.Hash[:16], again.Hash[:16])
				}
				t.Logf("%v", rep)
			}
			h := wr.hazards
			for name, n := range map[string]int{clientgo.HazardRestart: h.Restarts, clientgo.HazardStaleRead: h.StaleReads,
				clientgo.HazardHiddenChange: h.HiddenChanges, clientgo.HazardConflict: h.Conflicts, clientgo.HazardSlowCall: h.SlowCalls} {
				if n > 0 && fired[name] == 0 {
					t.Errorf("hazard %s never fired over %d seeds", name, len(seeds))
				}
			}
			t.Logf("fired over %d seeds: %v", len(seeds), fired)
		})
	}
}

// plantSeeds is the number of seeds of the planted-bug sweeps: INFORMERSIM_PLANT_SEEDS, default 40.
func plantSeeds(t *testing.T) []uint64 { return envSeeds(t, "INFORMERSIM_PLANT_SEEDS", 40) }

// TestPlantedBugsCaughtUnderHazards sweeps seeds of sample-controller under every hazard
// (hazardConfig: crash-restarts, stale reads, hidden changes, conflicts, slow calls, and the
// observedGeneration check on every write) with one planted bug at a time, wired by its main.go
// and through the Env. Each must be caught on some seed, a caught seed's replay line must give
// the same failure again (seeds whose run counted an unordered batch may be passed over), and
// the correct controller passes the same seeds. Ignoring DeletedFinalStateUnknown is caught at
// the Invariant (a Deployment deleted in a hidden change, seen as a tombstone, is re-created
// only by main.go's next 30s resync, or never through the Env); a status computed from a stale
// read and written onto a fresh one, by OnWrite at that write (a restarted informer's first LIST
// from the lagging replica); a controller that trusts its memory of what it created, after a
// crash-restart (its next scale never reaches the Deployment; through the Env the restart calls
// New again with a new Env, and the new controller remembers nothing), and the first caught
// seeds pass without the restarts. Mutating a lister's object is not among them: the
// informers of a main are client-go's, which the harness cannot see
// (TestPlantedListerMutationCaught catches it with the Env's informers).
func TestPlantedBugsCaughtUnderHazards(t *testing.T) {
	seeds := plantSeeds(t)
	tombstone := func(err error) bool { return containsAny(err, "Checks.Invariant broken", "has had no Deployment") }
	memory := func(err error) bool { return containsAny(err, "did not converge", "replicas") }
	staleStatus := func(err error) bool { return containsAny(err, "breaks Checks.OnWrite", "observedGeneration went back") }
	plants := []struct {
		name   string
		wiring wiring
		bugs   samplecontroller.Bugs
		// is says the failure is the one the plant makes.
		is func(err error) bool
		// cause, if set, takes away the hazard that breaks the planted controller: the first
		// caught seeds must then pass.
		cause func(*clientgo.Hazards)
	}{
		{"ignores DeletedFinalStateUnknown", mainWiring, samplecontroller.Bugs{IgnoreTombstones: true}, tombstone, nil},
		{"writes status from a stale read", mainWiring, samplecontroller.Bugs{StatusOntoFreshRead: true}, staleStatus, nil},
		{"trusts its memory across a restart", mainWiring, samplecontroller.Bugs{RemembersOwnership: true}, memory, noRestarts},
		{"ignores DeletedFinalStateUnknown", envWiring, samplecontroller.Bugs{IgnoreTombstones: true}, tombstone, nil},
		{"writes status from a stale read", envWiring, samplecontroller.Bugs{StatusOntoFreshRead: true}, staleStatus, nil},
		{"trusts its memory across a restart", envWiring, samplecontroller.Bugs{RemembersOwnership: true}, memory, noRestarts},
	}
	for _, p := range plants {
		t.Run(p.wiring.name+"/"+p.name, func(t *testing.T) {
			type catch struct {
				seed uint64
				err  error
				rep  *clientgo.Report
			}
			var caught []catch
			for _, seed := range seeds {
				rep, err := clientgo.Run(t, hazardConfig(t, p.wiring, seed, p.bugs))
				if err == nil {
					continue
				}
				if !p.is(err) {
					t.Errorf("seed %d: a failure the plant does not explain: %v\n%s", seed, err, rep.Failure)
					continue
				}
				caught = append(caught, catch{seed, err, rep})
			}
			if len(caught) == 0 {
				t.Fatalf("the planted bug was caught on none of %d seeds", len(seeds))
			}
			// The replay line must reproduce the failure. A crash-restart hands a main's
			// restarted informers their objects in a Go map's order (Report.Diagnostics.UnorderedBatches,
			// ResyncWakes), so a seed whose run counted such a batch may fail a few steps
			// apart on its replay: it is passed over, counted. A seed that differs with
			// nothing counted is an error; and one caught seed at least must replay exactly.
			replayed := false
			for _, c := range caught {
				_, again := clientgo.Run(t, hazardConfig(t, p.wiring, c.seed, p.bugs))
				if again != nil && again.Error() == c.err.Error() {
					t.Logf("caught on %d of %d seeds; replayed: seed %d, %s\n%v", len(caught), len(seeds), c.seed, world.Repro(c.seed), c.err)
					replayed = true
					break
				}
				if c.rep.MapOrdered() == 0 {
					t.Errorf("seed %d replayed: %v, want the same failure: %v (and nothing unordered was counted)", c.seed, again, c.err)
					continue
				}
				t.Logf("seed %d did not replay exactly (%d unordered batches, %d resync wakes counted)", c.seed, c.rep.Diagnostics.UnorderedBatches, c.rep.Diagnostics.ResyncWakes)
			}
			if !replayed {
				t.Errorf("none of the %d caught seeds replayed to the same failure", len(caught))
			}
			if p.cause == nil {
				return
			}
			for _, c := range caught[:min(len(caught), 5)] {
				cfg := hazardConfig(t, p.wiring, c.seed, p.bugs)
				p.cause(&cfg.Hazards)
				if rep, err := clientgo.Run(t, cfg); err != nil {
					t.Errorf("seed %d fails without the hazard that breaks the plant too: %v\n%s", c.seed, err, rep.Failure)
				}
			}
		})
	}
	for _, wr := range wirings {
		t.Run(wr.name+"/correct controller", func(t *testing.T) {
			for _, seed := range seeds {
				if rep, err := clientgo.Run(t, hazardConfig(t, wr, seed, samplecontroller.Bugs{})); err != nil {
					t.Errorf("seed %d: %v\n%s", seed, err, rep.Failure)
				}
			}
		})
	}
}

// noRestarts takes the crash-restarts away.
func noRestarts(h *clientgo.Hazards) { h.Restarts, h.RestartAt = 0, nil }

func containsAny(err error, subs ...string) bool {
	for _, s := range subs {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}

// scaleSpec is the determinism-at-scale condition: 410 relists and compactions in the workload,
// three replicas with random routing, one lagging, and the harness's crash-restarts, stale reads
// and conflicts (TestDeterminismAtScale).
var scaleSpec = spec{
	name: "scale",
	workload: workload{n: 20, disruptions: [][]world.Op{
		{{Kind: world.OpCloseWatches, Code: 410}},
		{{Kind: world.OpFailNext, Verb: fakeapi.VerbWatch, Code: 410}},
		{{Kind: world.OpCloseWatches}, noise, {Kind: world.OpCompact}},
	}},
	api: func(c *fakeapi.Config) {
		c.Replicas = 3
		c.Routing = fakeapi.RoutingRandom
	},
	setup: func(w *world.World) {
		_ = w.Server().Replicas().SetLag(1, 2*time.Second)
	},
}

// TestDeterminismAtScale runs each seed twice at GOMAXPROCS 1 and twice at 2 (sample-controller
// under scaleSpec, crash-restarts and conflicts, wired by its main.go with stale reads too, and
// through the Env, whose restarts call New again): every run converges, and the four trace
// hashes of a seed are equal unless the Report counted a map-order batch or resync (a
// difference with nothing counted fails). INFORMERSIM_SCALE_SEEDS sets the number of seeds
// (default 10; the measured sweep is 1,000), INFORMERSIM_SCALE_WIRING=main or env runs one
// wiring only.
func TestDeterminismAtScale(t *testing.T) {
	seeds := envSeeds(t, "INFORMERSIM_SCALE_SEEDS", 10)
	for _, wr := range []wiring{
		{"main", true, clientgo.Hazards{Restarts: 2, StaleReads: 2, Conflicts: 3}},
		{"env", false, clientgo.Hazards{Restarts: 2, StaleReads: 2, Conflicts: 3}},
	} {
		if only := os.Getenv("INFORMERSIM_SCALE_WIRING"); only != "" && only != wr.name {
			continue
		}
		t.Run(wr.name, func(t *testing.T) {
			config := func(seed uint64) clientgo.Config {
				cfg := runConfig(t, scaleSpec, seed, 2, samplecontroller.Bugs{}, nil)
				if wr.main {
					cfg = mainConfig(t, scaleSpec, seed, samplecontroller.Bugs{}, nil)
				}
				cfg.Hazards = wr.hazards
				return cfg
			}
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
			start := time.Now()
			equal, counted, fired := 0, 0, map[string]int{}
			for _, seed := range seeds {
				var hashes []string
				unordered := 0
				for i, procs := range []int{1, 1, 2, 2} {
					runtime.GOMAXPROCS(procs)
					rep, err := clientgo.Run(t, config(seed))
					if err != nil {
						t.Fatalf("seed %d at GOMAXPROCS %d: %v\n%s", seed, procs, err, rep.Failure)
					}
					hashes = append(hashes, rep.Hash[:16])
					unordered += rep.MapOrdered()
					if i == 0 {
						for _, h := range rep.Hazards {
							fired[h.Name] += h.Fired
						}
					}
				}
				switch {
				case hashes[1] == hashes[0] && hashes[2] == hashes[0] && hashes[3] == hashes[0]:
					equal++
				case unordered > 0:
					counted++
				default:
					t.Errorf("seed %d: trace hashes differ across runs and GOMAXPROCS (%s) with nothing counted", seed, strings.Join(hashes, " "))
				}
			}
			if fired[clientgo.HazardRestart] == 0 {
				t.Errorf("no crash-restart fired over %d seeds", len(seeds))
			}
			t.Logf("%s: %d seeds x 4 runs (GOMAXPROCS 1, 1, 2, 2): %d with four equal hashes, %d differing after a counted batch or resync; hazards fired %v; %v wall time",
				wr.name, len(seeds), equal, counted, fired, time.Since(start))
		})
	}
}
