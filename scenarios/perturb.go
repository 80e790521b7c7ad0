package scenarios

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/informersim/informersim/sim/world"
)

// Perturbation campaigns in the style of Sieve (OSDI'22; docs/simulation.md §B1): take a run
// that passes, and for each point of it (each op of its workload) perturb it once, with one of
// Sieve's three patterns, then run it again from the start; the first perturbation whose run
// breaks an oracle or a check is reported and its run shrunk. The runs are deterministic, so a
// perturbation is a point and a kind, and costs one run of milliseconds.

// The perturbation kinds, Sieve's patterns.
const (
	// PerturbRestart (intermediate state): the controller restarts there (PerturbTarget.Restart).
	PerturbRestart = "restart"
	// PerturbStale (stale state): there, one replica starts lagging, StaleLag behind, to the
	// end of the run (a lag delays, so the run still converges): what the controller's informer
	// or its reads get from it is the past while the other replicas serve the present. Tried
	// on each replica in turn, then on each again with the informer moved to the next replica
	// (its watches closed cleanly and its next request routed there), so that the informer is
	// fresh while reads may be stale, or the other way round. It needs two replicas.
	PerturbStale = "stale"
	// PerturbUnobserved (unobserved state): the delete there lands while the informer is away
	// (its watches closed with 410 and the history compacted just before), so the informer
	// learns of it only from its relist, as a tombstone. Only at deletes.
	PerturbUnobserved = "unobserved"
)

// StaleLag is how far behind replica 1 falls in a stale perturbation.
const StaleLag = time.Second

// PerturbKinds lists the perturbation kinds in the order a campaign tries them at each point.
func PerturbKinds() []string { return []string{PerturbRestart, PerturbStale, PerturbUnobserved} }

// Perturbation is one perturbation of a campaign: a kind, at the point before an op.
type Perturbation struct {
	Kind string
	// Replica is the replica a stale perturbation lags; Moved says the informer is moved to
	// replica Replica+1 (modulo their count) there.
	Replica int
	Moved   bool
	// Point is the index, in the reference run's ops, of the op it comes before; At is that
	// op's time (-1 in a file's campaign, where the file's directives say it) and Op the op.
	Point int
	At    time.Duration
	Op    world.Op
}

func (p Perturbation) String() string {
	kind := p.Kind
	if p.Kind == PerturbStale {
		kind = fmt.Sprintf("stale (replica %d lags %v)", p.Replica, StaleLag)
		if p.Moved {
			kind = fmt.Sprintf("stale (replica %d lags %v, the informer moved off it)", p.Replica, StaleLag)
		}
	}
	if p.At < 0 { // a file's op: its time is the run's
		return fmt.Sprintf("%s before op %d (%s)", kind, p.Point, p.Op)
	}
	return fmt.Sprintf("%s before op %d (%s) at %v", kind, p.Point, p.Op, p.At)
}

// PerturbTarget is the controller a campaign perturbs, hosted in Go.
type PerturbTarget struct {
	// World builds the world of seed with the controller in it, started: the campaign
	// schedules the ops (world.World.Script) and runs the world to convergence, whose oracles
	// and checks (world.World.AddCheck) say whether the run broke.
	World func(seed uint64) (*world.World, error)
	// Restart restarts the controller in w, losing what it held in memory (a new informer, a
	// new handler, as a crashed process starts again). Nil: no restart perturbation.
	Restart func(w *world.World) error
}

// PerturbOptions tune a campaign.
type PerturbOptions struct {
	// Kinds are the kinds to try (default PerturbKinds()).
	Kinds []string
	// Shrink is how the first breaking run is shrunk (ShrinkOps; Name and Controller name it
	// in the file's header); MaxRuns 0 is ShrinkOps' default. NoShrink skips it.
	Shrink   OpsShrinkOptions
	NoShrink bool
}

// PerturbReport is what a campaign found.
type PerturbReport struct {
	// Points are the reference run's ops; Tried the perturbed runs made; Skipped the
	// perturbations that do not apply (stale with one replica, restart without Restart,
	// unobserved at an op that is not a delete).
	Points, Tried, Skipped int
	// Found is the first perturbation whose run broke (nil: none did), Failure its failure.
	Found   *Perturbation
	Failure error
	// Shrunk is its run's ops shrunk (ShrinkOps), with the perturbation's ops among them (a
	// restart is not an op: the header says when it comes); ShrinkErr says why there is none.
	Shrunk    *Shrunk
	ShrinkErr error
}

