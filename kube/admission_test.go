package kube

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// cronTabCRD is a CustomResourceDefinition with what the admission has to honour: a default, a
// bound, a pattern, a required field, a field that keeps unknown fields, CEL rules (one across
// fields, one a transition rule on oldSelf), an enum in status, and the status and scale
// subresources.
const cronTabCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.org
spec:
  group: stable.example.org
  scope: Namespaced
  names: {plural: crontabs, singular: crontab, kind: CronTab, listKind: CronTabList, shortNames: [ct]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    additionalPrinterColumns:
    - {name: Spec, type: string, jsonPath: .spec.cronSpec}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [cronSpec]
            x-kubernetes-validations:
            - rule: self.replicas <= self.maxReplicas
              message: replicas must not exceed maxReplicas
            properties:
              cronSpec: {type: string, pattern: '^\S+ \S+ \S+ \S+ \S+$'}
              image:
                type: string
                x-kubernetes-validations:
                - rule: self == oldSelf
                  message: image is immutable
              replicas: {type: integer, minimum: 1, maximum: 10, default: 1}
              maxReplicas: {type: integer, default: 5}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status:
            type: object
            properties:
              replicas: {type: integer}
              phase: {type: string, enum: [Pending, Running]}
`

func jsonOf(t testing.TB, doc string) string {
	t.Helper()
	b, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// installCronTabs creates the definition through h and checks it is established.
func installCronTabs(t testing.TB, h interface {
	ServeHTTP(w http.ResponseWriter, r *http.Request)
}) {
	t.Helper()
	const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	code, body := send(t, h, request{method: "POST", path: crds, body: jsonOf(t, cronTabCRD)})
	if code != http.StatusCreated {
		t.Fatalf("create CRD: %d %v", code, body)
	}
	if sv, _, _ := unstructured.NestedStringSlice(body, "status", "storedVersions"); len(sv) != 1 || sv[0] != "v1" {
		t.Errorf("storedVersions %v, want [v1] (the strategy's PrepareForCreate)", sv)
	}
	_, got := send(t, h, request{method: "GET", path: crds + "/crontabs.stable.example.org"})
	conds, _, _ := unstructured.NestedSlice(got, "status", "conditions")
	established := false
	for _, c := range conds {
		if m := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
			established = true
		}
	}
	if !established {
		t.Fatalf("the definition is not established: %v", got["status"])
	}
}

const cronTabs = "/apis/stable.example.org/v1/namespaces/default/crontabs"

// TestCustomResourceAdmission sends custom resources of a definition with a schema through the
// front and checks kube-apiserver's answers: defaults applied and unknown fields pruned (kept
// under x-kubernetes-preserve-unknown-fields), 422s with its field errors for bounds, patterns,
// required fields, CEL rules and transition rules, a 400 for an unknown field under
// fieldValidation=Strict, status validated on /status writes and ignored on the main resource.
func TestCustomResourceAdmission(t *testing.T) {
	_, h := newFront(t)
	installCronTabs(t, h)

	code, body := send(t, h, request{method: "POST", path: cronTabs, body: `{"apiVersion":"stable.example.org/v1","kind":"CronTab",
		"metadata":{"name":"c1"},"spec":{"cronSpec":"* * * * *","image":"a","bogus":1,"extra":{"anything":true}},"status":{"phase":"Running"}}`})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, body)
	}
	spec, _, _ := unstructured.NestedMap(body, "spec")
	if want := map[string]any{"cronSpec": "* * * * *", "image": "a", "replicas": int64(1), "maxReplicas": int64(5), "extra": map[string]any{"anything": true}}; !equalish(spec, want) {
		t.Errorf("spec stored %v, want %v (defaulted, bogus pruned, extra kept)", spec, want)
	}
	if _, ok := body["status"]; ok {
		t.Errorf("a create set status: %v", body["status"])
	}
	// generateName: validated with the name it will have (kube-apiserver generates it first).
	code, body = send(t, h, request{method: "POST", path: cronTabs, body: `{"apiVersion":"stable.example.org/v1","kind":"CronTab",
		"metadata":{"generateName":"c-"},"spec":{"cronSpec":"* * * * *"}}`})
	if name, _, _ := unstructured.NestedString(body, "metadata", "name"); code != http.StatusCreated || !strings.HasPrefix(name, "c-") || len(name) != 7 {
		t.Errorf("create with generateName: %d %v", code, body)
	}

	for _, tt := range []struct {
		name, spec, query string
		code              int
		want              []string
	}{
		{"bound", `{"cronSpec":"* * * * *","replicas":20,"maxReplicas":30}`, "", 422,
			[]string{`CronTab.stable.example.org "bad" is invalid`, "spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10"}},
		{"pattern", `{"cronSpec":"never"}`, "", 422, []string{`spec.cronSpec: Invalid value: "never": spec.cronSpec in body should match`}},
		{"required", `{}`, "", 422, []string{"spec.cronSpec: Required value"}},
		{"cel", `{"cronSpec":"* * * * *","replicas":7,"maxReplicas":6}`, "", 422, []string{"spec: Invalid value: replicas must not exceed maxReplicas"}},
		{"strict", `{"cronSpec":"* * * * *","bogus":1}`, "?fieldValidation=Strict", 400, []string{`strict decoding error: unknown field "spec.bogus"`}},
	} {
		code, body := send(t, h, request{method: "POST", path: cronTabs + tt.query, body: `{"apiVersion":"stable.example.org/v1","kind":"CronTab","metadata":{"name":"bad"},"spec":` + tt.spec + `}`})
		msg, _ := body["message"].(string)
		if code != tt.code {
			t.Errorf("%s: %d %s, want %d", tt.name, code, msg, tt.code)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: message %q lacks %q", tt.name, msg, w)
			}
		}
	}

	// A transition rule: image may not change.
	code, body = send(t, h, request{method: "PATCH", path: cronTabs + "/c1", contentType: "application/merge-patch+json", body: `{"spec":{"image":"b"}}`})
	if msg, _ := body["message"].(string); code != 422 || !strings.Contains(msg, `spec.image: Invalid value: "b": image is immutable`) {
		t.Errorf("changing image: %d %v", code, body["message"])
	}
	code, body = send(t, h, request{method: "PATCH", path: cronTabs + "/c1", contentType: "application/merge-patch+json", body: `{"spec":{"replicas":3}}`})
	if r, _, _ := unstructured.NestedFieldNoCopy(body, "spec", "replicas"); code != 200 || r != 3.0 {
		t.Errorf("a valid patch: %d %v", code, body)
	}
	// Status: validated on /status, the enum enforced.
	code, body = send(t, h, request{method: "PATCH", path: cronTabs + "/c1/status", contentType: "application/merge-patch+json", body: `{"status":{"phase":"Bogus"}}`})
	if msg, _ := body["message"].(string); code != 422 || !strings.Contains(msg, `status.phase: Unsupported value: "Bogus": supported values: "Pending", "Running"`) {
		t.Errorf("a bad status: %d %v", code, body["message"])
	}
	code, body = send(t, h, request{method: "PATCH", path: cronTabs + "/c1/status", contentType: "application/merge-patch+json", body: `{"status":{"phase":"Running","replicas":3}}`})
	if p, _, _ := unstructured.NestedString(body, "status", "phase"); code != 200 || p != "Running" {
		t.Errorf("a good status: %d %v", code, body)
	}
	// The scale subresource the definition declares.
	code, body = send(t, h, request{method: "GET", path: cronTabs + "/c1/scale"})
	if r, _, _ := unstructured.NestedFieldNoCopy(body, "spec", "replicas"); code != 200 || body["kind"] != "Scale" || r != 3.0 {
		t.Errorf("GET scale: %d %v", code, body)
	}
	code, body = send(t, h, request{method: "PATCH", path: cronTabs + "/c1/scale", contentType: "application/merge-patch+json", body: `{"spec":{"replicas":4}}`})
	if code != 200 {
		t.Errorf("PATCH scale: %d %v", code, body)
	}
	if _, got := send(t, h, request{method: "GET", path: cronTabs + "/c1"}); got["spec"].(map[string]any)["replicas"] != 4.0 {
		t.Errorf("after scaling: %v", got["spec"])
	}
	// Server-side apply, with the definition's schema.
	code, body = send(t, h, request{method: "PATCH", path: cronTabs + "/c2?fieldManager=m", contentType: "application/apply-patch+yaml",
		body: `{"apiVersion":"stable.example.org/v1","kind":"CronTab","metadata":{"name":"c2"},"spec":{"cronSpec":"* * * * *"}}`})
	if r, _, _ := unstructured.NestedFieldNoCopy(body, "spec", "replicas"); code != http.StatusCreated || r != 1.0 {
		t.Errorf("apply: %d %v", code, body)
	}
	// A definition with a field its Go type lacks, under fieldValidation=Strict (kubectl's
	// default): a 400 naming the field.
	typo := strings.Replace(strings.Replace(cronTabCRD, "scope: Namespaced", "scope: Namespaced\n  scopes: Cluster", 1), "stable.example.org", "stable3.example.org", 2)
	code, body = send(t, h, request{method: "POST", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?fieldValidation=Strict", body: jsonOf(t, typo)})
	if msg, _ := body["message"].(string); code != 400 || msg != `strict decoding error: unknown field "spec.scopes"` {
		t.Errorf("a definition with an unknown field, strictly: %d %v", code, body["message"])
	}
	// An invalid definition: kube-apiserver's validation of the schema.
	bad := strings.Replace(cronTabCRD, "maxReplicas: {type: integer, default: 5}", "maxReplicas: {default: 5}", 1)
	bad = strings.Replace(bad, "crontabs.stable.example.org", "crontabs.stable2.example.org", 1)
	bad = strings.Replace(bad, "group: stable.example.org", "group: stable2.example.org", 1)
	code, body = send(t, h, request{method: "POST", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body: jsonOf(t, bad)})
	if msg, _ := body["message"].(string); code != 422 || !strings.Contains(msg, "spec.validation.openAPIV3Schema.properties[spec].properties[maxReplicas].type: Required value: must not be empty for specified object fields") {
		t.Errorf("a non-structural definition: %d %v", code, body["message"])
	}
}

// equalish compares JSON values, numbers by value whatever their Go type.
func equalish(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k := range x {
			if !equalish(x[k], y[k]) {
				return false
			}
		}
		return true
	case float64:
		switch y := b.(type) {
		case int64:
			return x == float64(y)
		case float64:
			return x == y
		}
		return false
	case int64:
		return equalish(float64(x), b)
	}
	return a == b
}

// TestUnknownFieldWarnings: under fieldValidation=Warn, kube-apiserver's default, a dropped field
// of a custom resource or of a definition is a Warning header (299, agent "-"), as client-go's
// warning handler and kubectl show it; under Ignore nothing is said.
func TestUnknownFieldWarnings(t *testing.T) {
	_, h := newFront(t)
	installCronTabs(t, h)
	post := func(path, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", path, strings.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	w := post(cronTabs, `{"apiVersion":"stable.example.org/v1","kind":"CronTab","metadata":{"name":"c1"},"spec":{"cronSpec":"* * * * *","colour":"red"}}`)
	if got := w.Header().Values("Warning"); w.Code != http.StatusCreated || len(got) != 1 || got[0] != `299 - "unknown field \"spec.colour\""` {
		t.Errorf("a custom resource with an unknown field: %d, warnings %q", w.Code, got)
	}
	w = post(cronTabs+"?fieldValidation=Ignore", `{"apiVersion":"stable.example.org/v1","kind":"CronTab","metadata":{"name":"c2"},"spec":{"cronSpec":"* * * * *","colour":"red"}}`)
	if got := w.Header().Values("Warning"); w.Code != http.StatusCreated || len(got) != 0 {
		t.Errorf("fieldValidation=Ignore: %d, warnings %q", w.Code, got)
	}
	typo := strings.Replace(strings.Replace(cronTabCRD, "scope: Namespaced", "scope: Namespaced\n  scopes: Cluster", 1), "stable.example.org", "stable3.example.org", 2)
	w = post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", jsonOf(t, typo))
	if got := w.Header().Values("Warning"); w.Code != http.StatusCreated || len(got) != 1 || got[0] != `299 - "unknown field \"spec.scopes\""` {
		t.Errorf("a definition with an unknown field: %d, warnings %q", w.Code, got)
	}
}
