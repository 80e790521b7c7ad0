package informer

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// infRecorder is a ResourceEventHandler that records every call as text.
type infRecorder struct{ calls []string }

func (r *infRecorder) OnAdd(obj any, isInInitialList bool) {
	s := "add " + infStr(obj)
	if isInInitialList {
		s += " init"
	}
	r.calls = append(r.calls, s)
}
func (r *infRecorder) OnUpdate(oldObj, newObj any) {
	r.calls = append(r.calls, "update "+infStr(oldObj)+"->"+infStr(newObj))
}
func (r *infRecorder) OnDelete(obj any) { r.calls = append(r.calls, "delete "+infStr(obj)) }

func infStr(obj any) string {
	switch o := obj.(type) {
	case string:
		return o
	case DeletedFinalStateUnknown:
		return "tomb(" + o.Key + ")"
	}
	return "?"
}

// informer.md §10: ResourceEventHandlerFuncs skips nil functions and drops isInInitialList.
func TestHandlerFuncsSkipNilAndDropInitial(t *testing.T) {
	var got []string
	h := ResourceEventHandlerFuncs{AddFunc: func(obj any) { got = append(got, "add "+infStr(obj)) }}
	h.OnAdd("a", true)
	h.OnUpdate("a", "b") // nil UpdateFunc: skipped
	h.OnDelete("a")      // nil DeleteFunc: skipped
	if diff := cmp.Diff(got, []string{"add a"}); diff != "" {
		t.Errorf("calls (-got +want):\n%s", diff)
	}
}

// informer.md §10: ResourceEventHandlerDetailedFuncs passes isInInitialList through.
func TestHandlerDetailedFuncsPassInitial(t *testing.T) {
	var got []bool
	h := ResourceEventHandlerDetailedFuncs{AddFunc: func(_ any, init bool) { got = append(got, init) }}
	h.OnAdd("a", true)
	h.OnAdd("b", false)
	h.OnUpdate("a", "b")
	h.OnDelete("a")
	if diff := cmp.Diff(got, []bool{true, false}); diff != "" {
		t.Errorf("isInInitialList (-got +want):\n%s", diff)
	}
}

// informer.md §10: FilteringResourceEventHandler turns updates crossing the filter boundary into
// adds (isInInitialList=false) and deletes of the plain old object; tombstones reach the filter.
func TestFilteringHandlerTransitions(t *testing.T) {
	rec := &infRecorder{}
	pass := func(obj any) bool {
		if tomb, ok := obj.(DeletedFinalStateUnknown); ok {
			return tomb.Key[0] == 'y'
		}
		return infStr(obj)[0] == 'y'
	}
	h := FilteringResourceEventHandler{FilterFunc: pass, Handler: rec}
	h.OnAdd("y1", true)
	h.OnAdd("n1", true)
	h.OnUpdate("y1", "y2") // both pass
	h.OnUpdate("n1", "y3") // enters the set
	h.OnUpdate("y2", "n2") // leaves the set
	h.OnUpdate("n2", "n3") // neither
	h.OnDelete("y3")
	h.OnDelete("n3")
	h.OnDelete(DeletedFinalStateUnknown{Key: "y4"})
	h.OnDelete(DeletedFinalStateUnknown{Key: "n4"})
	want := []string{
		"add y1 init",
		"update y1->y2",
		"add y3",
		"delete y2",
		"delete y3",
		"delete tomb(y4)",
	}
	if diff := cmp.Diff(rec.calls, want); diff != "" {
		t.Errorf("calls (-got +want):\n%s", diff)
	}
}
