package clientgo

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/informersim/informersim/scenarios"
	"github.com/informersim/informersim/sim/world"
)

// This file fuzzes a client-go controller through the harness: a go test -fuzz input becomes a
// harness run, as world.Fuzz makes a world-hosted one. The input is the choice stream: its
// first eight bytes are the seed (the schedule, latencies, the hazards' instants), then one
// byte for each hazard the caller allows (how many times it is armed), then the workload's
// choices (world.World.Fuzz: which write, which fault, the pauses; GenConfig.Shape's draws, e.g.
// a Foo's spec, or a delete of the Deployment it owns). Every input decodes to a valid run.

// FuzzOptions say how Fuzz decodes an input into a run.
type FuzzOptions struct {
	// Name is the fuzz target's function name (FuzzXxx), for Go's replay line
	// (world.FuzzRepro) and the names of the failure's files. Required.
	Name string
	// Gen is the workload the input's bytes choose (world.World.Fuzz): its Resource, Shape,
	// Ops (the most ops an input issues), FaultOps and FaultOpKinds. FaultPoints is refused
	// (they draw from the seed, not the input).
	Gen world.GenConfig
	// Hazards are the most of each harness hazard the input may arm: for each non-zero count,
	// in the order Restarts, StaleReads, HiddenChanges, Conflicts, SlowCalls, one byte of the
	// input after the seed says how many (the byte modulo the count plus one, so zero is as
	// likely as any). StaleLag, SlowBy and RestartAt are kept as given. Config.Hazards must be
	// zero: the input decides them.
	Hazards Hazards
}

// FuzzRun is the run an input decoded to.
type FuzzRun struct {
	// Seed is the world's seed (the input's first eight bytes).
	Seed uint64
	// Hazards are the hazards the input armed (Report.Hazards says which fired).
	Hazards Hazards
	// Ops are the workload's ops as issued, each Time counted from Setup's start (where
	// FuzzReplay's Script starts them), for scenarios.OpsFile and ShrinkOps.
	Ops []world.GeneratedOp
	// Repro is Go's replay line for the input: go test -run=FuzzXxx/HASH ./pkg.
	Repro string
	// Report is the harness's report of the run (nil if it could not start).
	Report *Report
}

// decodeFuzz reads the seed and the allowed hazards' counts from data; rest is the workload's.
func decodeFuzz(data []byte, most Hazards) (seed uint64, h Hazards, rest []byte) {
	seed, rest = world.FuzzSeed(data)
	h = Hazards{StaleLag: most.StaleLag, SlowBy: most.SlowBy, RestartAt: most.RestartAt}
	for _, c := range []struct{ most, to *int }{
		{&most.Restarts, &h.Restarts}, {&most.StaleReads, &h.StaleReads}, {&most.HiddenChanges, &h.HiddenChanges},
		{&most.Conflicts, &h.Conflicts}, {&most.SlowCalls, &h.SlowCalls},
	} {
		if *c.most == 0 {
			continue
		}
		var b byte
		if len(rest) > 0 {
			b, rest = rest[0], rest[1:]
		}
		*c.to = int(b) % (*c.most + 1)
	}
	return seed, h, rest
}

// Fuzz runs the controller of cfg on the run data decodes to (see FuzzOptions): cfg's Setup
// first, then the input's workload and hazards. cfg.Seed, cfg.Repro and cfg.Hazards must be
// zero: the input decides them. The error is the run's failure, with Go's replay line for the
// input; FuzzRun.WriteFailure writes it out as an ops file, shrunk.
//
//	f.Fuzz(func(t *testing.T, data []byte) {
//		run, err := clientgo.Fuzz(t, data, cfg, opts)
//		if err != nil {
//			msg, _ := run.WriteFailure(t, cfg, opts, err, "my controller")
//			t.Fatalf("%v\n%s", err, msg)
//		}
//	})
func Fuzz(t T, data []byte, cfg Config, opts FuzzOptions) (*FuzzRun, error) {
	switch {
	case opts.Name == "":
		return nil, errors.New("clientgo: Fuzz: FuzzOptions.Name (the FuzzXxx target's name) is empty: the replay line needs it")
	case cfg.Seed != 0 || cfg.Repro != "":
		return nil, errors.New("clientgo: Fuzz: Config.Seed and Repro must be zero: the input decides the seed and the replay line")
	case cfg.Hazards.any():
		return nil, errors.New("clientgo: Fuzz: Config.Hazards must be zero: the input decides them within FuzzOptions.Hazards")
	case opts.Gen.FaultPoints:
		return nil, errors.New("clientgo: Fuzz: FuzzOptions.Gen.FaultPoints draw from the seed, not the input: use FaultOps and FaultOpKinds")
	}
	seed, h, rest := decodeFuzz(data, opts.Hazards)
	run := &FuzzRun{Seed: seed, Hazards: h, Repro: world.FuzzRepro(opts.Name, data)}
	cfg.Seed, cfg.Repro = seed, run.Repro
	cfg.Cluster = h.cluster(cfg.Cluster)
	setup := cfg.Setup
	var gen *world.Generator
	var start time.Duration
	var hazardOps []world.GeneratedOp
	cfg.Setup = func(w *world.World) error {
		if setup != nil {
			if err := setup(w); err != nil {
				return err
			}
		}
		start = w.Sim().Now()
		var err error
		if gen, err = w.Fuzz(rest, opts.Gen); err != nil {
			return err
		}
		// The hazards are ops of the run like the workload's, so the failure's file holds them
		// and its shrink may drop them.
		hazardOps, err = scriptHazards(w, h, cmp.Or(cfg.Phases.FaultsFor, time.Minute))
		return err
	}
	rep, err := Run(t, cfg)
	run.Report = rep
	if gen != nil {
		run.Ops = gen.Ops()
		for i := range run.Ops {
			run.Ops[i].Time -= start
		}
		run.Ops = mergeOps(run.Ops, hazardOps)
	}
	return run, err
}

