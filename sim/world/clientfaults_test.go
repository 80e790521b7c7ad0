package world

import (
	"slices"
	"strings"
	"testing"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim"
)

// Goal: a client fault is an op like any other: applied, it is narrated as its client and
// handed to the client's host, which may apply ops of its own while taking it (a hidden
// change's writes); World.Ops records the client fault alone, so that replaying the record does
// not do the host's writes twice. AddClient refuses a bad name, a second client of a name and
// an actor's name.
// Method: a world with a client whose host, for a hidden change, applies Unobserved's ops
// around a delete; apply one fault of each kind; read the host's log, the trace and World.Ops.
func TestClientFaultsAreRecordedOps(t *testing.T) {
	w, err := NewFromConfig(sim.Config{Seed: 1}, fakeapi.Config{Replicas: 2}, Config{RecordOps: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Apply(Op{Kind: OpCreate, Name: "a"}); err != nil {
		t.Fatal(err)
	}
	var took []string
	err = w.AddClient("controller", func(op Op) error {
		took = append(took, op.String())
		if op.Kind == OpHiddenChange {
			ops, err := Perturbation{Kind: PerturbUnobserved}.Ops(Op{Kind: OpDelete, Name: "a"})
			if err != nil {
				return err
			}
			for _, o := range ops {
				if err := w.Apply(o); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, k := range ClientFaultKinds() {
		op := Op{Kind: k, Client: "controller"}
		if k == OpSlowCall {
			op.Duration = 3e9
		}
		if k == OpStaleRead {
			op.Replica = 1
		}
		if err := w.Apply(op); err != nil {
			t.Fatalf("Apply(%s): %v", op, err)
		}
		want = append(want, op.String())
	}
	if !slices.Equal(took, want) {
		t.Errorf("the host took %q, want %q", took, want)
	}
	ops, err := w.Ops()
	if err != nil {
		t.Fatal(err)
	}
	var recorded []string
	for _, g := range ops[1:] { // after the create
		recorded = append(recorded, g.Op.String())
	}
	if !slices.Equal(recorded, want) {
		t.Errorf("World.Ops recorded %q, want the client faults alone %q", recorded, want)
	}
	narrated := map[string]bool{}
	for _, e := range w.Sim().Trace().Events() {
		if e.Actor == "controller" {
			narrated[e.Kind] = true
		}
		if e.Actor == "apiserver" && e.Kind == "DELETED" {
			narrated["hidden delete"] = true
		}
	}
	for _, k := range append(ClientFaultKinds(), 0) {
		name := "hidden delete"
		if k != 0 {
			name = k.String()
		}
		if !narrated[name] {
			t.Errorf("the trace has no %s (narrated: %v)", name, narrated)
		}
	}

	for _, c := range []struct{ name, want string }{
		{"two words", "invalid name"},
		{"controller", "exists already"},
		{"apiserver", "an actor of the world"},
	} {
		if err := w.AddClient(c.name, func(Op) error { return nil }); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("AddClient(%q) = %v, want an error containing %q", c.name, err, c.want)
		}
	}
	if err := w.AddClient("other", nil); err == nil {
		t.Error("AddClient took a nil TakeClientFault")
	}
	bare, _ := New(1, Config{})
	if err := bare.Apply(Op{Kind: OpCrashRestart, Client: "controller"}); err == nil || !strings.Contains(err.Error(), "hosts no client") {
		t.Errorf("a client fault in a world with no client: %v", err)
	}
	if slices.ContainsFunc(bare.FaultKinds(), OpKind.ClientFault) {
		t.Errorf("a world with no client lists client faults among the kinds it can take: %v", bare.FaultKinds())
	}
	if !slices.ContainsFunc(w.FaultKinds(), OpKind.ClientFault) {
		t.Errorf("a world with a client does not list the client faults: %v", w.FaultKinds())
	}
}

// Goal: each perturbation is one recipe of ops around the op it perturbs: a restart and a
// stale view before it, an unobserved state around a write; an incomplete perturbation or an
// unobserved state around an op that is no write is refused; a campaign tries an unobserved
// state only at deletes.
func TestPerturbationRecipes(t *testing.T) {
	del := Op{Kind: OpDelete, Name: "a"}
	for _, c := range []struct {
		p    Perturbation
		want []string
	}{
		{Perturbation{Kind: PerturbRestart, Client: "controller"}, []string{"crash-restart client=controller", "delete name=a"}},
		{Perturbation{Kind: PerturbStale, Replica: 1, To: 1}, []string{"lag-replica replica=1 by=1s", "route-next replica=1", "close-watches", "delete name=a"}},
		{Perturbation{Kind: PerturbStale, Replica: 1, To: 0}, []string{"lag-replica replica=1 by=1s", "route-next replica=0", "close-watches", "delete name=a"}},
		{Perturbation{Kind: PerturbUnobserved}, []string{"close-watches", "delete name=a", "compact"}},
	} {
		ops, err := c.p.Ops(del)
		if err != nil {
			t.Fatalf("%v: %v", c.p, err)
		}
		var got []string
		for _, op := range ops {
			got = append(got, op.String())
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%v around %s: %q, want %q", c.p, del, got, c.want)
		}
		if !c.p.AppliesAt(del) {
			t.Errorf("%v does not apply at a delete", c.p)
		}
	}
	create := Op{Kind: OpCreate, Name: "b"}
	if (Perturbation{Kind: PerturbUnobserved}).AppliesAt(create) || !(Perturbation{Kind: PerturbStale}).AppliesAt(create) {
		t.Error("a campaign tries unobserved at a create, or stale not")
	}
	for _, c := range []struct {
		p    Perturbation
		op   Op
		want string
	}{
		{Perturbation{Kind: "sideways"}, del, "unknown perturbation kind"},
		{Perturbation{Kind: PerturbRestart}, del, "invalid Client"},
		{Perturbation{Kind: PerturbStale, Replica: -1}, del, "negative Replica"},
		{Perturbation{Kind: PerturbStale, To: -1}, del, "or To -1"},
		{Perturbation{Kind: PerturbUnobserved}, Op{Kind: OpCompact}, "not a write"},
	} {
		if _, _, err := c.p.Around(c.op); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v around %s: %v, want an error containing %q", c.p, c.op, err, c.want)
		}
	}
}
