package kube

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/fakeapi/rest"
	"k8s.io/apimachinery/pkg/runtime/schema"
	testclock "k8s.io/utils/clock/testing"
)

// widgetSchema is a CustomResourceDefinition's openAPIV3Schema for widgets: ports a map by
// name, tags a set, command atomic.
const widgetSchema = `
type: object
properties:
  spec:
    type: object
    properties:
      size:
        type: integer
      ports:
        type: array
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [name]
        items:
          type: object
          required: [name]
          properties:
            name: {type: string}
            port: {type: integer}
      tags:
        type: array
        x-kubernetes-list-type: set
        items: {type: string}
      command:
        type: array
        items: {type: string}
  status:
    type: object
    x-kubernetes-preserve-unknown-fields: true
`

// TestApplyWithStructuralSchema: with the structural schema given, two managers apply
// different entries of a list-type map and of a set and both are kept, each owning its own;
// an atomic list is owned whole; a field the schema lacks is a 400. With the deduced schema of
// a kind without one, the same second apply takes the whole list.
func TestApplyWithStructuralSchema(t *testing.T) {
	widgetGVK := widgets.GVR.GroupVersion().WithKind("Widget")
	opts, err := RESTOptionsWith(Options{Schemas: map[schema.GroupVersionKind][]byte{widgetGVK: []byte(widgetSchema)}})
	if err != nil {
		t.Fatal(err)
	}
	gadgets := fakeapi.Resource{GVR: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}, Kind: "Gadget", Namespaced: true}
	srv, err := fakeapi.New(fakeapi.Config{Clock: testclock.NewFakeClock(now), Resources: []fakeapi.Resource{widgets, gadgets}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := rest.NewHandler(srv, opts)
	if err != nil {
		t.Fatal(err)
	}
	apply := func(path, manager, body string) (int, map[string]any) {
		return send(t, h, request{method: "PATCH", path: path + "?fieldManager=" + manager, contentType: "application/apply-patch+yaml", body: body})
	}
	for _, kind := range []struct {
		name, path string
		wantPorts  []any
	}{
		{"Widget", "/apis/example.com/v1/namespaces/a/widgets/w", []any{
			map[string]any{"name": "http", "port": float64(80)}, map[string]any{"name": "https", "port": float64(443)},
		}},
		{"Gadget", "/apis/example.com/v1/namespaces/a/gadgets/w", []any{
			map[string]any{"name": "https", "port": float64(443)},
		}},
	} {
		first := `{"apiVersion":"example.com/v1","kind":"` + kind.name + `","metadata":{"name":"w"},"spec":{"ports":[{"name":"http","port":80}],"tags":["a"],"command":["run"]}}`
		second := `{"apiVersion":"example.com/v1","kind":"` + kind.name + `","metadata":{"name":"w"},"spec":{"ports":[{"name":"https","port":443}],"tags":["b"]}}`
		if code, st := apply(kind.path, "alice", first); code != 201 {
			t.Fatalf("%s: first apply %d %v", kind.name, code, st)
		}
		code, got := apply(kind.path, "bob", second)
		if kind.name == "Gadget" {
			// Deduced: the lists are atomic, owned whole by alice: bob conflicts.
			if code != 409 {
				t.Fatalf("Gadget: second apply %d %v, want 409 (atomic lists)", code, got)
			}
			if code, got = send(t, h, request{method: "PATCH", path: kind.path + "?fieldManager=bob&force=true", contentType: "application/apply-patch+yaml", body: second}); code != 200 {
				t.Fatalf("Gadget: forced apply %d %v", code, got)
			}
		} else if code != 200 {
			t.Fatalf("%s: second apply %d %v", kind.name, code, got)
		}
		if diff := cmp.Diff(kind.wantPorts, got["spec"].(map[string]any)["ports"]); diff != "" {
			t.Errorf("%s: ports (-want +got):\n%s", kind.name, diff)
		}
		if kind.name == "Widget" {
			if diff := cmp.Diff([]any{"a", "b"}, got["spec"].(map[string]any)["tags"]); diff != "" {
				t.Errorf("tags of the set (-want +got):\n%s", diff)
			}
			fields := map[string]string{}
			for _, e := range got["metadata"].(map[string]any)["managedFields"].([]any) {
				e := e.(map[string]any)
				fields[e["manager"].(string)] = string(mustMarshal(e["fieldsV1"]))
			}
			want := map[string]string{
				"alice": `{"f:spec":{"f:command":{},"f:ports":{"k:{\"name\":\"http\"}":{".":{},"f:name":{},"f:port":{}}},"f:tags":{"v:\"a\"":{}}}}`,
				"bob":   `{"f:spec":{"f:ports":{"k:{\"name\":\"https\"}":{".":{},"f:name":{},"f:port":{}}},"f:tags":{"v:\"b\"":{}}}}`,
			}
			if diff := cmp.Diff(want, fields); diff != "" {
				t.Errorf("managedFields (-want +got):\n%s", diff)
			}
			if code, st := apply(kind.path, "carol", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"colour":"red"}}`); code != 400 || !strings.Contains(st["message"].(string), "colour") {
				t.Errorf("a field the schema lacks: %d %v, want 400 naming it", code, st)
			}
			if code, st := apply(kind.path, "carol", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"status":{"anything":{"goes":1}}}`); code != 200 {
				t.Errorf("a field under x-kubernetes-preserve-unknown-fields: %d %v", code, st)
			}
		}
	}

	for name, bad := range map[string]Options{
		"not YAML":          {Schemas: map[schema.GroupVersionKind][]byte{widgetGVK: []byte("type: [")}},
		"not an object":     {Schemas: map[schema.GroupVersionKind][]byte{widgetGVK: []byte("type: string")}},
		"a built-in kind":   {Schemas: map[schema.GroupVersionKind][]byte{{Version: "v1", Kind: "ConfigMap"}: []byte(widgetSchema)}},
		"no group":          {Schemas: map[schema.GroupVersionKind][]byte{{Version: "v1", Kind: "Thing"}: []byte(widgetSchema)}},
		"unknown list type": {Schemas: map[schema.GroupVersionKind][]byte{widgetGVK: []byte("type: object\nproperties:\n  l:\n    type: array\n    x-kubernetes-list-type: bag\n    items: {type: string}\n")}},
	} {
		if _, err := RESTOptionsWith(bad); err == nil {
			t.Errorf("%s: RESTOptionsWith accepted it", name)
		}
	}
}
