package kube

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	"github.com/google/go-cmp/cmp"
	"github.com/informersim/informersim/fakeapi/rest"
	"google.golang.org/protobuf/proto"
)

// TestOpenAPIDocuments: /openapi/v3's document of apps/v1 declares the Deployment's schema
// as kube-apiserver names and tags it, with its fields' types and descriptions (what kubectl
// explain prints) and every schema it refers to; /openapi/v2 has the same definitions in v2's
// form. A group version without built-in kinds declares none.
func TestOpenAPIDocuments(t *testing.T) {
	_, h := newFront(t)
	get := func(path string) map[string]any {
		t.Helper()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		var m map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil || w.Code != 200 {
			t.Fatalf("%s: %d %.300s", path, w.Code, w.Body)
		}
		return m
	}
	schemas := get("/openapi/v3/apis/apps/v1")["components"].(map[string]any)["schemas"].(map[string]any)
	dep, _ := schemas["io.k8s.api.apps.v1.Deployment"].(map[string]any)
	if dep == nil {
		t.Fatalf("no Deployment schema among %d", len(schemas))
	}
	if diff := cmp.Diff([]any{map[string]any{"group": "apps", "kind": "Deployment", "version": "v1"}}, dep["x-kubernetes-group-version-kind"]); diff != "" {
		t.Errorf("the Deployment's kind tag (-want +got):\n%s", diff)
	}
	if d, _ := dep["description"].(string); d == "" {
		t.Error("the Deployment has no description")
	}
	spec := dep["properties"].(map[string]any)["spec"].(map[string]any)
	if spec["allOf"] == nil || spec["allOf"].([]any)[0].(map[string]any)["$ref"] != "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec" {
		t.Errorf("spec %v", spec)
	}
	ds := schemas["io.k8s.api.apps.v1.DeploymentSpec"].(map[string]any)
	replicas := ds["properties"].(map[string]any)["replicas"].(map[string]any)
	if replicas["type"] != "integer" || replicas["format"] != "int32" || replicas["description"] == nil {
		t.Errorf("spec.replicas %v", replicas)
	}
	if diff := cmp.Diff([]any{"selector", "template"}, ds["required"]); diff != "" {
		t.Errorf("DeploymentSpec's required fields (-want +got):\n%s", diff)
	}
	for _, name := range []string{"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "io.k8s.api.core.v1.PodTemplateSpec", "io.k8s.apimachinery.pkg.apis.meta.v1.Time", "io.k8s.apimachinery.pkg.util.intstr.IntOrString", "io.k8s.api.apps.v1.StatefulSetList"} {
		if schemas[name] == nil {
			t.Errorf("no %s in apps/v1's document", name)
		}
	}
	if schemas["io.k8s.api.batch.v1.Job"] != nil {
		t.Error("apps/v1's document declares batch/v1's Job")
	}
	if ts := schemas["io.k8s.apimachinery.pkg.apis.meta.v1.Time"].(map[string]any); ts["type"] != "string" || ts["format"] != "date-time" {
		t.Errorf("Time %v", ts)
	}
	defs := get("/openapi/v2")["definitions"].(map[string]any)
	v2spec := defs["io.k8s.api.apps.v1.Deployment"].(map[string]any)["properties"].(map[string]any)["spec"].(map[string]any)
	if v2spec["$ref"] != "#/definitions/io.k8s.api.apps.v1.DeploymentSpec" || v2spec["allOf"] != nil {
		t.Errorf("v2's spec %v", v2spec)
	}
	if defs["io.k8s.api.core.v1.ConfigMap"] == nil || defs["io.k8s.api.batch.v1.Job"] == nil {
		t.Error("v2 lacks ConfigMap or Job")
	}
	// kubectl's validation asks for v2 in protobuf.
	req := httptest.NewRequest("GET", "/openapi/v2", nil)
	req.Header.Set("Accept", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	var doc openapiv2.Document
	if err := proto.Unmarshal(w.Body.Bytes(), &doc); err != nil || w.Code != 200 || w.Header().Get("Content-Type") != rest.OpenAPIV2ProtobufMediaType {
		t.Fatalf("v2 in protobuf: %d %q %v", w.Code, w.Header().Get("Content-Type"), err)
	}
	found := false
	for _, p := range doc.GetDefinitions().GetAdditionalProperties() {
		found = found || p.GetName() == "io.k8s.api.apps.v1.Deployment"
	}
	if !found {
		t.Error("v2 in protobuf has no Deployment")
	}
	if got := get("/openapi/v3/apis/example.com/v1")["components"].(map[string]any)["schemas"].(map[string]any); len(got) != 0 {
		t.Errorf("a custom resource's group declares %d schemas", len(got))
	}
}
