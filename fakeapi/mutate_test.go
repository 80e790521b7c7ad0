package fakeapi

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// setData is a Mutation's Compute that sets data.k on the live object.
func setData(v string) func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		if live == nil {
			live = cm("ns", "", nil)
		}
		live.Object["data"] = map[string]any{"k": v}
		return live, nil
	}
}

// TestMutateUpdatesUnderTheLock checks that a Mutation sees the stored object (a copy), writes
// one MODIFIED with the next revision, is a no-op when nothing changes, and is recorded and
// failed under its verb.
func TestMutateUpdatesUnderTheLock(t *testing.T) {
	s, _ := newTestServer(t, nil)
	created := mustCreate(t, s, cmGVR, cm("ns", "a", nil))
	w, err := s.OpenWatch(cmGVR, "ns", metav1.ListOptions{ResourceVersion: created.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	rc := s.Resource(cmGVR).Namespace("ns")
	var seen *unstructured.Unstructured
	out, wasCreated, err := rc.Mutate(bg, "a", Mutation{Verb: VerbPatch, Compute: func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		seen = live.DeepCopy()
		live.Object["data"] = map[string]any{"k": "w"}
		return live, nil
	}})
	if err != nil || wasCreated {
		t.Fatalf("Mutate: %v created=%v", err, wasCreated)
	}
	if seen.GetResourceVersion() != created.GetResourceVersion() || seen.Object["data"].(map[string]any)["k"] != "v" {
		t.Errorf("Compute saw %v, want the stored object %v", seen.Object, created.Object)
	}
	if got, want := out.GetResourceVersion(), "3"; got != want {
		t.Errorf("resourceVersion %s, want %s", got, want)
	}
	ev, ok := w.Next()
	if !ok || ev.Type != watch.Modified || ev.Object.(*unstructured.Unstructured).Object["data"].(map[string]any)["k"] != "w" {
		t.Errorf("event %v %v, want MODIFIED with k=w", ev.Type, ev.Object)
	}
	// The same content again: a no-op, no revision.
	if _, _, err := rc.Mutate(bg, "a", Mutation{Verb: VerbPatch, Compute: setData("w")}); err != nil {
		t.Fatal(err)
	}
	if got := s.Revision(); got != 3 {
		t.Errorf("revision %d after a no-op mutation, want 3", got)
	}
	// An injected failure of the verb is taken before Compute runs.
	s.Faults().FailNext(VerbPatch, apierrors.NewServiceUnavailable("injected"))
	called := false
	_, _, err = rc.Mutate(bg, "a", Mutation{Verb: VerbPatch, Compute: func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		called = true
		return live, nil
	}})
	wantStatus(t, err, 503, metav1.StatusReasonServiceUnavailable)
	if called {
		t.Error("Compute ran for a request that failed by injection")
	}
	recs := s.Requests()
	last := recs[len(recs)-1]
	if last.Verb != VerbPatch || last.Name != "a" || last.Code != 503 {
		t.Errorf("last record %+v, want the failed patch of a", last)
	}
}

func TestMutateErrors(t *testing.T) {
	s, _ := newTestServer(t, nil)
	mustCreate(t, s, cmGVR, cm("ns", "a", nil))
	mustCreate(t, s, podsGVR, obj("Pod", "ns", "p", nil))
	rc := s.Resource(cmGVR).Namespace("ns")
	rename := func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		live.SetName("b")
		return live, nil
	}
	staleRV := func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		live.SetResourceVersion("1")
		return live, nil
	}
	noRV := func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		live.Object["data"] = map[string]any{"k": "changed"}
		delete(live.Object["metadata"].(map[string]any), "resourceVersion")
		return live, nil
	}
	fails := func(*unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return nil, apierrors.NewBadRequest("computed no")
	}
	tests := []struct {
		name   string
		target string
		m      Mutation
		code   int32
		reason metav1.StatusReason
	}{
		{"missing object", "nope", Mutation{Verb: VerbPatch, Compute: setData("x")}, 404, metav1.StatusReasonNotFound},
		{"renamed", "a", Mutation{Verb: VerbPatch, Compute: rename}, 400, metav1.StatusReasonBadRequest},
		{"stale resourceVersion", "a", Mutation{Verb: VerbPatch, Compute: staleRV}, 409, metav1.StatusReasonConflict},
		{"compute error", "a", Mutation{Verb: VerbPatch, Compute: fails}, 400, metav1.StatusReasonBadRequest},
		{"no status subresource", "a", Mutation{Verb: VerbPatch, Subresource: "status", Compute: setData("x")}, 404, metav1.StatusReasonNotFound},
		{"unknown subresource", "a", Mutation{Verb: VerbPatch, Subresource: "scale", Compute: setData("x")}, 404, metav1.StatusReasonNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := rc.Mutate(bg, tt.target, tt.m)
			wantStatus(t, err, tt.code, tt.reason)
		})
	}
	// An update's body without resourceVersion is unconditional for built-in kinds, as PUT.
	if _, _, err := rc.Mutate(bg, "a", Mutation{Verb: VerbUpdate, Compute: noRV}); err != nil {
		t.Errorf("unconditional update: %v", err)
	}
	// A /status write never creates.
	_, _, err := s.Resource(podsGVR).Namespace("ns").Mutate(bg, "q", Mutation{Verb: VerbPatch, Subresource: "status", Create: true, Compute: setData("x")})
	wantStatus(t, err, 404, metav1.StatusReasonNotFound)
	if _, _, err := rc.Mutate(bg, "a", Mutation{Verb: VerbGet, Compute: setData("x")}); err == nil {
		t.Error("Mutate accepted the verb get")
	}
	if _, _, err := rc.Mutate(bg, "a", Mutation{Verb: VerbPatch}); err == nil {
		t.Error("Mutate accepted a nil Compute")
	}
	if got := s.Revision(); got != 4 {
		t.Errorf("revision %d, want 4 (two creates, one update)", got)
	}
}

