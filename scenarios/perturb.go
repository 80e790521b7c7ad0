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
// perturbation is a point and a kind, and costs one run of milliseconds. The patterns and their
// ops are the world's (world.Perturbation: their one definition, which clientgo.Perturb uses
// too); a perturbed run is ops, the restart's included, so the shrink may drop any of them.

// The perturbation kinds, Sieve's patterns (world.PerturbRestart and the others say what each
// does).
const (
	// PerturbRestart (intermediate state): the controller crash-restarts there, through the op
	// crash-restart aimed at CampaignClient (PerturbTarget.Restart; in a file, the client
	// directive's informer).
	PerturbRestart = world.PerturbRestart
	// PerturbStale (stale state): a replica lags StaleLag from there to the end of the run, and
	// the informer's connection moves (its watches close, its next request goes to a replica):
	// to the lagging one or to another. Tried on each pair of replicas; it needs two.
	PerturbStale = world.PerturbStale
	// PerturbUnobserved (unobserved state): the delete there lands while the informer is away
	// (its watches closed just before, the history compacted just after), so the informer
	// learns of it only from its relist, as a tombstone. Only at deletes.
	PerturbUnobserved = world.PerturbUnobserved
)

// StaleLag is how far behind a stale perturbation's replica lags (world.StaleLag).
const StaleLag = world.StaleLag

// CampaignClient is the name under which a campaign registers its target's controller
// (world.World.AddClient), so that a restart is the op crash-restart client=controller.
const CampaignClient = "controller"

// PerturbKinds lists the perturbation kinds in the order a campaign tries them at each point.
func PerturbKinds() []string { return world.PerturbKinds() }

// Perturbation is one perturbation of a campaign: a kind, at the point before an op.
type Perturbation struct {
	Kind string
	// Replica is the replica a stale perturbation lags, To the one the informer moves to.
	Replica, To int
	// Point is the index, in the reference run's ops, of the op it comes before; At is that
	// op's time (-1 in a file's campaign, where the file's directives say it) and Op the op.
	Point int
	At    time.Duration
	Op    world.Op
}

// world is the perturbation as the world defines it.
func (p Perturbation) world() world.Perturbation {
	return world.Perturbation{Kind: p.Kind, Replica: p.Replica, To: p.To, Client: CampaignClient}
}

