package rest

import (
	"net/http"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// aggregatedType is the media type of aggregated discovery (apidiscovery.k8s.io/v2), which
// kubectl and client-go ask for first at /api and /apis: one document with every group, version
// and resource, instead of one request per group version.
const aggregatedType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// wantsAggregated reports whether the first media range of accept, in quality order, that the
// front can answer at /api or /apis is aggregated discovery (rather than the legacy JSON).
func wantsAggregated(accept string) bool {
	for _, e := range parseAccept(accept) {
		switch {
		case e.mediaType != "application/json" && e.mediaType != "application/*" && e.mediaType != "*/*":
		case e.params["as"] == "":
			return false
		case e.params["g"] == "apidiscovery.k8s.io" && e.params["v"] == "v2" && e.params["as"] == "APIGroupDiscoveryList":
			return true
		}
	}
	return false
}

// aggregatedDiscovery answers /api (legacy true: the core group) or /apis (the named groups) in
// the aggregated format, built from the same resource lists as the legacy documents.
func (h *Handler) aggregatedDiscovery(w http.ResponseWriter, legacy bool) {
	tb := h.table()
	var groups []string
	if legacy {
		groups = []string{""}
	} else {
		groups = tb.groups
	}
	items := []any{}
	for _, name := range groups {
		var versions []any
		for _, v := range tb.versionsOf(name) {
			g := tb.byGV[schema.GroupVersion{Group: name, Version: v.Version}]
			versions = append(versions, map[string]any{
				"version":   v.Version,
				"resources": aggregatedResources(g.gv, apiResourceList(g).APIResources),
				"freshness": "Current",
			})
		}
		if len(versions) == 0 {
			continue
		}
		items = append(items, map[string]any{
			"metadata": map[string]any{"name": name, "creationTimestamp": nil},
			"versions": versions,
		})
	}
	e := getEncoder()
	defer putEncoder(e)
	if err := e.value(map[string]any{
		"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2",
		"metadata": map[string]any{}, "items": items,
	}); err != nil {
		writeEncodingError(w, err)
		return
	}
	w.Header().Set("Content-Type", aggregatedType)
	w.Header().Set("Content-Length", strconv.Itoa(len(e.buf)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(e.buf)
}

// aggregatedResources turns a legacy resource list into aggregated resources: each "R/sub"
// entry becomes a subresource of R.
func aggregatedResources(gv schema.GroupVersion, list []metav1.APIResource) []any {
	var out []any
	parents := map[string]map[string]any{}
	for _, r := range list {
		kind := map[string]any{"group": r.Group, "version": r.Version, "kind": r.Kind}
		if r.Group == "" && r.Version == "" {
			kind["group"], kind["version"] = gv.Group, gv.Version
		}
		if parent, sub, ok := strings.Cut(r.Name, "/"); ok {
			p := parents[parent]
			if p == nil {
				continue
			}
			subs, _ := p["subresources"].([]any)
			p["subresources"] = append(subs, map[string]any{"subresource": sub, "responseKind": kind, "verbs": []string(r.Verbs)})
			continue
		}
		scope := "Cluster"
		if r.Namespaced {
			scope = "Namespaced"
		}
		res := map[string]any{
			"resource": r.Name, "responseKind": kind, "scope": scope,
			"singularResource": r.SingularName, "verbs": []string(r.Verbs),
		}
		if len(r.ShortNames) > 0 {
			res["shortNames"] = r.ShortNames
		}
		if len(r.Categories) > 0 {
			res["categories"] = r.Categories
		}
		parents[r.Name] = res
		out = append(out, res)
	}
	return out
}
