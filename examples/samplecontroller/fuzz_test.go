package samplecontroller_test

import (
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/examples/samplecontroller"
	"github.com/informersim/informersim/scenarios"
	"github.com/informersim/informersim/sim/world"
)

// fuzzPlantEnv plants a bug in FuzzSampleController's controller, for go test -fuzz to find:
// tombstone (Bugs.IgnoreTombstones) or mutate (Bugs.MutateListerObject).
const fuzzPlantEnv = "INFORMERSIM_PLANT"

func fuzzBugs(t *testing.T, plant string) samplecontroller.Bugs {
	switch plant {
	case "":
		return samplecontroller.Bugs{}
	case "tombstone":
		return samplecontroller.Bugs{IgnoreTombstones: true}
	case "mutate":
		return samplecontroller.Bugs{MutateListerObject: true}
	case "restart":
		return samplecontroller.Bugs{RemembersOwnership: true}
	case "stale-status":
		return samplecontroller.Bugs{StatusOntoFreshRead: true}
	}
	t.Fatalf("%s=%q: want tombstone, mutate, restart or stale-status", fuzzPlantEnv, plant)
	return samplecontroller.Bugs{}
}

// shapeFoo is the fuzz workload's GenConfig.Shape: the generator draws writes of Foos; a create
// or an update gets a spec (its Deployment's name, after the Foo's, and replicas 1 to 4, one
// choice byte), and a third of the updates (one choice byte) become a delete of the Deployment
// the Foo owns: someone else's delete the controller must repair.
func shapeFoo(op world.Op, r *rand.Rand) world.Op {
	if op.Kind != world.OpCreate && op.Kind != world.OpUpdate {
		return op
	}
	dep := "dep-" + op.Name
	if op.Kind == world.OpUpdate && r.IntN(3) == 0 {
		return world.Op{Kind: world.OpDelete, Resource: depsGVR, Namespace: op.Namespace, Name: dep}
	}
	op.Content = map[string]any{"spec": map[string]any{"deploymentName": dep, "replicas": int64(1 + r.IntN(4))}}
	return op
}

// fuzzSample is the harness run and the decoding of FuzzSampleController: the controller wired
// through the Env, Foos written by the input (shapeFoo), fault ops of the input's choice (watch
// closes, 410s, compactions), and up to two each of the harness's hidden changes and conflicts.
func fuzzSample(t *testing.T, plant string) (clientgo.Config, clientgo.FuzzOptions) {
	scheme, err := sampleScheme()
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientgo.Config{
		Cluster:    clientgo.Cluster{API: apiConfig()},
		Controller: clientgo.Constructor{Scheme: scheme, New: newController(fuzzBugs(t, plant))},
		Phases:     clientgo.Phases{FaultsFor: time.Minute},
		Checks:     clientgo.Checks{Outcome: converged},
	}
	opts := clientgo.FuzzOptions{Name: "FuzzSampleController",
		Gen: world.GenConfig{Resource: foosGVR, Ops: 30, HotNames: 2, ColdNames: 2, MaxInterval: time.Second,
			FaultOps: true, FaultOpKinds: []world.OpKind{world.OpCloseWatches, world.OpCompact, world.OpFailNext}, Shape: shapeFoo},
		Hazards: clientgo.Hazards{HiddenChanges: 2, Conflicts: 2}}
	return cfg, opts
}

// fuzzSampleMain is FuzzSampleMain's run: sample-controller wired by its main (so the harness
// can restart it), two replicas, and the input may arm up to two stale reads besides
// fuzzSample's hazards, within a 15s safety phase, and restart the controller among its fault
// ops (the client fault crash-restart, placed by the input among the workload's ops, where a
// hazard's instant drawn from the seed often came after the last one); the hazard sweep's
// invariant and write check watch it.
func fuzzSampleMain(t *testing.T, plant string) (clientgo.Config, clientgo.FuzzOptions) {
	cfg, opts := fuzzSample(t, plant)
	cfg.Controller = clientgo.Main(sampleMain(fuzzBugs(t, plant)))
	cfg.Cluster.API.Replicas = 2
	// The hazards' instants are drawn within the safety phase: a short one puts the restart
	// among the workload's ops (at most 30, a second apart at most), not after them.
	cfg.Phases.FaultsFor = 15 * time.Second
	var w *world.World
	cfg.Setup = func(world *world.World) error { w = world; return nil }
	cfg.Checks.Invariant = deploymentNotMissingLong(func() time.Duration { return w.Sim().Now() })
	cfg.Checks.OnWrite = observedGenerationNeverGoesBack
	opts.Name = "FuzzSampleMain"
	opts.Hazards.StaleReads = 2
	opts.Gen.FaultOpKinds = append(opts.Gen.FaultOpKinds, world.OpCrashRestart)
	return cfg, opts
}

// FuzzSampleMain is FuzzSampleController on sample-controller's main.go wiring, whose input may
// also restart it and serve its LISTs from a lagging replica: INFORMERSIM_PLANT=restart
// (Bugs.RemembersOwnership) and stale-status (Bugs.StatusOntoFreshRead) are for it. main.go's
// 30s resync hands several Foos to the handlers in a Go map's order, which no seed decides
// (Report.Diagnostics.ResyncWakes counts it): an input's replay can differ there.
func FuzzSampleMain(f *testing.F) {
	f.Add([]byte{})
	plant := os.Getenv(fuzzPlantEnv)
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, opts := fuzzSampleMain(t, plant)
		run, err := clientgo.Fuzz(t, data, cfg, opts)
		if err == nil {
			return
		}
		start := time.Now()
		msg, werr := run.WriteFailure(t, cfg, opts, err, sampleControllerName("sampleMain", plant), 80)
		if werr != nil {
			msg = werr.Error()
		}
		t.Fatalf("%v\n%s\n(written and shrunk in %v)", err, msg, time.Since(start).Round(time.Millisecond))
	})
}

