package kube

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DefinitionSchema returns the openAPIV3Schema of version in the definition def, in JSON, or an
// error if def does not declare version or gives it no schema: what Options.Schemas takes for
// the version's kind.
func DefinitionSchema(def *unstructured.Unstructured, version string) (schema.GroupVersionKind, []byte, error) {
	group, _, _ := unstructured.NestedString(def.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(def.Object, "spec", "names", "kind")
	gvk := schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
	s := versionSchema(def, version)
	if s == "" {
		return gvk, nil, fmt.Errorf("kube: definition %s has no schema for version %q", def.GetName(), version)
	}
	return gvk, []byte(s), nil
}

// InstallDefinitions creates each definition through h, a REST front with this module's options,
// as a client would (POST), and checks that each is then established and served, as envtest's
// installer does. A definition that exists already is replaced (PUT with its resourceVersion).
// The answer to a refused one (a 422 with kube-apiserver's field errors, say) is the error.
func InstallDefinitions(h http.Handler, defs []*unstructured.Unstructured) error {
	const path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	for _, def := range defs {
		body, err := json.Marshal(def.Object)
		if err != nil {
			return fmt.Errorf("kube: definition %s: %w", def.GetName(), err)
		}
		code, out := serveLocal(h, http.MethodPost, path, body)
		if code == http.StatusConflict {
			_, cur := serveLocal(h, http.MethodGet, path+"/"+def.GetName(), nil)
			var live metav1.PartialObjectMetadata
			_ = json.Unmarshal(cur, &live)
			next := def.DeepCopy()
			next.SetResourceVersion(live.ResourceVersion)
			if body, err = json.Marshal(next.Object); err != nil {
				return fmt.Errorf("kube: definition %s: %w", def.GetName(), err)
			}
			code, out = serveLocal(h, http.MethodPut, path+"/"+def.GetName(), body)
		}
		if code >= 300 {
			var st metav1.Status
			if err := json.Unmarshal(out, &st); err != nil || st.Message == "" {
				return fmt.Errorf("kube: definition %s: HTTP %d: %s", def.GetName(), code, out)
			}
			return fmt.Errorf("kube: definition %s: %s", def.GetName(), st.Message)
		}
	}
	for _, def := range defs {
		_, out := serveLocal(h, http.MethodGet, path+"/"+def.GetName(), nil)
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal(out, &u.Object); err != nil {
			return fmt.Errorf("kube: definition %s: %w", def.GetName(), err)
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		established := ""
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Established" {
				established, _ = m["status"].(string)
				if established != "True" {
					established += ": " + fmt.Sprint(m["message"])
				}
			}
		}
		if established != "True" {
			names := conds
			return fmt.Errorf("kube: definition %s is not established (%s; conditions %v)", def.GetName(), strings.TrimSpace(established), names)
		}
	}
	return nil
}

// serveLocal serves one request through h in process and returns its code and body.
func serveLocal(h http.Handler, method, path string, body []byte) (int, []byte) {
	r := httptest.NewRequest(method, path, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("User-Agent", "informersim")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Body.Bytes()
}
