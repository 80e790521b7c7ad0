package fakeapi

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// TestCreateFillsSystemFields checks §5.1: uid, creationTimestamp from the injected clock,
// generation where tracked, resourceVersion from the global revision, apiVersion/kind defaults.
func TestCreateFillsSystemFields(t *testing.T) {
	s, _ := newTestServer(t, nil)
	d := obj("", "ns", "web", nil)
	d.Object["spec"] = map[string]any{"replicas": 3}
	got := mustCreate(t, s, depGVR, d)
	want := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"uid": got.GetUID() != "", "creationTimestamp": "2000-01-01T00:00:00Z",
		"generation": int64(1), "resourceVersion": "2", "replicas": int64(3),
	}
	have := map[string]any{
		"apiVersion": got.GetAPIVersion(), "kind": got.GetKind(),
		"uid": len(got.GetUID()) == 36, "creationTimestamp": got.Object["metadata"].(map[string]any)["creationTimestamp"],
		"generation": got.GetGeneration(), "resourceVersion": got.GetResourceVersion(), "replicas": got.Object["spec"].(map[string]any)["replicas"],
	}
	if diff := cmp.Diff(have, want); diff != "" {
		t.Errorf("created object (-got +want):\n%s", diff)
	}
	c := mustCreate(t, s, cmGVR, cm("ns", "c", nil))
	if _, has := c.Object["metadata"].(map[string]any)["generation"]; has {
		t.Errorf("configmaps do not track generation: %v", c.Object["metadata"])
	}
}

func TestCreateErrors(t *testing.T) {
	s, _ := newTestServer(t, nil)
	mustCreate(t, s, cmGVR, cm("ns", "a", nil))
	withRV := cm("ns", "b", nil)
	withRV.SetResourceVersion("5")
	badLabel := cm("ns", "c", map[string]string{"-x": "y"})
	tests := []struct {
		name   string
		ns     string
		in     *unstructured.Unstructured
		code   int32
		reason metav1.StatusReason
	}{
		{"already exists", "ns", cm("ns", "a", nil), 409, metav1.StatusReasonAlreadyExists},
		{"resourceVersion set", "ns", withRV, 400, metav1.StatusReasonBadRequest},
		{"invalid name", "ns", cm("ns", "Not_Valid", nil), 422, metav1.StatusReasonInvalid},
		{"no name nor generateName", "ns", cm("ns", "", nil), 422, metav1.StatusReasonInvalid},
		{"invalid label key", "ns", badLabel, 422, metav1.StatusReasonInvalid},
		{"namespace mismatch", "other", cm("ns", "d", nil), 400, metav1.StatusReasonBadRequest},
		{"wrong kind", "ns", obj("Pod", "ns", "e", nil), 400, metav1.StatusReasonBadRequest},
		{"nil object", "ns", nil, 400, metav1.StatusReasonBadRequest},
		{"unsupported value type", "ns", &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "f"}, "x": struct{}{}}}, 400, metav1.StatusReasonBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Resource(cmGVR).Namespace(tt.ns).Create(bg, tt.in, metav1.CreateOptions{})
			wantStatus(t, err, tt.code, tt.reason)
		})
	}
	if got, want := s.Revision(), uint64(2); got != want {
		t.Errorf("revision %d after failed creates, want %d", got, want)
	}
}

