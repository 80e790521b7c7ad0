package world_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

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
	seed, choices := world.FuzzSeed(data)
	w, err := world.NewFromConfig(sim.Config{Seed: seed, MaxSteps: 200_000, Repro: world.FuzzRepro(fuzzName, data)},
		fakeapi.Config{Replicas: 2, Routing: fakeapi.RoutingRoundRobin}, world.Config{})
	if err != nil {
		return nil, nil, err
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
	g, err := w.Fuzz(choices, world.GenConfig{Ops: 40, FaultOps: true, FaultOpKinds: w.FaultKinds(), MaxInterval: 50 * time.Millisecond})
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
}
