package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/informersim/informersim/fakeapi"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// crdBody is a CustomResourceDefinition of gadgets.example.org with a status subresource.
func crdBody(plural, kind string, shortNames ...string) string {
	short, _ := json.Marshal(shortNames)
	return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"` + plural + `.example.org"},
"spec":{"group":"example.org","scope":"Namespaced",
 "names":{"plural":"` + plural + `","singular":"` + strings.ToLower(kind) + `","kind":"` + kind + `","listKind":"` + kind + `List","shortNames":` + string(short) + `,"categories":["all"]},
 "versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
  "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`
}

// getObject GETs path and decodes the object, failing on any other answer than 200.
func getObject(t *testing.T, h http.Handler, path string) *unstructured.Unstructured {
	t.Helper()
	w := do(h, call{method: "GET", path: path})
	if w.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, w.Code, w.Body.String())
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(w.Body.Bytes(), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func conditionsOf(u *unstructured.Unstructured) map[string]string {
	out := map[string]string{}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m := c.(map[string]any)
		out[m["type"].(string)] = m["status"].(string) + "/" + m["reason"].(string)
	}
	return out
}

// TestDefinitionLifecycle follows a CustomResourceDefinition through the front with no
// Admission plugged in: created, it is named and established on the next request and its
// resource is served with its names in discovery; a second definition claiming the same plural
// is not accepted and not served; deleting the first deletes its objects, then the definition,
// and its resource stops being served.
func TestDefinitionLifecycle(t *testing.T) {
	_, h := newHandler(t)
	const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	if w := do(h, call{method: "POST", path: crds, body: crdBody("gadgets", "Gadget", "gd")}); w.Code != http.StatusCreated {
		t.Fatalf("create CRD: %d %s", w.Code, w.Body.String())
	}
	crd := getObject(t, h, crds+"/gadgets.example.org")
	if got, want := conditionsOf(crd), map[string]string{"NamesAccepted": "True/NoConflicts", "Established": "True/InitialNamesAccepted"}; !equalJSON(toAny(got), toAny(want)) {
		t.Errorf("conditions %v, want %v", got, want)
	}
	if kind, _, _ := unstructured.NestedString(crd.Object, "status", "acceptedNames", "kind"); kind != "Gadget" {
		t.Errorf("acceptedNames.kind %q", kind)
	}
	var list metav1.APIResourceList
	w := do(h, call{method: "GET", path: "/apis/example.org/v1"})
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil || w.Code != http.StatusOK {
		t.Fatalf("discovery: %d %s", w.Code, w.Body.String())
	}
	i := slices.IndexFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == "gadgets" })
	if i < 0 || !slices.Equal(list.APIResources[i].ShortNames, []string{"gd"}) || !slices.Equal(list.APIResources[i].Categories, []string{"all"}) ||
		list.APIResources[i].SingularName != "gadget" || !list.APIResources[i].Namespaced {
		t.Errorf("discovery of example.org/v1: %+v", list.APIResources)
	}
	if !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == "gadgets/status" }) {
		t.Errorf("no gadgets/status in discovery: %+v", list.APIResources)
	}
	if w := do(h, call{method: "GET", path: "/apis"}); !strings.Contains(w.Body.String(), `"example.org"`) {
		t.Errorf("/apis lacks example.org: %s", w.Body.String())
	}
	const gadgets = "/apis/example.org/v1/namespaces/default/gadgets"
	if w := do(h, call{method: "POST", path: gadgets, body: `{"apiVersion":"example.org/v1","kind":"Gadget","metadata":{"name":"g1"},"spec":{"a":1}}`}); w.Code != http.StatusCreated {
		t.Fatalf("create gadget: %d %s", w.Code, w.Body.String())
	}

	// A second definition of the group claiming the plural: NamesAccepted False, not served.
	if w := do(h, call{method: "POST", path: crds, body: strings.Replace(crdBody("gadgets", "Gizmo"), `"name":"gadgets.example.org"`, `"name":"gizmos.example.org"`, 1)}); w.Code != http.StatusCreated {
		t.Fatalf("create second CRD: %d %s", w.Code, w.Body.String())
	}
	second := getObject(t, h, crds+"/gizmos.example.org")
	if got := conditionsOf(second); got["NamesAccepted"] != "False/PluralConflict" || got["Established"] != "False/NotAccepted" {
		t.Errorf("conflicting definition's conditions %v", got)
	}

	if w := do(h, call{method: "DELETE", path: crds + "/gadgets.example.org"}); w.Code != http.StatusOK {
		t.Fatalf("delete CRD: %d %s", w.Code, w.Body.String())
	}
	if w := do(h, call{method: "GET", path: gadgets + "/g1"}); w.Code != http.StatusNotFound {
		t.Errorf("gadget after its definition's deletion: %d %s", w.Code, w.Body.String())
	}
	if w := do(h, call{method: "GET", path: crds + "/gadgets.example.org"}); w.Code != http.StatusNotFound {
		t.Errorf("definition after deletion: %d %s", w.Code, w.Body.String())
	}
	// The plural is free again: the second definition is accepted and served, without the
	// first's objects.
	if w := do(h, call{method: "GET", path: gadgets}); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"items":[],"kind":"GizmoList"`) {
		t.Errorf("list of gadgets after deletion: %d %s", w.Code, w.Body.String())
	}
	if got := conditionsOf(getObject(t, h, crds+"/gizmos.example.org")); got["NamesAccepted"] != "True/NoConflicts" || got["Established"] != "True/InitialNamesAccepted" {
		t.Errorf("second definition once the plural is free: %v", got)
	}
	if w := do(h, call{method: "POST", path: gadgets, body: `{"apiVersion":"example.org/v1","kind":"Gizmo","metadata":{"name":"g2"}}`}); w.Code != http.StatusCreated {
		t.Fatalf("create gizmo: %d %s", w.Code, w.Body.String())
	}
}

func toAny(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestDefinitionVersions: every served version of a definition is served, from one set of
// objects (conversion None): an object created in one version is read, listed and watched in the
// other with that version's apiVersion, and stored in the storage version's.
func TestDefinitionVersions(t *testing.T) {
	srv, h := newHandler(t)
	const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	body := strings.Replace(crdBody("gadgets", "Gadget"), `"versions":[`, `"versions":[{"name":"v1beta1","served":true,"storage":false,
  "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},`, 1)
	if w := do(h, call{method: "POST", path: crds, body: body}); w.Code != http.StatusCreated {
		t.Fatalf("create CRD: %d %s", w.Code, w.Body.String())
	}
	var group metav1.APIGroup
	decode(t, do(h, call{method: "GET", path: "/apis/example.org"}), &group)
	if len(group.Versions) != 2 || group.PreferredVersion.Version != "v1" || group.Versions[1].Version != "v1beta1" {
		t.Errorf("group example.org: %+v", group)
	}
	const beta, v1 = "/apis/example.org/v1beta1/namespaces/default/gadgets", "/apis/example.org/v1/namespaces/default/gadgets"
	w := do(h, call{method: "POST", path: beta, body: `{"apiVersion":"example.org/v1beta1","kind":"Gadget","metadata":{"name":"g1"},"spec":{"a":1}}`})
	if w.Code != http.StatusCreated || !strings.Contains(w.Body.String(), `"apiVersion":"example.org/v1beta1"`) {
		t.Fatalf("create in v1beta1: %d %s", w.Code, w.Body.String())
	}
	if got := getObject(t, h, v1+"/g1"); got.GetAPIVersion() != "example.org/v1" {
		t.Errorf("read in v1: apiVersion %q", got.GetAPIVersion())
	}
	stored, err := srv.Snapshot(schema.GroupVersionResource{Group: "example.org", Version: "v1", Resource: "gadgets"}, "", metav1.ListOptions{})
	if err != nil || len(stored.Items) != 1 || stored.Items[0].GetAPIVersion() != "example.org/v1" {
		t.Errorf("stored: %v %v", stored, err)
	}
	if w := do(h, call{method: "GET", path: beta}); !strings.Contains(w.Body.String(), `"items":[{"apiVersion":"example.org/v1beta1"`) ||
		!strings.Contains(w.Body.String(), `"apiVersion":"example.org/v1beta1","items"`) {
		t.Errorf("list in v1beta1: %s", w.Body.String())
	}
	if w := do(h, call{method: "PATCH", path: beta + "/g1", contentType: "application/merge-patch+json", body: `{"spec":{"a":2}}`}); w.Code != http.StatusOK ||
		!strings.Contains(w.Body.String(), `"apiVersion":"example.org/v1beta1"`) || !strings.Contains(w.Body.String(), `"a":2`) {
		t.Errorf("patch in v1beta1: %d %s", w.Code, w.Body.String())
	}
	// A watch from the start, which the request's context ends once it has had its events.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	r := httptest.NewRequest("GET", beta+"?watch=true&resourceVersion=1", nil).WithContext(ctx)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if !strings.Contains(rec.Body.String(), `{"type":"ADDED","object":{"apiVersion":"example.org/v1beta1"`) {
		t.Errorf("watch in v1beta1: %s", rec.Body.String())
	}
}

// TestDefinitionDeletionWaitsForFinalizers: an object with a finalizer of its own keeps its
// definition Terminating (its resource still served, creates refused with 403) until the
// finalizer is removed; then the object, the resource and the definition go.
func TestDefinitionDeletionWaitsForFinalizers(t *testing.T) {
	_, h := newHandler(t)
	const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	const gadgets = "/apis/example.org/v1/namespaces/default/gadgets"
	if w := do(h, call{method: "POST", path: crds, body: crdBody("gadgets", "Gadget")}); w.Code != http.StatusCreated {
		t.Fatalf("create CRD: %d %s", w.Code, w.Body.String())
	}
	if w := do(h, call{method: "POST", path: gadgets, body: `{"apiVersion":"example.org/v1","kind":"Gadget","metadata":{"name":"g1","finalizers":["example.org/keep"]}}`}); w.Code != http.StatusCreated {
		t.Fatalf("create gadget: %d %s", w.Code, w.Body.String())
	}
	if w := do(h, call{method: "DELETE", path: crds + "/gadgets.example.org"}); w.Code != http.StatusOK {
		t.Fatalf("delete CRD: %d %s", w.Code, w.Body.String())
	}
	crd := getObject(t, h, crds+"/gadgets.example.org")
	if got := conditionsOf(crd); got["Terminating"] != "True/InstanceDeletionInProgress" || crd.GetDeletionTimestamp() == nil ||
		!slices.Contains(crd.GetFinalizers(), "customresourcecleanup.apiextensions.k8s.io") {
		t.Errorf("the definition being deleted: conditions %v, finalizers %v", got, crd.GetFinalizers())
	}
	if g := getObject(t, h, gadgets+"/g1"); g.GetDeletionTimestamp() == nil {
		t.Errorf("the gadget is not being deleted: %v", g.Object)
	}
	w := do(h, call{method: "POST", path: gadgets, body: `{"apiVersion":"example.org/v1","kind":"Gadget","metadata":{"name":"g2"}}`})
	if st := status(t, w); st.Code != http.StatusForbidden || !strings.Contains(st.Message, "create not allowed while custom resource definition is terminating") {
		t.Errorf("a create while terminating: %d %s", st.Code, st.Message)
	}
	if w := do(h, call{method: "PATCH", path: gadgets + "/g1", contentType: "application/merge-patch+json", body: `{"metadata":{"finalizers":null}}`}); w.Code != http.StatusOK {
		t.Fatalf("remove the gadget's finalizer: %d %s", w.Code, w.Body.String())
	}
	if w := do(h, call{method: "GET", path: crds + "/gadgets.example.org"}); w.Code != http.StatusNotFound {
		t.Errorf("the definition once its objects are gone: %d %s", w.Code, w.Body.String())
	}
	if w := do(h, call{method: "GET", path: gadgets}); w.Code != http.StatusNotFound {
		t.Errorf("the resource once its definition is gone: %d %s", w.Code, w.Body.String())
	}
}

// TestDefinitionsUnderConcurrentRequests: requests served concurrently while definitions are
// created and deleted see a consistent table (run under -race: the table is replaced whole,
// the syncs are serialised).
func TestDefinitionsUnderConcurrentRequests(t *testing.T) {
	_, h := newHandler(t)
	const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	done := make(chan struct{})
	errs := make(chan string, 16)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				for _, p := range []string{"/apis", "/apis/example.org/v1", "/apis/example.org/v1/namespaces/default/gadgets"} {
					if w := do(h, call{method: "GET", path: p}); w.Code != http.StatusOK && w.Code != http.StatusNotFound {
						errs <- fmt.Sprintf("GET %s: %d %s", p, w.Code, w.Body.String())
						return
					}
				}
			}
		}()
	}
	for i := 0; i < 5; i++ {
		if w := do(h, call{method: "POST", path: crds, body: crdBody("gadgets", "Gadget")}); w.Code != http.StatusCreated {
			t.Fatalf("create CRD: %d %s", w.Code, w.Body.String())
		}
		if w := do(h, call{method: "POST", path: "/apis/example.org/v1/namespaces/default/gadgets", body: `{"apiVersion":"example.org/v1","kind":"Gadget","metadata":{"name":"g"}}`}); w.Code != http.StatusCreated {
			t.Fatalf("create gadget: %d %s", w.Code, w.Body.String())
		}
		if w := do(h, call{method: "DELETE", path: crds + "/gadgets.example.org"}); w.Code != http.StatusOK {
			t.Fatalf("delete CRD: %d %s", w.Code, w.Body.String())
		}
		if w := do(h, call{method: "GET", path: crds + "/gadgets.example.org"}); w.Code != http.StatusNotFound {
			t.Fatalf("the definition after its deletion: %d", w.Code)
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestDefinitionSyncRetriesAFailedWrite: a status write of the sync that fails (an injected
// failure) is tried again, as the apiextensions controllers retry: the definition still ends up
// established on the next request.
func TestDefinitionSyncRetriesAFailedWrite(t *testing.T) {
	srv, h := newHandler(t)
	const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	if w := do(h, call{method: "POST", path: crds, body: crdBody("gadgets", "Gadget")}); w.Code != http.StatusCreated {
		t.Fatalf("create CRD: %d %s", w.Code, w.Body.String())
	}
	srv.Faults().FailNext(fakeapi.VerbUpdateStatus, apierrors.NewInternalError(errors.New("injected")))
	if got := conditionsOf(getObject(t, h, crds+"/gadgets.example.org")); got["Established"] != "True/InitialNamesAccepted" {
		t.Errorf("conditions after a failed status write: %v", got)
	}
}

// TestDefinedResource: the resource of a CRD manifest, for a server without a front, is the one
// the front serves for it once established (its storage version); bad input is an error.
func TestDefinedResource(t *testing.T) {
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(crdBody("gadgets", "Gadget", "gd")), &u.Object); err != nil {
		t.Fatal(err)
	}
	got, err := DefinedResource(u)
	if err != nil {
		t.Fatal(err)
	}
	if got.GVR != (schema.GroupVersionResource{Group: "example.org", Version: "v1", Resource: "gadgets"}) || got.Kind != "Gadget" || !got.Namespaced ||
		!got.Status || !got.Generation || !got.RequireResourceVersion || !slices.Equal(got.ShortNames, []string{"gd"}) || !slices.Equal(got.Categories, []string{"all"}) {
		t.Errorf("DefinedResource = %+v", got)
	}
	_, h := newHandler(t, func(c *fakeapi.Config) { c.Resources = append(c.Resources, got) })
	if w := do(h, call{method: "POST", path: "/apis/example.org/v1/namespaces/default/gadgets", body: `{"apiVersion":"example.org/v1","kind":"Gadget","metadata":{"name":"g"}}`}); w.Code != http.StatusCreated {
		t.Errorf("a gadget on a server configured with it: %d %s", w.Code, w.Body.String())
	}
	if _, err := DefinedResource(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}); err == nil {
		t.Errorf("DefinedResource of a ConfigMap succeeded")
	}
	noStorage := u.DeepCopy()
	_ = unstructured.SetNestedSlice(noStorage.Object, []any{}, "spec", "versions")
	if _, err := DefinedResource(noStorage); err == nil {
		t.Errorf("DefinedResource of a definition without versions succeeded")
	}
}

// TestReadDefinitions: a directory's manifests are read in name order, documents of other kinds
// and files of other extensions skipped; a path with no definition, or a document that is not
// YAML, is an error.
func TestReadDefinitions(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("b.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n"+crdBody("widgets", "Widget"))
	write("a.json", crdBody("gadgets", "Gadget"))
	write("kustomization.txt", "resources: [a.json]")
	defs, err := ReadDefinitions(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range defs {
		names = append(names, d.GetName())
	}
	if !slices.Equal(names, []string{"gadgets.example.org", "widgets.example.org"}) {
		t.Errorf("ReadDefinitions(dir) = %v", names)
	}
	if _, err := ReadDefinitions(filepath.Join(dir, "kustomization.txt")); err == nil || !strings.Contains(err.Error(), "no CustomResourceDefinition") {
		t.Errorf("a file without definitions: %v", err)
	}
	write("bad.yaml", "a: [")
	if _, err := ReadDefinitions(dir); err == nil || !strings.Contains(err.Error(), "bad.yaml") {
		t.Errorf("a directory with a file that is not YAML: %v", err)
	}
	if _, err := ReadDefinitions(filepath.Join(dir, "none")); err == nil {
		t.Errorf("a missing path: %v", err)
	}
}