// Perturb runs a campaign over the reference run of seed whose workload is ops (a generator's
// record, world.Generator.Ops, or any ops with their times): the reference must pass; then each
// point and kind in turn, until one breaks. It is an error when target has no World, the
// reference fails, or a kind is unknown.
func Perturb(seed uint64, ops []world.GeneratedOp, target PerturbTarget, opts PerturbOptions) (*PerturbReport, error) {
	if target.World == nil {
		return nil, errors.New("scenarios: Perturb: PerturbTarget.World is nil")
	}
	kinds := opts.Kinds
	if kinds == nil {
		kinds = PerturbKinds()
	}
	for _, k := range kinds {
		if k != PerturbRestart && k != PerturbStale && k != PerturbUnobserved {
			return nil, fmt.Errorf("scenarios: Perturb: unknown kind %q (want %v)", k, PerturbKinds())
		}
	}
	var points []world.GeneratedOp
	for _, g := range ops {
		if g.Op.Kind != world.OpSleep {
			points = append(points, g)
		}
	}
	c := &campaign{seed: seed, points: points, target: target}
	replicas, err := c.run(nil)
	if err != nil {
		return nil, fmt.Errorf("scenarios: Perturb: the reference run (seed %d, %d ops) fails already: %w", seed, len(points), err)
	}
	c.replicas = replicas
	rep := &PerturbReport{Points: len(points)}
	for i, g := range points {
		for _, k := range kinds {
			variants := []Perturbation{{Kind: k, Point: i, At: g.Time, Op: g.Op}}
			if k == PerturbStale {
				variants = variants[:0]
				for _, moved := range []bool{false, true} {
					for r := range replicas {
						variants = append(variants, Perturbation{Kind: k, Replica: r, Moved: moved, Point: i, At: g.Time, Op: g.Op})
					}
				}
			}
			if (k == PerturbRestart && target.Restart == nil) || (k == PerturbStale && replicas < 2) || (k == PerturbUnobserved && g.Op.Kind != world.OpDelete) {
				rep.Skipped++
				continue
			}
			for _, p := range variants {
				rep.Tried++
				if _, err := c.run(&p); err != nil {
					rep.Found, rep.Failure = &p, err
					if !opts.NoShrink {
						rep.Shrunk, rep.ShrinkErr = c.shrink(p, err, opts.Shrink)
					}
					return rep, nil
				}
			}
		}
	}
	return rep, nil
}

type campaign struct {
	seed     uint64
	replicas int
	points   []world.GeneratedOp
	target   PerturbTarget
}

// perturbed is the reference's ops with p's ops in place (none for a restart, which is no op).
func (c *campaign) perturbed(p *Perturbation) []world.GeneratedOp {
	var out []world.GeneratedOp
	for i, g := range c.points {
		if p != nil && p.Point == i {
			var extra []world.Op
			switch p.Kind {
			case PerturbStale:
				extra = []world.Op{{Kind: world.OpLagReplica, Replica: p.Replica, Duration: StaleLag}}
				if p.Moved {
					extra = append(extra, world.Op{Kind: world.OpRouteNext, Replica: (p.Replica + 1) % c.replicas}, world.Op{Kind: world.OpCloseWatches})
				}
			case PerturbUnobserved:
				extra = []world.Op{{Kind: world.OpCloseWatches, Code: 410}, {Kind: world.OpCompact}}
			}
			for _, op := range extra {
				out = append(out, world.GeneratedOp{Time: g.Time, Op: op})
			}
		}
		out = append(out, g)
	}
	return out
}

// run runs the reference with p (nil: none) and returns the world's replica count and the
// run's failure.
func (c *campaign) run(p *Perturbation) (int, error) {
	var restartAt *time.Duration
	if p != nil && p.Kind == PerturbRestart {
		restartAt = &p.At
	}
	return c.replay(c.seed, scriptOf(c.perturbed(p)), restartAt)
}

// replay runs ops (with their sleeps) in a new world of the target's, restarting its controller
// at restartAt if set.
func (c *campaign) replay(seed uint64, ops []world.Op, restartAt *time.Duration) (int, error) {
	w, err := c.target.World(seed)
	if err != nil {
		return 0, err
	}
	var restartErr error
	if restartAt != nil {
		if _, err := w.After(*restartAt, "perturb", "restart", func() { restartErr = c.target.Restart(w) }); err != nil {
			return 0, err
		}
	}
	if _, err := w.Script(0, ops...); err != nil {
		return 0, err
	}
	err = w.RunUntilConverged(time.Hour)
	return w.Server().Replicas().Len(), errors.Join(restartErr, err)
}

// shrink shrinks the breaking run's ops, the perturbation's among them (ShrinkOps).
func (c *campaign) shrink(p Perturbation, failure error, o OpsShrinkOptions) (*Shrunk, error) {
	var restartAt *time.Duration
	if p.Kind == PerturbRestart {
		restartAt = &p.At
		o.Controller = fmt.Sprintf("%s, restarted at %v", cmpOrString(o.Controller, "a controller hosted in Go"), p.At)
	}
	o.Name = cmpOrString(o.Name, "perturbation "+p.String())
	replay := func(seed uint64, ops []world.Op) error {
		_, err := c.replay(seed, ops, restartAt)
		return err
	}
	return ShrinkOps(c.seed, c.perturbed(&p), failure, replay, o)
}

