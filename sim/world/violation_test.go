package world

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega/format"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Goal: a Violation that fails Expect(err).To(Succeed()) shows as its Error line then the trace
// before the violating event, each fact once, not as a dump of its fields (forty events of
// nested structs, the seed and the message again). Method: make the eventual-consistency oracle
// fail (an object slipped into a cache), format the error as Gomega does, and look at it.
func TestViolationGomegaString(t *testing.T) {
	w, err := New(1, Config{DefaultResource: configMaps})
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, w, Op{Kind: OpCreate, Name: "a"})
	n, err := w.AddInformer("inf1", InformerSpec{Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	if err := w.RunUntilConverged(time.Minute); err != nil {
		t.Fatal(err)
	}
	g := &unstructured.Unstructured{}
	g.SetNamespace("default")
	g.SetName("ghost")
	g.SetResourceVersion("1")
	if err := n.SharedIndexInformer().GetStore().Add(g); err != nil {
		t.Fatal(err)
	}
	err = w.RunUntilConverged(time.Minute)
	var v *Violation
	if !errors.As(err, &v) {
		t.Fatalf("RunUntilConverged = %v, want a *Violation", err)
	}
	shown := format.Object(err, 1)
	for _, want := range []string{v.Error(), "trace before the violation:\n", "inf1/reflector watching", "> " + v.Event.String()} {
		if !strings.Contains(shown, want) {
			t.Errorf("Gomega shows the violation without %q:\n%s", want, shown)
		}
	}
	for _, unwanted := range []string{"Window:", "Fields:", "Seed:"} {
		if strings.Contains(shown, unwanted) {
			t.Errorf("Gomega shows the violation's fields (%q):\n%s", unwanted, shown)
		}
	}
	if c := strings.Count(shown, "seed"); c != 1 {
		t.Errorf("Gomega shows the seed %d times:\n%s", c, shown)
	}
	if got := v.Report(); !strings.HasSuffix(got, v.GomegaString()+"\n") || !strings.HasPrefix(got, "oracle eventual-consistency violated: inf1: cache diverges") {
		t.Errorf("Report:\n%s", got)
	}
}
