package clientgo

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/informersim/informersim/scenarios"
	"github.com/informersim/informersim/sim/world"
)

// This file runs Sieve-style perturbation campaigns on a controller the harness hosts, as
// scenarios.Perturb does for one the world hosts: a reference run (the controller over a
// scripted workload) must pass; then, for each op of the workload (a point), the run is done
// again with one perturbation there, and the first perturbed run that breaks a check or an
// oracle is reported and its ops shrunk. The runs are deterministic: a perturbation is a point
// and a kind, and replays exactly.

// The kinds of perturbation, after Sieve's three patterns.
const (
	// PerturbRestart (intermediate state): the controller crash-restarts at the point's instant
	// (Hazards.RestartAt), its main (or New, with a new Env) called afresh with empty caches.
	PerturbRestart = "restart"
	// PerturbStale (stale state): a replica starts lagging PerturbOptions.StaleLag behind at
	// the point, and the watches close with 410, so the controller's informers relist, maybe
	// from it; tried on each replica. Needs Cluster.API.Replicas >= 2.
	PerturbStale = "stale"
	// PerturbUnobserved (unobserved state): before a delete only, the watches close with 410
	// and the history is compacted, so the informers learn of the delete only from their
	// relist, as a tombstone.
	PerturbUnobserved = "unobserved"
)

// PerturbKinds lists the kinds of perturbation, in the order a campaign tries them at a point.
func PerturbKinds() []string { return []string{PerturbRestart, PerturbStale, PerturbUnobserved} }

// PerturbOptions configure a campaign.
type PerturbOptions struct {
	// Kinds are the kinds tried; nil means every kind that applies (stale needs two replicas
	// or more).
	Kinds []string
	// StaleLag is how far behind a stale replica lags; zero means 10s.
	StaleLag time.Duration
	// ShrinkRuns bounds the replays the shrink of the first breaking run may spend (each a
	// whole harness run); zero means 100, negative no shrink.
	ShrinkRuns int
}

// Perturbation is one perturbed run: a kind at a point.
type Perturbation struct {
	Kind string
	// Point is the index of the op (among the workload's ops, sleeps not counted) before which
	// it comes, At its instant (since Setup's start), Op that op.
	Point int
	At    time.Duration
	Op    world.Op
	// Replica is the stale replica of PerturbStale.
	Replica int
}

func (p Perturbation) String() string {
	s := fmt.Sprintf("%s before op %d (%s) at %v", p.Kind, p.Point, p.Op, p.At)
	if p.Kind == PerturbStale {
		s += fmt.Sprintf(", replica %d", p.Replica)
	}
	return s
}

// PerturbReport is a campaign's outcome.
type PerturbReport struct {
	// Points is the number of ops of the workload; Runs the perturbed runs done (the reference
	// not counted), up to and including the first breaking one.
	Points, Runs int
	// Reference is the unperturbed run's report.
	Reference *Report
	// First is the first perturbation that broke the run (nil: none did), Failure its failure.
	First   *Perturbation
	Failure error
	// Ops are the perturbed run's ops (the perturbation's own included; a restart is not an op:
	// First.At says when), Shrunk their shrink (nil when ShrinkRuns < 0 or the shrink could
	// not replay the failure: ShrinkErr says why).
	Ops       []world.Op
	Shrunk    *scenarios.Shrunk
	ShrinkErr error
}

