package scenarios_test

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/informersim/informersim/scenarios"
	"github.com/informersim/informersim/timeline/record"
)

func runLesson(t *testing.T, sc scenarios.Scenario) *record.Run {
	t.Helper()
	res, err := scenarios.Run(sc.Name, sc.Text, scenarios.Options{Name: sc.Name})
	if err != nil {
		t.Fatalf("%s: %v", sc.Name, err)
	}
	r, err := scenarios.RunRecord(sc, res)
	if err != nil {
		t.Fatalf("%s: %v", sc.Name, err)
	}
	return r
}

// Goal: every lesson's record is whole: it passes, its directives cover every event once and in
// order, each event is in a lane the components list, has its narration line and a directive,
// and the oracles' verdicts are there; the same run gives the same JSON and HTML bytes.
func TestCourseRecords(t *testing.T) {
	for _, sc := range scenarios.Course() {
		r := runLesson(t, sc)
		if !r.Passed || r.Failure != nil || len(r.Mismatches) > 0 {
			t.Errorf("%s: passed=%v failure=%v mismatches=%v", sc.Name, r.Passed, r.Failure, r.Mismatches)
		}
		if int64(len(r.Events)) != r.Trace.Len || r.Trace.Hash == "" || len(r.Verdicts) == 0 {
			t.Errorf("%s: %d events of a trace of %d, hash %q, %d verdicts", sc.Name, len(r.Events), r.Trace.Len, r.Trace.Hash, len(r.Verdicts))
		}
		lanes := map[string]bool{}
		for _, c := range r.Components {
			lanes[c.ID] = true
		}
		next := 0
		for i, d := range r.Directives {
			if d.FirstEvent != next || d.EndEvent < d.FirstEvent {
				t.Fatalf("%s: directive %d (%s) covers events [%d,%d), want it to start at %d", sc.Name, i, d.Pos, d.FirstEvent, d.EndEvent, next)
			}
			for j := d.FirstEvent; j < d.EndEvent; j++ {
				if r.Events[j].Directive != i {
					t.Fatalf("%s: event %d names directive %d, it ran in %d", sc.Name, j, r.Events[j].Directive, i)
				}
			}
			next = d.EndEvent
		}
		if next != len(r.Events) {
			t.Errorf("%s: the directives cover %d of %d events", sc.Name, next, len(r.Events))
		}
		for _, e := range r.Events {
			if !lanes[e.Lane] || e.Text == "" || !strings.Contains(e.Text, e.Actor+": "+e.Kind) {
				t.Fatalf("%s: event %d in lane %q with text %q", sc.Name, e.Seq, e.Lane, e.Text)
			}
		}
		if err := record.CheckStages(r.Scenario.Pipeline); err != nil {
			t.Error(err)
		}
	}
	sc, _ := scenarios.Lookup("12")
	var j1, j2, h1, h2 bytes.Buffer
	r1, r2 := runLesson(t, sc), runLesson(t, sc)
	for _, err := range []error{r1.WriteJSON(&j1), r2.WriteJSON(&j2), r1.WriteHTML(&h1), r2.WriteHTML(&h2)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(j1.Bytes(), j2.Bytes()) || !bytes.Equal(h1.Bytes(), h2.Bytes()) {
		t.Error("two runs of 12 gave different JSON or HTML")
	}
}

// Goal: the lanes follow the run's topology: each informer's parts, each handler, each
// workqueue and its workers, with client-go's names, and a DeltaFIFO informer's queue is called
// one.
func TestRecordLanes(t *testing.T) {
	sc, _ := scenarios.Lookup("23-workqueue")
	r := runLesson(t, sc)
	roles := map[string]string{}
	for _, c := range r.Components {
		roles[c.ID] = c.Role
	}
	for id, role := range map[string]string{"apiserver": "apiserver", "inf1/reflector": "reflector", "inf1/network": "network",
		"inf1/queue": "queue", "inf1/cache": "cache", "inf1/processor": "processor", "inf1/q": "handler", "q": "workqueue", "q/w1": "worker"} {
		if roles[id] != role {
			t.Errorf("lane %s has role %q, want %q (lanes %v)", id, roles[id], role, roles)
		}
	}
	// The control plane's stand-ins are kube-controller-manager's lanes, not the user's.
	sc, _ = scenarios.Lookup("30-cascading-deletion")
	gcLane := false
	for _, c := range runLesson(t, sc).Components {
		if c.ID == "garbage-collector" {
			gcLane = c.Role == "controller" && c.ClientGo == "kube-controller-manager"
		}
	}
	if !gcLane {
		t.Error("lesson 30 has no controller lane for the garbage collector")
	}
	sc, _ = scenarios.Lookup("12")
	r = runLesson(t, sc)
	var labels []string
	for _, c := range r.Components {
		labels = append(labels, c.Label)
	}
	if !slices.Contains(labels, "delta · DeltaFIFO") || !slices.Contains(labels, "real · RealFIFO") {
		t.Errorf("lesson 12's lanes do not name its queues: %q", labels)
	}
}

// Goal: a failing run's record says which oracle failed, when, and is not passed; its page
// says so.
func TestFailingRunRecord(t *testing.T) {
	b, err := os.ReadFile("testdata/record/mutating-handler.txt")
	if err != nil {
		t.Fatal(err)
	}
	sc := scenarios.NewScenario("mutating-handler", string(b))
	res, err := scenarios.Run(sc.Name, sc.Text, scenarios.Options{Name: sc.Name})
	if err != nil {
		t.Fatal(err)
	}
	r, err := scenarios.RunRecord(sc, res)
	if err != nil {
		t.Fatal(err)
	}
	if r.Passed || r.Failure == nil || r.Failure.Oracle != "read-only-objects" || r.Failure.TimeNS == 0 {
		t.Fatalf("passed=%v failure=%+v", r.Passed, r.Failure)
	}
	bad := 0
	for _, v := range r.Verdicts {
		if !v.OK {
			bad++
		}
	}
	if bad != 1 {
		t.Errorf("%d verdicts violated, want 1: %+v", bad, r.Verdicts)
	}
	var h bytes.Buffer
	if err := r.WriteHTML(&h); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.String(), "oracle read-only-objects violated") {
		t.Error("the page does not say which oracle was violated")
	}
	// Found at the convergence check, between events: no event is the violating one.
	for _, e := range r.Events {
		if e.Mark == record.MarkViolation || r.Failure.Event != nil {
			t.Errorf("a violation found between events marks event %v (failure.event %v)", e.Seq, r.Failure.Event)
			break
		}
	}

	// Checked at each delivery, the violation is found at the bad handler's own call: that
	// event, and only it, is marked.
	sc = scenarios.NewScenario("mutating-handler", strings.Replace(string(b), "world seed=3\n", "world seed=3 check-each-delivery\n", 1))
	res, err = scenarios.Run(sc.Name, sc.Text, scenarios.Options{Name: sc.Name})
	if err != nil {
		t.Fatal(err)
	}
	if r, err = scenarios.RunRecord(sc, res); err != nil {
		t.Fatal(err)
	}
	var marked []string
	for _, e := range r.Events {
		if e.Mark == record.MarkViolation {
			marked = append(marked, e.Text)
			if r.Failure.Event == nil || *r.Failure.Event != e.Seq {
				t.Errorf("event %d is marked, the failure names %v", e.Seq, r.Failure.Event)
			}
		}
	}
	if len(marked) != 1 || !strings.Contains(marked[0], "inf1/bad: OnAdd") {
		t.Errorf("marked as the violation: %q, want the bad handler's OnAdd", marked)
	}
}

// Goal: a scenario that names a part of the pipeline that does not exist is an error, not a
// page with nothing highlighted.
func TestUnknownStage(t *testing.T) {
	sc, _ := scenarios.Lookup("01")
	res, err := scenarios.Run(sc.Name, sc.Text, scenarios.Options{Name: sc.Name})
	if err != nil {
		t.Fatal(err)
	}
	sc.Pipeline = []string{"Reflector", "Informer"}
	if _, err := scenarios.RunRecord(sc, res); err == nil || !strings.Contains(err.Error(), `"Informer" is not a part of the pipeline`) {
		t.Errorf("RunRecord with an unknown stage: %v", err)
	}
	if _, err := scenarios.RunRecord(sc, nil); err == nil {
		t.Error("RunRecord(nil) succeeded")
	}
}
