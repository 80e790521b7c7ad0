package kube

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// maxManifestBytes bounds one manifest file ReadDefinitions reads (kube-apiserver's request
// limit is 3 MiB; a directory of CRDs is read file by file).
const maxManifestBytes = 16 << 20

// ReadDefinitions reads the CustomResourceDefinitions of path: a manifest file (YAML with one or
// more documents, or JSON), or a directory whose *.yaml, *.yml and *.json files are read in name
// order, not descending into subdirectories (what envtest's CRDInstallOptions.Paths and
// `kubectl apply -f DIR` take, such as a kubebuilder project's config/crd/bases). Documents of
// other kinds are skipped, as envtest skips them; a path holding no definition at all is an
// error, as is a document that is not YAML or JSON.
func ReadDefinitions(path string) ([]*unstructured.Unstructured, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("kube: CRD manifests: %w", err)
	}
	files := []string{path}
	if st.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("kube: CRD manifests: %w", err)
		}
		files = files[:0]
		for _, e := range entries {
			switch filepath.Ext(e.Name()) {
			case ".yaml", ".yml", ".json":
				if !e.IsDir() {
					files = append(files, filepath.Join(path, e.Name()))
				}
			}
		}
		slices.Sort(files)
	}
	var defs []*unstructured.Unstructured
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("kube: CRD manifests: %w", err)
		}
		if len(raw) > maxManifestBytes {
			return nil, fmt.Errorf("kube: CRD manifest %s: %d bytes, more than %d", f, len(raw), maxManifestBytes)
		}
		ds, err := decodeDefinitions(raw)
		if err != nil {
			return nil, fmt.Errorf("kube: CRD manifest %s: %w", f, err)
		}
		defs = append(defs, ds...)
	}
	if len(defs) == 0 {
		return nil, fmt.Errorf("kube: no CustomResourceDefinition in %s", path)
	}
	return defs, nil
}

// decodeDefinitions returns the CustomResourceDefinitions among the documents of raw.
func decodeDefinitions(raw []byte) ([]*unstructured.Unstructured, error) {
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	var defs []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return defs, nil
			}
			return nil, err
		}
		u := &unstructured.Unstructured{Object: m}
		if m == nil || u.GroupVersionKind() != crdGVK {
			continue
		}
		defs = append(defs, u)
	}
}

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
