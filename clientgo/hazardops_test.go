package clientgo_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/sim/world"
)

// Goal: the harness's hazards are client faults of the world, ops like any other: each hazard's
// name is a client fault's op kind; a run's hazards are in the trace (narrated as the
// controller) and among the world's recorded ops (World.Ops), aimed at client=controller, with
// the lag-replica its stale reads need; and those recorded ops, scripted by a Setup into a run
// with no Hazards configured (what a written-out file's replay does), arm and fire the same
// hazards and give the same trace (a hidden change draws from a stream of its own, which the
// instants' draws do not move).
// Method: the mirror controller under New with one of each hazard, its ops read off the world;
// then the same seed with Hazards zero and those ops scripted from the controller's start.
func TestHazardsAreRecordedClientFaults(t *testing.T) {
	for _, name := range []string{clientgo.HazardRestart, clientgo.HazardStaleRead, clientgo.HazardHiddenChange, clientgo.HazardConflict, clientgo.HazardSlowCall} {
		if k, err := world.ParseOpKind(name); err != nil || !k.ClientFault() {
			t.Errorf("hazard %s is no client fault of the world (%v, %v)", name, k, err)
		}
	}
	cfg := mirrorConfig(3, 2, nil)
	cfg.Hazards = clientgo.Hazards{Restarts: 1, StaleReads: 1, HiddenChanges: 1, Conflicts: 1, SlowCalls: 1}
	var w *world.World
	var start time.Duration
	setup := cfg.Setup
	cfg.Setup = func(ww *world.World) error {
		w = ww
		err := setup(ww)
		start = ww.Sim().Now()
		return err
	}
	rep, err := clientgo.Run(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := w.Ops()
	if err != nil {
		t.Fatal(err)
	}
	var faults []world.Op
	var kinds []string
	for _, g := range recorded {
		if g.Op.Kind.ClientFault() || g.Op.Kind == world.OpLagReplica {
			faults = append(faults, g.Op)
			kinds = append(kinds, g.Op.Kind.String())
			if g.Op.Kind.ClientFault() && g.Op.Client != clientgo.ControllerActor {
				t.Errorf("hazard op %s is not aimed at client=%s", g.Op, clientgo.ControllerActor)
			}
		}
	}
	slices.Sort(kinds)
	if want := []string{"conflict", "crash-restart", "hidden-change", "lag-replica", "slow-call", "stale-read"}; !slices.Equal(kinds, want) {
		t.Errorf("the world recorded the hazard ops %q, want %q", kinds, want)
	}
	for _, k := range []string{"crash-restart", "conflict", "slow-call", "stale-read", "hidden-change"} {
		if !strings.Contains(rep.Trace, clientgo.ControllerActor+": "+k) {
			t.Errorf("the trace does not narrate %s as the controller", k)
		}
	}
	if len(rep.Hazards) != 5 {
		t.Errorf("Report.Hazards %v: want the five hazards", rep.Hazards)
	}

	// The recorded ops, scripted as a written-out file's replay does, with no Hazards.
	var script []world.Op
	at := start
	for _, g := range recorded {
		if !g.Op.Kind.ClientFault() && g.Op.Kind != world.OpLagReplica {
			continue
		}
		if g.Time > at {
			script = append(script, world.Op{Kind: world.OpSleep, Duration: g.Time - at})
			at = g.Time
		}
		script = append(script, g.Op)
	}
	replay := mirrorConfig(3, 2, nil)
	replay.Cluster.API.Replicas = 2 // the lagging replica the stale reads brought
	setup = replay.Setup
	replay.Setup = func(ww *world.World) error {
		if err := setup(ww); err != nil {
			return err
		}
		_, err := ww.Script(0, script...)
		return err
	}
	again, err := clientgo.Run(t, replay)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again.Hazards, rep.Hazards) || again.Hash != rep.Hash {
		t.Errorf("the replayed ops armed and fired %v (trace %.16s), the run %v (trace %.16s)", again.Hazards, again.Hash, rep.Hazards, rep.Hash)
	}
	t.Logf("hazards %v; replayed from %d ops: %v; trace %.16s, replayed %.16s", rep.Hazards, len(script), again.Hazards, rep.Hash, again.Hash)
}
