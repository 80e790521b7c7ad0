package world

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim"
)

// The read-only-objects oracle: a handler that changes an object it received fails the run at
// the end of the step in which the apiserver notices it, whatever it changed and whenever; one
// that copies first, or an informer whose transform changes objects in place (it gets copies),
// does not.
func TestChangingAReceivedObjectFailsTheRun(t *testing.T) {
	changes := map[string]informer.ResourceEventHandlerFuncs{
		"a label of the new object on update": {UpdateFunc: func(_, obj any) {
			obj.(*unstructured.Unstructured).SetLabels(map[string]string{"touched": "yes"})
		}},
		"a data key of the old object on update": {UpdateFunc: func(old, _ any) {
			old.(*unstructured.Unstructured).Object["data"] = map[string]any{"k": "changed"}
		}},
		"a listed object on add": {AddFunc: func(obj any) {
			u := obj.(*unstructured.Unstructured)
			if u.GetName() == "a" {
				u.SetAnnotations(map[string]string{"seen": "yes"})
			}
		}},
	}
	for name, h := range changes {
		for _, eachDelivery := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/each-delivery=%v", name, eachDelivery), func(t *testing.T) {
				for _, seed := range traceSeeds {
					checkChangeFailsTheRun(t, seed, h, eachDelivery)
				}
			})
		}
	}
}

// checkChangeFailsTheRun runs a world whose handler "changer" does h, and checks the run fails
// with the read-only-objects oracle; with eachDelivery (Config.CheckReadOnlyEachDelivery), at
// the end of the changer's own delivery step.
func checkChangeFailsTheRun(t *testing.T, seed uint64, h informer.ResourceEventHandlerFuncs, eachDelivery bool) {
	t.Helper()
	w, err := New(seed, Config{CheckReadOnlyEachDelivery: eachDelivery})
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, w, create(configMaps, "a")) // there before the informer: listed
	n, err := w.AddInformer("inf1", InformerSpec{Resource: configMaps})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddHandler(n, "changer", h, HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	err = w.RunUntilConverged(time.Minute)
	if err == nil {
		err = w.Apply(Op{Kind: OpUpdate, Resource: configMaps, Name: "a", Labels: map[string]string{"v": "2"}})
	}
	if err == nil {
		err = w.RunUntilConverged(time.Minute)
	}
	var v *Violation
	if !errors.As(err, &v) || v.Oracle != OracleReadOnlyObjects {
		t.Fatalf("seed %d: got %v, want a %s violation", seed, err, OracleReadOnlyObjects)
	}
	if !strings.Contains(v.Message, `configmaps default/a at resourceVersion`) || !strings.Contains(v.Message, `lent read-only to "inf1"`) {
		t.Errorf("seed %d: the message does not name the object and the informer: %s", seed, v.Message)
	}
	atHandler := strings.Contains(v.Message, "noticed by the end of inf1/changer's delivery step")
	if atHandler != eachDelivery || (eachDelivery && v.Event.Actor != "inf1/changer") {
		t.Errorf("seed %d, each delivery %v: noticed at %s (%s)", seed, eachDelivery, v.Event.Actor, v.Message)
	}
}

