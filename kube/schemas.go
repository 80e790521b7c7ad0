package kube

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/informersim/informersim/fakeapi/rest"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/yaml"
)

// Options configures [RESTOptionsWith].
type Options struct {
	// Schemas are structural schemas of custom resources, by kind: the openAPIV3Schema of a
	// CustomResourceDefinition's version, in JSON or YAML. Server-side apply merges a kind that
	// has one as kube-apiserver merges it: lists by their x-kubernetes-list-type (atomic, set,
	// map with x-kubernetes-list-map-keys), maps by x-kubernetes-map-type, and an applied field
	// the schema does not declare is a 400 (unless x-kubernetes-preserve-unknown-fields allows
	// it). A custom resource without one is merged with a deduced schema (lists atomic). Schemas
	// of built-in kinds are k8s.io/api's and cannot be given.
	Schemas map[schema.GroupVersionKind][]byte
	// Plugins are kube-apiserver admission plugins run on every write (AdmissionPlugins):
	// informersim serve's admission webhooks. Nil: none.
	Plugins *AdmissionPlugins
}

// RESTOptionsWith is [RESTOptions] with the structural schemas of opts. It fails on a schema
// that is not a JSON or YAML OpenAPI v3 schema of an object, or that names a built-in kind.
func RESTOptionsWith(opts Options) (rest.Options, error) {
	converters := map[schema.GroupVersionKind]managedfields.TypeConverter{}
	kinds := make([]schema.GroupVersionKind, 0, len(opts.Schemas))
	for gvk := range opts.Schemas {
		kinds = append(kinds, gvk)
	}
	slices.SortFunc(kinds, func(a, b schema.GroupVersionKind) int { return strings.Compare(a.String(), b.String()) })
	for _, gvk := range kinds {
		if scheme.Scheme.Recognizes(gvk) {
			return rest.Options{}, fmt.Errorf("kube: %v is a built-in kind: its schema is k8s.io/api's", gvk)
		}
		tc, err := structuralConverter(gvk, opts.Schemas[gvk])
		if err != nil {
			return rest.Options{}, err
		}
		converters[gvk] = tc
	}
	o := restOptions(opts.Plugins)
	addWrites(&o, &writer{fields: newFieldManagers(converters)})
	return o, nil
}

// objectMetaName is the definition the schemas' metadata refers to.
const objectMetaName = "io.informersim.kube.ObjectMeta"

// objectMeta is the part of metav1.ObjectMeta's schema that field management looks into:
// labels and annotations merge key by key, finalizers are a set, owner references a map by uid,
// as in k8s.io/api; the rest is kept as it comes (kube-apiserver's field manager strips the
// server's fields from every manager anyway).
var objectMeta = &spec.Schema{
	SchemaProps: spec.SchemaProps{
		Type: spec.StringOrArray{"object"},
		Properties: map[string]spec.Schema{
			"name":        *spec.StringProperty(),
			"namespace":   *spec.StringProperty(),
			"labels":      *spec.MapProperty(spec.StringProperty()),
			"annotations": *spec.MapProperty(spec.StringProperty()),
			"finalizers": {
				SchemaProps:      spec.SchemaProps{Type: spec.StringOrArray{"array"}, Items: &spec.SchemaOrArray{Schema: spec.StringProperty()}},
				VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-list-type": "set"}},
			},
			"ownerReferences": {
				SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"array"}, Items: &spec.SchemaOrArray{Schema: &spec.Schema{
					SchemaProps: spec.SchemaProps{
						Type:                 spec.StringOrArray{"object"},
						Properties:           map[string]spec.Schema{"uid": *spec.StringProperty()},
						AdditionalProperties: &spec.SchemaOrBool{Allows: true},
					},
					VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-preserve-unknown-fields": true}},
				}}},
				VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{
					"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"uid"},
				}},
			},
		},
	},
	VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-preserve-unknown-fields": true}},
}

// structuralConverter builds the type converter of one custom resource from its structural
// schema: the schema as given, with apiVersion, kind and metadata declared as kube-apiserver
// declares them for every custom resource.
func structuralConverter(gvk schema.GroupVersionKind, raw []byte) (managedfields.TypeConverter, error) {
	if gvk.Kind == "" || gvk.Version == "" || gvk.Group == "" {
		return nil, fmt.Errorf("kube: schema for %q: a custom resource has a group, a version and a kind", gvk)
	}
	doc, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("kube: schema of %v: %w", gvk, err)
	}
	var s spec.Schema
	if err := json.Unmarshal(doc, &s); err != nil {
		return nil, fmt.Errorf("kube: schema of %v: %w", gvk, err)
	}
	if len(s.Type) != 1 || s.Type[0] != "object" {
		return nil, fmt.Errorf("kube: schema of %v: the top level must be of type object, got %v", gvk, s.Type)
	}
	if s.Properties == nil {
		s.Properties = map[string]spec.Schema{}
	}
	s.Properties["apiVersion"] = *spec.StringProperty()
	s.Properties["kind"] = *spec.StringProperty()
	s.Properties["metadata"] = *spec.RefSchema("#/components/schemas/" + objectMetaName)
	s.AddExtension("x-kubernetes-group-version-kind", []any{map[string]any{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind}})
	name := gvk.Group + "." + gvk.Version + "." + gvk.Kind
	tc, err := managedfields.NewTypeConverter(map[string]*spec.Schema{name: &s, objectMetaName: objectMeta}, false)
	if err != nil {
		return nil, fmt.Errorf("kube: schema of %v: %w", gvk, err)
	}
	return tc, nil
}
