package scenarios

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/informersim/informersim/sim/world"
)

// timeDirectives move time and schedule work.
var timeDirectives = []*directiveSpec{
	{name: "run", help: "run the simulation", args: []argSpec{
		durArg("for"), enumArg("until", "converged", "synced", "event"), strArg("informer"), strArg("event"), durArg("budget"), numArg("steps"), listArg("show"),
	}, handle: (*Env).run},
	{name: "generate", help: "start a seeded random workload", args: []argSpec{
		numArg("ops"), boolArg("fault-ops"), boolArg("fault-points"), durArg("max-interval"),
	}, handle: (*Env).generate},
	{name: "faults", args: []argSpec{required(boolArg("on"))}, help: "turn the fault points on or off", handle: (*Env).faults},
}

func (e *Env) generate(d Directive, _ func(string, ...any)) error {
	cfg := world.GenConfig{Ops: d.num("ops", 0), FaultOps: d.boolean("fault-ops", false),
		FaultPoints: d.boolean("fault-points", false), MaxInterval: d.dur("max-interval", 0)}
	if e.opts.Swarm && cfg.FaultOps {
		cfg.FaultOpKinds = swarmKinds(e.Seed(), len(e.gens), e.w.FaultKinds())
		e.swarmKinds = append(e.swarmKinds, cfg.FaultOpKinds)
	}
	g, err := e.w.Generate(cfg)
	if err != nil {
		return err
	}
	e.gens = append(e.gens, g)
	e.genStarts = append(e.genStarts, e.w.Sim().Now())
	return nil
}

func (e *Env) faults(d Directive, _ func(string, ...any)) error {
	e.w.Sim().SetFaultsEnabled(d.boolean("on", false))
	if !d.boolean("on", false) {
		for _, g := range e.gens {
			g.Stop()
		}
	}
	return nil
}

const defaultBudget = time.Hour

func (e *Env) run(d Directive, add func(string, ...any)) error {
	s := e.w.Sim()
	n := 0
	for _, k := range []string{"for", "until", "steps"} {
		if d.has(k) {
			n++
		}
	}
	if n != 1 {
		return errors.New("run: expected exactly one of for=, until= or steps=")
	}
	switch {
	case d.has("for"):
		e.fail(s.RunFor(d.dur("for", 0)))
	case d.has("steps"):
		for range d.num("steps", 0) {
			ok, err := s.Step()
			if err != nil {
				e.fail(err)
				break
			}
			if !ok {
				break
			}
		}
	case d.str("until", "") == "converged":
		err := e.named.RunUntilConverged(d.dur("budget", defaultBudget))
		if errors.Is(err, world.ErrUsage) {
			// The file is wrong (an informer it never starts), not the run.
			return err
		}
		if err != nil {
			e.fail(err)
			return nil
		}
		add("converged at rv=%d: every cache and every handler's view equals the apiserver", e.w.Server().Revision())
	case d.str("until", "") == "event":
		want := d.str("event", "")
		if !strings.Contains(want, ":") {
			return errors.New(`run until=event: expected event=<actor>:<kind>, e.g. event=inf1/reflector:list-page`)
		}
		e.waitFor = want
		err := s.RunUntil(func() bool { return e.waitFor == "" }, d.dur("budget", time.Minute))
		e.waitFor = ""
		if err != nil {
			e.fail(fmt.Errorf("no event %s: %w", want, err))
		}
	case d.str("until", "") == "synced":
		st, err := e.informer(d)
		if err != nil {
			return err
		}
		inf := st.n.SharedIndexInformer()
		if err := s.RunUntil(inf.HasSynced, d.dur("budget", time.Minute)); err != nil {
			e.fail(fmt.Errorf("%s did not sync: %w", st.name, err))
			return nil
		}
		add("%s synced", st.name)
	}
	return nil
}

// swarmKinds is the subset of kinds the i-th generator of a swarmed run of seed draws its fault
// ops from: each kind in or out by a coin toss of a stream of its own (the world's streams are
// untouched), at least one.
func swarmKinds(seed uint64, i int, kinds []world.OpKind) []world.OpKind {
	r := rand.New(rand.NewPCG(seed, 0x5357_4152_4d00+uint64(i))) // "SWARM"
	var out []world.OpKind
	for _, k := range kinds {
		if r.IntN(2) == 0 {
			out = append(out, k)
		}
	}
	if len(out) == 0 && len(kinds) > 0 {
		out = append(out, kinds[r.IntN(len(kinds))])
	}
	return out
}

// SwarmKinds are the fault kinds each generate directive drew from in a swarmed run
// (Options.Swarm), in directive order; empty when the run swarmed no generator.
func (e *Env) SwarmKinds() [][]world.OpKind { return e.swarmKinds }
