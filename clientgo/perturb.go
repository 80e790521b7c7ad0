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
// oracle is reported and its ops shrunk. The perturbations are the world's
// (world.Perturbation: their one definition, the ops that stand for the point's op); a restart
// is the client fault crash-restart aimed at the harness's controller. The runs are
// deterministic: a perturbation is a point and a kind, and replays exactly.

// The kinds of perturbation, after Sieve's three patterns (world.PerturbRestart and the others
// say what each does).
const (
	// PerturbRestart (intermediate state): the controller crash-restarts at the point
	// (crash-restart client=controller: Hazards.Restarts says what a restart is), its main (or
	// New, with a new Env) called afresh with empty caches.
	PerturbRestart = world.PerturbRestart
	// PerturbStale (stale state): a replica starts lagging world.StaleLag behind at the point,
	// and the controller's connections move (its watches close cleanly, its next list or watch
	// goes to a replica): to the lagging one or to another; tried on each pair of replicas.
	// Needs Cluster.API.Replicas >= 2.
	PerturbStale = world.PerturbStale
	// PerturbUnobserved (unobserved state): at a delete only, the watches close cleanly before
	// it and the history is compacted after it, so the informers learn of the delete only from
	// their relist, as a tombstone.
	PerturbUnobserved = world.PerturbUnobserved
)

// PerturbKinds lists the kinds of perturbation, in the order a campaign tries them at a point.
func PerturbKinds() []string { return world.PerturbKinds() }

// PerturbOptions configure a campaign.
type PerturbOptions struct {
	// Kinds are the kinds tried; nil means every kind that applies (stale needs two replicas
	// or more).
	Kinds []string
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
	// Replica is the lagging replica of PerturbStale, To the one the connections move to.
	Replica, To int
}

// world is the perturbation as the world defines it.
func (p Perturbation) world() world.Perturbation {
	return world.Perturbation{Kind: p.Kind, Replica: p.Replica, To: p.To, Client: ControllerActor}
}

func (p Perturbation) String() string {
	kind := p.Kind
	if p.Kind == PerturbStale {
		kind = p.world().String()
	}
	return fmt.Sprintf("%s before op %d (%s) at %v", kind, p.Point, p.Op, p.At)
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
	// Ops are the perturbed run's ops (the perturbation's own included, a restart's
	// crash-restart too), Shrunk their shrink (nil when ShrinkRuns < 0 or the shrink could not
	// replay the failure: ShrinkErr says why).
	Ops       []world.Op
	Shrunk    *scenarios.Shrunk
	ShrinkErr error
}

// Perturb runs a campaign over the controller of cfg on the workload ops (world.World.Script's
// ops, OpSleeps moving the ones after them later), scripted at Setup's start after cfg.Setup.
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
	if opts.ShrinkRuns == 0 {
		opts.ShrinkRuns = 100
	}
	for _, op := range ops {
		if op.Kind == world.OpSleep && op.Duration < 0 {
			return nil, fmt.Errorf("clientgo: Perturb: negative sleep %v", op.Duration)
		}
	}
	run := func(ops []world.Op) (*Report, error) {
		c := cfg
		c.Setup = setupThenOps(cfg.Setup, ops)
		return Run(t, c)
	}
	rep := &PerturbReport{}
	ref, err := run(ops)
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
			for _, p := range variants(Perturbation{Kind: k, Point: point, At: at, Op: op}, cfg.Cluster.API.Replicas) {
				around, err := p.world().Ops(op)
				if err != nil {
					return rep, fmt.Errorf("clientgo: Perturb: %w", err)
				}
				perturbed := slices.Concat(ops[:i], around, ops[i+1:])
				rep.Runs++
				if _, err := run(perturbed); err != nil {
					rep.First, rep.Failure, rep.Ops = &p, err, perturbed
					if opts.ShrinkRuns > 0 {
						rep.Shrunk, rep.ShrinkErr = shrinkPerturbed(cfg.Seed, perturbed, err, run, opts.ShrinkRuns, p)
					}
					return rep, nil
				}
			}
		}
	}
	return rep, nil
}

// variants are the perturbations of base's kind tried at its point: one, a stale view once per
// pair of replicas (the lagging one, the one the connections move to), none where the kind
// does not apply (world.Perturbation.AppliesAt).
func variants(base Perturbation, replicas int) []Perturbation {
	if !base.world().AppliesAt(base.Op) {
		return nil
	}
	if base.Kind != PerturbStale {
		return []Perturbation{base}
	}
	var out []Perturbation
	for r := range replicas {
		for to := range replicas {
			p := base
			p.Replica, p.To = r, to
			out = append(out, p)
		}
	}
	return out
}

// shrinkPerturbed shrinks a breaking perturbed run's ops with scenarios.ShrinkOps, replaying
// each candidate as the campaign ran it.
func shrinkPerturbed(seed uint64, ops []world.Op, failure error, run func([]world.Op) (*Report, error), maxRuns int, p Perturbation) (*scenarios.Shrunk, error) {
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
		_, err := run(ops)
		return err
	}
	return scenarios.ShrinkOps(seed, gen, failure, replay, scenarios.OpsShrinkOptions{
		Name: "perturb-" + p.Kind, Controller: "the harness's controller", Replay: p.String(), MaxRuns: maxRuns})
}