// TestMutateCreates checks the server-side apply path: a missing object is created by Compute
// from nil, with the server's system fields, once; a uid names an object that is not there.
func TestMutateCreates(t *testing.T) {
	s, _ := newTestServer(t, nil)
	rc := s.Resource(cmGVR).Namespace("ns")
	withUID := func(*unstructured.Unstructured) (*unstructured.Unstructured, error) {
		u := cm("ns", "u", nil)
		u.SetUID("0000")
		return u, nil
	}
	_, _, err := rc.Mutate(bg, "u", Mutation{Verb: VerbPatch, Create: true, Compute: withUID})
	wantStatus(t, err, 409, metav1.StatusReasonConflict)

	dry, wasCreated, err := rc.Mutate(bg, "a", Mutation{Verb: VerbPatch, Create: true, DryRun: true, Compute: setData("x")})
	if err != nil || !wasCreated || dry.GetName() != "a" {
		t.Fatalf("dry-run create: %v created=%v %v", err, wasCreated, dry)
	}
	if s.Revision() != 1 {
		t.Fatalf("a dry run stored something: revision %d", s.Revision())
	}
	withSystem := func(*unstructured.Unstructured) (*unstructured.Unstructured, error) {
		u := cm("ns", "", nil)
		u.SetResourceVersion("77")
		u.Object["metadata"].(map[string]any)["creationTimestamp"] = "1999-01-01T00:00:00Z"
		return u, nil
	}
	out, wasCreated, err := rc.Mutate(bg, "a", Mutation{Verb: VerbPatch, Create: true, Compute: withSystem})
	if err != nil || !wasCreated {
		t.Fatalf("create: %v created=%v", err, wasCreated)
	}
	if out.GetName() != "a" || out.GetResourceVersion() != "2" || out.GetUID() == "" || out.GetCreationTimestamp().Year() != 2000 {
		t.Errorf("created %v, want name a, rv 2, a uid and the server's creationTimestamp", out.Object["metadata"])
	}
	out, wasCreated, err = rc.Mutate(bg, "a", Mutation{Verb: VerbPatch, Create: true, Compute: setData("y")})
	if err != nil || wasCreated || out.GetResourceVersion() != "3" {
		t.Errorf("second mutation: %v created=%v rv=%s, want an update at 3", err, wasCreated, out.GetResourceVersion())
	}
	var se *apierrors.StatusError
	if _, _, err := rc.Mutate(bg, "b", Mutation{Verb: VerbPatch, Create: true, Compute: func(*unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return nil, nil
	}}); !errors.As(err, &se) || se.ErrStatus.Code != 500 {
		t.Errorf("Compute returning nil: %v, want a 500 Status", err)
	}
}

