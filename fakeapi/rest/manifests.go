package rest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/informersim/informersim/fakeapi"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// definitionGVK is the kind of a CustomResourceDefinition.
var definitionGVK = fakeapi.CustomResourceDefinitionsGVR.GroupVersion().WithKind("CustomResourceDefinition")

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
		return nil, fmt.Errorf("rest: CRD manifests: %w", err)
	}
	files := []string{path}
	if st.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("rest: CRD manifests: %w", err)
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
			return nil, fmt.Errorf("rest: CRD manifests: %w", err)
		}
		if len(raw) > maxManifestBytes {
			return nil, fmt.Errorf("rest: CRD manifest %s: %d bytes, more than %d", f, len(raw), maxManifestBytes)
		}
		ds, err := decodeDefinitions(raw)
		if err != nil {
			return nil, fmt.Errorf("rest: CRD manifest %s: %w", f, err)
		}
		defs = append(defs, ds...)
	}
	if len(defs) == 0 {
		return nil, fmt.Errorf("rest: no CustomResourceDefinition in %s", path)
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
		if m == nil || u.GroupVersionKind() != definitionGVK {
			continue
		}
		defs = append(defs, u)
	}
}
