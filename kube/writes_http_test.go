package kube

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/fakeapi/rest"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/watch"
	testclock "k8s.io/utils/clock/testing"
)

var widgets = fakeapi.Resource{
	GVR:  schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"},
	Kind: "Widget", Namespaced: true, Status: true, RequireResourceVersion: true,
}

// newFront is a fake apiserver (its clock at now) behind a REST front with RESTOptions.
func newFront(t testing.TB) (*fakeapi.Server, http.Handler) {
	t.Helper()
	srv, err := fakeapi.New(fakeapi.Config{Clock: testclock.NewFakeClock(now), Resources: []fakeapi.Resource{widgets}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := rest.NewHandler(srv, RESTOptions())
	if err != nil {
		t.Fatal(err)
	}
	return srv, h
}

type request struct {
	method, path, contentType, userAgent, body string
}

// send serves r and returns the code and the decoded JSON body.
func send(t testing.TB, h http.Handler, r request) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(r.method, r.path, strings.NewReader(r.body))
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	req.Header.Set("User-Agent", r.userAgent)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatalf("%s %s: %d, body not JSON: %s", r.method, r.path, w.Code, w.Body)
	}
	if w.Code >= 300 && m["kind"] != "Status" {
		t.Fatalf("%s %s: %d without a Status: %s", r.method, r.path, w.Code, w.Body)
	}
	return w.Code, m
}

func pathOf(u *unstructured.Unstructured) string {
	switch u.GetKind() {
	case "Deployment":
		return "/apis/apps/v1/namespaces/" + u.GetNamespace() + "/deployments/" + u.GetName()
	case "Pod":
		return "/api/v1/namespaces/" + u.GetNamespace() + "/pods/" + u.GetName()
	}
	return "/api/v1/namespaces/" + u.GetNamespace() + "/configmaps/" + u.GetName()
}

