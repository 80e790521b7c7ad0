package rest

import (
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// openAPIPath is the discovery key of a group version in /openapi/v3 ("api/v1",
// "apis/apps/v1").
func openAPIPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}

// serveOpenAPI answers /openapi/v3 and /openapi/v3/<group version> with a skeleton OpenAPI v3
// document: one PATCH operation per resource, tagged with its group-version-kind and the
// fieldValidation query parameter. That is what kubectl reads to learn that the server validates
// fields itself, so that `kubectl create -f` sends fieldValidation=Strict instead of failing to
// download schemas. fakeapi is schemaless, so no schemas are given (and unknown fields are
// kept, not rejected); /openapi/v2 is answered 404, as on servers without it.
func (h *Handler) serveOpenAPI(w http.ResponseWriter, r *http.Request, rest []string) {
	if r.Method != http.MethodGet {
		writeError(w, errMethodNotAllowed(r.Method))
		return
	}
	if len(rest) == 0 {
		paths := map[string]any{}
		for gv := range h.table().byGV {
			p := openAPIPath(gv)
			paths[p] = map[string]any{"serverRelativeURL": "/openapi/v3/" + p}
		}
		h.writeJSON(w, http.StatusOK, map[string]any{"paths": paths})
		return
	}
	want := strings.Join(rest, "/")
	for gv, g := range h.table().byGV {
		if openAPIPath(gv) != want {
			continue
		}
		paths := map[string]any{}
		for _, res := range g.ordered {
			p := "/" + want + "/"
			if res.Namespaced {
				p += "namespaces/{namespace}/"
			}
			p += res.GVR.Resource + "/{name}"
			paths[p] = map[string]any{"patch": map[string]any{
				"x-kubernetes-group-version-kind": map[string]string{"group": gv.Group, "version": gv.Version, "kind": res.Kind},
				"parameters": []any{map[string]any{
					"name": "fieldValidation", "in": "query", "schema": map[string]string{"type": "string"},
				}},
			}}
		}
		h.writeJSON(w, http.StatusOK, map[string]any{
			"openapi": "3.0.0",
			"info":    map[string]string{"title": "informersim fakeapi", "version": "v1.37.0"},
			"paths":   paths,
			// No schemas (fakeapi is schemaless): kubectl explain then says the kind has none
			// rather than failing in its template on a document without components.
			"components": map[string]any{"schemas": map[string]any{}},
		})
		return
	}
	writeError(w, errNotFound())
}
