package realapi

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// reducers keep the part of a large document the suite compares: discovery documents as sorted
// one-line summaries, OpenAPI documents as the presence and shape of what kubectl reads.
var reducers = map[string]func(map[string]any) any{
	"groups":             reduceGroups,
	"resources":          reduceResources,
	"aggregated":         reduceAggregated,
	"openapi-v2":         reduceOpenAPIv2,
	"openapi-v3-paths":   reduceOpenAPIv3Paths,
	"openapi-v3-schemas": reduceOpenAPIv3Schemas,
	"version": func(m map[string]any) any {
		return map[string]any{"major": m["major"], "minor": m["minor"], "gitVersion": m["gitVersion"]}
	},
}

// reduce replaces a successful JSON answer's body by the part named; other answers are kept.
func reduce(resp Response, name string) Response {
	if name == "" || resp.Code != 200 {
		return resp
	}
	f, ok := reducers[name]
	if !ok {
		resp.Body = []byte(fmt.Sprintf(`{"kind":"Status","message":"realapi: no reducer %q"}`, name))
		return resp
	}
	var m map[string]any
	if err := json.Unmarshal(resp.Body, &m); err != nil {
		return resp
	}
	b, _ := json.Marshal(map[string]any{"kind": "Reduced", "reduced": f(m)})
	resp.Body = b
	return resp
}

func strs(v any) []string {
	xs, _ := v.([]any)
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

func reduceGroups(m map[string]any) any {
	if m["kind"] == "APIVersions" {
		return map[string]any{"kind": m["kind"], "versions": m["versions"]}
	}
	var groups []string
	for _, g := range m["groups"].([]any) {
		gm, _ := g.(map[string]any)
		var versions []string
		for _, v := range gm["versions"].([]any) {
			versions = append(versions, fmt.Sprint(v.(map[string]any)["version"]))
		}
		pref, _ := gm["preferredVersion"].(map[string]any)
		groups = append(groups, fmt.Sprintf("%s %v preferred %v", gm["name"], versions, pref["version"]))
	}
	sort.Strings(groups)
	return map[string]any{"kind": m["kind"], "groups": groups}
}

func resourceLine(r map[string]any) string {
	verbs := strs(r["verbs"])
	sort.Strings(verbs)
	return fmt.Sprintf("%v kind=%v namespaced=%v verbs=%v short=%v categories=%v singular=%v", r["name"], r["kind"], r["namespaced"], verbs, strs(r["shortNames"]), strs(r["categories"]), r["singularName"])
}

func reduceResources(m map[string]any) any {
	var lines []string
	rs, _ := m["resources"].([]any)
	for _, r := range rs {
		lines = append(lines, resourceLine(r.(map[string]any)))
	}
	sort.Strings(lines)
	return map[string]any{"kind": m["kind"], "groupVersion": m["groupVersion"], "resources": lines}
}

func reduceAggregated(m map[string]any) any {
	var lines []string
	items, _ := m["items"].([]any)
	for _, it := range items {
		im, _ := it.(map[string]any)
		name := im["metadata"].(map[string]any)["name"]
		vs, _ := im["versions"].([]any)
		for _, v := range vs {
			vm, _ := v.(map[string]any)
			rs, _ := vm["resources"].([]any)
			for _, r := range rs {
				rm, _ := r.(map[string]any)
				verbs := strs(rm["verbs"])
				sort.Strings(verbs)
				var subs []string
				srs, _ := rm["subresources"].([]any)
				for _, s := range srs {
					subs = append(subs, fmt.Sprint(s.(map[string]any)["subresource"]))
				}
				sort.Strings(subs)
				lines = append(lines, fmt.Sprintf("%v/%v %v scope=%v verbs=%v subresources=%v", name, vm["version"], rm["resource"], rm["scope"], verbs, subs))
			}
		}
	}
	sort.Strings(lines)
	return map[string]any{"kind": m["kind"], "resources": lines}
}

// schemaShape is what kubectl explain shows of a schema: its type, the sorted names of its
// properties, whether it has a description, and the kinds it declares.
func schemaShape(s map[string]any) map[string]any {
	if s == nil {
		return nil
	}
	var props []string
	for k := range s["properties"].(map[string]any) {
		props = append(props, k)
	}
	sort.Strings(props)
	d, _ := s["description"].(string)
	return map[string]any{"type": s["type"], "properties": props, "described": d != "", "gvk": s["x-kubernetes-group-version-kind"]}
}

func propertyShape(s map[string]any, path ...string) map[string]any {
	cur := s
	for _, p := range path {
		props, _ := cur["properties"].(map[string]any)
		next, _ := props[p].(map[string]any)
		if next == nil {
			return nil
		}
		cur = next
	}
	d, _ := cur["description"].(string)
	return map[string]any{"type": cur["type"], "format": cur["format"], "described": d != ""}
}

func reduceOpenAPIv2(m map[string]any) any {
	defs, _ := m["definitions"].(map[string]any)
	dep, _ := defs["io.k8s.api.apps.v1.Deployment"].(map[string]any)
	spec, _ := defs["io.k8s.api.apps.v1.DeploymentSpec"].(map[string]any)
	return map[string]any{
		"swagger":    m["swagger"],
		"deployment": schemaShapeOrNil(dep),
		"replicas":   propertyShapeOrNil(spec, "replicas"),
		"configMap":  schemaShapeOrNil(asMap(defs["io.k8s.api.core.v1.ConfigMap"])),
	}
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

func schemaShapeOrNil(s map[string]any) any {
	if s == nil || s["properties"] == nil {
		return nil
	}
	return schemaShape(s)
}

func propertyShapeOrNil(s map[string]any, path ...string) any {
	if s == nil {
		return nil
	}
	return propertyShape(s, path...)
}

func reduceOpenAPIv3Paths(m map[string]any) any {
	paths, _ := m["paths"].(map[string]any)
	out := map[string]bool{}
	for _, p := range []string{"api/v1", "apis/apps/v1", "apis/events.k8s.io/v1", "apis/batch/v1", "apis/rbac.authorization.k8s.io/v1"} {
		_, out[p] = paths[p]
	}
	return out
}

func reduceOpenAPIv3Schemas(m map[string]any) any {
	comps, _ := m["components"].(map[string]any)
	schemas, _ := comps["schemas"].(map[string]any)
	out := map[string]any{}
	for _, name := range []string{"io.k8s.api.apps.v1.Deployment", "io.k8s.api.core.v1.ConfigMap", "io.k8s.api.core.v1.Namespace", "io.k8s.api.core.v1.Event"} {
		if s := asMap(schemas[name]); s != nil {
			out[name] = schemaShapeOrNil(s)
		}
	}
	if spec := asMap(schemas["io.k8s.api.apps.v1.DeploymentSpec"]); spec != nil {
		out["replicas"] = propertyShape(spec, "replicas")
	}
	var kinds []string
	for name := range schemas {
		if strings.HasPrefix(name, "io.k8s.api.") {
			kinds = append(kinds, name)
		}
	}
	sort.Strings(kinds)
	out["apiSchemas"] = kinds
	return out
}
