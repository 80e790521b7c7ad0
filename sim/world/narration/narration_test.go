package narration_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/narration"
)

// Goal: each formatter and its reader agree: what one writes the other reads back.
func TestFormattersReadBack(t *testing.T) {
	for _, c := range []struct {
		key, rv string
		tomb    bool
	}{{"default/a", "2", false}, {"a", "10", true}, {"ns/with@at", "7", false}, {"x", "", false}} {
		k, rv, tomb := narration.ParseRef(narration.Ref(c.key, c.rv, c.tomb))
		if k != c.key || rv != c.rv || tomb != c.tomb {
			t.Errorf("Ref(%q, %q, %v) reads back as %q, %q, %v", c.key, c.rv, c.tomb, k, rv, tomb)
		}
	}
	if o, n := narration.ParseRVChange(narration.RVChange("3", "5")); o != "3" || n != "5" {
		t.Errorf("RVChange reads back as %q, %q", o, n)
	}
	for _, names := range [][]string{nil, {"h1"}, {"h1", "h2", "h3"}} {
		if got := narration.ParseHandlerList(narration.HandlerList(names)); !slices.Equal(got, names) {
			t.Errorf("HandlerList(%v) reads back as %v", names, got)
		}
	}
	for _, c := range []struct{ res, ns, name, key string }{{"pods", "default", "a", "default/a"}, {"namespaces", "", "a", "a"}} {
		if got := narration.CommitKey(narration.CommitRef(c.res, c.ns, c.name)); got != c.key {
			t.Errorf("CommitKey(CommitRef(%q, %q, %q)) = %q, want %q", c.res, c.ns, c.name, got, c.key)
		}
	}
}

// Goal: the readers read the world's own trace exactly: every delivery a handler's DeliveryLog
// recorded is, in order, what Delivered reads from that handler's events; every commit's key and
// revision are the apiserver's; every kind an informer or the apiserver narrates is declared
// here (or is a fault op's name, or a watch event's type).
// Method: a generated workload with every fault op kind on three replicas, two handlers (one
// joining late), run to convergence; compare.
func TestReadersReadTheWorldsTrace(t *testing.T) {
	// The control plane runs, so that its fault ops apply and its actors narrate too.
	w, err := world.NewFromConfig(sim.Config{Seed: 11}, fakeapi.Config{Replicas: 3}, world.Config{ControlPlane: &controlplane.Config{}})
	if err != nil {
		t.Fatal(err)
	}
	n, err := w.AddInformer("inf1", world.InformerSpec{Informer: informer.SharedIndexInformerOptions{ResyncPeriod: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	h1, err := w.AddHandler(n, "h1", nil, world.HandlerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	var kinds []world.OpKind
	for _, k := range world.OpKinds() {
		if k.Fault() || k == world.OpPatch {
			kinds = append(kinds, k)
		}
	}
	gen, err := w.Generate(world.GenConfig{Ops: 300, FaultOps: true, FaultOpKinds: kinds, MaxInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Sim().RunFor(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	h2, err := w.AddHandler(n, "h2", nil, world.HandlerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Sim().RunUntil(gen.Finished, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := w.RunUntilConverged(time.Hour); err != nil {
		t.Fatal(err)
	}

	got := map[string][]string{}
	commits := 0
	for _, e := range w.Sim().Trace().Events() {
		inf, part := narration.SplitActor(e.Actor)
		switch {
		case narration.IsCommit(e):
			key, rev, ok := narration.Commit(e)
			if !ok || key == "" || rev == 0 {
				t.Fatalf("commit %v reads as %q, %d, %v", e, key, rev, ok)
			}
			commits++
		case e.Actor == narration.ActorAPIServer:
			if _, err := world.ParseOpKind(e.Kind); err != nil && !narration.Known(e.Kind) {
				t.Errorf("the apiserver narrates an undeclared kind: %v", e)
			}
		case inf == "inf1" && (e.Kind == narration.KindOnAdd || e.Kind == narration.KindOnUpdate || e.Kind == narration.KindOnDelete):
			got[part] = append(got[part], narration.Delivered(e).String())
		case inf == "inf1" && part == narration.PartReflector:
			if !narration.Known(e.Kind) && !slices.Contains([]string{"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"}, e.Kind) {
				t.Errorf("the Reflector narrates an undeclared kind: %v", e)
			}
		case inf == "inf1":
			if !narration.Known(e.Kind) {
				t.Errorf("informer inf1 narrates an undeclared kind: %v", e)
			}
		}
	}
	if commits == 0 {
		t.Fatal("no commit in the trace")
	}
	for _, h := range []*world.Handler{h1, h2} {
		var want []string
		for _, nt := range h.Deliveries().Notifications() {
			want = append(want, noteOf(nt).String())
		}
		if len(want) == 0 || !slices.Equal(got[h.Name()], want) {
			t.Errorf("handler %s: the trace reads as %d deliveries, its DeliveryLog holds %d; first difference at %s",
				h.Name(), len(got[h.Name()]), len(want), firstDiff(got[h.Name()], want))
		}
	}
}

func noteOf(n world.Notification) narration.Note {
	switch n.Kind {
	case informer.NotificationAdd:
		return narration.Note{Call: narration.CallAdd, Key: n.Key, RV: n.ResourceVersion, Initial: n.InInitialList}
	case informer.NotificationUpdate:
		return narration.Note{Call: narration.CallUpdate, Key: n.Key, RV: n.ResourceVersion, OldRV: n.OldResourceVersion, Sync: n.Sync}
	}
	return narration.Note{Call: narration.CallDelete, Key: n.Key, RV: n.ResourceVersion, Tomb: n.Tombstone}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("%d: %q vs %q", i, a[i], b[i])
		}
	}
	return fmt.Sprint(min(len(a), len(b)))
}
