package realapi

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestGenerateIsSeeded: the same seed gives the same sequences, another seed others, every
// family is drawn, and bad input is refused.
func TestGenerateIsSeeded(t *testing.T) {
	a, err := Generate(7, 2*len(Families))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(7, 2*len(Families))
	c, _ := Generate(8, 2*len(Families))
	if !reflect.DeepEqual(a, b) {
		t.Error("two draws from one seed differ")
	}
	if reflect.DeepEqual(a, c) {
		t.Error("two seeds drew the same sequences")
	}
	drawn := map[string]bool{}
	for _, s := range a {
		drawn[s.Family] = true
		if len(s.Steps) < 2 {
			t.Errorf("%s has %d steps", s.Name, len(s.Steps))
		}
	}
	if len(drawn) != len(Families) {
		t.Errorf("%d families drawn of %d", len(drawn), len(Families))
	}
	if _, err := Generate(1, 0); err == nil {
		t.Error("Generate(1, 0) did not fail")
	}
	labelled, err := GenerateRun(7, 2*len(Families), "abc9")
	if err != nil || labelled[0].Namespace != "rs7abc9-0000-crud" {
		t.Errorf("GenerateRun's namespace %q (%v)", labelled[0].Namespace, err)
	}
	if _, err := GenerateRun(1, 1, "Bad-Label"); err == nil {
		t.Error("GenerateRun took a label that cannot be in a namespace name")
	}
}

// TestNormaliseRanksRevisions: object revisions become their rank in order of first
// appearance, list revisions are checked against the sequence's writes, uids and times go.
func TestNormaliseRanksRevisions(t *testing.T) {
	r := newRanks()
	obj := func(rv string) Response {
		return Response{Code: 201, Body: []byte(`{"kind":"ConfigMap","metadata":{"name":"a","uid":"1b4c","resourceVersion":"` + rv + `","creationTimestamp":"2026-01-01T00:00:00Z"}}`)}
	}
	got := Normalise(obj("907"), r, false)
	want := map[string]any{"code": 201, "body": map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "a", "uid": "<uid>", "resourceVersion": "rv1", "creationTimestamp": "<time>"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Normalise:\n got %v\nwant %v", got, want)
	}
	if got := Normalise(obj("912"), r, false).(map[string]any)["body"].(map[string]any)["metadata"].(map[string]any)["resourceVersion"]; got != "rv2" {
		t.Errorf("second revision %v", got)
	}
	if got := Normalise(obj("907"), r, false).(map[string]any)["body"].(map[string]any)["metadata"].(map[string]any)["resourceVersion"]; got != "rv1" {
		t.Errorf("first revision again %v", got)
	}
	list := func(rv string) any {
		return Normalise(Response{Code: 200, Body: []byte(`{"kind":"ConfigMapList","metadata":{"resourceVersion":"` + rv + `"},"items":[]}`)}, r, false).(map[string]any)["body"].(map[string]any)["metadata"].(map[string]any)["resourceVersion"]
	}
	if got := list("5000"); got != "<list-rv>" {
		t.Errorf("a newer list revision: %v", got)
	}
	if got := list("10"); got != "<list-rv older than the sequence's writes>" {
		t.Errorf("an older list revision: %v", got)
	}
	st := Normalise(Response{Code: 410, Body: []byte(`{"kind":"Status","code":410,"message":"too old resource version: 907 (1234)"}`)}, r, false)
	if msg := st.(map[string]any)["body"].(map[string]any)["message"]; msg != "too old resource version: rv1 (N)" {
		t.Errorf("message %v", msg)
	}
}

