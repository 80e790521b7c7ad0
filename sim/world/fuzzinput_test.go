package world_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
)

// fuzzControllerRun is the run a fuzz input decodes to (world.FuzzSeed, world.Fuzz): two
// replicas serving in turn, one informer with a handler, a workload whose every choice, fault
// kinds included, the input makes; the world's oracles check it. (scenarios' tests fuzz a
// user's controller, planted bugs included, the same way.)
func fuzzControllerRun(data []byte, fuzzName, _ string) (*world.World, *world.Generator, error) {
	return fuzzRun(data, fuzzName, world.Config{}, false, 0)
}

// fuzzRun is fuzzControllerRun in a world of cfg, the input choosing among World.FaultKinds
// but its last drop kinds.
// With webhooks, the world calls admission webhooks (World.EnableWebhooks), so that their fault
// kinds are among World.FaultKinds.
func fuzzRun(data []byte, fuzzName string, cfg world.Config, webhooks bool, drop int) (*world.World, *world.Generator, error) {
	seed, choices := world.FuzzSeed(data)
	w, err := world.NewFromConfig(sim.Config{Seed: seed, MaxSteps: 200_000, Repro: world.FuzzRepro(fuzzName, data)},
		fakeapi.Config{Replicas: 2, Routing: fakeapi.RoutingRoundRobin}, cfg)
	if err != nil {
		return nil, nil, err
	}
	if webhooks {
		w.EnableWebhooks()
	}
	inf, err := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
	if err != nil {
		return nil, nil, err
	}
	if _, err := w.AddHandler(inf, "h1", informer.ResourceEventHandlerFuncs{}, world.HandlerOptions{}); err != nil {
		return nil, nil, err
	}
	if err := inf.Start(); err != nil {
		return nil, nil, err
	}
	g, err := w.Fuzz(choices, world.GenConfig{Ops: 40, FaultOps: true, FaultOpKinds: w.FaultKinds()[:len(w.FaultKinds())-drop], MaxInterval: 50 * time.Millisecond})
	if err != nil {
		return nil, nil, err
	}
	return w, g, w.RunUntilConverged(time.Hour)
}

// Goal: every input decodes to a valid run (any bytes: the correct controller converges and
// its check holds), the same input gives the same trace, the workload ends with the input,
// and the bytes are what choose: different inputs give different ops.
func TestFuzzInputDecodesToValidRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	inputs := [][]byte{nil, {0}, {0xff}, []byte(strings.Repeat("\xff", 400)), []byte(strings.Repeat("\x00", 400))}
	for range 60 {
		// One seed (the first eight bytes) for all: the choices after it must make the runs.
		b := make([]byte, 8+r.IntN(300))
		for i := range b[8:] {
			b[8+i] = byte(r.Uint32())
		}
		inputs = append(inputs, b)
	}
	opLists, long := map[string]bool{}, 0
	kinds := map[world.OpKind]bool{}
	for _, in := range inputs {
		w, g, err := fuzzControllerRun(in, "FuzzX", "")
		if err != nil {
			t.Fatalf("input %x: %v", in, err)
		}
		ops := g.Ops()
		if len(ops) == 0 || g.Issued() > 40 || !g.Finished() {
			t.Fatalf("input of %d bytes: %d ops issued, finished %v", len(in), g.Issued(), g.Finished())
		}
		var s []string
		for _, o := range ops {
			s = append(s, o.Op.String())
			kinds[o.Op.Kind] = true
		}
		if len(in) >= 80 && len(in) < 400 { // random and long enough to choose several ops
			opLists[strings.Join(s, ";")] = true
			long++
		}
		w2, _, _ := fuzzControllerRun(in, "FuzzX", "")
		if w.Sim().Trace().Hash() != w2.Sim().Trace().Hash() {
			t.Fatalf("input %x: two runs, two trace hashes", in)
		}
	}
	if len(opLists) != long || long < 40 {
		t.Errorf("%d random inputs gave only %d different workloads: the bytes do not choose", long, len(opLists))
	}
	faults := 0
	for k := range kinds {
		if k.Fault() {
			faults++
		}
	}
	if faults < 3 {
		t.Errorf("the inputs chose only %d fault kinds: %v", faults, kinds)
	}
	w, _ := world.New(1, world.Config{})
	if _, err := w.Fuzz(nil, world.GenConfig{FaultPoints: true}); err == nil {
		t.Error("Fuzz took FaultPoints, which the input does not choose")
	}
	if _, err := w.Fuzz(nil, world.GenConfig{Ops: -1}); err == nil || !strings.HasPrefix(err.Error(), "world: Fuzz: ") {
		t.Errorf("Fuzz with negative Ops: %v", err)
	}
	many := slices.Repeat([]world.OpKind{world.OpCompact}, 65)
	if _, err := w.Fuzz(nil, world.GenConfig{FaultOps: true, FaultOpKinds: many}); err == nil || !strings.Contains(err.Error(), "at most 64") {
		t.Errorf("Fuzz with 65 FaultOpKinds (a fault byte names 64 positions): %v", err)
	}
}