// scriptOf is ops as Script takes them: each op after a sleep for the time since the previous.
func scriptOf(ops []world.GeneratedOp) []world.Op {
	var out []world.Op
	at := time.Duration(0)
	for _, g := range ops {
		if g.Time > at {
			out = append(out, world.Op{Kind: world.OpSleep, Duration: g.Time - at})
			at = g.Time
		}
		out = append(out, g.Op)
	}
	return out
}

// PerturbFile runs a campaign over a scenario file (text, named name): the reference is its
// run, which must not fail; the points are its op directives (a generate directive's ops
// written out); a perturbation is directives inserted before one (a restart of the first
// informer the file starts, as the restart directive does: its handlers, a workqueue's and a
// controller's included, move to the new informer; a lag-replica, with a route-next and a close-watches when the informer is
// moved; a close-watches code=410 and a compact before a delete). A perturbed file that no
// longer runs (a later directive names the informer a restart replaced) counts as skipped.
// The first breaking perturbation's file is shrunk with Shrink (opts.Shrink.MaxRuns).
func PerturbFile(name, text string, opts PerturbOptions) (*PerturbReport, error) {
	kinds := opts.Kinds
	if kinds == nil {
		kinds = PerturbKinds()
	}
	for _, k := range kinds {
		if !slices.Contains(PerturbKinds(), k) {
			return nil, fmt.Errorf("scenarios: PerturbFile: unknown kind %q (want %v)", k, PerturbKinds())
		}
	}
	ref, err := Run(name, text, Options{})
	if err != nil {
		return nil, err
	}
	if ref.Failure != nil {
		return nil, fmt.Errorf("scenarios: PerturbFile %s: the reference run fails already: %v", name, ref.Failure)
	}
	var ds []Directive
	for _, st := range ref.Steps {
		ds = append(ds, st.Directive)
	}
	// A generated workload's ops are points too: written out as directives, if that run
	// still passes.
	if exp, ok := expandGenerators(ds, ref); ok {
		if res, err := Run(name, Format("", exp, nil), Options{}); err == nil && res.Failure == nil {
			ds = exp
		}
	}
	w := ref.Env.World()
	replicas := w.Server().Replicas().Len()
	informer := ""
	for _, d := range ds {
		if v, ok := d.arg("informer"); ok && d.Cmd == "start" {
			informer = v
			break
		}
	}
	type variant struct {
		p  Perturbation
		ds []Directive
	}
	rep := &PerturbReport{}
	for i, d := range ds {
		if d.Op == nil {
			continue
		}
		point := rep.Points
		rep.Points++
		for _, k := range kinds {
			base := Perturbation{Kind: k, Point: point, At: -1, Op: *d.Op}
			var variants []variant
			switch {
			case k == PerturbRestart && informer != "":
				variants = append(variants, variant{base, []Directive{mustDirective(fmt.Sprintf("restart informer=%s as=%s-restarted", informer, informer))}})
			case k == PerturbStale && replicas >= 2:
				for _, moved := range []bool{false, true} {
					for r := range replicas {
						v := variant{base, []Directive{mustDirective(fmt.Sprintf("lag-replica replica=%d by=%v", r, StaleLag))}}
						v.p.Replica, v.p.Moved = r, moved
						if moved {
							v.ds = append(v.ds, mustDirective(fmt.Sprintf("route-next replica=%d", (r+1)%replicas)), mustDirective("close-watches"))
						}
						variants = append(variants, v)
					}
				}
			case k == PerturbUnobserved && d.Op.Kind == world.OpDelete:
				variants = append(variants, variant{base, []Directive{mustDirective("close-watches code=410"), mustDirective("compact")}})
			}
			if len(variants) == 0 {
				rep.Skipped++
				continue
			}
			for _, v := range variants {
				cand := slices.Concat(ds[:i], v.ds, ds[i:])
				res, err := Run(name, Format("", cand, nil), Options{})
				if err != nil {
					rep.Skipped++ // the perturbed file no longer runs
					continue
				}
				rep.Tried++
				if res.Failure == nil {
					continue
				}
				p := v.p
				rep.Found, rep.Failure = &p, res.Failure
				if !opts.NoShrink {
					rep.Shrunk, rep.ShrinkErr = Shrink(name, Format(fmt.Sprintf("%s, perturbed: %s", name, p), cand, nil), ShrinkOptions{MaxRuns: opts.Shrink.MaxRuns})
				}
				return rep, nil
			}
		}
	}
	if rep.Points == 0 {
		return nil, fmt.Errorf("scenarios: PerturbFile %s: the file has no op to perturb (no write or fault directive, no generate directive)", name)
	}
	return rep, nil
}

func mustDirective(line string) Directive {
	d, err := ParseDirective(line, "")
	if err != nil {
		panic(fmt.Sprintf("scenarios: perturbation directive %q: %v", line, err))
	}
	return d
}