// TestNormaliseListRevisionIsNotRanked: a list's revision newer than the sequence's writes
// (writes elsewhere moved the store) is not ranked as an object's, so an exact list at the
// sequence's last write, which kube-apiserver answers at exactly that revision, is not taken for
// one older than the sequence's writes, and later objects keep their ranks.
func TestNormaliseListRevisionIsNotRanked(t *testing.T) {
	r := newRanks()
	rvOf := func(n any) any {
		return n.(map[string]any)["body"].(map[string]any)["metadata"].(map[string]any)["resourceVersion"]
	}
	list := func(rv string) any {
		return rvOf(Normalise(Response{Code: 200, Body: []byte(`{"kind":"ConfigMapList","metadata":{"resourceVersion":"` + rv + `"},"items":[{"metadata":{"name":"a","resourceVersion":"907"}}]}`)}, r, false))
	}
	object := func(rv string) any {
		return rvOf(Normalise(Response{Code: 201, Body: []byte(`{"kind":"ConfigMap","metadata":{"name":"b","resourceVersion":"` + rv + `"}}`)}, r, false))
	}
	if got := object("907"); got != "rv1" {
		t.Fatalf("the write: %v", got)
	}
	if got := list("950"); got != "<list-rv>" {
		t.Errorf("a list newer than the writes: %v", got)
	}
	if got := list("907"); got != "<list-rv>" {
		t.Errorf("an exact list at the last write after a newer list: %v", got)
	}
	if got := object("912"); got != "rv2" {
		t.Errorf("the next write after two lists ranks %v", got)
	}
	if got := list("910"); got != "<list-rv older than the sequence's writes>" {
		t.Errorf("a list older than the last write: %v", got)
	}
	table := Normalise(Response{Code: 200, Body: []byte(`{"kind":"Table","metadata":{"resourceVersion":"990"},"rows":[]}`)}, r, false)
	if got := rvOf(table); got != "<list-rv>" || r.max != 912 {
		t.Errorf("a table's revision %v, the greatest ranked %d", got, r.max)
	}
}