// TestMutateStatus checks that a status mutation changes only .status and a main-resource one
// keeps the stored .status (fakeapi.md §5.5).
func TestMutateStatus(t *testing.T) {
	s, _ := newTestServer(t, nil)
	p := obj("Pod", "ns", "p", nil)
	p.Object["spec"] = map[string]any{"nodeName": "n1"}
	mustCreate(t, s, podsGVR, p)
	rc := s.Resource(podsGVR).Namespace("ns")
	both := func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		live.Object["spec"] = map[string]any{"nodeName": "n2"}
		live.Object["status"] = map[string]any{"phase": "Running"}
		return live, nil
	}
	out, _, err := rc.Mutate(bg, "p", Mutation{Verb: VerbPatch, Subresource: "status", Compute: both})
	if err != nil {
		t.Fatal(err)
	}
	if out.Object["spec"].(map[string]any)["nodeName"] != "n1" || out.Object["status"].(map[string]any)["phase"] != "Running" {
		t.Errorf("status mutation wrote %v", out.Object)
	}
	out, _, err = rc.Mutate(bg, "p", Mutation{Verb: VerbPatch, Compute: func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		live.Object["spec"] = map[string]any{"nodeName": "n3"}
		live.Object["status"] = map[string]any{"phase": "Failed"}
		return live, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Object["spec"].(map[string]any)["nodeName"] != "n3" || out.Object["status"].(map[string]any)["phase"] != "Running" {
		t.Errorf("main mutation wrote %v", out.Object)
	}
}

// withData is a Mutation's Compute that only reads live: it returns a new object, live's
// content with data.k set to v.
func withData(v string) func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		out := live.DeepCopy()
		out.Object["data"] = map[string]any{"k": v}
		return out, nil
	}
}

// TestMutateLends checks Mutation.LendTo: Compute is handed the stored object itself and the
// answer is the committed version itself; a Compute that changes live is reported at once, one
// that returns it is refused with nothing written, a change to the answer is reported when the
// next write acts on it, and a dry run's answer is still a copy. Without LendTo the same changes
// reach nothing of the server.
func TestMutateLends(t *testing.T) {
	for _, row := range []struct {
		name  string
		check func(t *testing.T)
	}{
		{"lent, not copied", lentNotCopied},
		{"Compute changes live", lentComputeChangesLive},
		{"Compute returns live", lentComputeReturnsLive},
		{"the answer changed", lentAnswerChanged},
	} {
		t.Run(row.name, row.check)
	}

	for _, c := range []struct {
		name string
		m    Mutation
	}{
		{"dry run, lent", Mutation{Verb: VerbUpdate, LendTo: testLender, DryRun: true, Compute: withData("w")}},
		{"not lent", Mutation{Verb: VerbUpdate, Compute: setData("w")}},
	} {
		t.Run(c.name+": the answer is a copy", func(t *testing.T) {
			s, rc := lendingSetup(t)
			out, _, err := rc.Mutate(bg, "a", c.m)
			if err != nil {
				t.Fatal(err)
			}
			out.Object["data"].(map[string]any)["k"] = "scribbled"
			out.SetLabels(map[string]string{"x": "y"})
			if _, _, err := rc.Mutate(bg, "a", Mutation{Verb: VerbUpdate, LendTo: testLender, Compute: withData("x")}); err != nil {
				t.Fatal(err)
			}
			if err := s.Lending().Check(); err != nil {
				t.Errorf("a copy was changed, Lending.Check = %v", err)
			}
		})
	}
}

// testLender is the holder the lending tests lend objects to.
const testLender = "the front"

// lendingSetup is a server holding ConfigMap ns/a, and a client of its namespace.
func lendingSetup(t *testing.T) (*Server, *ResourceClient) {
	s, _ := newTestServer(t, nil)
	mustCreate(t, s, cmGVR, cm("ns", "a", nil))
	return s, s.Resource(cmGVR).Namespace("ns")
}

// lendingMutation is the mutation of a lent object the server has noticed, nil if none; another
// error from Lending.Mutation fails the test.
func lendingMutation(t *testing.T, s *Server) *MutationError {
	t.Helper()
	var me *MutationError
	if err := s.Lending().Mutation(); err != nil && !errors.As(err, &me) {
		t.Fatalf("Lending.Mutation = %v", err)
	}
	return me
}

// lentNotCopied: lent, not copied (a row of TestMutateLends).
func lentNotCopied(t *testing.T) {
	s, rc := lendingSetup(t)
	var lent *unstructured.Unstructured
	out, _, err := rc.Mutate(bg, "a", Mutation{Verb: VerbUpdate, LendTo: testLender, Compute: func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		lent = live
		return withData("w")(live)
	}})
	if err != nil {
		t.Fatal(err)
	}
	res, key, _ := rc.key("a")
	if got := s.current_locked(res, key); out != got {
		t.Error("the answer is not the committed version")
	}
	if lent.Object["data"].(map[string]any)["k"] != "v" || lent.GetResourceVersion() == out.GetResourceVersion() {
		t.Errorf("Compute saw %v, want the version before the write", lent.Object)
	}
	if err := s.Lending().Check(); err != nil {
		t.Errorf("nothing was changed, Lending.Check = %v", err)
	}
}

