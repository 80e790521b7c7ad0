package rest

import (
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// An OpenAPISource gives the OpenAPI schemas of the kinds it knows (kube.RESTOptions: every
// built-in kind's, from the Go types). The maps are shared and only read.
type OpenAPISource interface {
	// SchemasV3 returns the components.schemas of gv's OpenAPI v3 document: its kinds' schemas
	// (tagged with x-kubernetes-group-version-kind) and every schema they refer to, by name
	// (io.k8s.api.apps.v1.Deployment); nil when it knows no kind of gv.
	SchemasV3(gv schema.GroupVersion) map[string]any
	// DocumentV2 returns the OpenAPI v2 document: every schema it knows as definitions
	// (references in v2's form, #/definitions/NAME), in JSON or, with protobuf set, in the
	// protobuf encoding kubectl asks for (OpenAPIV2ProtobufMediaType). The bytes are shared.
	DocumentV2(protobuf bool) ([]byte, error)
}

// OpenAPIV2ProtobufMediaType is the media type of /openapi/v2 in protobuf (gnostic's
// openapi_v2.Document), which kubectl's validation asks for; clients also ask for it by its
// older name, with @ for the last dot (which is not a media type's character, so the answer is
// always typed with this one, as kube-apiserver types it).
const OpenAPIV2ProtobufMediaType = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"

// serveOpenAPI answers /openapi/v3 and /openapi/v3/<group version> with an OpenAPI v3
// document: one PATCH operation per resource, tagged with its group-version-kind and the
// fieldValidation query parameter, which is what kubectl reads to learn that the server validates
// fields itself (so that `kubectl create -f` sends fieldValidation=Strict), and the kinds'
// schemas from Options.OpenAPI (what `kubectl explain` reads), none without it.
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
			// Without schemas, an empty map: kubectl explain then says the kind has none rather
			// than failing in its template on a document without components.
			"components": map[string]any{"schemas": h.schemasV3(gv)},
		})
		return
	}
	writeError(w, errNotFound())
}

func (h *Handler) schemasV3(gv schema.GroupVersion) map[string]any {
	if h.openAPI != nil {
		if s := h.openAPI.SchemasV3(gv); s != nil {
			return s
		}
	}
	return map[string]any{}
}

// serveOpenAPIv2 answers /openapi/v2 (only with Options.OpenAPI): every kind's definition, in
// protobuf when the client asks for it (kubectl does), else JSON.
func (h *Handler) serveOpenAPIv2(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeError(w, errMethodNotAllowed(r.Method))
		return
	}
	protobuf := strings.Contains(r.Header.Get("Accept"), "application/com.github.proto-openapi.spec.v2")
	w.Header().Add("Vary", "Accept")
	doc, err := h.openAPI.DocumentV2(protobuf)
	if err != nil {
		writeError(w, apierrors.NewInternalError(err))
		return
	}
	if protobuf {
		w.Header().Set("Content-Type", OpenAPIV2ProtobufMediaType)
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(doc)
}