// TestNormaliseWatchStream: a watch's bookmarks are checked in stream order against the writes
// before it opened and the events before them; plain bookmarks that pass are counted apart,
// one that goes back stays in place and says so.
func TestNormaliseWatchStream(t *testing.T) {
	ev := func(typ, rv string, annotations string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(`{"type":"`+typ+`","object":{"kind":"ConfigMap","metadata":{"name":"x","resourceVersion":"`+rv+`"`+annotations+`}}}`), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	end := `,"annotations":{"k8s.io/initial-events-end":"true"}`
	stream := func(last map[string]any) map[string]any {
		r := newRanks()
		for _, rv := range []string{"10", "11"} { // the writes before the watch
			r.object(rv)
		}
		floor := r.max
		r.object("13") // the write the watch step makes while it is open
		resp := Response{Code: 200, Events: []map[string]any{ev("ADDED", "10", ""), ev("ADDED", "11", ""), ev("BOOKMARK", "12", end), ev("ADDED", "13", ""), last}}
		return NormaliseWatch(resp, r, false, floor).(map[string]any)
	}
	got := stream(ev("BOOKMARK", "14", ""))
	evs := got["events"].([]any)
	if len(evs) != 4 || got["progressBookmarks"] != 1 {
		t.Fatalf("a progress bookmark after the late event: %d events, %v progress bookmarks", len(evs), got["progressBookmarks"])
	}
	if tok := evs[2].(map[string]any)["object"].(map[string]any)["metadata"].(map[string]any)["resourceVersion"]; tok != "<list-rv>" {
		t.Errorf("the end bookmark, newer than the writes before the watch: %v", tok)
	}
	got = stream(ev("BOOKMARK", "12", ""))
	evs = got["events"].([]any)
	if len(evs) != 5 || got["progressBookmarks"] != 0 {
		t.Fatalf("a bookmark older than the event before it: %d events, %v progress bookmarks", len(evs), got["progressBookmarks"])
	}
	if tok := evs[4].(map[string]any)["object"].(map[string]any)["metadata"].(map[string]any)["resourceVersion"]; tok != "<list-rv older than the sequence's writes>" {
		t.Errorf("the bookmark that went back: %v", tok)
	}
}

// TestPlantedDifferenceFails: a 409 answered as 422 is an unexplained difference; a known entry
// for it explains it; a known entry that explains nothing is stale.
func TestPlantedDifferenceFails(t *testing.T) {
	seq := Sequence{Name: "crud#0", Family: "crud"}
	conflict := Outcome{Step: "update at a stale revision: Conflict", Normalised: Normalise(Response{Code: 409, Body: []byte(`{"kind":"Status","code":409,"reason":"Conflict"}`)}, newRanks(), false)}
	invalid := Outcome{Step: conflict.Step, Normalised: Normalise(Response{Code: 422, Body: []byte(`{"kind":"Status","code":422,"reason":"Invalid"}`)}, newRanks(), false)}
	var rep Report
	rep.Compare(seq, []Outcome{conflict}, []Outcome{invalid}, nil)
	rep.Finish(nil)
	un := rep.Unexplained()
	if len(un) != 3 { // code, body.code, body.reason
		t.Fatalf("unexplained %v", un)
	}
	if !strings.Contains(rep.String(), "UNEXPLAINED crud#0") {
		t.Errorf("the report does not show it:\n%s", rep.String())
	}
	known := []KnownDifference{
		{ID: "conflict-as-invalid", Reason: "planted", Family: "crud", Path: "code|body[.](code|reason)"},
		{ID: "never", Reason: "matches nothing", Family: "nope"},
	}
	if err := CompileKnown(known); err != nil {
		t.Fatal(err)
	}
	var rep2 Report
	rep2.Compare(seq, []Outcome{conflict}, []Outcome{invalid}, known)
	rep2.Finish(known)
	if len(rep2.Unexplained()) != 0 || rep2.ByKnown["conflict-as-invalid"] != 3 || !reflect.DeepEqual(rep2.Stale, []string{"never"}) {
		t.Errorf("with the known entries: unexplained %v, by known %v, stale %v", rep2.Unexplained(), rep2.ByKnown, rep2.Stale)
	}
	if err := CompileKnown([]KnownDifference{{ID: "x"}}); err == nil {
		t.Error("a known entry without a reason was accepted")
	}
}

// TestInformersimAgainstItself: every family run on two fresh informersim sides gives no
// difference: what the normaliser leaves is deterministic, so a difference against the real
// control plane is the server's, not the suite's.
func TestInformersimAgainstItself(t *testing.T) {
	a, b := preparedInformersim(t, 1), preparedInformersim(t, 2)
	ctx := context.Background()
	seqs, err := Generate(3, 2*len(Families))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := RunSuite(ctx, a, b, seqs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Differences) != 0 {
		t.Errorf("informersim against itself:\n%s", rep)
	}
	if rep.Steps < 8*len(seqs) {
		t.Errorf("only %d steps compared in %d sequences", rep.Steps, len(seqs))
	}
}

// TestKnownMatchesValues: a known row that names the values of both sides explains only those.
func TestKnownMatchesValues(t *testing.T) {
	known := []KnownDifference{{ID: "one-more", Reason: "planted", Path: "progressBookmarks", Real: "1", Ours: "0"}}
	if err := CompileKnown(known); err != nil {
		t.Fatal(err)
	}
	watch := func(progress int) []Outcome {
		return []Outcome{{Step: "w", Normalised: map[string]any{"code": 200, "events": []any{}, "progressBookmarks": progress}}}
	}
	var rep Report
	rep.Compare(Sequence{Name: "watchlist#0", Family: "watchlist"}, watch(1), watch(0), known)
	rep.Compare(Sequence{Name: "watchlist#1", Family: "watchlist"}, watch(2), watch(0), known)
	rep.Compare(Sequence{Name: "watchlist#2", Family: "watchlist"}, watch(0), watch(1), known)
	if un := rep.Unexplained(); len(un) != 2 || rep.ByKnown["one-more"] != 1 {
		t.Errorf("explained %v, unexplained %v", rep.ByKnown, un)
	}
}

// preparedInformersim starts an informersim side from seed, prepared as the suite prepares a
// side (Prepare), and closes it when t ends.
func preparedInformersim(t *testing.T, seed uint64) *Side {
	t.Helper()
	s, err := NewInformersim(seed)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := Prepare(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return s
}
