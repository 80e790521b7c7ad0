package world

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim"
)

// Goal: every op kind is one complete row: a name that parses back to the kind, an effect, a
// field list whose required fields make a minimal op that prints and parses back, and, for a
// fault, a way for a Generator to draw it. Every Op field is taken by some kind.
func TestEveryOpKindHasARow(t *testing.T) {
	names := map[string]OpKind{}
	for _, k := range OpKinds() {
		row := opRows[k]
		if row.name == "" || row.apply == nil {
			t.Errorf("kind %d: row without a name or an effect: %+v", int(k), row)
			continue
		}
		if prev, dup := names[row.name]; dup {
			t.Errorf("kinds %d and %d are both named %q", int(prev), int(k), row.name)
		}
		names[row.name] = k
		if got, err := ParseOpKind(k.String()); err != nil || got != k {
			t.Errorf("ParseOpKind(%q) = %v, %v", k, got, err)
		}
		if k.Fault() && row.draw == nil {
			t.Errorf("fault kind %s: a Generator cannot draw it (no draw)", k)
		}
		if k.Fault() == (k.write() || k == OpSleep) {
			t.Errorf("kind %s: Fault() = %v", k, k.Fault())
		}
		op := minimalOp(k)
		got, err := Parse(op.String())
		if err != nil {
			t.Errorf("kind %s: Parse(%q): %v", k, op, err)
			continue
		}
		if got.String() != op.String() || got.Kind != k {
			t.Errorf("kind %s: %q parses back as %q", k, op, got)
		}
	}
	if len(names) != len(OpKinds()) || len(OpKinds()) != int(numOpKinds)-1 {
		t.Errorf("%d named rows for %d kinds", len(names), len(OpKinds()))
	}
	for f := opField(0); f < numOpFields; f++ {
		if kindsTaking(f) == "no kind" {
			t.Errorf("Op field %s is taken by no kind", opFieldNames[f])
		}
	}
	if k := OpKind(numOpKinds); k.valid() || k.String() != fmt.Sprintf("OpKind(%d)", numOpKinds) {
		t.Errorf("OpKind past the last: valid %v, %q", k.valid(), k)
	}
}

// minimalOp is a valid op of kind k with only the fields it needs.
func minimalOp(k OpKind) Op {
	op := Op{Kind: k}
	switch k {
	case OpCreate, OpUpdate, OpDelete:
		op.Name = "a"
	case OpPatch:
		op.Name, op.PatchType, op.Patch = "a", "application/merge-patch+json", "{}"
	case OpFailNext:
		op.Verb, op.Code = fakeapi.VerbList, 500
	case OpLagReplica:
		op.Duration = time.Second
	case OpSlowController, OpStopController, OpStartController:
		op.Name = "garbage-collector"
	case OpSlowWebhook:
		op.Duration = time.Second
	case OpFailWebhook:
		op.Code = 500
	case OpCrashRestart, OpConflict, OpStaleRead, OpHiddenChange:
		op.Client = testClient
	case OpSlowCall:
		op.Client, op.Duration = testClient, time.Second
	}
	return op
}

// testClient is the client worldWithReplicas registers; its faults are taken (clientFaults).
const testClient = "ctl"

// clientFaults records the client faults a world's testClient took, by kind.
type clientFaults map[OpKind]int

func (c clientFaults) take(op Op) error { c[op.Kind]++; return nil }

// worldWithReplicas is a world of three apiserver replicas with informer inf1 started, the
// control plane running, webhooks enabled and a client registered (so that their ops apply).
func worldWithReplicas(t *testing.T, seed uint64) *World {
	t.Helper()
	w, err := NewFromConfig(sim.Config{Seed: seed}, fakeapi.Config{Replicas: 3}, Config{ControlPlane: &controlplane.Config{}})
	if err != nil {
		t.Fatal(err)
	}
	w.EnableWebhooks()
	n, err := w.AddInformer("inf1", InformerSpec{})
	if err != nil {
		t.Fatal(err)
	}
	mustAddHandler(t, w, n, "h1", useInformerResync)
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	if err := w.AddClient(testClient, clientFaults{}.take); err != nil {
		t.Fatal(err)
	}
	return w
}

// drawable is every kind a Generator's fault ops can draw.
func drawable() []OpKind {
	var out []OpKind
	for _, k := range OpKinds() {
		if opRows[k].draw != nil {
			out = append(out, k)
		}
	}
	return out
}