// lentComputeChangesLive: Compute changes live (a row of TestMutateLends).
func lentComputeChangesLive(t *testing.T) {
	s, rc := lendingSetup(t)
	before, _ := rc.Get(bg, "a", metav1.GetOptions{})
	_, _, err := rc.Mutate(bg, "a", Mutation{Verb: VerbUpdate, LendTo: testLender, Compute: func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		out, _ := withData("w")(live)
		live.Object["data"].(map[string]any)["k"] = "scribbled"
		return out, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := MutationError{Resource: "configmaps", Namespace: "ns", Name: "a", ResourceVersion: before.GetResourceVersion(), LentTo: testLender, Holders: []string{testLender}, NoticedBy: "the Mutation it was lent to"}
	if me := lendingMutation(t, s); me == nil || !cmp.Equal(*me, want) {
		t.Errorf("Lending.Mutation = %v, want %+v", me, want)
	}
}

// lentComputeReturnsLive: Compute returns live (a row of TestMutateLends).
func lentComputeReturnsLive(t *testing.T) {
	s, rc := lendingSetup(t)
	rev := s.Revision()
	_, _, err := rc.Mutate(bg, "a", Mutation{Verb: VerbUpdate, LendTo: testLender, Compute: func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return live, nil
	}})
	if !apierrors.IsInternalError(err) {
		t.Fatalf("Mutate = %v, want a 500", err)
	}
	if s.Revision() != rev {
		t.Error("the refused write moved the revision")
	}
	if me := lendingMutation(t, s); me != nil {
		t.Errorf("nothing was changed, Lending.Mutation = %v", me)
	}
}

// lentAnswerChanged: the answer changed (a row of TestMutateLends).
func lentAnswerChanged(t *testing.T) {
	s, rc := lendingSetup(t)
	out, _, err := rc.Mutate(bg, "a", Mutation{Verb: VerbUpdate, LendTo: testLender, Compute: withData("w")})
	if err != nil {
		t.Fatal(err)
	}
	out.Object["data"].(map[string]any)["k"] = "scribbled"
	if me := lendingMutation(t, s); me != nil {
		t.Fatalf("before any write: %v", me)
	}
	if _, _, err := rc.Mutate(bg, "a", Mutation{Verb: VerbUpdate, LendTo: testLender, Compute: withData("x")}); err != nil {
		t.Fatal(err)
	}
	want := MutationError{Resource: "configmaps", Namespace: "ns", Name: "a", ResourceVersion: out.GetResourceVersion(), LentTo: testLender, Holders: []string{testLender}, NoticedBy: "a write to it"}
	if me := lendingMutation(t, s); me == nil || !cmp.Equal(*me, want) {
		t.Errorf("Lending.Mutation = %v, want %+v", me, want)
	}
}

// TestCreateLent: CreateLent answers with the committed object itself, lent (a write into it is
// a MutationError naming the holder), except for a dry run, whose answer is a copy of nothing
// stored; an empty holder is refused before any request.
func TestCreateLent(t *testing.T) {
	const lender = "the front"
	s, _ := newTestServer(t, nil)
	rc := s.Resource(cmGVR).Namespace("ns")
	out, err := rc.CreateLent(bg, cm("ns", "a", nil), metav1.CreateOptions{}, lender)
	if err != nil {
		t.Fatal(err)
	}
	res, key, _ := rc.key("a")
	if got := s.current_locked(res, key); out != got {
		t.Fatal("the answer is not the committed version")
	}
	if err := s.Lending().Check(); err != nil {
		t.Fatalf("nothing was changed, Lending.Check = %v", err)
	}
	dry, err := rc.CreateLent(bg, cm("ns", "b", nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}, lender)
	if err != nil {
		t.Fatal(err)
	}
	dry.SetLabels(map[string]string{"changed": "yes"}) // a copy: nobody notices
	if err := s.Lending().Check(); err != nil {
		t.Fatalf("a dry run's answer was lent: %v", err)
	}
	out.SetLabels(map[string]string{"changed": "yes"})
	var me *MutationError
	if err := s.Lending().Check(); !errors.As(err, &me) || me.LentTo != lender || me.Name != "a" {
		t.Fatalf("a write into the lent answer: Lending.Check = %v", err)
	}
	n := len(s.Requests())
	if _, err := rc.CreateLent(bg, cm("ns", "c", nil), metav1.CreateOptions{}, ""); err == nil || len(s.Requests()) != n {
		t.Fatalf("an empty holder: %v, %d requests after %d", err, len(s.Requests()), n)
	}
}