// TestUpdateSemantics checks §5.2 and §5.5: system fields kept, generation bumps on spec changes
// only, the status subresource, unconditional updates, UID preconditions and 404.
func TestUpdateSemantics(t *testing.T) {
	s, _ := newTestServer(t, nil)
	d := obj("Deployment", "ns", "web", nil)
	d.SetAPIVersion("apps/v1")
	d.Object["spec"] = map[string]any{"replicas": int64(1)}
	cur := mustCreate(t, s, depGVR, d)
	rc := s.Resource(depGVR).Namespace("ns")

	next := cur.DeepCopy()
	next.SetLabels(map[string]string{"a": "b"})
	next.Object["status"] = map[string]any{"ready": int64(1)} // ignored on the main resource
	cur = mustUpdate(t, s, depGVR, next)
	if cur.GetGeneration() != 1 || cur.Object["status"] != nil {
		t.Errorf("label change: generation %d status %v, want 1 and none", cur.GetGeneration(), cur.Object["status"])
	}
	next = cur.DeepCopy()
	next.Object["spec"] = map[string]any{"replicas": int64(2)}
	next.SetResourceVersion("") // unconditional
	unstructured.RemoveNestedField(next.Object, "metadata", "uid")
	cur = mustUpdate(t, s, depGVR, next)
	if cur.GetGeneration() != 2 || cur.GetUID() == "" {
		t.Errorf("spec change: generation %d uid %q, want 2 and kept", cur.GetGeneration(), cur.GetUID())
	}
	st := cur.DeepCopy()
	st.Object["status"] = map[string]any{"ready": int64(2)}
	st.Object["spec"] = map[string]any{"replicas": int64(9)} // ignored by /status
	got, err := rc.UpdateStatus(bg, st, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetGeneration() != 2 || got.Object["spec"].(map[string]any)["replicas"] != int64(2) || got.Object["status"] == nil {
		t.Errorf("status update changed more than .status: %v", got.Object)
	}
	wrongUID := got.DeepCopy()
	wrongUID.SetUID(types.UID("00000000-0000-4000-8000-000000000000"))
	_, err = rc.Update(bg, wrongUID, metav1.UpdateOptions{})
	wantStatus(t, err, 409, metav1.StatusReasonConflict)
	missing := got.DeepCopy()
	missing.SetName("nope")
	_, err = rc.Update(bg, missing, metav1.UpdateOptions{})
	wantStatus(t, err, 404, metav1.StatusReasonNotFound)
	setDel := got.DeepCopy()
	unstructured.SetNestedField(setDel.Object, "2000-01-01T00:00:00Z", "metadata", "deletionTimestamp")
	_, err = rc.Update(bg, setDel, metav1.UpdateOptions{})
	wantStatus(t, err, 422, metav1.StatusReasonInvalid)
}

func TestUpdateRequiresResourceVersionForCustomResources(t *testing.T) {
	widgets := Resource{GVR: depGVR, Kind: "Deployment", Namespaced: true, RequireResourceVersion: true}
	s, _ := newTestServer(t, func(c *Config) { c.Resources = []Resource{widgets} })
	cur := mustCreate(t, s, depGVR, obj("Deployment", "ns", "w", nil))
	cur.SetResourceVersion("")
	_, err := s.Resource(depGVR).Namespace("ns").Update(bg, cur, metav1.UpdateOptions{})
	se := wantStatus(t, err, 422, metav1.StatusReasonInvalid)
	// fakeapi.md §5.2 "Empty RV": the registry's Update names the resource (not the kind) and
	// the parsed RV, a uint64 0.
	want := `deployments.apps "w" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`
	if got := se.ErrStatus.Message; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if got, want := se.ErrStatus.Details.Kind, "deployments"; got != want {
		t.Errorf("details kind %q, want %q", got, want)
	}
}

// TestDeleteSemantics checks §5.3: preconditions, propagation finalizers, pods' graceful delete.
func TestDeleteSemantics(t *testing.T) {
	s, _ := newTestServer(t, nil)
	a := mustCreate(t, s, cmGVR, cm("ns", "a", nil))
	rc := s.Resource(cmGVR).Namespace("ns")
	err := rc.Delete(bg, "a", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: ptr("99")}})
	wantStatus(t, err, 409, metav1.StatusReasonConflict)
	err = rc.Delete(bg, "a", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr(types.UID("x"))}})
	wantStatus(t, err, 409, metav1.StatusReasonConflict)
	orphan := metav1.DeletePropagationOrphan
	if err := rc.Delete(bg, "a", metav1.DeleteOptions{PropagationPolicy: &orphan, Preconditions: &metav1.Preconditions{UID: ptr(a.GetUID())}}); err != nil {
		t.Fatal(err)
	}
	got, _ := rc.Get(bg, "a", metav1.GetOptions{})
	if diff := cmp.Diff(got.GetFinalizers(), []string{metav1.FinalizerOrphanDependents}); diff != "" || got.GetDeletionTimestamp() == nil {
		t.Errorf("orphan delete: finalizers (-got +want) %s deletionTimestamp %v", diff, got.GetDeletionTimestamp())
	}
	err = s.Resource(cmGVR).Namespace("ns").Delete(bg, "zzz", metav1.DeleteOptions{})
	wantStatus(t, err, 404, metav1.StatusReasonNotFound)

	// Pods: a scheduled pod waits for its grace period; a second delete with grace 0 removes it.
	p := obj("Pod", "ns", "p", nil)
	p.Object["spec"] = map[string]any{"nodeName": "n1", "terminationGracePeriodSeconds": int64(10)}
	created := mustCreate(t, s, podsGVR, p)
	w := mustWatch(t, s, podsGVR, "ns", metav1.ListOptions{ResourceVersion: created.GetResourceVersion()})
	pc := s.Resource(podsGVR).Namespace("ns")
	if err := pc.Delete(bg, "p", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got, _ = pc.Get(bg, "p", metav1.GetOptions{})
	if ts := got.GetDeletionTimestamp(); ts == nil || !ts.Time.Equal(epoch.Add(10*time.Second)) {
		t.Errorf("deletionTimestamp %v, want now+10s", ts)
	}
	if err := pc.Delete(bg, "p", metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))}); err != nil {
		t.Fatal(err)
	}
	// fakeapi.md §5.3 "Graceful deletion": the grace-0 delete first stores the shortened grace
	// period (rest.BeforeDelete, then the registry's update), then deletes.
	if diff := cmp.Diff(drain(w), []string{"MODIFIED ns/p 5", "MODIFIED ns/p 6", "DELETED ns/p 7"}); diff != "" {
		t.Errorf("events (-got +want):\n%s", diff)
	}
}

