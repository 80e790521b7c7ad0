package worldtest_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/oracle"
	"github.com/informersim/informersim/sim/world/worldtest"
	"github.com/informersim/informersim/timeline/record"
)

// timelineLine is the line a failure message names its timeline on, right after the replay line.
var timelineLine = regexp.MustCompile(`(?m)^replay: [^\n]*\ntimeline: (\S+)\n`)

// pageRecord reads the timeline a failure message names and returns its path and the record
// the page embeds.
func pageRecord(t *testing.T, msg string) (string, *record.Run) {
	t.Helper()
	m := timelineLine.FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("no timeline line right after the replay line:\n%s", msg)
	}
	b, err := os.ReadFile(m[1])
	if err != nil {
		t.Fatalf("the timeline the message names: %v", err)
	}
	page := string(b)
	if !strings.HasPrefix(page, "<!DOCTYPE html>") {
		t.Fatalf("%s is not an HTML page", m[1])
	}
	_, rest, _ := strings.Cut(page, `<script id="run-data" type="application/json">`)
	embedded, _, ok := strings.Cut(rest, "</script>")
	if !ok {
		t.Fatalf("%s embeds no record", m[1])
	}
	var r record.Run
	if err := json.Unmarshal([]byte(embedded), &r); err != nil {
		t.Fatalf("%s's record: %v", m[1], err)
	}
	return m[1], &r
}

// violating returns the events of r marked as the violation.
func violating(r *record.Run) []record.Event {
	var out []record.Event
	for _, e := range r.Events {
		if e.Mark == record.MarkViolation {
			out = append(out, e)
		}
	}
	return out
}

