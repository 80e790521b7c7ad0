package rest

import (
	"context"
	"strings"
	"testing"

	"github.com/informersim/informersim/fakeapi"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const deployBody = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},
"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"},"matchExpressions":[{"key":"tier","operator":"In","values":["a","b"]}]}}}`

// scaleDoc is the part of a Scale the tests read.
type scaleDoc struct {
	Kind       string            `json:"kind"`
	APIVersion string            `json:"apiVersion"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		Replicas int32 `json:"replicas"`
	} `json:"spec"`
	Status struct {
		Replicas int32  `json:"replicas"`
		Selector string `json:"selector"`
	} `json:"status"`
}

// Goal: the scale subresource of a built-in workload reads spec.replicas, status.replicas and
// the selector in string form; PUT and PATCH write spec.replicas (and nothing else); a stale
// resourceVersion is 409, a negative count 422, other patch types 415; discovery lists it.
func TestScaleBuiltin(t *testing.T) {
	srv, h := newHandler(t)
	if w := do(h, call{method: "POST", path: "/apis/apps/v1/namespaces/ns/deployments", body: deployBody}); w.Code != 201 {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	deps := srv.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace("ns")
	if _, err := deps.Patch(context.Background(), "web", "application/merge-patch+json", []byte(`{"status":{"replicas":1}}`), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	path := "/apis/apps/v1/namespaces/ns/deployments/web/scale"
	var sc scaleDoc
	decode(t, do(h, call{method: "GET", path: path}), &sc)
	if sc.Kind != "Scale" || sc.APIVersion != "autoscaling/v1" || sc.Metadata.Name != "web" || sc.Metadata.UID == "" ||
		sc.Spec.Replicas != 2 || sc.Status.Replicas != 1 || sc.Status.Selector != "app=web,tier in (a,b)" {
		t.Fatalf("scale %+v", sc)
	}
	stale := sc.Metadata.ResourceVersion
	w := do(h, call{method: "PUT", path: path, body: `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web","resourceVersion":"` + stale + `"},"spec":{"replicas":5}}`})
	decode(t, w, &sc)
	if sc.Spec.Replicas != 5 || sc.Status.Replicas != 1 || sc.Metadata.ResourceVersion == stale {
		t.Fatalf("after PUT: %+v", sc)
	}
	got, err := deps.Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n, _, _ := unstructuredInt(got.Object, "spec", "replicas"); n != 5 || got.GetGeneration() != 2 {
		t.Fatalf("the deployment after the scale: replicas %d generation %d", n, got.GetGeneration())
	}
	if w := do(h, call{method: "PUT", path: path, body: `{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"web","resourceVersion":"` + stale + `"},"spec":{"replicas":6}}`}); w.Code != 409 {
		t.Fatalf("stale PUT: %d %s", w.Code, w.Body)
	}
	w = do(h, call{method: "PATCH", path: path, contentType: "application/merge-patch+json", body: `{"spec":{"replicas":7}}`})
	decode(t, w, &sc)
	if sc.Spec.Replicas != 7 {
		t.Fatalf("after PATCH: %+v", sc)
	}
	w = do(h, call{method: "PATCH", path: path, contentType: "application/json-patch+json", body: `[{"op":"replace","path":"/spec/replicas","value":0}]`})
	sc = scaleDoc{}
	decode(t, w, &sc)
	got, err = deps.Get(context.Background(), "web", metav1.GetOptions{})
	if n, ok, _ := unstructuredInt(got.Object, "spec", "replicas"); err != nil || sc.Spec.Replicas != 0 || n != 0 || !ok {
		t.Fatalf("after JSON patch to 0: %+v, the deployment's spec.replicas %d (%v, %v)", sc, n, ok, err)
	}
	for _, c := range []struct {
		c    call
		code int
	}{
		{call{method: "PUT", path: path, body: `{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"web"},"spec":{"replicas":-1}}`}, 422},
		{call{method: "PUT", path: path, body: `{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"other"},"spec":{"replicas":1}}`}, 400},
		{call{method: "PUT", path: path, body: `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web"}}`}, 400},
		{call{method: "PUT", path: path, body: `{"kind":"Scale","apiVersion":"autoscaling/v1","spec":{"replicas":"x"}}`}, 400},
		{call{method: "PATCH", path: path, contentType: "application/strategic-merge-patch+json", body: `{}`}, 415},
		{call{method: "PATCH", path: path, contentType: "application/json-patch+json", body: `[{"op":"test","path":"/spec/replicas","value":9}]`}, 422},
		{call{method: "DELETE", path: path}, 405},
		{call{method: "GET", path: "/apis/apps/v1/namespaces/ns/deployments/none/scale"}, 404},
		{call{method: "GET", path: "/api/v1/namespaces/ns/configmaps/c/scale"}, 404},
	} {
		if w := do(h, c.c); w.Code != c.code {
			t.Errorf("%s %s %s: %d %s, want %d", c.c.method, c.c.path, c.c.body, w.Code, w.Body, c.code)
		} else {
			status(t, w)
		}
	}
	var rl metav1.APIResourceList
	decode(t, do(h, call{method: "GET", path: "/apis/apps/v1"}), &rl)
	found := false
	for _, r := range rl.APIResources {
		found = found || (r.Name == "deployments/scale" && r.Group == "autoscaling" && r.Kind == "Scale")
	}
	if !found {
		t.Errorf("discovery has no deployments/scale: %+v", rl.APIResources)
	}
}

// Goal: a custom resource with a declared scale reads and writes its own paths; a missing
// desired count is an error and a missing observed one 0, as for a CRD.
func TestScaleCustomResource(t *testing.T) {
	gadgets := fakeapi.Resource{
		GVR:  schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"},
		Kind: "Gadget", Namespaced: true,
		Scale: &fakeapi.ScaleSubresource{SpecReplicasPath: ".spec.size", StatusReplicasPath: ".status.size", LabelSelectorPath: ".status.sel"},
	}
	_, h := newHandler(t, func(c *fakeapi.Config) { c.Resources = append(c.Resources, gadgets) })
	base := "/apis/example.com/v1/namespaces/ns/gadgets"
	do(h, call{method: "POST", path: base, body: `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"size":3},"status":{"sel":"a=b"}}`})
	do(h, call{method: "POST", path: base, body: `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"empty"}}`})
	var sc scaleDoc
	decode(t, do(h, call{method: "GET", path: base + "/g/scale"}), &sc)
	if sc.Spec.Replicas != 3 || sc.Status.Replicas != 0 || sc.Status.Selector != "a=b" {
		t.Fatalf("scale %+v", sc)
	}
	decode(t, do(h, call{method: "PATCH", path: base + "/g/scale", contentType: "application/merge-patch+json", body: `{"spec":{"replicas":4}}`}), &sc)
	w := do(h, call{method: "GET", path: base + "/g"})
	if sc.Spec.Replicas != 4 || !strings.Contains(w.Body.String(), `"spec":{"size":4}`) {
		t.Fatalf("after the patch: %+v %s", sc, w.Body)
	}
	if w := do(h, call{method: "GET", path: base + "/empty/scale"}); w.Code != 500 || !strings.Contains(w.Body.String(), ".spec.size") {
		t.Fatalf("scale of an object without .spec.size: %d %s", w.Code, w.Body)
	}
	if w := do(h, call{method: "GET", path: "/apis/example.com/v1/namespaces/ns/widgets/x/scale"}); w.Code != 404 {
		t.Fatalf("scale of a resource without one: %d", w.Code)
	}
	if _, err := fakeapi.New(fakeapi.Config{Resources: []fakeapi.Resource{{GVR: gadgets.GVR, Kind: "Gadget", Scale: &fakeapi.ScaleSubresource{SpecReplicasPath: "spec.size"}}}}); err == nil {
		t.Error("a scale path without its leading dot was accepted")
	}
}

func unstructuredInt(m map[string]any, path ...string) (int64, bool, error) {
	v := any(m)
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return 0, false, nil
		}
		v = mm[p]
	}
	n, ok := asInt64(v)
	return n, ok, nil
}
