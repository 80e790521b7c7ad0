package kube

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
)

// kube-apiserver serves the OpenAPI schemas of every kind it serves (/openapi/v2, and
// /openapi/v3/<group version>), which kubectl reads for `explain` and for client-side checks.
// They are generated from the Go types' comments; k8s.io/api ships the same text as each
// type's SwaggerDoc(), so the schemas below are built by walking the Go types (json tags for
// the names, SwaggerDoc for the descriptions), named as kube-apiserver names them
// (io.k8s.api.apps.v1.Deployment), the kinds tagged with x-kubernetes-group-version-kind. A
// field is required when its json tag has no omitempty (the generator's +optional markers are
// not in the types; omitempty is how most optional fields say it, and kube-apiserver's
// schemas differ from these on the few that are optional without it).

// openAPISchemas are the built-in kinds' schemas, built once (OpenAPI v3 form: refs to
// #/components/schemas/NAME).
type openAPISchemas struct {
	once    sync.Once
	schemas map[string]map[string]any // by name
	refs    map[string][]string       // the names each schema refers to
	kinds   map[schema.GroupVersion][]string
	v2      map[string]any
	// The v2 document, encoded once.
	v2once          sync.Once
	v2JSON, v2Proto []byte
	v2Err           error
}

var builtinOpenAPI = &openAPISchemas{}

// load walks every kind of the built-in API (client-go's scheme and apiextensions.k8s.io/v1).
func (o *openAPISchemas) load() {
	o.once.Do(func() {
		s := runtime.NewScheme()
		utilruntime.Must(clientscheme.AddToScheme(s))
		utilruntime.Must(apiextensionsv1.AddToScheme(s))
		w := &schemaWalker{schemas: map[string]map[string]any{}, refs: map[string][]string{}}
		o.kinds = map[schema.GroupVersion][]string{}
		gvks := make([]schema.GroupVersionKind, 0)
		for gvk := range s.AllKnownTypes() {
			gvks = append(gvks, gvk)
		}
		sort.Slice(gvks, func(i, j int) bool { return gvks[i].String() < gvks[j].String() })
		for _, gvk := range gvks {
			t := s.AllKnownTypes()[gvk]
			if gvk.Version == runtime.APIVersionInternal || !(strings.HasPrefix(t.PkgPath(), "k8s.io/api/") || strings.HasPrefix(t.PkgPath(), "k8s.io/apiextensions-apiserver/")) {
				continue // the meta.k8s.io kinds every group lists come in through references
			}
			name := w.named(t)
			tags, _ := w.schemas[name]["x-kubernetes-group-version-kind"].([]any)
			w.schemas[name]["x-kubernetes-group-version-kind"] = append(tags, map[string]any{"group": gvk.Group, "kind": gvk.Kind, "version": gvk.Version})
			o.kinds[gvk.GroupVersion()] = append(o.kinds[gvk.GroupVersion()], name)
		}
		o.schemas, o.refs = w.schemas, w.refs
		o.v2 = map[string]any{}
		for name, sch := range o.schemas {
			o.v2[name] = toV2(sch)
		}
	})
}

// SchemasV3 returns the components.schemas of gv's OpenAPI v3 document: its kinds' schemas and
// every schema they refer to, shared (read-only); nil when gv has no built-in kinds.
func (o *openAPISchemas) SchemasV3(gv schema.GroupVersion) map[string]any {
	o.load()
	kinds := o.kinds[gv]
	if len(kinds) == 0 {
		return nil
	}
	out := map[string]any{}
	var visit func(name string)
	visit = func(name string) {
		if _, ok := out[name]; ok {
			return
		}
		out[name] = o.schemas[name]
		for _, r := range o.refs[name] {
			visit(r)
		}
	}
	for _, k := range kinds {
		visit(k)
	}
	return out
}

