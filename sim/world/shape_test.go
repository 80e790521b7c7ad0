package world_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	shapeCMs     = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	shapeSecrets = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

// shapeOwned makes the workload write configmaps with data (a "spec") drawn from r, and turns
// about a third of the updates into a delete of the secret the configmap "owns" (created
// alongside by no one here: the redirected deletes of secrets never created answer 404).
func shapeOwned(op world.Op, r *rand.Rand) world.Op {
	switch op.Kind {
	case world.OpCreate, world.OpUpdate:
		if op.Kind == world.OpUpdate && r.IntN(3) == 0 {
			return world.Op{Kind: world.OpDelete, Resource: shapeSecrets, Namespace: op.Namespace, Name: "owned-" + op.Name}
		}
		op.Content = map[string]any{"data": map[string]string{"replicas": string(rune('1' + r.IntN(4)))}}
	}
	return op
}

func shapeRun(t *testing.T, seed uint64, data []byte, shape func(world.Op, *rand.Rand) world.Op) (*world.World, []world.GeneratedOp) {
	t.Helper()
	w, err := world.NewFromConfig(sim.Config{Seed: seed}, fakeapi.Config{}, world.Config{DefaultResource: shapeCMs})
	if err != nil {
		t.Fatal(err)
	}
	cfg := world.GenConfig{Ops: 60, MaxInterval: 100 * time.Millisecond, Shape: shape}
	var g *world.Generator
	if data != nil {
		g, err = w.Fuzz(data, cfg)
	} else {
		g, err = w.Generate(cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := w.RunUntilConverged(time.Hour); err != nil {
		t.Fatal(err)
	}
	return w, g.Ops()
}

// Goal: GenConfig.Shape lets a generated workload write objects with content and redirect a
// write to another resource's object, both under Generate (seeded) and Fuzz (input bytes);
// the Generator's model of live objects stays right (no create of a live object, no update or
// delete of a missing one: every configmap write succeeds), a shape that changes a write's kind
// is refused and recorded, and the same seed gives the same ops.
func TestGenConfigShape(t *testing.T) {
	data := make([]byte, 200)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	for _, in := range [][]byte{nil, data} {
		w, ops := shapeRun(t, 7, in, shapeOwned)
		contents, redirected := 0, 0
		for _, g := range ops {
			switch {
			case g.Op.Resource == shapeSecrets:
				redirected++
				if g.Op.Kind != world.OpDelete || !strings.Contains(g.Err, "not found") {
					t.Errorf("redirected op %v: err %q, want a delete answered not found", g.Op, g.Err)
				}
			case g.Err != "":
				t.Errorf("op %v failed: %s (the Generator's model of live objects is wrong)", g.Op, g.Err)
			case g.Op.Content != nil:
				contents++
			}
		}
		if contents == 0 || redirected == 0 {
			t.Errorf("fuzz=%v: %d writes with content, %d redirected, want both", in != nil, contents, redirected)
		}
		list, err := w.Server().Snapshot(shapeCMs, "", metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range list.Items {
			if _, ok := it.Object["data"].(map[string]any)["replicas"]; !ok {
				t.Errorf("configmap %s has no shaped data: %v", it.GetName(), it.Object)
			}
		}
		_, again := shapeRun(t, 7, in, shapeOwned)
		if len(again) != len(ops) {
			t.Fatalf("fuzz=%v: %d ops then %d for the same seed and input", in != nil, len(ops), len(again))
		}
		for i := range ops {
			if ops[i].Op.String() != again[i].Op.String() || ops[i].Time != again[i].Time {
				t.Fatalf("fuzz=%v: op %d: %v at %v, then %v at %v", in != nil, i, ops[i].Op, ops[i].Time, again[i].Op, again[i].Time)
			}
		}
	}

	// A shape changing the kind of a write of the drawn object: refused and recorded, the model
	// kept (the following writes of that object still succeed).
	_, ops := shapeRun(t, 7, nil, func(op world.Op, _ *rand.Rand) world.Op {
		if op.Kind == world.OpDelete {
			op.Kind = world.OpUpdate
		}
		return op
	})
	refused := 0
	for _, g := range ops {
		switch {
		case strings.Contains(g.Err, "keeps its kind"):
			refused++
		case g.Err != "":
			t.Errorf("op %v failed: %s", g.Op, g.Err)
		}
	}
	if refused == 0 {
		t.Errorf("no write was refused for a changed kind in %d ops", len(ops))
	}
}

// Goal: Shape's choices come from the fuzz input, so different inputs shape differently; and
// an unset Shape leaves the workload as it was (the pinned hashes say so for Generate).
func TestGenConfigShapeReadsTheInput(t *testing.T) {
	var first string
	for i := range 8 {
		data := []byte{0, 1, 2, 3, 4, 5, 6, 7, byte(40 * i), byte(i), byte(7 * i), 0}
		_, ops := shapeRun(t, 1, data, shapeOwned)
		s := ""
		for _, g := range ops {
			s += g.Op.String() + "\n"
		}
		if i > 0 && s != first {
			return
		}
		first = s
	}
	t.Errorf("eight inputs gave the same shaped ops:\n%s", first)
}

// A fuzzed workload of configmaps whose every write carries data chosen by the input, and
// whose updates the input may turn into a delete of the secret the configmap stands for:
// GenConfig.Shape draws from the same choices as the rest of the workload. One byte is one
// choice: the pause, then for each op the object (0: hot-0, 200: cold-0), the write (0 creates
// a missing object; 3 updates a live one), then Shape's draws (the redirect: even or odd; the
// size: a third of the byte range each), then the next pause.
func ExampleGenConfig_shape() {
	w, _ := world.NewFromConfig(sim.Config{Seed: 1}, fakeapi.Config{}, world.Config{DefaultResource: shapeCMs})
	g, _ := w.Fuzz([]byte{0, 0, 0, 100, 0, 0, 3, 0, 0, 0, 3, 1, 200, 0, 200, 0, 50}, world.GenConfig{Ops: 4, HotNames: 1, ColdNames: 1,
		Shape: func(op world.Op, r *rand.Rand) world.Op {
			if op.Kind == world.OpUpdate && r.IntN(2) == 0 {
				return world.Op{Kind: world.OpDelete, Resource: shapeSecrets, Namespace: op.Namespace, Name: op.Name + "-secret"}
			}
			if op.Kind != world.OpDelete {
				op.Labels = nil
				op.Content = map[string]any{"data": map[string]string{"size": fmt.Sprint(r.IntN(3))}}
			}
			return op
		}})
	_ = w.RunUntilConverged(time.Minute)
	for _, o := range g.Ops() {
		fmt.Printf("%s %v %s %v %q\n", o.Op.Kind, o.Op.Resource.Resource, o.Op.Name, o.Op.Content["data"], o.Err)
	}
	// Output:
	// create configmaps hot-0 map[size:1] ""
	// delete secrets hot-0-secret <nil> "secrets \"hot-0-secret\" not found"
	// update configmaps hot-0 map[size:2] ""
	// create configmaps cold-0 map[size:0] ""
}