// FuzzSampleController fuzzes sample-controller through the harness (clientgo.Fuzz): each
// input is a seed, the hazards it arms and a workload of Foos, Deployment deletes and faults.
// Plain go test replays the seeds below and testdata/fuzz/FuzzSampleController; a failure
// names Go's replay line (go test -run=FuzzSampleController/HASH) and writes the run's ops as a
// scenario file and its shrink. INFORMERSIM_PLANT plants a bug for go test -fuzz to find.
func FuzzSampleController(f *testing.F) {
	f.Add([]byte{})
	if os.Getenv("INFORMERSIM_FUZZ_SEEDS") != "none" {
		r := rand.New(rand.NewPCG(7, 8))
		for range 2 {
			b := make([]byte, 8+2+60)
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			f.Add(b)
		}
	}
	plant := os.Getenv(fuzzPlantEnv)
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, opts := fuzzSample(t, plant)
		run, err := clientgo.Fuzz(t, data, cfg, opts)
		if err == nil {
			return
		}
		start := time.Now()
		msg, werr := run.WriteFailure(t, cfg, opts, err, sampleControllerName("newController", plant), 80)
		if werr != nil {
			msg = werr.Error()
		}
		// The shrink's wall time, so that a measure of the time to the first failure can leave
		// it out (docs/fuzzing.md).
		t.Fatalf("%v\n%s\n(written and shrunk in %v)", err, msg, time.Since(start).Round(time.Millisecond))
	})
}

// sampleControllerName names the controller in a failure's ops file: its wiring (newController
// through the Env, or sampleMain) and its plant.
func sampleControllerName(wiring, plant string) string {
	if plant == "" {
		return "samplecontroller (" + wiring + ", correct)"
	}
	return "samplecontroller (" + wiring + ", " + fuzzPlantEnv + "=" + plant + ")"
}

// fuzzPlantInputs are inputs go test -fuzz found with a bug planted (testdata/fuzz-plant-NAME,
// in Go's corpus file form, kept out of the fuzz corpus so plain go test of the fuzz target
// does not fail on them with the correct controller).
func fuzzPlantInput(t *testing.T, name string) []byte {
	t.Helper()
	text, err := os.ReadFile("testdata/fuzz-plant-" + name)
	if err != nil {
		t.Fatal(err)
	}
	return corpusBytes(t, string(text))
}

// corpusBytes reads a Go fuzz corpus file of one []byte.
func corpusBytes(t *testing.T, text string) []byte {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) != 2 || lines[0] != "go test fuzz v1" || !strings.HasPrefix(lines[1], "[]byte(") {
		t.Fatalf("not a corpus file of one []byte: %q", text)
	}
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(s)
}

// Goal: each input go test -fuzz found for a plant fails the planted controller with that
// plant's check or oracle and names Go's replay line, passes the correct controller, and its
// ops shrink (FuzzRun.WriteFailure) to a file of a few ops that reads back
// (scenarios.OpsOfFile) and still fails.
func TestFuzzSampleControllerPlantedInputs(t *testing.T) {
	for _, c := range []struct{ plant, want string }{
		{"tombstone", "clientgo: the controller did not converge within ms after the faults stopped: Foo default/hot- has no Deployment dep-hot-"},
		{"mutate", "oracle read-only-objects"},
	} {
		t.Run(c.plant, func(t *testing.T) {
			data := fuzzPlantInput(t, c.plant)
			cfg, opts := fuzzSample(t, "")
			if _, err := clientgo.Fuzz(t, data, cfg, opts); err != nil {
				t.Fatalf("the correct controller fails on the %s input: %v", c.plant, err)
			}
			cfg, opts = fuzzSample(t, c.plant)
			run, err := clientgo.Fuzz(t, data, cfg, opts)
			if err == nil {
				t.Fatalf("the %s plant passes its input", c.plant)
			}
			if sig := world.FailureSignature(err); sig != c.want {
				t.Errorf("failure %q, want %q: %v", sig, c.want, err)
			}
			if !strings.Contains(err.Error(), "go test -run=FuzzSampleController/") {
				t.Errorf("the failure names no go test -run=FuzzSampleController/HASH replay line: %v", err)
			}
			t.Setenv("INFORMERSIM_ARTIFACTS", t.TempDir())
			msg, err := run.WriteFailure(t, cfg, opts, err, sampleControllerName("newController", c.plant), 200)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d ops; %s", len(run.Ops), msg)
			shrunkFile := ""
			for _, f := range strings.Fields(msg) {
				if strings.HasSuffix(f, "-shrunk.txt") {
					shrunkFile = f
				}
			}
			if shrunkFile == "" {
				t.Fatalf("no shrunk file: %s", msg)
			}
			text, err := os.ReadFile(shrunkFile)
			if err != nil {
				t.Fatal(err)
			}
			seed, ops, err := scenarios.OpsOfFile(shrunkFile, string(text))
			if err != nil {
				t.Fatal(err)
			}
			writes := 0
			for _, op := range ops {
				if op.Kind != world.OpSleep {
					writes++
				}
			}
			if writes > 5 || writes >= len(run.Ops) {
				t.Errorf("shrunk to %d ops (from %d), want at most 5:\n%s", writes, len(run.Ops), text)
			}
			if err := run.FuzzReplay(t, cfg)(seed, ops); world.FailureSignature(err) != c.want {
				t.Errorf("the shrunk file replayed: %v, want %s", err, c.want)
			}
		})
	}
}