func (p Perturbation) String() string {
	kind := p.Kind
	if p.Kind == PerturbStale {
		kind = p.world().String()
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
	// new handler, as a crashed process starts again), inside the step of the op
	// crash-restart client=controller: the campaign registers the controller as that client
	// (CampaignClient) in every world World builds, unless World registered one so named
	// itself. Nil: no restart perturbation.
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
	// restart's crash-restart included); ShrinkErr says why there is none.
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
		if !slices.Contains(PerturbKinds(), k) {
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
				for r := range replicas {
					for to := range replicas {
						variants = append(variants, Perturbation{Kind: k, Replica: r, To: to, Point: i, At: g.Time, Op: g.Op})
					}
				}
			}
			if (k == PerturbRestart && target.Restart == nil) || (k == PerturbStale && replicas < 2) || !variants[0].world().AppliesAt(g.Op) {
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

// perturbed is the reference's ops with p's in place around its point (world.Perturbation).
func (c *campaign) perturbed(p *Perturbation) ([]world.GeneratedOp, error) {
	var out []world.GeneratedOp
	for i, g := range c.points {
		ops := []world.Op{g.Op}
		if p != nil && p.Point == i {
			var err error
			if ops, err = p.world().Ops(g.Op); err != nil {
				return nil, err
			}
		}
		for _, op := range ops {
			out = append(out, world.GeneratedOp{Time: g.Time, Op: op})
		}
	}
	return out, nil
}

// run runs the reference with p (nil: none) and returns the world's replica count and the
// run's failure.
func (c *campaign) run(p *Perturbation) (int, error) {
	ops, err := c.perturbed(p)
	if err != nil {
		return 0, err
	}
	return c.replay(c.seed, scriptOf(ops))
}

// replay runs ops (with their sleeps) in a new world of the target's, its controller registered
// as CampaignClient when the target can restart it (unless the target registered one so named).
func (c *campaign) replay(seed uint64, ops []world.Op) (int, error) {
	w, err := c.target.World(seed)
	if err != nil {
		return 0, err
	}
	var restartErr error
	if c.target.Restart != nil && !slices.Contains(w.Clients(), CampaignClient) {
		err := w.AddClient(CampaignClient, func(op world.Op) error {
			if op.Kind != world.OpCrashRestart {
				return fmt.Errorf("scenarios: a campaign's controller takes only %s, not %s", world.OpCrashRestart, op.Kind)
			}
			restartErr = errors.Join(restartErr, c.target.Restart(w))
			return nil
		})
		if err != nil {
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
	o.Name = cmpOrString(o.Name, "perturbation "+p.String())
	ops, err := c.perturbed(&p)
	if err != nil {
		return nil, err
	}
	replay := func(seed uint64, ops []world.Op) error {
		_, err := c.replay(seed, ops)
		return err
	}
	return ShrinkOps(c.seed, ops, failure, replay, o)
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
// written out); a perturbation is world.Perturbation's ops as op directives around one (stale:
// lag-replica, route-next and close-watches before it; unobserved: close-watches before a
// delete and compact after it; restart: crash-restart client=controller before it, after the
// directive client name=controller informer=X that makes the file's controller, X the first
// informer the file starts, that client: the op restarts X as the restart directive would,
// its handlers, a workqueue's and a controller's included, moving to the new informer
// X-restarted). A perturbed file that no longer runs (X not built yet at that point, a later
// directive naming the informer a restart replaced) counts as skipped. The first breaking
// perturbation's file is shrunk with Shrink (opts.Shrink.MaxRuns).
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
	rep := &PerturbReport{}
	for i, d := range ds {
		if d.Op == nil {
			continue
		}
		point := rep.Points
		rep.Points++
		for _, k := range kinds {
			variants, err := fileVariants(Perturbation{Kind: k, Point: point, At: -1, Op: *d.Op}, replicas, informer)
			if err != nil {
				return nil, fmt.Errorf("scenarios: PerturbFile %s: %w", name, err)
			}
			if len(variants) == 0 {
				rep.Skipped++
				continue
			}
			for _, v := range variants {
				cand := slices.Concat(ds[:i], v.before, ds[i:i+1], v.after, ds[i+1:])
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

// fileVariant is one perturbation of a file at one of its op directives: the directives that
// come before that op and after it.
type fileVariant struct {
	p             Perturbation
	before, after []Directive
}

// fileVariants are the perturbations of base's kind at base.Op in a file whose world has
// replicas replicas and whose first started informer is informer ("": none), none where the
// kind does not apply: world.Perturbation's ops as op directives (a stale view's for each pair
// of replicas), a restart's after the client directive that makes informer the campaign's
// client (CampaignClient), which its crash-restart restarts.
func fileVariants(base Perturbation, replicas int, informer string) ([]fileVariant, error) {
	var ps []Perturbation
	switch {
	case base.Kind == PerturbRestart && informer != "", base.Kind == PerturbUnobserved && base.world().AppliesAt(base.Op):
		ps = append(ps, base)
	case base.Kind == PerturbStale && replicas >= 2:
		for pair := range replicas * replicas {
			p := base
			p.Replica, p.To = pair/replicas, pair%replicas
			ps = append(ps, p)
		}
	}
	var out []fileVariant
	for _, p := range ps {
		before, after, err := p.world().Around(p.Op)
		if err != nil {
			return nil, err
		}
		v := fileVariant{p: p, before: opDirectives(before), after: opDirectives(after)}
		if p.Kind == PerturbRestart {
			v.before = append([]Directive{mustDirective(fmt.Sprintf("client name=%s informer=%s", CampaignClient, informer))}, v.before...)
		}
		out = append(out, v)
	}
	return out, nil
}

// opDirectives is ops as op directives.
func opDirectives(ops []world.Op) []Directive {
	var out []Directive
	for _, op := range ops {
		out = append(out, mustDirective(op.String()))
	}
	return out
}

func mustDirective(line string) Directive {
	d, err := ParseDirective(line, "")
	if err != nil {
		panic(fmt.Sprintf("scenarios: perturbation directive %q: %v", line, err))
	}
	return d
}