func TestCopyingBeforeChangingAndInPlaceTransformsPass(t *testing.T) {
	for _, seed := range traceSeeds {
		w := newTraceWorld(t, seed)
		mark := func(obj any) (any, error) { // client-go lets a transform change its argument
			u := obj.(*unstructured.Unstructured)
			u.SetAnnotations(map[string]string{"transformed": "yes"})
			return u, nil
		}
		marked, err := w.AddInformer("marked", InformerSpec{Resource: configMaps, Transform: mark})
		if err != nil {
			t.Fatal(err)
		}
		plain, err := w.AddInformer("plain", InformerSpec{Resource: configMaps})
		if err != nil {
			t.Fatal(err)
		}
		copier := informer.ResourceEventHandlerFuncs{UpdateFunc: func(_, obj any) {
			c := obj.(*unstructured.Unstructured).DeepCopy()
			c.SetLabels(map[string]string{"touched": "yes"})
		}}
		for _, n := range []*Informer{marked, plain} {
			if _, err := w.AddHandler(n, "copier", copier, HandlerOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := n.Start(); err != nil {
				t.Fatal(err)
			}
		}
		mustApply(t, w, create(configMaps, "a"), create(configMaps, "b"))
		mustConverge(t, w)
		mustApply(t, w, Op{Kind: OpUpdate, Resource: configMaps, Name: "a", Labels: map[string]string{"v": "2"}},
			Op{Kind: OpDelete, Resource: configMaps, Name: "b"})
		mustConverge(t, w)
		if got := marked.SharedIndexInformer().GetStore().List()[0].(*unstructured.Unstructured).GetAnnotations()["transformed"]; got != "yes" {
			t.Errorf("seed %d: the transform did not run", seed)
		}
	}
}

// An informer whose spec promises a transform that only reads (TransformReadsOnly) takes the
// apiserver's objects lent, on its LIST and on its WATCH, and the convergence oracle hands the
// transform its lent objects too: a transform that converts, building a new object, passes and
// fills the cache with what it built; one that writes into what it is given after all (an
// object listed, one watched, or one the oracle read, each in one call only) fails the run with
// the read-only-objects oracle, as a handler writing into its objects does.
func TestReadOnlyTransformsTakeLentObjects(t *testing.T) {
	convert := func(obj any) (any, error) {
		u := obj.(*unstructured.Unstructured)
		out := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
		out.SetNamespace(u.GetNamespace())
		out.SetName(u.GetName())
		out.SetResourceVersion(u.GetResourceVersion())
		out.SetAnnotations(map[string]string{"converted": "yes"})
		return out, nil
	}
	// writesInto converts, and writes into the object named name at its call-th transform.
	writesInto := func(name string, call int) informer.TransformFunc {
		calls := 0
		return func(obj any) (any, error) {
			if u := obj.(*unstructured.Unstructured); u.GetName() == name {
				if calls++; calls == call {
					u.SetAnnotations(map[string]string{"written": "yes"})
				}
			}
			return convert(obj)
		}
	}
	equal := func(cached, apiserver any) bool {
		c, a := cached.(*unstructured.Unstructured), apiserver.(*unstructured.Unstructured)
		return c.GetResourceVersion() == a.GetResourceVersion() && c.GetAnnotations()["converted"] == "yes"
	}
	run := func(seed uint64, transform informer.TransformFunc) (*Informer, error) {
		w := newTraceWorld(t, seed)
		mustApply(t, w, create(configMaps, "listed"))
		n, err := w.AddInformer("conv", InformerSpec{Resource: configMaps, Transform: transform, TransformReadsOnly: true, Equal: equal})
		if err != nil {
			t.Fatal(err)
		}
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		if err := w.RunUntilConverged(time.Minute); err != nil {
			return n, err
		}
		mustApply(t, w, create(configMaps, "watched"))
		if err := w.RunUntilConverged(time.Minute); err != nil {
			return n, err
		}
		return n, w.CheckConverged()
	}
	for _, seed := range traceSeeds {
		n, err := run(seed, convert)
		if err != nil {
			t.Fatalf("seed %d: a converting transform failed the run: %v", seed, err)
		}
		if objs := n.SharedIndexInformer().GetStore().List(); len(objs) != 2 || objs[0].(*unstructured.Unstructured).GetAnnotations()["converted"] != "yes" {
			t.Fatalf("seed %d: the cache holds %d objects, not the 2 converted", seed, len(objs))
		}
		for _, c := range []struct {
			what, name string
			call       int
		}{{"the object listed", "listed", 1}, {"the object watched", "watched", 1}, {"the oracle's object", "listed", 2}} {
			_, err := run(seed, writesInto(c.name, c.call))
			var v *Violation
			if !errors.As(err, &v) || v.Oracle != OracleReadOnlyObjects || !strings.Contains(v.Message, "default/"+c.name) {
				t.Fatalf("seed %d: a transform writing into %s: got %v, want a %s violation naming it", seed, c.what, err, OracleReadOnlyObjects)
			}
		}
	}
}

// Messages a controller author meets: a second informer of one name is refused in the world's
// words; a handler's panic comes back from RunUntilConverged as the step's failure (a
// *sim.RunError), not as a world that "did not quiesce"; an unserved resource's error says how
// to serve a custom one.
func TestUserFacingMessages(t *testing.T) {
	w := newTraceWorld(t, 1)
	if _, err := w.AddInformer("pods", InformerSpec{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddInformer("pods", InformerSpec{}); err == nil || err.Error() != "world: informer pods: the world has an informer of that name already" {
		t.Errorf("second informer named pods: %v", err)
	}
	_, err := w.AddInformer("widgets", InformerSpec{Resource: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}})
	if err == nil || !strings.Contains(err.Error(), "fakeapi.Config.Resources") {
		t.Errorf("unserved resource: %v", err)
	}

	w = newTraceWorld(t, 1)
	n, err := w.AddInformer("inf1", InformerSpec{Resource: configMaps})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddHandler(n, "boom", informer.ResourceEventHandlerFuncs{AddFunc: func(any) { panic("boom") }}, HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	mustApply(t, w, create(configMaps, "a"))
	err = w.RunUntilConverged(time.Minute)
	var failed *sim.RunError
	if !errors.As(err, &failed) || strings.Contains(err.Error(), "quiesce") || failed.Panic != "boom" {
		t.Errorf("a panicking handler: %v", err)
	}
}

// Config.CheckReadOnlyEachDelivery only reads: with no change to notice, a run with it is the
// same run as one without (same trace hash), handlers and faults included.
func TestCheckingEachDeliveryChangesNothing(t *testing.T) {
	run := func(seed uint64, eachDelivery bool) string {
		w, err := NewFromConfig(sim.Config{Seed: seed, Trace: sim.TraceHashOnly, FaultSiteProbability: 0.5}, fakeapi.Config{}, Config{CheckReadOnlyEachDelivery: eachDelivery})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"inf1", "inf2"} {
			n, err := w.AddInformer(name, InformerSpec{Resource: pods})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range []string{"h1", "h2"} {
				if _, err := w.AddHandler(n, h, nil, HandlerOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if err := n.Start(); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Generate(GenConfig{Ops: 40, FaultOps: true, FaultPoints: true}); err != nil {
			t.Fatal(err)
		}
		if err := w.RunUntilConverged(time.Hour); err != nil {
			t.Fatalf("seed %d, each delivery %v: %v", seed, eachDelivery, err)
		}
		return w.Sim().Trace().Hash()
	}
	for seed := uint64(1); seed <= 20; seed++ {
		if off, on := run(seed, false), run(seed, true); off != on {
			t.Fatalf("seed %d: trace hash %s without the per-delivery check, %s with it", seed, off, on)
		}
	}
}

// A write made from the test, between runs, that reveals a handler's change to an object it
// received is the run's read-only-objects failure, returned by Apply (and by every later call
// that settles the world), never a panic escaping into the test.
func TestAWriteBetweenRunsRevealingAChangeIsReturned(t *testing.T) {
	w, err := New(1, Config{})
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, w, create(configMaps, "a"))
	n, err := w.AddInformer("inf1", InformerSpec{Resource: configMaps})
	if err != nil {
		t.Fatal(err)
	}
	changer := informer.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		obj.(*unstructured.Unstructured).SetAnnotations(map[string]string{"seen": "yes"})
	}}
	if _, err := w.AddHandler(n, "changer", changer, HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	// Long enough for the add to be delivered; nothing writes a meanwhile, so nothing notices.
	if err := w.Sim().RunFor(time.Minute); err != nil {
		t.Fatalf("the change was noticed before the write: %v", err)
	}
	var v *Violation
	err = w.Apply(Op{Kind: OpUpdate, Resource: configMaps, Name: "a", Labels: map[string]string{"v": "2"}})
	if !errors.As(err, &v) || v.Oracle != OracleReadOnlyObjects {
		t.Fatalf("Apply: got %v, want a %s violation", err, OracleReadOnlyObjects)
	}
	if err := w.Settle(); !errors.As(err, &v) {
		t.Errorf("Settle after the failure: got %v, want the violation again", err)
	}
	if _, err := w.AddHandler(n, "late", nil, HandlerOptions{}); !errors.As(err, &v) {
		t.Errorf("AddHandler after the failure: got %v, want the violation again", err)
	}
	if err := w.RunUntilConverged(time.Minute); !errors.As(err, &v) {
		t.Errorf("RunUntilConverged after the failure: got %v, want the violation again", err)
	}
}