// Goal: a kind appended to the fault kinds (a new row at the end of the op table, which
// World.FaultKinds then lists last) leaves every fuzz input decoding to the same run, except
// one holding a fault byte of the value naming the new kind's position, which decodes the same
// up to that op: so a fuzz corpus keeps its meaning when a kind is added.
// Method: random inputs decoded twice in a world with the control plane and webhooks, first
// without the last of World.FaultKinds (fail-webhook), then with it, as if it had just been
// added; the op lists must match up to its first op in the second run, and the trace hashes too
// when it has none. Some inputs must draw it (else the test could not tell).
func TestFuzzDecodingStableUnderAnAppendedKind(t *testing.T) {
	cfg := world.Config{ControlPlane: &controlplane.Config{}}
	w, _ := world.NewFromConfig(sim.Config{Seed: 1}, fakeapi.Config{}, cfg)
	w.EnableWebhooks()
	kinds := w.FaultKinds()
	last := kinds[len(kinds)-1]
	// The client faults come last in the table, and a world that hosts no client cannot take
	// them: its last fault kind is the one before them.
	takes := slices.DeleteFunc(world.OpKinds(), world.OpKind.ClientFault)
	if len(kinds) <= 11 || last != takes[len(takes)-1] {
		t.Fatalf("the fault kinds %v: want more than eleven, the op table's last kind the world takes last", kinds)
	}
	r := rand.New(rand.NewPCG(3, 4))
	same, drew := 0, 0
	for range 60 {
		b := make([]byte, 8+r.IntN(200))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		w1, g1, err := fuzzRun(b, "FuzzX", cfg, true, 1)
		if err != nil {
			t.Fatalf("input %x: %v", b, err)
		}
		w2, g2, err := fuzzRun(b, "FuzzX", cfg, true, 0)
		if err != nil {
			t.Fatalf("input %x, %s appended: %v", b, last, err)
		}
		ops1, ops2 := g1.Ops(), g2.Ops()
		at := slices.IndexFunc(ops2, func(o world.GeneratedOp) bool { return o.Op.Kind == last })
		if at < 0 {
			if len(ops1) != len(ops2) || w1.Sim().Trace().Hash() != w2.Sim().Trace().Hash() {
				t.Fatalf("input %x draws no %s, yet decodes to another run (%d ops, then %d)", b, last, len(ops1), len(ops2))
			}
			same++
			at = len(ops2)
		} else {
			drew++
		}
		for i := range at {
			if ops1[i].Op.String() != ops2[i].Op.String() || ops1[i].Time != ops2[i].Time {
				t.Fatalf("input %x: op %d is %v at %v, with %s appended %v at %v", b, i, ops1[i].Op, ops1[i].Time, last, ops2[i].Op, ops2[i].Time)
			}
		}
	}
	t.Logf("of 60 inputs, %d decode to the same run with %s appended, %d draw it", same, last, drew)
	if drew == 0 || same < 30 {
		t.Errorf("of 60 inputs, %d drew the appended kind and %d decoded the same: want some of each, most the same", drew, same)
	}
}