// TestGracefulDeleteRows checks the graceful-deletion rows of fakeapi.md §5.3 against the
// apiserver's rest.BeforeDelete, the pod strategy's CheckGracefulDelete and the registry's
// Delete: every pod delete first stores deletionTimestamp and deletionGracePeriodSeconds (one
// MODIFIED), and only a grace period of 0 without finalizers then deletes (DELETED carrying the
// MODIFIED state). A later delete may only shorten the grace period. Method: one pod per row, a
// watch from its creation, the events and the stored deletion fields compared.
func TestGracefulDeleteRows(t *testing.T) {
	type row struct {
		name       string
		spec       map[string]any
		phase      string
		finalizers []string
		deletes    []*int64 // grace of each delete; nil: the default
		advance    time.Duration
		want       []string
		wantTS     time.Duration // deletionTimestamp - epoch, when the pod remains
		wantGrace  int64
	}
	rows := []row{
		// CheckGracefulDelete gives an unscheduled pod grace 0, but BeforeDelete still stores it.
		{name: "unscheduled pod: grace 0", spec: map[string]any{},
			deletes: []*int64{nil}, want: []string{"MODIFIED ns/p 3", "DELETED ns/p 4"}},
		{name: "terminated pod on a node: grace 0", spec: map[string]any{"nodeName": "n1"}, phase: "Succeeded",
			deletes: []*int64{nil}, want: []string{"MODIFIED ns/p 3", "DELETED ns/p 4"}},
		{name: "scheduled pod: default grace 30", spec: map[string]any{"nodeName": "n1"},
			deletes: []*int64{nil}, want: []string{"MODIFIED ns/p 3"}, wantTS: 30 * time.Second, wantGrace: 30},
		{name: "negative grace counts as 1", spec: map[string]any{"nodeName": "n1"},
			deletes: []*int64{ptr(int64(-5))}, want: []string{"MODIFIED ns/p 3"}, wantTS: time.Second, wantGrace: 1},
		{name: "a second delete shortens the grace period", spec: map[string]any{"nodeName": "n1", "terminationGracePeriodSeconds": int64(10)},
			deletes: []*int64{nil, ptr(int64(4))}, advance: 2 * time.Second,
			want: []string{"MODIFIED ns/p 3", "MODIFIED ns/p 4"}, wantTS: 4 * time.Second, wantGrace: 4},
		{name: "a second delete cannot lengthen it", spec: map[string]any{"nodeName": "n1", "terminationGracePeriodSeconds": int64(10)},
			deletes: []*int64{nil, ptr(int64(20)), nil}, want: []string{"MODIFIED ns/p 3"}, wantTS: 10 * time.Second, wantGrace: 10},
		{name: "shortened past now: deletionTimestamp is now, grace 1", spec: map[string]any{"nodeName": "n1", "terminationGracePeriodSeconds": int64(10)},
			deletes: []*int64{nil, ptr(int64(3))}, advance: 8 * time.Second,
			want: []string{"MODIFIED ns/p 3", "MODIFIED ns/p 4"}, wantTS: 8 * time.Second, wantGrace: 1},
		{name: "finalizer: grace 0 is stored and the pod stays", spec: map[string]any{"nodeName": "n1"}, finalizers: []string{"example.com/f"},
			deletes: []*int64{nil, ptr(int64(0))}, want: []string{"MODIFIED ns/p 3", "MODIFIED ns/p 4"}, wantGrace: 0},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			s, clk := newTestServer(t, nil)
			p := obj("Pod", "ns", "p", nil)
			p.Object["spec"] = r.spec
			p.SetFinalizers(r.finalizers)
			created := mustCreate(t, s, podsGVR, p)
			if r.phase != "" {
				created.Object["status"] = map[string]any{"phase": r.phase}
				if _, err := s.Resource(podsGVR).Namespace("ns").UpdateStatus(bg, created, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			w := mustWatch(t, s, podsGVR, "ns", metav1.ListOptions{ResourceVersion: s.revisionString()})
			pc := s.Resource(podsGVR).Namespace("ns")
			for i, g := range r.deletes {
				if i == 1 {
					clk.Step(r.advance)
				}
				if err := pc.Delete(bg, "p", metav1.DeleteOptions{GracePeriodSeconds: g}); err != nil {
					t.Fatalf("delete %d: %v", i, err)
				}
			}
			got := drain(w)
			if r.phase != "" {
				got = renumber(got, -1) // the status write took a revision
			}
			if diff := cmp.Diff(got, r.want); diff != "" {
				t.Errorf("events (-got +want):\n%s", diff)
			}
			cur, err := pc.Get(bg, "p", metav1.GetOptions{})
			if strings.HasPrefix(r.want[len(r.want)-1], "DELETED") {
				wantStatus(t, err, 404, metav1.StatusReasonNotFound)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ts := cur.GetDeletionTimestamp(); ts == nil || !ts.Time.Equal(epoch.Add(r.wantTS)) {
				t.Errorf("deletionTimestamp %v, want epoch+%v", ts, r.wantTS)
			}
			if g := cur.GetDeletionGracePeriodSeconds(); g == nil || *g != r.wantGrace {
				t.Errorf("deletionGracePeriodSeconds %v, want %d", g, r.wantGrace)
			}
			if len(r.finalizers) > 0 {
				cur.SetFinalizers(nil)
				mustUpdate(t, s, podsGVR, cur)
				if got := drain(w); len(got) != 1 || !strings.HasPrefix(got[0], "DELETED") {
					t.Errorf("finalizer removal after a grace-0 delete: events %v, want one DELETED", got)
				}
			}
		})
	}
}

// TestDeleteUnscheduledPodIsGraceful checks fakeapi.md §5.3 "Graceful deletion" for a pod that
// is not scheduled: the pod strategy's CheckGracefulDelete gives it grace 0, yet rest.BeforeDelete
// still stores deletionTimestamp (now) and deletionGracePeriodSeconds=0 first (MODIFIED), and the
// registry deletes it at the next revision (DELETED carrying that state). A configmap has no
// graceful deletion, so the §5.3 "without finalizers" row removes it in one DELETED. Method: a
// watch from the creations, one default delete each, the events and their objects compared.
func TestDeleteUnscheduledPodIsGraceful(t *testing.T) {
	s, _ := newTestServer(t, nil)
	mustCreate(t, s, podsGVR, obj("Pod", "ns", "p", nil))
	mustCreate(t, s, cmGVR, cm("ns", "c", nil))
	from := metav1.ListOptions{ResourceVersion: s.revisionString()}
	pods, cms := mustWatch(t, s, podsGVR, "ns", from), mustWatch(t, s, cmGVR, "ns", from)
	mustDelete(t, s, podsGVR, "ns", "p")
	mustDelete(t, s, cmGVR, "ns", "c")

	// describe renders an event with the deletion fields of its object.
	describe := func(w *Watcher) []string {
		var out []string
		for ev, ok := w.Next(); ok; ev, ok = w.Next() {
			u := ev.Object.(*unstructured.Unstructured)
			ts, grace := "<nil>", "<nil>"
			if d := u.GetDeletionTimestamp(); d != nil {
				ts = d.UTC().Format(time.RFC3339)
			}
			if g := u.GetDeletionGracePeriodSeconds(); g != nil {
				grace = strconv.FormatInt(*g, 10)
			}
			out = append(out, fmt.Sprintf("%s %s rv=%s deletionTimestamp=%s grace=%s", ev.Type, u.GetName(), u.GetResourceVersion(), ts, grace))
		}
		return out
	}
	wantPod := []string{
		"MODIFIED p rv=4 deletionTimestamp=2000-01-01T00:00:00Z grace=0",
		"DELETED p rv=5 deletionTimestamp=2000-01-01T00:00:00Z grace=0",
	}
	if diff := cmp.Diff(describe(pods), wantPod); diff != "" {
		t.Errorf("unscheduled pod delete (-got +want):\n%s", diff)
	}
	wantCM := []string{"DELETED c rv=6 deletionTimestamp=<nil> grace=<nil>"}
	if diff := cmp.Diff(describe(cms), wantCM); diff != "" {
		t.Errorf("configmap delete (-got +want):\n%s", diff)
	}
}

// renumber shifts the RV at the end of each rendered event by d.
func renumber(evs []string, d int) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		j := strings.LastIndexByte(e, ' ')
		n, _ := strconv.Atoi(e[j+1:])
		out[i] = e[:j+1] + strconv.Itoa(n+d)
	}
	return out
}

