package world

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world/narration"
)

// The control plane's stand-ins in the world (Config.ControlPlane, docs/controlplane.md): each
// component is a user-like actor offering one "sync" action while it is Pending, and a Deadlines
// host keeps an engine timer at its NextTimer, so the world is not Quiet while a component has
// work or a timer (a delay, a backoff, a status latency) to come. The components read the
// apiserver directly, in key order, on the world's clock: their steps are seeded and traced
// like any other.

// StreamControlPlane is the random stream the control plane's latencies are drawn from.
const StreamControlPlane = "controlplane"

// controlActor hosts one component on the engine.
type controlActor struct {
	w    *World
	c    controlplane.Component
	clk  *sim.Clock
	name string
	// run is a.sync, made once: a method value taken at each offer is an allocation, and the
	// engine asks a pending component for its action at every step.
	run func()
}

func (a *controlActor) Name() string { return a.name }

func (a *controlActor) Actions(add func(sim.Action)) {
	if a.c.Pending(a.clk.Now()) {
		add(sim.Action{Name: narration.StepSync, Run: a.run})
	}
}

func (a *controlActor) sync() {
	what, err := a.c.Step(context.Background(), a.clk.Now())
	if err != nil {
		panic(fmt.Sprintf("world: %s: %v", a.name, err)) // the engine ends the run with a *RunError
	}
	if what != "" {
		a.w.s.Emit(a.name, narration.KindDid, sim.F(narration.FieldWhat, what))
	}
}

// next is the component's timer while it has no work: a pending component's sync is offered
// as an action, and a timer already due would fire again at every step.
func (a *controlActor) next() (time.Time, bool) {
	if a.c.Pending(a.clk.Now()) {
		return time.Time{}, false
	}
	return a.c.NextTimer()
}

func (w *World) startControlPlane(cfg controlplane.Config) error {
	if cfg.Rand != nil {
		return errors.New("world: Config.ControlPlane: leave Rand nil: the world draws from its controlplane stream")
	}
	cfg.Rand = w.s.Rand(StreamControlPlane)
	cp, err := controlplane.New(w.srv, cfg)
	if err != nil {
		return fmt.Errorf("world: Config.ControlPlane: %w", err)
	}
	clk := w.s.ClockFor("controlplane")
	for _, c := range cp.Components() {
		a := &controlActor{w: w, c: c, clk: clk, name: c.Name()}
		a.run = a.sync
		if err := w.AddActor(a); err != nil {
			return err
		}
		if err := w.AddDeadlines(Deadlines{Actor: a.name, Kind: narration.StepTimer, Next: a.next, Fire: func() {}}); err != nil {
			return err
		}
	}
	w.cp = cp
	knob := fmt.Sprintf("status-latency=%v..%v stuck=%v stale-reads=%v",
		cfg.Workload.MinLatency, cfg.Workload.MaxLatency, cfg.Workload.Stuck, cfg.StaleReads)
	if cfg.Jobs != (controlplane.JobConfig{}) {
		// Only when set: the knob of every run without a Job policy stays what it was.
		knob += fmt.Sprintf(" job-pods=%v..%v job-failure=%v", cfg.Jobs.MinDuration, cfg.Jobs.MaxDuration, cfg.Jobs.FailureProbability)
	}
	w.s.SetKnob("controlplane", knob)
	return nil
}

// ControlPlane returns the world's control plane, or nil when Config.ControlPlane is not set.
// Its components' SetDelay and SetStopped are the faults of a slow or crashed controller: call
// them in a step (an After timer) or between runs, then Settle.
func (w *World) ControlPlane() *controlplane.ControlPlane { return w.cp }