// mergeOps merges two lists of ops sorted by Time into one, a's first at equal times.
func mergeOps(a, b []world.GeneratedOp) []world.GeneratedOp {
	out := slices.Concat(a, b)
	slices.SortStableFunc(out, func(x, y world.GeneratedOp) int { return cmp.Compare(x.Time, y.Time) })
	return out
}

// cluster is c with the replica stale reads come from: a cluster of fewer than two replicas gets
// a second, the lagging one.
func (h Hazards) cluster(c Cluster) Cluster {
	if h.StaleReads > 0 && c.API.Replicas < 2 {
		c.API.Replicas = 2
	}
	return c
}

// FuzzReplay is the scenarios.OpsReplay of a fuzzed run: the harness runs cfg on a world of
// the given seed, cfg's Setup then ops scripted from Setup's instant (world.World.Script), the
// hazards among them (the cluster keeps the replica the run's stale reads came from).
// ShrinkOps and a regression test of a written ops file (scenarios.OpsOfFile) use it.
func (r *FuzzRun) FuzzReplay(t T, cfg Config) scenarios.OpsReplay {
	return func(seed uint64, ops []world.Op) error {
		c := cfg
		c.Seed, c.Cluster = seed, r.Hazards.cluster(cfg.Cluster)
		c.Repro = fmt.Sprintf("%s (the shrink's replay of its ops)", r.Repro)
		c.Setup = setupThenOps(cfg.Setup, ops)
		_, err := Run(t, c)
		return err
	}
}

// setupThenOps is a Setup that runs setup (if any), then schedules ops from its instant
// (world.World.Script): what a fuzzed, shrunk or perturbed run replays. A restart's RestartAt
// counts from the controller's start, the same instant when setup's own work takes no
// simulated time (Apply, Script).
func setupThenOps(setup func(*world.World) error, ops []world.Op) func(*world.World) error {
	return func(w *world.World) error {
		if setup != nil {
			if err := setup(w); err != nil {
				return err
			}
		}
		_, err := w.Script(0, ops...)
		return err
	}
}

// WriteFailure writes the failing run as an ops file and its shrink (scenarios.WriteOpsFailure,
// in $INFORMERSIM_ARTIFACTS or the temporary directory), replaying with FuzzReplay, and returns
// the lines for the failure's message: the files, the shrink's ratio, the hazards the input
// armed (ops of the file, aimed at client=controller). controller names the
// code the ops fail against (e.g. "samplecontroller Bugs{IgnoreTombstones}"); maxRuns bounds
// the shrink's replays (zero: 5000; each is a whole harness run).
func (r *FuzzRun) WriteFailure(t T, cfg Config, opts FuzzOptions, failure error, controller string, maxRuns int) (string, error) {
	if r == nil {
		return "", errors.New("clientgo: WriteFailure: no run (Fuzz refused its input)")
	}
	name := opts.Name // the file is named after the input, as Go's corpus file is: FuzzXxx-HASH
	if f := strings.Fields(r.Repro); len(f) > 2 {
		name = strings.ReplaceAll(strings.TrimPrefix(f[2], "-run="), "/", "-")
	}
	return scenarios.WriteOpsFailure(r.Seed, r.Ops, failure, r.FuzzReplay(t, cfg),
		scenarios.OpsShrinkOptions{Name: name, Controller: controller, Replay: r.Repro, MaxRuns: maxRuns})
}
