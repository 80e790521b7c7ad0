package world

import (
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

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
		t.Run(name, func(t *testing.T) {
			for _, seed := range traceSeeds {
				w := newTraceWorld(t, seed)
				mustApply(t, w, create(configMaps, "a")) // there before the informer: listed
				n, err := w.AddInformer("inf1", InformerOptions{Resource: configMaps})
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
			}
		})
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
		marked, err := w.AddInformer("marked", InformerOptions{Resource: configMaps, Transform: mark})
		if err != nil {
			t.Fatal(err)
		}
		plain, err := w.AddInformer("plain", InformerOptions{Resource: configMaps})
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
		if got := marked.Informer().GetStore().List()[0].(*unstructured.Unstructured).GetAnnotations()["transformed"]; got != "yes" {
			t.Errorf("seed %d: the transform did not run", seed)
		}
	}
}

// Messages a controller author meets: a second informer of one name is refused in the world's
// words; a handler's panic comes back from RunUntilConverged as the step's failure (a
// *sim.RunError), not as a world that "did not quiesce"; an unserved resource's error says how
// to serve a custom one.
func TestUserFacingMessages(t *testing.T) {
	w := newTraceWorld(t, 1)
	if _, err := w.AddInformer("pods", InformerOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddInformer("pods", InformerOptions{}); err == nil || err.Error() != "world: informer pods: the world has an informer of that name already" {
		t.Errorf("second informer named pods: %v", err)
	}
	_, err := w.AddInformer("widgets", InformerOptions{Resource: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}})
	if err == nil || !strings.Contains(err.Error(), "fakeapi.Config.Resources") {
		t.Errorf("unserved resource: %v", err)
	}

	w = newTraceWorld(t, 1)
	n, err := w.AddInformer("inf1", InformerOptions{Resource: configMaps})
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