// DocumentV2 returns the OpenAPI v2 document, in JSON or in gnostic's protobuf, built once.
func (o *openAPISchemas) DocumentV2(protobuf bool) ([]byte, error) {
	o.load()
	o.v2once.Do(func() {
		doc := map[string]any{
			"swagger":     "2.0",
			"info":        map[string]string{"title": "informersim fakeapi", "version": "v1.37.0"},
			"paths":       map[string]any{},
			"definitions": o.v2,
		}
		if o.v2JSON, o.v2Err = json.Marshal(doc); o.v2Err != nil {
			return
		}
		var parsed *openapiv2.Document
		if parsed, o.v2Err = openapiv2.ParseDocument(o.v2JSON); o.v2Err != nil {
			o.v2Err = fmt.Errorf("kube: the OpenAPI v2 document does not parse as one: %w", o.v2Err)
			return
		}
		o.v2Proto, o.v2Err = proto.Marshal(parsed)
	})
	if protobuf {
		return o.v2Proto, o.v2Err
	}
	return o.v2JSON, o.v2Err
}

// toV2 is a v3 schema in v2's form: references to #/definitions/, a lone allOf reference as
// a plain $ref, no oneOf.
func toV2(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if all, ok := x["allOf"].([]any); ok && len(all) == 1 {
			out := map[string]any{}
			for k, val := range x {
				if k != "allOf" && k != "default" {
					out[k] = toV2(val)
				}
			}
			for k, val := range toV2(all[0]).(map[string]any) {
				out[k] = val
			}
			return out
		}
		out := make(map[string]any, len(x))
		for k, val := range x {
			ref, isRef := val.(string)
			switch {
			case k == "$ref" && isRef: // (a property may be named $ref too: JSONSchemaProps)
				out[k] = strings.Replace(ref, "#/components/schemas/", "#/definitions/", 1)
			case k == "oneOf":
			default:
				out[k] = toV2(val)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toV2(e)
		}
		return out
	}
	return v
}

// schemaWalker is one walk of Go types into schemas.
type schemaWalker struct {
	schemas map[string]map[string]any
	refs    map[string][]string
}

var (
	rawExtensionType = reflect.TypeOf(runtime.RawExtension{})
	jsonType         = reflect.TypeOf(apiextensionsv1.JSON{})
)

// openAPIName is the schema name of a Go type: its package path with the domain reversed
// (k8s.io/api/apps/v1 -> io.k8s.api.apps.v1), then the type's name.
func openAPIName(t reflect.Type) string {
	segs := strings.Split(t.PkgPath(), "/")
	if len(segs) > 0 && strings.Contains(segs[0], ".") {
		parts := strings.Split(segs[0], ".")
		for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
			parts[i], parts[j] = parts[j], parts[i]
		}
		segs[0] = strings.Join(parts, ".")
	}
	return strings.Join(segs, ".") + "." + t.Name()
}

// swaggerDoc is t's SwaggerDoc map, or nil.
func swaggerDoc(t reflect.Type) map[string]string {
	m, ok := reflect.New(t).Elem().Interface().(interface{ SwaggerDoc() map[string]string })
	if !ok {
		return nil
	}
	return m.SwaggerDoc()
}

// ref is the v3 form of a reference to the schema name with a description.
func ref(name, description string) map[string]any {
	out := map[string]any{"allOf": []any{map[string]any{"$ref": "#/components/schemas/" + name}}}
	if description != "" {
		out["description"] = description
	}
	return out
}

// named registers t's schema (once) and returns its name.
func (w *schemaWalker) named(t reflect.Type) string {
	name := openAPIName(t)
	if _, ok := w.schemas[name]; ok {
		return name
	}
	w.schemas[name] = map[string]any{} // placeholder: recursive types end here
	var refs []string
	w.schemas[name] = w.structSchema(t, &refs)
	sort.Strings(refs)
	w.refs[name] = refs
	return name
}

type schemaTyper interface{ OpenAPISchemaType() []string }
type schemaFormatter interface{ OpenAPISchemaFormat() string }
type oneOfTyper interface{ OpenAPIV3OneOfTypes() []string }