// Perturb runs a campaign over the controller of cfg on the workload ops (world.World.Script's
// ops, OpSleeps moving the ones after them later), scripted at Setup's start after cfg.Setup
// (which must take no simulated time: a restart's instant counts from the controller's start).
// The reference run must pass. cfg.Hazards must be zero: the perturbations are the only faults
// besides the workload's own.
func Perturb(t T, cfg Config, ops []world.Op, opts PerturbOptions) (*PerturbReport, error) {
	if cfg.Hazards.any() {
		return nil, errors.New("clientgo: Perturb: Config.Hazards must be zero: the campaign's perturbations are its faults")
	}
	kinds := opts.Kinds
	if kinds == nil {
		for _, k := range PerturbKinds() {
			if k == PerturbStale && cfg.Cluster.API.Replicas < 2 {
				continue
			}
			kinds = append(kinds, k)
		}
	}
	for _, k := range kinds {
		switch {
		case !slices.Contains(PerturbKinds(), k):
			return nil, fmt.Errorf("clientgo: Perturb: unknown kind %q (want %v)", k, PerturbKinds())
		case k == PerturbStale && cfg.Cluster.API.Replicas < 2:
			return nil, fmt.Errorf("clientgo: Perturb: a stale replica needs Cluster.API.Replicas >= 2 (it is %d)", cfg.Cluster.API.Replicas)
		}
	}
	if opts.StaleLag < 0 {
		return nil, fmt.Errorf("clientgo: Perturb: negative StaleLag %v", opts.StaleLag)
	}
	if opts.StaleLag == 0 {
		opts.StaleLag = 10 * time.Second
	}
	if opts.ShrinkRuns == 0 {
		opts.ShrinkRuns = 100
	}
	for _, op := range ops {
		if op.Kind == world.OpSleep && op.Duration < 0 {
			return nil, fmt.Errorf("clientgo: Perturb: negative sleep %v", op.Duration)
		}
	}
	run := func(ops []world.Op, restartAt []time.Duration) (*Report, error) {
		c := cfg
		c.Hazards = Hazards{RestartAt: restartAt}
		c.Setup = setupThenOps(cfg.Setup, ops)
		return Run(t, c)
	}
	rep := &PerturbReport{}
	ref, err := run(ops, nil)
	rep.Reference = ref
	if err != nil {
		return rep, fmt.Errorf("clientgo: Perturb: the reference run fails already: %w", err)
	}
	var at time.Duration
	for i, op := range ops {
		if op.Kind == world.OpSleep {
			at += op.Duration
			continue
		}
		point := rep.Points
		rep.Points++
		for _, k := range kinds {
			base := Perturbation{Kind: k, Point: point, At: at, Op: op}
			type variant struct {
				p      Perturbation
				insert []world.Op
			}
			var variants []variant
			switch k {
			case PerturbRestart:
				variants = append(variants, variant{p: base})
			case PerturbStale:
				for r := range cfg.Cluster.API.Replicas {
					v := variant{p: base, insert: []world.Op{{Kind: world.OpLagReplica, Replica: r, Duration: opts.StaleLag}, {Kind: world.OpCloseWatches, Code: 410}}}
					v.p.Replica = r
					variants = append(variants, v)
				}
			case PerturbUnobserved:
				if op.Kind == world.OpDelete {
					variants = append(variants, variant{p: base, insert: []world.Op{{Kind: world.OpCloseWatches, Code: 410}, {Kind: world.OpCompact}}})
				}
			}
			for _, v := range variants {
				perturbed := slices.Concat(ops[:i], v.insert, ops[i:])
				var restartAt []time.Duration
				if v.p.Kind == PerturbRestart {
					restartAt = []time.Duration{v.p.At}
				}
				rep.Runs++
				if _, err := run(perturbed, restartAt); err != nil {
					p := v.p
					rep.First, rep.Failure, rep.Ops = &p, err, perturbed
					if opts.ShrinkRuns > 0 {
						rep.Shrunk, rep.ShrinkErr = shrinkPerturbed(cfg.Seed, perturbed, restartAt, err, run, opts.ShrinkRuns, p)
					}
					return rep, nil
				}
			}
		}
	}
	return rep, nil
}

// shrinkPerturbed shrinks a breaking perturbed run's ops with scenarios.ShrinkOps, replaying
// each candidate with the same restart (a restart is no op: it stays at its instant).
func shrinkPerturbed(seed uint64, ops []world.Op, restartAt []time.Duration, failure error,
	run func([]world.Op, []time.Duration) (*Report, error), maxRuns int, p Perturbation) (*scenarios.Shrunk, error) {
	var gen []world.GeneratedOp
	var at time.Duration
	for _, op := range ops {
		if op.Kind == world.OpSleep {
			at += op.Duration
			continue
		}
		gen = append(gen, world.GeneratedOp{Time: at, Op: op})
	}
	replay := func(_ uint64, ops []world.Op) error {
		_, err := run(ops, restartAt)
		return err
	}
	controller := "the harness's controller"
	if len(restartAt) > 0 {
		controller += fmt.Sprintf(", restarted at %v", restartAt[0])
	}
	return scenarios.ShrinkOps(seed, gen, failure, replay, scenarios.OpsShrinkOptions{
		Name: "perturb-" + p.Kind, Controller: controller, Replay: p.String(), MaxRuns: maxRuns})
}