// TestPatch checks §5.4: merge and JSON patches are one read-modify-write with at most one event;
// a pinned stale RV conflicts; strategic merge and apply are 405.
func TestPatch(t *testing.T) {
	s, _ := newTestServer(t, nil)
	a := mustCreate(t, s, cmGVR, cm("ns", "a", nil))
	rc := s.Resource(cmGVR).Namespace("ns")
	w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: a.GetResourceVersion()})
	got, err := rc.Patch(bg, "a", types.MergePatchType, []byte(`{"data":{"k":null,"n":"1"},"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got.Object["data"], map[string]any{"n": "1"}); diff != "" || got.GetLabels()["x"] != "y" {
		t.Errorf("merge patch data (-got +want) %s labels %v", diff, got.GetLabels())
	}
	got, err = rc.Patch(bg, "a", types.JSONPatchType, []byte(`[{"op":"test","path":"/data/n","value":"1"},{"op":"add","path":"/data/list","value":[1,2]},{"op":"add","path":"/data/list/1","value":3},{"op":"remove","path":"/data/list/0"},{"op":"copy","from":"/data/n","path":"/data/m"},{"op":"move","from":"/data/m","path":"/data/o"},{"op":"replace","path":"/data/n","value":"2"}]`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got.Object["data"], map[string]any{"n": "2", "o": "1", "list": []any{int64(3), int64(2)}}); diff != "" {
		t.Errorf("json patch data (-got +want):\n%s", diff)
	}
	if _, err := rc.Patch(bg, "a", types.MergePatchType, []byte(`{"data":{"n":"2"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = rc.Patch(bg, "a", types.JSONPatchType, []byte(`[{"op":"test","path":"/data/n","value":"9"}]`), metav1.PatchOptions{})
	wantStatus(t, err, 422, metav1.StatusReasonInvalid)
	// kube-apiserver's message, plus the cause it leaves out (fakeapi.md §5.4).
	if st := apierrors.APIStatus(nil); !errors.As(err, &st) || st.Status().Details == nil || len(st.Status().Details.Causes) != 1 ||
		st.Status().Details.Causes[0].Message != "testing value /data/n failed" ||
		st.Status().Message != "the server rejected our request due to an error in our request (patch configmaps a)" {
		t.Errorf("failed JSON patch: %#v, want kube-apiserver's message and the cause %q", err, "testing value /data/n failed")
	}
	_, err = rc.Patch(bg, "a", types.MergePatchType, []byte(`{"metadata":{"resourceVersion":"2"}}`), metav1.PatchOptions{})
	wantStatus(t, err, 409, metav1.StatusReasonConflict)
	_, err = rc.Patch(bg, "a", types.MergePatchType, []byte(`{`), metav1.PatchOptions{})
	wantStatus(t, err, 400, metav1.StatusReasonBadRequest)
	_, err = rc.Patch(bg, "a", types.StrategicMergePatchType, []byte(`{}`), metav1.PatchOptions{})
	wantStatus(t, err, 405, metav1.StatusReasonMethodNotAllowed)
	_, err = rc.Apply(bg, "a", cm("ns", "a", nil), metav1.ApplyOptions{})
	wantStatus(t, err, 405, metav1.StatusReasonMethodNotAllowed)
	_, err = rc.ApplyStatus(bg, "a", cm("ns", "a", nil), metav1.ApplyOptions{})
	wantStatus(t, err, 405, metav1.StatusReasonMethodNotAllowed)
	if diff := cmp.Diff(drain(w), []string{"MODIFIED ns/a 3", "MODIFIED ns/a 4"}); diff != "" {
		t.Errorf("events (-got +want; the no-op patch emits nothing):\n%s", diff)
	}
}

func TestDeleteCollectionAndClusterScope(t *testing.T) {
	s, _ := newTestServer(t, nil)
	for _, n := range []string{"a", "b", "c"} {
		mustCreate(t, s, cmGVR, cm("ns", n, map[string]string{"del": map[bool]string{true: "y", false: "n"}[n != "b"]}))
	}
	if err := s.Resource(cmGVR).Namespace("ns").DeleteCollection(bg, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "del=y"}); err != nil {
		t.Fatal(err)
	}
	l, _ := s.list(cmGVR, "", metav1.ListOptions{})
	if got, want := names(l), "b@3"; got != want {
		t.Errorf("after delete collection %s, want %s", got, want)
	}
	n := mustCreate(t, s, nodeGVR, obj("Node", "ignored", "n1", nil))
	if n.GetNamespace() != "" {
		t.Errorf("cluster-scoped object has namespace %q", n.GetNamespace())
	}
	if _, err := s.Resource(nodeGVR).Get(bg, "n1", metav1.GetOptions{}); err != nil {
		t.Errorf("get node: %v", err)
	}
	if _, err := s.Resource(cmGVR).Namespace("ns").Get(bg, "b", metav1.GetOptions{}, "scale"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("unknown subresource: %v, want 404", err)
	}
}

// TestPatchCopyBomb checks the copy-size limit: doubling the document with repeated whole-document
// copies is refused with 422 instead of exhausting memory (found by FuzzListWatchOptions).
func TestPatchCopyBomb(t *testing.T) {
	s, _ := newTestServer(t, nil)
	mustCreate(t, s, cmGVR, cm("ns", "a", nil))
	ops := "["
	for i := 0; i < 40; i++ {
		if i > 0 {
			ops += ","
		}
		ops += `{"op":"copy","from":"/data","path":"/data/d` + strings.Repeat("x", i%3) + `"}`
	}
	ops += "]"
	_, err := s.Resource(cmGVR).Namespace("ns").Patch(bg, "a", types.JSONPatchType, []byte(ops), metav1.PatchOptions{})
	wantStatus(t, err, 422, metav1.StatusReasonInvalid)
}

// TestLastFinalizerRemovalDeletesStoredState checks fakeapi.md §5.2 row "removes the last
// finalizer" with MH-10: the update that empties the finalizers of a terminating object is never
// stored; the server deletes the stored object instead (registry ShouldDeleteDuringUpdate, then a
// storage delete), so the DELETED event carries the last stored state, finalizer and all, at the
// deletion revision. The caller gets the object it sent back. Method: watch, remove the finalizer
// and add a label in one update, and compare the event's content with the stored state.
func TestLastFinalizerRemovalDeletesStoredState(t *testing.T) {
	s, _ := newTestServer(t, nil)
	c := cm("ns", "f", nil)
	c.SetFinalizers([]string{"example.com/f"})
	created := mustCreate(t, s, cmGVR, c)
	w := mustWatch(t, s, cmGVR, "ns", metav1.ListOptions{ResourceVersion: created.GetResourceVersion()})
	rc := s.Resource(cmGVR).Namespace("ns")
	if err := rc.Delete(bg, "f", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	terminating, _ := rc.Get(bg, "f", metav1.GetOptions{})
	next := terminating.DeepCopy()
	next.SetFinalizers(nil)
	next.SetLabels(map[string]string{"late": "edit"})
	got := mustUpdate(t, s, cmGVR, next)
	if len(got.GetFinalizers()) != 0 || got.GetLabels()["late"] != "edit" {
		t.Errorf("update returned finalizers %v labels %v, want the sent object", got.GetFinalizers(), got.GetLabels())
	}
	if diff := cmp.Diff(drain(w), []string{"MODIFIED ns/f 3", "DELETED ns/f 4"}); diff != "" {
		t.Errorf("events (-got +want):\n%s", diff)
	}
	// Re-watch to read the DELETED object itself.
	w2 := mustWatch(t, s, cmGVR, "ns", metav1.ListOptions{ResourceVersion: "3"})
	del, ok := w2.Next()
	if !ok {
		t.Fatal("no DELETED event on re-watch")
	}
	want := terminating.DeepCopy()
	want.SetResourceVersion("4")
	if diff := cmp.Diff(del.Object.(*unstructured.Unstructured).Object, want.Object); diff != "" {
		t.Errorf("DELETED object is not the last stored state at the deletion revision (-got +want):\n%s", diff)
	}
}

// TestCreateRVAndUpdateRVAreCreateAndUpdate runs one sequence of writes (generateName, dry
// runs, a /status write, a conflict, a no-op, the update that deletes a terminating object by
// removing its last finalizer, errors) against two servers with the same seed, one through
// Create and Update, one through CreateRV and UpdateRV: the same answers (names,
// resourceVersions, errors), the same records and the same watch events.
func TestCreateRVAndUpdateRVAreCreateAndUpdate(t *testing.T) {
	wantA, wantR, wantE := rvWriteSequence(t, false)
	gotA, gotR, gotE := rvWriteSequence(t, true)
	if !reflect.DeepEqual(gotA, wantA) {
		t.Errorf("answers:\n got %v\nwant %v", gotA, wantA)
	}
	if !reflect.DeepEqual(gotR, wantR) {
		t.Errorf("records:\n got %v\nwant %v", gotR, wantR)
	}
	if !reflect.DeepEqual(gotE, wantE) {
		t.Errorf("watch events:\n got %v\nwant %v", gotE, wantE)
	}
	if len(wantA) != 12 || wantA[1].name == "" || wantA[3].err == "" || wantA[5].err == "" {
		t.Fatalf("the sequence did not go as planned: %v", wantA)
	}
}

// rvAnswer is what one write of rvWriteSequence answered: the name, the resourceVersion and the
// error's text.
type rvAnswer struct {
	name, rv, err string
}

// rvWriter writes pods through Create and Update, or through CreateRV and UpdateRV (rvOnly),
// keeping each answer in the form both give.
type rvWriter struct {
	pods    *ResourceClient
	rvOnly  bool
	answers []rvAnswer
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func (w *rvWriter) create(u *unstructured.Unstructured, opts metav1.CreateOptions) {
	if w.rvOnly {
		name, rv, err := w.pods.CreateRV(bg, u, opts)
		w.answers = append(w.answers, rvAnswer{name, rv, errText(err)})
		return
	}
	out, err := w.pods.Create(bg, u, opts)
	a := rvAnswer{err: errText(err)}
	if out != nil {
		a.name, a.rv = out.GetName(), out.GetResourceVersion()
	}
	w.answers = append(w.answers, a)
}

func (w *rvWriter) update(u *unstructured.Unstructured, opts metav1.UpdateOptions, sub ...string) {
	if w.rvOnly {
		rv, err := w.pods.UpdateRV(bg, u, opts, sub...)
		w.answers = append(w.answers, rvAnswer{rv: rv, err: errText(err)})
		return
	}
	out, err := w.pods.Update(bg, u, opts, sub...)
	a := rvAnswer{err: errText(err)}
	if out != nil {
		a.rv = out.GetResourceVersion()
	}
	w.answers = append(w.answers, a)
}

// rvPod is a pod of namespace ns for rvWriteSequence.
func rvPod(name string, labels map[string]string) *unstructured.Unstructured {
	u := obj("Pod", "ns", name, labels)
	u.SetAPIVersion("v1")
	return u
}

// rvWriteSequence makes TestCreateRVAndUpdateRVAreCreateAndUpdate's writes on a new server, and
// returns their answers, the server's request records and its watch events, read after draining
// a watch opened at the start.
func rvWriteSequence(t *testing.T, rvOnly bool) ([]rvAnswer, []RequestRecord, []WatchEvent) {
	s, _ := newTestServer(t, nil)
	watcher := mustWatch(t, s, podsGVR, "", metav1.ListOptions{ResourceVersion: "1"})
	w := &rvWriter{pods: s.Resource(podsGVR).Namespace("ns"), rvOnly: rvOnly}
	w.create(rvPod("a", map[string]string{"x": "1"}), metav1.CreateOptions{})
	gen := rvPod("", nil)
	gen.SetGenerateName("g-")
	w.create(gen, metav1.CreateOptions{})
	w.create(rvPod("dry", nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	w.create(rvPod("a", nil), metav1.CreateOptions{}) // already exists
	cur, err := w.pods.Get(bg, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	next := cur.DeepCopy()
	next.SetLabels(map[string]string{"x": "2"})
	w.update(next, metav1.UpdateOptions{})
	w.update(next, metav1.UpdateOptions{}) // conflict: the resourceVersion moved
	cur, _ = w.pods.Get(bg, "a", metav1.GetOptions{})
	w.update(cur.DeepCopy(), metav1.UpdateOptions{}) // no-op
	dry := cur.DeepCopy()
	dry.SetLabels(map[string]string{"x": "dry"})
	w.update(dry, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	st := cur.DeepCopy()
	st.Object["status"] = map[string]any{"phase": "Running"}
	w.update(st, metav1.UpdateOptions{}, "status")
	fin, _ := w.pods.Get(bg, "a", metav1.GetOptions{})
	fin = fin.DeepCopy()
	fin.SetFinalizers([]string{"example.com/f"})
	w.update(fin, metav1.UpdateOptions{})
	if err := w.pods.Delete(bg, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	marked, _ := w.pods.Get(bg, "a", metav1.GetOptions{})
	marked = marked.DeepCopy()
	marked.SetFinalizers(nil)
	w.update(marked, metav1.UpdateOptions{}) // deletes the object
	w.update(rvPod("missing", nil), metav1.UpdateOptions{})
	var events []WatchEvent
	for {
		if _, ok := watcher.Next(); !ok {
			break
		}
	}
	events = s.WatchEvents()
	return w.answers, s.Requests(), events
}

// TestCreationTimestampFollowsTheClock checks now_locked's kept timestamp: objects created within
// one second share its text, and every later second gets its own, as formatting each time would.
func TestCreationTimestampFollowsTheClock(t *testing.T) {
	s, clk := newTestServer(t, nil)
	for i, step := range []time.Duration{0, 400 * time.Millisecond, 700 * time.Millisecond, 0, 59 * time.Second, 24 * time.Hour} {
		clk.Step(step)
		u := mustCreate(t, s, cmGVR, cm("ns", "o-"+strconv.Itoa(i), nil))
		want := clk.Now().UTC().Format(time.RFC3339)
		if got, _, _ := unstructured.NestedString(u.Object, "metadata", "creationTimestamp"); got != want {
			t.Fatalf("object %d: creationTimestamp %q, want %q", i, got, want)
		}
	}
}

// Goal: an update validates every label, annotation and finalizer it changes, however much of
// the object it shares with the stored one (validateMeta skips only values that are the stored
// object's own). Method: from a stored config map with a valid label, annotation and finalizer,
// updates and merge patches that keep them pass, and each that adds or changes one to an
// invalid key or value (the others kept) is refused with 422, leaving the object unchanged.
func TestUpdateValidatesChangedMetadata(t *testing.T) {
	s, _ := newTestServer(t, nil)
	rc := s.Resource(cmGVR).Namespace("ns")
	base := cm("ns", "a", map[string]string{"app": "x"})
	base.SetAnnotations(map[string]string{"note": "y"})
	base.SetFinalizers([]string{"example.com/keep"})
	cur := mustCreate(t, s, cmGVR, base)
	same := cur.DeepCopy()
	same.Object["data"] = map[string]any{"k": "v"}
	cur, err := rc.Update(bg, same, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update keeping valid metadata: %v", err)
	}
	for _, c := range []struct {
		name   string
		change func(u *unstructured.Unstructured)
		patch  string
	}{
		{"label key", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"app": "x", "bad key": "v"}) }, `{"metadata":{"labels":{"bad key":"v"}}}`},
		{"label value", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"app": "not valid"}) }, `{"metadata":{"labels":{"app":"not valid"}}}`},
		{"annotation key", func(u *unstructured.Unstructured) { u.SetAnnotations(map[string]string{"note": "y", "-bad": "v"}) }, `{"metadata":{"annotations":{"-bad":"v"}}}`},
		{"finalizer", func(u *unstructured.Unstructured) { u.SetFinalizers([]string{"example.com/keep", "bad finalizer"}) }, `{"metadata":{"finalizers":["example.com/keep","bad finalizer"]}}`},
	} {
		u := cur.DeepCopy()
		c.change(u)
		_, err := rc.Update(bg, u, metav1.UpdateOptions{})
		wantStatus(t, err, 422, metav1.StatusReasonInvalid)
		_, err = rc.Patch(bg, "a", types.MergePatchType, []byte(c.patch), metav1.PatchOptions{})
		wantStatus(t, err, 422, metav1.StatusReasonInvalid)
		got, err := rc.Get(bg, "a", metav1.GetOptions{})
		if err != nil || got.GetResourceVersion() != cur.GetResourceVersion() {
			t.Fatalf("%s: the refused writes changed the object (%v, rv %s, want %s)", c.name, err, got.GetResourceVersion(), cur.GetResourceVersion())
		}
	}
	if _, err := rc.Patch(bg, "a", types.MergePatchType, []byte(`{"data":{"k":"w"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch keeping valid metadata: %v", err)
	}
}

// TestIsAPIVersion checks isAPIVersion against GroupVersion.String on every split of a few
// strings into a group and a version, and on the apiVersions near them.
func TestIsAPIVersion(t *testing.T) {
	avs := []string{"", "v1", "apps/v1", "apps.v1", "apps/v1beta1", "/v1", "apps/", "a/b/c", "appsv1", "apps/v2", "v1/", "x.io/v1"}
	for _, s := range []string{"v1", "apps/v1", "appsv1", "x.io/v1", "a/b/c", "/"} {
		for i := 0; i <= len(s); i++ {
			for _, gv := range []schema.GroupVersion{{Group: s[:i], Version: s[i:]}, {Version: s}, {Group: s}} {
				for _, av := range append(avs, s, gv.String()) {
					if got, want := isAPIVersion(av, gv), av == gv.String(); got != want {
						t.Fatalf("isAPIVersion(%q, %#v) = %v, want %v", av, gv, got, want)
					}
				}
			}
		}
	}
}