// special is the schema of a type that says its own (time, quantity, int-or-string), or of a
// raw JSON holder; nil for any other.
func special(t reflect.Type) map[string]any {
	v := reflect.New(t).Elem().Interface()
	if t == rawExtensionType || t == jsonType {
		return map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	}
	st, ok := v.(schemaTyper)
	if !ok {
		return nil
	}
	out := map[string]any{}
	if types := st.OpenAPISchemaType(); len(types) == 1 {
		out["type"] = types[0]
	}
	if f, ok := v.(schemaFormatter); ok && f.OpenAPISchemaFormat() != "" {
		out["format"] = f.OpenAPISchemaFormat()
	}
	if o, ok := v.(oneOfTyper); ok {
		var types []any
		for _, typ := range o.OpenAPIV3OneOfTypes() {
			types = append(types, map[string]any{"type": typ})
		}
		delete(out, "type")
		out["oneOf"] = types
		if t.Name() == "IntOrString" {
			out["x-kubernetes-int-or-string"] = true
			delete(out, "oneOf")
		}
	}
	return out
}

// structSchema is the schema of the struct type t (or a special type), adding the names it
// refers to.
func (w *schemaWalker) structSchema(t reflect.Type, refs *[]string) map[string]any {
	if s := special(t); s != nil {
		return s
	}
	docs := swaggerDoc(t)
	out := map[string]any{"type": "object"}
	if d := docs[""]; d != "" {
		out["description"] = d
	}
	props := map[string]any{}
	var required []string
	w.fields(t, docs, props, &required, refs)
	if len(props) > 0 {
		out["properties"] = props
	}
	if len(required) > 0 {
		sort.Strings(required)
		out["required"] = required
	}
	return out
}

// fields adds t's fields (inline ones flattened) to props.
func (w *schemaWalker) fields(t reflect.Type, docs map[string]string, props map[string]any, required *[]string, refs *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(opts, "inline") || (name == "" && f.Anonymous) {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				w.fields(ft, swaggerDoc(ft), props, required, refs)
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = w.fieldSchema(f.Type, docs[name], refs)
		if !strings.Contains(opts, "omitempty") {
			*required = append(*required, name)
		}
	}
}

// fieldSchema is the schema of a field of type t, described by description.
func (w *schemaWalker) fieldSchema(t reflect.Type, description string, refs *[]string) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out map[string]any
	switch {
	case t.Kind() == reflect.Struct:
		name := w.named(t)
		*refs = append(*refs, name)
		out = ref(name, "")
		if description != "" {
			out["description"] = description
		}
		if _, isSpecial := w.schemas[name]["type"]; !isSpecial || w.schemas[name]["type"] == "object" {
			out["default"] = map[string]any{}
		}
		return out
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		out = map[string]any{"type": "string", "format": "byte"}
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		out = map[string]any{"type": "array", "items": w.fieldSchema(t.Elem(), "", refs)}
	case t.Kind() == reflect.Map:
		out = map[string]any{"type": "object", "additionalProperties": w.fieldSchema(t.Elem(), "", refs)}
	case t.Kind() == reflect.String:
		out = map[string]any{"type": "string"}
	case t.Kind() == reflect.Bool:
		out = map[string]any{"type": "boolean"}
	case t.Kind() == reflect.Int32 || t.Kind() == reflect.Uint32 || t.Kind() == reflect.Int16 || t.Kind() == reflect.Uint16 || t.Kind() == reflect.Int8:
		out = map[string]any{"type": "integer", "format": "int32"}
	case t.Kind() == reflect.Int64 || t.Kind() == reflect.Int || t.Kind() == reflect.Uint64 || t.Kind() == reflect.Uint:
		out = map[string]any{"type": "integer", "format": "int64"}
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		out = map[string]any{"type": "number", "format": "double"}
	case t.Kind() == reflect.Interface:
		out = map[string]any{"x-kubernetes-preserve-unknown-fields": true}
	default:
		out = map[string]any{}
	}
	if description != "" {
		out["description"] = description
	}
	return out
}
