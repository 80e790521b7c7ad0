package world

import (
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/informersim/informersim/informer"
)

// Two informers hold the apiserver's same object and only inf2's handler "bad" changes it. The
// violation must not blame inf1 alone (the first it was lent to): without the per-delivery
// check it names every holder; with it, the handler itself.
func TestReadOnlyViolationNamesTheRightHolder(t *testing.T) {
	bad := informer.ResourceEventHandlerFuncs{UpdateFunc: func(_, obj any) {
		obj.(*unstructured.Unstructured).SetLabels(map[string]string{"touched": "yes"})
	}}
	for _, eachDelivery := range []bool{false, true} {
		for _, seed := range traceSeeds {
			w, err := New(seed, Config{CheckReadOnlyEachDelivery: eachDelivery})
			if err != nil {
				t.Fatal(err)
			}
			mustApply(t, w, create(configMaps, "a"))
			for _, name := range []string{"inf1", "inf2"} {
				n, err := w.AddInformer(name, InformerSpec{Resource: configMaps})
				if err != nil {
					t.Fatal(err)
				}
				var h informer.ResourceEventHandler
				if name == "inf2" {
					h = bad
				}
				if _, err := w.AddHandler(n, map[string]string{"inf1": "good", "inf2": "bad"}[name], h, HandlerOptions{}); err != nil {
					t.Fatal(err)
				}
				if err := n.Start(); err != nil {
					t.Fatal(err)
				}
			}
			mustConverge(t, w)
			err = w.Apply(Op{Kind: OpUpdate, Resource: configMaps, Name: "a", Labels: map[string]string{"v": "2"}})
			if err == nil {
				err = w.RunUntilConverged(time.Minute)
			}
			var v *Violation
			if !errors.As(err, &v) || v.Oracle != OracleReadOnlyObjects {
				t.Fatalf("seed %d, each delivery %v: got %v, want a %s violation", seed, eachDelivery, err, OracleReadOnlyObjects)
			}
			if eachDelivery {
				if !strings.Contains(v.Message, "noticed by the end of inf2/bad's delivery step") {
					t.Errorf("seed %d: the per-delivery check does not name the handler: %s", seed, v.Message)
				}
				continue
			}
			if !strings.Contains(v.Message, `lent read-only to each of "inf1", "inf2"`) && !strings.Contains(v.Message, `lent read-only to each of "inf2", "inf1"`) {
				t.Errorf("seed %d: the message does not name every holder: %s", seed, v.Message)
			}
		}
	}
}