// Goal: a Generator can draw every kind: its own writes (create, update, delete) and, listed in
// GenConfig.FaultOpKinds, every fault kind and patch; the run still converges (the generator resumes the
// replicas it froze). Without FaultOpKinds, the historical mix is unchanged (the pinned hashes say so).
// Method: a hundred ops per drawable kind, with every drawable kind listed, on a world of three replicas; collect the
// kinds of Generator.Ops.
func TestGeneratorDrawsEveryKind(t *testing.T) {
	w := worldWithReplicas(t, 3)
	// About ten fault ops of each kind (one op in ten is a fault op).
	g, err := w.Generate(GenConfig{Ops: 100 * len(drawable()), FaultOps: true, FaultOpKinds: drawable(), MaxInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Sim().RunUntil(g.Finished, time.Hour); err != nil {
		t.Fatal(err)
	}
	seen := map[OpKind]int{}
	for _, o := range g.Ops() {
		seen[o.Op.Kind]++
	}
	for _, k := range OpKinds() {
		if k != OpSleep && seen[k] == 0 {
			t.Errorf("the generator never drew %s (drew %v)", k, seen)
		}
	}
	mustConverge(t, w)

	for _, c := range []struct {
		cfg  GenConfig
		want string
	}{
		{GenConfig{FaultOpKinds: []OpKind{OpCompact}}, "needs FaultOps"},
		{GenConfig{FaultOps: true, FaultOpKinds: []OpKind{OpCreate}}, "not a kind a fault op can draw"},
		{GenConfig{FaultOps: true, FaultOpKinds: []OpKind{OpSleep}}, "not a kind a fault op can draw"},
		{GenConfig{FaultOps: true, FaultOpKinds: []OpKind{0}}, "not a kind a fault op can draw"},
	} {
		if _, err := w.Generate(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Generate(%+v) = %v, want an error containing %q", c.cfg, err, c.want)
		}
	}
}

// Goal: World.Script schedules every kind, each at its time, narrated as the apiserver's event
// of the kind's name; a fault that names what the world lacks (a replica, an informer) is
// refused when scheduled, and nothing is scheduled then.
// Method: one Script holding one op of every kind, a second between each; read the trace.
func TestScriptSchedulesEveryKind(t *testing.T) {
	w := worldWithReplicas(t, 5)
	var ops []Op
	for _, k := range OpKinds() {
		if k == OpSleep {
			continue
		}
		op := minimalOp(k)
		if k == OpSlowConsumer {
			op.Informer = "inf1"
		}
		if k == OpReinitReplica || k == OpResumeReplica || k == OpFreezeReplica {
			op.Replica = 2
		}
		ops = append(ops, op, Op{Kind: OpSleep, Duration: time.Second})
	}
	start := w.Sim().Now()
	if _, err := w.Script(time.Second, ops...); err != nil {
		t.Fatal(err)
	}
	mustConverge(t, w)
	at := map[string]time.Duration{}
	for _, e := range w.Sim().Trace().Events() {
		if e.Actor == "apiserver" || e.Actor == testClient { // a client fault is narrated as its client
			if _, ok := at[e.Kind]; !ok {
				at[e.Kind] = e.Time
			}
		}
	}
	for i, k := range slices.DeleteFunc(OpKinds(), func(k OpKind) bool { return k == OpSleep }) {
		want := start + time.Duration(i+1)*time.Second
		kind := k.String()
		if k.write() {
			kind = map[OpKind]string{OpCreate: "ADDED", OpUpdate: "MODIFIED", OpPatch: "MODIFIED", OpDelete: "DELETED"}[k]
		}
		got, ok := at[kind]
		if !ok || (!k.write() && got != want) {
			t.Errorf("%s: first apiserver %q event at %v (found %v), want %v", k, kind, got, ok, want)
		}
	}

	for _, c := range []struct {
		op   Op
		want string
	}{
		{Op{Kind: OpRouteNext, Replica: 3}, "the apiserver has 3 replicas"},
		{Op{Kind: OpSlowConsumer, Informer: "nobody"}, `no informer named "nobody"`},
		{Op{Kind: OpConflict, Client: "nobody"}, `no client named "nobody" (the world's: ctl)`},
		{Op{Kind: OpStaleRead, Client: testClient, Replica: 3}, "the apiserver has 3 replicas"},
	} {
		before := w.Sim().PendingTimers()
		if _, err := w.Script(0, Op{Kind: OpCompact}, c.op); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "(Script op 1)") {
			t.Errorf("Script(%s) = %v, want an error containing %q", c.op, err, c.want)
		}
		if err := w.Apply(c.op); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Apply(%s) = %v, want an error containing %q", c.op, err, c.want)
		}
		if after := w.Sim().PendingTimers(); after != before {
			t.Errorf("a refused Script scheduled %d timers", after-before)
		}
	}
}
