package world

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim"
)

// EventObject reads the object of each form of the narration (the apiserver's writes name the
// resource, the informer's events the key, with or without @rv, tombstones in tomb(...)) and
// nothing from events about no one object.
func TestEventObject(t *testing.T) {
	ev := func(actor, kind string, f ...sim.Field) sim.Event {
		return sim.Event{Actor: actor, Kind: kind, Fields: f}
	}
	for _, c := range []struct {
		e    sim.Event
		want string
	}{
		{ev("apiserver", "ADDED", sim.F("obj", "pods/default/a"), sim.F("rv", "2")), "default/a"},
		{ev("apiserver", "DELETED", sim.F("obj", "nodes/n1"), sim.F("rv", "2")), "n1"},
		{ev("apiserver", "watch-event", sim.F("type", "ADDED"), sim.F("obj", "default/a")), "default/a"},
		{ev("inf1/reflector", "MODIFIED", sim.F("obj", "default/a"), sim.F("rv", "3")), "default/a"},
		{ev("inf1/queue", "cache-update", sim.F("obj", "default/a@3")), "default/a"},
		{ev("inf1/queue", "buffer", sim.F("to", "h1"), sim.F("obj", "tomb(default/a@3)")), "default/a"},
		{ev("inf1/h1", "OnDelete", sim.F("obj", "n1"), sim.F("rv", "3")), "n1"},
		{ev("ctrl/worker", "get", sim.F("key", "default/a")), "default/a"},
		{ev("inf1/queue", "pop", sim.F("delta", "ReplacedAll"), sim.F("n", "2")), ""},
		{ev("apiserver", "write-error", sim.F("op", "update name=a")), ""},
	} {
		if got := EventObject(c.e); got != c.want {
			t.Errorf("EventObject(%s) = %q, want %q", c.e, got, c.want)
		}
	}
}

// A violation about one object carries that object's history, and only its: here the cache
// loses a (planted: removed behind the informer's back) while b is written too; the history
// has a's story from the apiserver to the handler, none of b's events, and the report prints
// it, as %+v does.
func TestViolationCarriesTheObjectsHistory(t *testing.T) {
	w := newTraceWorld(t, 1)
	n, err := w.AddInformer("inf1", InformerSpec{Resource: configMaps})
	if err != nil {
		t.Fatal(err)
	}
	mustAddHandler(t, w, n, "h1", useInformerResync)
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	mustApply(t, w, create(configMaps, "a"), create(configMaps, "b"))
	mustConverge(t, w)
	mustApply(t, w, update(configMaps, "a"), update(configMaps, "b"))
	mustConverge(t, w)
	obj, _, _ := n.SharedIndexInformer().GetStore().GetByKey("default/a")
	if err := n.SharedIndexInformer().GetStore().Delete(obj); err != nil {
		t.Fatal(err)
	}
	err = w.RunUntilConverged(time.Minute)
	var v *Violation
	if !errors.As(err, &v) || v.Oracle != OracleEventualConsistency {
		t.Fatalf("got %v, want an %s violation", err, OracleEventualConsistency)
	}
	if v.Key != "default/a" {
		t.Fatalf("the violation is about %q, want default/a", v.Key)
	}
	var story []string
	for _, e := range v.History {
		if EventObject(e) != "default/a" {
			t.Errorf("the history of default/a holds %s", e)
		}
		story = append(story, e.Actor+" "+e.Kind)
	}
	for _, want := range []string{"apiserver ADDED", "inf1/h1 OnAdd", "apiserver MODIFIED", "inf1/reflector MODIFIED", "inf1/queue cache-update", "inf1/h1 OnUpdate"} {
		if !strings.Contains(strings.Join(story, "\n"), want) {
			t.Errorf("the history lacks %q:\n%s", want, strings.Join(story, "\n"))
		}
	}
	for _, out := range []string{v.Report(), fmt.Sprintf("%+v", v), w.Explain(err)} {
		if !strings.Contains(out, "history of default/a (every event about it, oldest first):\n") || !strings.Contains(out, "OnUpdate      obj=default/a") {
			t.Errorf("the report does not show the history:\n%s", out)
		}
	}
	if line := fmt.Sprintf("%v", v); strings.Contains(line, "\n") || line != v.Error() {
		t.Errorf("%%v is not the one-line Error: %q", line)
	}
}

// A read-only violation is about the object that was changed, whatever event the apiserver
// noticed it at.
func TestReadOnlyViolationCarriesTheObjectsHistory(t *testing.T) {
	w := newTraceWorld(t, 1)
	n, err := w.AddInformer("inf1", InformerSpec{Resource: configMaps})
	if err != nil {
		t.Fatal(err)
	}
	bad := informer.ResourceEventHandlerFuncs{UpdateFunc: func(_, obj any) {
		obj.(*unstructured.Unstructured).SetLabels(map[string]string{"touched": "yes"})
	}}
	if _, err := w.AddHandler(n, "bad", bad, HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	mustApply(t, w, create(configMaps, "a"), create(configMaps, "b"))
	mustConverge(t, w)
	err = w.Apply(update(configMaps, "a"))
	if err == nil {
		err = w.RunUntilConverged(time.Minute)
	}
	var v *Violation
	if !errors.As(err, &v) || v.Oracle != OracleReadOnlyObjects {
		t.Fatalf("got %v, want a %s violation", err, OracleReadOnlyObjects)
	}
	if v.Key != "default/a" || len(v.History) == 0 || v.History[len(v.History)-1].Kind != "OnUpdate" {
		t.Errorf("about %q with history %v; want default/a's, ending with the handler's OnUpdate", v.Key, v.History)
	}
}