// staleCacheWorld is a run that violates cache-before-notify at an event of its trace: once an
// update of a is buffered for the handler, the older state goes back into the cache behind the
// informer's back, and the handler's call finds the cache behind what it is told.
func staleCacheWorld(t *testing.T) (*world.World, *oracle.Handle) {
	t.Helper()
	w := newExampleWorld(2)
	h, err := oracle.Attach(w)
	if err != nil {
		t.Fatal(err)
	}
	_ = w.Apply(world.Op{Kind: world.OpCreate, Name: "a"})
	inf, _ := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
	hd, err := w.AddHandler(inf, "h1", nil, world.HandlerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = inf.Start()
	if err := w.RunUntilConverged(time.Minute); err != nil {
		t.Fatal(err)
	}
	store := inf.SharedIndexInformer().GetStore()
	old, _, _ := store.GetByKey("default/a")
	_ = w.Apply(world.Op{Kind: world.OpUpdate, Name: "a"})
	if err := w.Sim().RunUntil(func() bool { return hd.Buffered() > 0 }, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := store.Update(old); err != nil {
		t.Fatal(err)
	}
	return w, h
}

// duplicateEventWorld is a run that violates the watch-guarantees oracle, which reads the
// apiserver's record, not the trace: the apiserver sends one DELETED event twice.
func duplicateEventWorld(t *testing.T) (*world.World, *oracle.Handle) {
	t.Helper()
	w := newExampleWorld(1)
	h, err := oracle.Attach(w)
	if err != nil {
		t.Fatal(err)
	}
	_ = w.Apply(world.Op{Kind: world.OpCreate, Name: "a"})
	inf, _ := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
	_ = inf.Start()
	_ = h.RunUntilConverged(time.Minute)
	_ = w.Apply(world.Op{Kind: world.OpDelete, Name: "a"})
	_ = w.Sim().RunUntil(func() bool { return len(inf.SharedIndexInformer().GetStore().ListKeys()) == 0 }, time.Minute)
	_ = w.Server().Faults().DuplicateEvent(w.Server().Faults().Watchers()[0])
	w.Settle()
	_ = h.RunUntilConverged(time.Minute)
	return w, h
}

// Goal: a failing spec's message names, right after its replay line, the run's timeline: a page
// whose embedded record is the run (every trace event, a lane for each of the world's
// informers' parts and handlers, the attached oracles' verdicts) with the violating event
// marked; the same run writes the same file, byte for byte.
func TestFailingSpecWritesItsTimeline(t *testing.T) {
	w, h := staleCacheWorld(t)
	m := worldtest.HaveConverged(time.Minute)
	if ok, err := m.Match(h); ok || err != nil {
		t.Fatalf("Match = %v, %v; want a violation", ok, err)
	}
	msg := m.FailureMessage(h)
	path, r := pageRecord(t, msg)
	if dir := os.Getenv(worldtest.ArtifactsEnv); filepath.Dir(path) != dir || filepath.Base(path) != "informersim-2-"+w.Sim().Trace().Hash()[:12]+".html" {
		t.Errorf("timeline at %s, want informersim-2-<hash>.html in %s", path, dir)
	}
	if int64(len(r.Events)) != w.Sim().Trace().Len() || r.Seed != 2 || r.Passed || r.Replay != "informersim run example --seed 2" {
		t.Errorf("record: %d events of %d, seed %d, passed %v, replay %q", len(r.Events), w.Sim().Trace().Len(), r.Seed, r.Passed, r.Replay)
	}
	if r.Failure == nil || r.Failure.Oracle != oracle.CacheBeforeNotify || r.Failure.Event == nil {
		t.Fatalf("failure: %+v", r.Failure)
	}
	v := violating(r)
	if len(v) != 1 || v[0].Seq != *r.Failure.Event || v[0].Actor != "inf1/h1" || v[0].Object != "default/a" {
		t.Errorf("violating events %+v, want h1's call about default/a at seq %d", v, *r.Failure.Event)
	}
	lanes := map[string]bool{}
	for _, c := range r.Components {
		lanes[c.ID] = true
	}
	for _, want := range []string{"apiserver", "inf1", "inf1/reflector", "inf1/network", "inf1/queue", "inf1/cache", "inf1/processor", "inf1/h1"} {
		if !lanes[want] {
			t.Errorf("no lane %s in %v", want, r.Components)
		}
	}
	bad := 0
	for _, vd := range r.Verdicts {
		if !vd.OK {
			bad++
		}
	}
	if len(r.Verdicts) != len(h.Verdicts()) || bad != 1 {
		t.Errorf("verdicts %+v, want the handle's %d with one violated", r.Verdicts, len(h.Verdicts()))
	}
	first, _ := os.ReadFile(path)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	w2, h2 := staleCacheWorld(t)
	m2 := worldtest.HaveConverged(time.Minute)
	_, _ = m2.Match(h2)
	path2, _ := pageRecord(t, m2.FailureMessage(h2))
	second, _ := os.ReadFile(path2)
	if path2 != path || string(first) != string(second) || w2.Sim().Trace().Hash() != w.Sim().Trace().Hash() {
		t.Errorf("the same seed wrote %s (%d bytes), then %s (%d bytes)", path, len(first), path2, len(second))
	}
}

// Goal: a violation found by reading the apiserver's record, not at an event of the trace
// (watch-guarantees), marks no event: the record says so (failure.event null) rather than
// marking a neighbour.
func TestViolationOutsideTheTraceMarksNoEvent(t *testing.T) {
	_, h := duplicateEventWorld(t)
	m := worldtest.SatisfyEveryOracle()
	if ok, err := m.Match(h); ok || err != nil {
		t.Fatalf("Match = %v, %v; want a violation", ok, err)
	}
	_, r := pageRecord(t, m.FailureMessage(h))
	if r.Failure == nil || r.Failure.Oracle != oracle.WatchGuarantees || r.Failure.Event != nil || r.Failure.TimeNS == 0 || len(violating(r)) != 0 {
		t.Errorf("failure %+v, violating events %+v", r.Failure, violating(r))
	}
}

// Goal: HaveObservedInOrder's timeline marks the handler's call where the difference begins;
// HaveConverged's, for a failure that is no oracle's (a failed check), marks none and says why
// the run failed.
func TestMatchersTimelines(t *testing.T) {
	w := newExampleWorld(1)
	_ = w.Apply(world.Op{Kind: world.OpCreate, Name: "a"})
	inf, _ := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
	h, _ := w.AddHandler(inf, "h1", nil, world.HandlerOptions{})
	_ = inf.Start()
	_ = w.RunUntilConverged(time.Minute)
	_ = w.Apply(world.Op{Kind: world.OpUpdate, Name: "a"})
	_ = w.RunUntilConverged(time.Minute)

	m := worldtest.HaveObservedInOrder("default/a", "add(default/a@2,true)", "del(default/a@3)")
	if ok, err := m.Match(h); ok || err != nil {
		t.Fatalf("Match = %v, %v; want a difference", ok, err)
	}
	_, r := pageRecord(t, m.FailureMessage(h))
	v := violating(r)
	if r.Failure == nil || r.Failure.Oracle != "HaveObservedInOrder" || !strings.Contains(r.Failure.Message, "first difference at #2") ||
		len(v) != 1 || v[0].Actor != "inf1/h1" || v[0].Kind != "OnUpdate" || v[0].Object != "default/a" {
		t.Errorf("failure %+v, violating events %+v; want the OnUpdate of default/a", r.Failure, v)
	}

	_ = w.AddCheck("c", func() error { return errors.New("boom") })
	cm := worldtest.HaveConverged(time.Minute)
	if ok, err := cm.Match(w); ok || err != nil {
		t.Fatalf("Match = %v, %v; want a failed check", ok, err)
	}
	_, r = pageRecord(t, cm.FailureMessage(w))
	if r.Failure == nil || !strings.Contains(r.Failure.Message, "boom") || r.Failure.Event != nil || len(violating(r)) != 0 {
		t.Errorf("failure %+v; want the check's error, no event marked", r.Failure)
	}
}

// Goal: a timeline that cannot be written never fails the spec on its own: the message says so
// where the path would be, and the failure is still the run's.
func TestUnwritableTimelineIsSaidNotFatal(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(worldtest.ArtifactsEnv, filepath.Join(file, "dir"))
	_, h := duplicateEventWorld(t)
	m := worldtest.SatisfyEveryOracle()
	if ok, err := m.Match(h); ok || err != nil {
		t.Fatalf("Match = %v, %v; want a violation", ok, err)
	}
	msg := m.FailureMessage(h)
	if !regexp.MustCompile(`(?m)^replay: [^\n]*\ntimeline: not written \(.*not a directory\)\n`).MatchString(msg) || !strings.Contains(msg, "oracle watch-guarantees violated") {
		t.Errorf("message:\n%s", msg)
	}
}

// Goal: Explain, for a failed run outside an assertion, is World.Explain with the timeline's
// line after the replay line; nil renders nothing and writes nothing.
func TestExplainWritesTimeline(t *testing.T) {
	w := newExampleWorld(2)
	_ = w.Apply(world.Op{Kind: world.OpCreate, Name: "a"})
	inf, _ := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
	_ = inf.Start()
	_ = w.AddCheck("c", func() error { return errors.New("boom") })
	err := w.RunUntilConverged(time.Minute)
	if err == nil {
		t.Fatal("the check did not fail the run")
	}
	msg := worldtest.Explain(w, err)
	path, r := pageRecord(t, msg)
	if strings.Replace(msg, "timeline: "+path+"\n", "", 1) != w.Explain(err) || r.Seed != 2 {
		t.Errorf("Explain:\n%s\nWorld.Explain:\n%s", msg, w.Explain(err))
	}
	if worldtest.Explain(w, nil) != "" {
		t.Error("Explain(nil) rendered something")
	}
}