// defaulted is doc, an object of kind gvk in JSON, with kube-apiserver's defaults (defaults.go),
// as its Go type holds it (builtins.go).
func defaulted(t *testing.T, gvk schema.GroupVersionKind, doc string) string {
	t.Helper()
	m := mustJSON(t, doc)
	defaultBuiltin(gvk, m)
	typed, err := typedBuiltin(context.Background(), &rest.AdmitRequest{Write: rest.Write{GVK: gvk}, Object: &unstructured.Unstructured{Object: m}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(typed.Object)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// withoutServerFields drops what the server adds to a stored object, to compare contents.
func withoutServerFields(m map[string]any) map[string]any {
	md, _ := m["metadata"].(map[string]any)
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"} {
		delete(md, f)
	}
	return m
}

// TestStrategicMergePatchOverHTTP checks that a strategic merge patch sent to the REST front
// stores what strategicpatch.StrategicMergePatch computes from the stored object and the same
// patch with the kind's Go type, for every case of smpCases, and records its manager.
func TestStrategicMergePatchOverHTTP(t *testing.T) {
	for _, tc := range smpCases {
		t.Run(tc.name, func(t *testing.T) {
			_, h := newFront(t)
			u := &unstructured.Unstructured{Object: mustJSON(t, tc.original)}
			collection := strings.TrimSuffix(pathOf(u), "/"+u.GetName())
			if code, body := send(t, h, request{method: "POST", path: collection, contentType: "application/json", body: tc.original}); code != 201 {
				t.Fatalf("create: %d %v", code, body)
			}
			code, got := send(t, h, request{method: "PATCH", path: pathOf(u), contentType: "application/strategic-merge-patch+json", userAgent: "kubectl/v1.32.4 (linux/amd64)", body: tc.patch})
			if code != 200 {
				t.Fatalf("patch: %d %v", code, got)
			}
			managed := got["metadata"].(map[string]any)["managedFields"].([]any)
			// kube-apiserver defaults the object it stores on the create and on the patch.
			original := defaulted(t, u.GroupVersionKind(), tc.original)
			want, err := strategicpatch.StrategicMergePatch([]byte(original), []byte(tc.patch), tc.typed)
			if err != nil {
				t.Fatal(err)
			}
			want = withoutDollarKeys(t, want)
			if diff := cmp.Diff(mustJSON(t, defaulted(t, u.GroupVersionKind(), string(want))), withoutServerFields(got)); diff != "" {
				t.Errorf("stored (-apimachinery +served):\n%s", diff)
			}
			// The create and the patch each leave an Update manager of what they set: the
			// create, without User-Agent or fieldManager, as "unknown"; the patch as the
			// User-Agent's product (unless it only removed fields: then it owns nothing).
			seen := map[string]bool{}
			for _, e := range managed {
				e := e.(map[string]any)
				seen[e["manager"].(string)] = true
				if e["operation"] != "Update" || e["time"] != "2000-01-01T00:00:07Z" {
					t.Errorf("managedFields entry %v, want an Update at the server's time", e)
				}
			}
			if !seen["unknown"] || (!seen["kubectl"] && !strings.Contains(tc.name, "delete")) {
				t.Errorf("managers %v, want unknown (the create) and kubectl (the patch)", seen)
			}
		})
	}
}

// TestServerSideApplyOverHTTP: an apply creates (201), a second manager's conflicting apply is
// a 409 whose details list the conflict, force takes the field over, an update by another
// client becomes an Update manager, and apply needs a fieldManager; custom resources merge with
// a deduced schema and refuse strategic merge patch.
func TestServerSideApplyOverHTTP(t *testing.T) {
	srv, h := newFront(t)
	cm := "/api/v1/namespaces/ns/configmaps/c"
	applyYAML := "application/apply-patch+yaml"
	alice := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: ns\ndata:\n  k: \"1\"\n"
	code, created := send(t, h, request{method: "PATCH", path: cm + "?fieldManager=alice", contentType: applyYAML, body: alice})
	if code != 201 || created["data"].(map[string]any)["k"] != "1" {
		t.Fatalf("apply that creates: %d %v", code, created)
	}
	if code, _ := send(t, h, request{method: "PATCH", path: cm + "?fieldManager=alice", contentType: applyYAML, body: alice}); code != 200 {
		t.Fatalf("the same apply again: %d", code)
	}
	if srv.Revision() != 2 {
		t.Errorf("revision %d: the repeated apply was not a no-op", srv.Revision())
	}
	bob := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"2"}}`
	code, conflict := send(t, h, request{method: "PATCH", path: cm + "?fieldManager=bob", contentType: applyYAML, body: bob})
	causes, _ := conflict["details"].(map[string]any)["causes"].([]any)
	if code != 409 || conflict["reason"] != "Conflict" || len(causes) != 1 ||
		!cmp.Equal(causes[0], map[string]any{"reason": "FieldManagerConflict", "message": `conflict with "alice"`, "field": ".data.k"}) {
		t.Fatalf("conflicting apply: %d %v", code, conflict)
	}
	code, forced := send(t, h, request{method: "PATCH", path: cm + "?fieldManager=bob&force=true", contentType: applyYAML, body: bob})
	if code != 200 || forced["data"].(map[string]any)["k"] != "2" {
		t.Fatalf("forced apply: %d %v", code, forced)
	}
	// A plain update by a client without fieldManager: an Update manager named by its User-Agent.
	forced["data"].(map[string]any)["extra"] = "x"
	body, _ := json.Marshal(forced)
	code, updated := send(t, h, request{method: "PUT", path: cm, contentType: "application/json", userAgent: "my-controller/v2 (linux)", body: string(body)})
	if code != 200 {
		t.Fatalf("update: %d %v", code, updated)
	}
	got := map[string]string{}
	for _, e := range updated["metadata"].(map[string]any)["managedFields"].([]any) {
		e := e.(map[string]any)
		fields, _ := json.Marshal(e["fieldsV1"])
		got[e["manager"].(string)+"/"+e["operation"].(string)] = string(fields)
	}
	want := map[string]string{
		"bob/Apply":            `{"f:data":{"f:k":{}}}`,
		"my-controller/Update": `{"f:data":{"f:extra":{}}}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("managedFields (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name, query, ct, body string
		code                  int
	}{
		{"apply without fieldManager", "", applyYAML, bob, 422},
		{"force on a merge patch", "?fieldManager=x&force=true", "application/merge-patch+json", `{}`, 422},
		{"CBOR apply (an alpha feature of kube-apiserver)", "?fieldManager=x", "application/apply-patch+cbor", bob, 415},
		{"apply of another kind", "?fieldManager=x", applyYAML, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"c"}}`, 400},
		{"apply renaming", "?fieldManager=x", applyYAML, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d"}}`, 400},
	} {
		if code, st := send(t, h, request{method: "PATCH", path: cm + tc.query, contentType: tc.ct, body: tc.body}); code != tc.code {
			t.Errorf("%s: %d %v, want %d", tc.name, code, st, tc.code)
		}
	}

	// Custom resources: apply with a deduced schema (every field atomic), no strategic merge.
	w := "/apis/example.com/v1/namespaces/ns/widgets/w"
	if code, st := send(t, h, request{method: "PATCH", path: w + "?fieldManager=a", contentType: applyYAML, body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":1,"tags":["x"]}}`}); code != 201 {
		t.Fatalf("apply of a custom resource: %d %v", code, st)
	}
	code, st := send(t, h, request{method: "PATCH", path: w + "?fieldManager=b", contentType: applyYAML, body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":2}}`})
	if code != 409 {
		t.Errorf("conflicting apply of a custom resource: %d %v", code, st)
	}
	if code, st := send(t, h, request{method: "PATCH", path: w, contentType: "application/strategic-merge-patch+json", body: `{}`}); code != 415 {
		t.Errorf("strategic merge patch of a custom resource: %d %v", code, st)
	}
}

// TestFaultsReachPatchesAndApplies: a failure injected for patches answers a strategic merge
// patch and an apply as it answers a JSON patch, and their writes reach a watch as MODIFIED
// events, as any write does.
func TestFaultsReachPatchesAndApplies(t *testing.T) {
	srv, h := newFront(t)
	cm := "/api/v1/namespaces/ns/configmaps/c"
	if code, _ := send(t, h, request{method: "POST", path: "/api/v1/namespaces/ns/configmaps", contentType: "application/json", body: `{"metadata":{"name":"c"},"data":{"a":"1"}}`}); code != 201 {
		t.Fatal("create failed")
	}
	wt, err := srv.OpenWatch(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "ns", metav1.ListOptions{ResourceVersion: "2"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []request{
		{method: "PATCH", path: cm, contentType: "application/json-patch+json", body: `[{"op":"add","path":"/data/b","value":"2"}]`},
		{method: "PATCH", path: cm, contentType: "application/strategic-merge-patch+json", body: `{"data":{"c":"3"}}`},
		{method: "PATCH", path: cm + "?fieldManager=m", contentType: "application/apply-patch+yaml", body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"d":"4"}}`},
	} {
		srv.Faults().FailNext(fakeapi.VerbPatch, apierrors.NewServiceUnavailable("injected"))
		if code, st := send(t, h, r); code != 503 || st["message"] != "injected" {
			t.Errorf("%s with an injected failure: %d %v", r.contentType, code, st)
		}
		if code, st := send(t, h, r); code != 200 {
			t.Errorf("%s: %d %v", r.contentType, code, st)
		}
		ev, ok := wt.Next()
		if !ok || ev.Type != watch.Modified {
			t.Errorf("%s: event %v %v, want MODIFIED", r.contentType, ev.Type, ok)
		}
	}
}

// TestPatchesAndAppliesThroughReplicaLagAndCompaction: strategic merge patches and applies are
// ordinary revisions of the store: a frozen replica's watch receives them only when it resumes,
// in order, and once compacted they are gone for a watch that would resume before them (410), as
// for any write.
func TestPatchesAndAppliesThroughReplicaLagAndCompaction(t *testing.T) {
	srv, h := newFront(t)
	cm := "/api/v1/namespaces/ns/configmaps/c"
	if code, _ := send(t, h, request{method: "POST", path: "/api/v1/namespaces/ns/configmaps", contentType: "application/json", body: `{"metadata":{"name":"c"},"data":{"a":"1"}}`}); code != 201 {
		t.Fatal("create failed")
	}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	wt, err := srv.OpenWatch(gvr, "ns", metav1.ListOptions{ResourceVersion: "2"})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Replicas().Freeze(0); err != nil {
		t.Fatal(err)
	}
	if code, st := send(t, h, request{method: "PATCH", path: cm, contentType: "application/strategic-merge-patch+json", body: `{"data":{"b":"2"}}`}); code != 200 {
		t.Fatalf("patch: %d %v", code, st)
	}
	if code, st := send(t, h, request{method: "PATCH", path: cm + "?fieldManager=m", contentType: "application/apply-patch+yaml", body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"c":"3"}}`}); code != 200 {
		t.Fatalf("apply: %d %v", code, st)
	}
	if wt.Ready() {
		t.Fatal("a frozen replica's watch delivered a write")
	}
	if err := srv.Replicas().Resume(0); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"3", "4"} {
		ev, ok := wt.Next()
		if !ok || ev.Type != watch.Modified || ev.Object.(*unstructured.Unstructured).GetResourceVersion() != want {
			t.Fatalf("after the replica resumed: %v %v, want MODIFIED at %s", ev.Type, ok, want)
		}
	}
	if err := srv.Faults().Compact(srv.Revision()); err != nil {
		t.Fatal(err)
	}
	// As kube-apiserver: the watch opens, then ends with an ERROR event carrying the 410.
	old, err := srv.OpenWatch(gvr, "ns", metav1.ListOptions{ResourceVersion: "2"})
	if err != nil {
		t.Fatal(err)
	}
	ev, ok := old.Next()
	st, isStatus := ev.Object.(*metav1.Status)
	if !ok || ev.Type != watch.Error || !isStatus || st.Code != 410 {
		t.Errorf("a watch from before the compacted patches: %v %v, want an ERROR event with 410", ev.Type, ev.Object)
	}
}

// TestApplyForceFalseConflicts: force=false spelled out is no force. A conflicting apply with
// it answers 409 Conflict listing the conflict and changes nothing, as with force left out; the
// same apply with force=true takes the field.
func TestApplyForceFalseConflicts(t *testing.T) {
	srv, h := newFront(t)
	cm := "/api/v1/namespaces/ns/configmaps/c"
	applyYAML := "application/apply-patch+yaml"
	if code, st := send(t, h, request{method: "PATCH", path: cm + "?fieldManager=alice", contentType: applyYAML,
		body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"1"}}`}); code != 201 {
		t.Fatalf("apply that creates: %d %v", code, st)
	}
	before := srv.Revision()
	bob := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"2"}}`
	code, st := send(t, h, request{method: "PATCH", path: cm + "?fieldManager=bob&force=false", contentType: applyYAML, body: bob})
	causes, _ := st["details"].(map[string]any)["causes"].([]any)
	if code != 409 || st["reason"] != "Conflict" || len(causes) != 1 ||
		!cmp.Equal(causes[0], map[string]any{"reason": "FieldManagerConflict", "message": `conflict with "alice"`, "field": ".data.k"}) {
		t.Fatalf("apply with force=false in conflict: %d %v, want 409 Conflict naming .data.k", code, st)
	}
	if srv.Revision() != before {
		t.Errorf("the refused apply wrote: revision %d, was %d", srv.Revision(), before)
	}
	if code, got := send(t, h, request{method: "GET", path: cm}); code != 200 || got["data"].(map[string]any)["k"] != "1" {
		t.Errorf("after the refused apply: %d %v", code, got)
	}
	if code, got := send(t, h, request{method: "PATCH", path: cm + "?fieldManager=bob&force=true", contentType: applyYAML, body: bob}); code != 200 || got["data"].(map[string]any)["k"] != "2" {
		t.Errorf("the same apply with force=true: %d %v", code, got)
	}
}

// TestStatusWritesRecordStatusManagers: writes to /status record managedFields entries of
// their own, with subresource "status", beside the main resource's: an update of /status is an
// Update entry owning the status fields it set, an apply to /status an Apply entry; the main
// resource's entries keep their spec fields and no subresource. For a built-in kind (a
// Deployment) and a custom resource with a status subresource.
func TestStatusWritesRecordStatusManagers(t *testing.T) {
	_, h := newFront(t)
	applyYAML := "application/apply-patch+yaml"
	for _, tc := range []struct {
		name, path, create, status, applyStatus string
		updatedFields, appliedFields            string
	}{
		{"Deployment", "/apis/apps/v1/namespaces/ns/deployments/d",
			`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"ns"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`,
			`{"replicas":3}`,
			`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"status":{"observedGeneration":1}}`,
			// The create stored the type's empty status: the update owns only what it set.
			`{"f:status":{"f:replicas":{}}}`,
			`{"f:status":{"f:observedGeneration":{}}}`},
		{"Widget", "/apis/example.com/v1/namespaces/ns/widgets/w",
			`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns"},"spec":{"size":1}}`,
			`{"replicas":3}`,
			`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"status":{"observedGeneration":1}}`,
			`{"f:status":{".":{},"f:replicas":{}}}`,
			// Without a schema the deduced one owns the map itself too.
			`{"f:status":{".":{},"f:observedGeneration":{}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			collection := tc.path[:strings.LastIndex(tc.path, "/")]
			code, created := send(t, h, request{method: "POST", path: collection + "?fieldManager=creator", contentType: "application/json", body: tc.create})
			if code != 201 {
				t.Fatalf("create: %d %v", code, created)
			}
			created["status"] = mustJSON(t, tc.status)
			body, _ := json.Marshal(created)
			if code, st := send(t, h, request{method: "PUT", path: tc.path + "/status?fieldManager=status-writer", contentType: "application/json", body: string(body)}); code != 200 {
				t.Fatalf("update of /status: %d %v", code, st)
			}
			code, applied := send(t, h, request{method: "PATCH", path: tc.path + "/status?fieldManager=status-applier", contentType: applyYAML, body: tc.applyStatus})
			if code != 200 {
				t.Fatalf("apply to /status: %d %v", code, applied)
			}
			got := map[string]string{}
			for _, e := range applied["metadata"].(map[string]any)["managedFields"].([]any) {
				e := e.(map[string]any)
				fields, _ := json.Marshal(e["fieldsV1"])
				sub, _ := e["subresource"].(string)
				got[e["manager"].(string)+"/"+e["operation"].(string)+"/"+sub] = string(fields)
			}
			want := map[string]string{
				"status-writer/Update/status": tc.updatedFields,
				"status-applier/Apply/status": tc.appliedFields,
			}
			for k, v := range got {
				if strings.HasPrefix(k, "creator/Update/") {
					if k != "creator/Update/" || !strings.Contains(v, `"f:spec"`) || strings.Contains(v, `"f:status"`) {
						t.Errorf("the create's entry %s %s: want no subresource, spec fields and no status", k, v)
					}
					delete(got, k)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("managedFields besides the create's (-want +got):\n%s", diff)
			}
		})
	}
}
