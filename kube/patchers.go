package kube

import (
	"context"
	"encoding/json"

	"github.com/informersim/informersim/fakeapi/rest"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// addWrites plugs strategic merge patch, server-side apply and managedFields into opts.
func addWrites(opts *rest.Options, w *writer) {
	if opts.Patchers == nil {
		opts.Patchers = map[types.PatchType]rest.Patcher{}
	}
	opts.Patchers[types.StrategicMergePatchType] = strategicPatcher{w}
	opts.Patchers[types.ApplyYAMLPatchType] = applyPatcher{w}
	opts.Tracker = tracker{w}
}

func kindOf(wr rest.Write) Kind {
	k := Kind{GVK: wr.GVK, Builtin: wr.Builtin, Status: wr.Status, Subresource: wr.Subresource}
	if d := wr.Definition; d != nil {
		k.Definition, k.Generation = d.GetUID(), d.GetGeneration()
		k.def = d
	}
	return k
}

// versionSchema is the openAPIV3Schema of version in the CustomResourceDefinition d, in JSON, or
// "" if it has none.
func versionSchema(d *unstructured.Unstructured, version string) string {
	versions, _, _ := unstructured.NestedSlice(d.Object, "spec", "versions")
	for _, v := range versions {
		m, ok := v.(map[string]any)
		if !ok || m["name"] != version {
			continue
		}
		s, found, _ := unstructured.NestedFieldNoCopy(m, "schema", "openAPIV3Schema")
		if !found {
			return ""
		}
		b, err := json.Marshal(s)
		if err != nil {
			return ""
		}
		return string(b)
	}
	return ""
}

// strategicPatcher answers application/strategic-merge-patch+json.
type strategicPatcher struct{ w *writer }

func (p strategicPatcher) Patch(_ context.Context, req *rest.PatchRequest) (*unstructured.Unstructured, error) {
	// Current is never nil here: the front answers 404 for a missing object before asking (only
	// apply creates).
	return p.w.strategicMergePatch(kindOf(req.Write), req.Current, req.Patch, req.Manager, req.Now)
}

// applyPatcher answers application/apply-patch+yaml: server-side apply.
type applyPatcher struct{ w *writer }

func (p applyPatcher) Patch(_ context.Context, req *rest.PatchRequest) (*unstructured.Unstructured, error) {
	force := req.Options.Force != nil && *req.Options.Force
	return p.w.apply(kindOf(req.Write), req.Current, req.Patch, req.Manager, force, req.Now)
}

// tracker records the managedFields of creates, updates, JSON and merge patches.
type tracker struct{ w *writer }

func (t tracker) Track(_ context.Context, req *rest.TrackRequest) (*unstructured.Unstructured, error) {
	return t.w.track(kindOf(req.Write), req.Live, req.Object, req.Manager, req.Now)
}
