package rest

import (
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/informersim/informersim/fakeapi"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// scaleGVK is the kind of the scale subresource's bodies.
var scaleGVK = schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}

// scalePath splits a path of fakeapi.ScaleSubresource (".spec.replicas") into its fields.
func scalePath(p string) []string {
	return strings.Split(strings.TrimPrefix(p, "."), ".")
}

// toScale is the autoscaling/v1 Scale of obj, as kube-apiserver derives it: the object's
// identity, the desired count at SpecReplicasPath and the observed one at StatusReplicasPath (0
// when absent), and the selector at LabelSelectorPath in its string form. A built-in workload
// without spec.replicas has the default kube-apiserver would have given it (1); a custom
// resource without a value at SpecReplicasPath cannot be scaled (an error, as from the
// apiserver).
func toScale(res *resource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	sc := res.Scale
	spec, found, err := unstructured.NestedFieldNoCopy(obj.Object, scalePath(sc.SpecReplicasPath)...)
	switch {
	case err != nil:
	case !found && res.builtin:
		spec = int64(1)
	case !found:
		err = fmt.Errorf("the value at %s of %s %q is missing", sc.SpecReplicasPath, res.Kind, obj.GetName())
	}
	specReplicas, ok := asInt64(spec)
	if err == nil && !ok {
		err = fmt.Errorf("the value at %s of %s %q is not an integer", sc.SpecReplicasPath, res.Kind, obj.GetName())
	}
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	status, _, _ := unstructured.NestedFieldNoCopy(obj.Object, scalePath(sc.StatusReplicasPath)...)
	statusReplicas, _ := asInt64(status) // absent or not a number: 0, as for a CRD
	scaleStatus := map[string]any{"replicas": statusReplicas}
	if sc.LabelSelectorPath != "" {
		sel, err := selectorString(obj, sc.LabelSelectorPath)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if sel != "" {
			scaleStatus["selector"] = sel
		}
	}
	md := map[string]any{"name": obj.GetName(), "uid": string(obj.GetUID()), "resourceVersion": obj.GetResourceVersion()}
	if ns := obj.GetNamespace(); ns != "" {
		md["namespace"] = ns
	}
	if ts, ok := obj.Object["metadata"].(map[string]any)["creationTimestamp"]; ok {
		md["creationTimestamp"] = ts
	}
	specMap := map[string]any{}
	if specReplicas != 0 {
		specMap["replicas"] = specReplicas // omitted when zero, as autoscaling/v1 encodes it
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": scaleGVK.GroupVersion().String(),
		"kind":       scaleGVK.Kind,
		"metadata":   md,
		"spec":       specMap,
		"status":     scaleStatus,
	}}, nil
}

// selectorString is the label selector at path in its string form: a string is taken as it is,
// a metav1.LabelSelector object (the built-in workloads' spec.selector) is converted.
func selectorString(obj *unstructured.Unstructured, path string) (string, error) {
	v, found, _ := unstructured.NestedFieldNoCopy(obj.Object, scalePath(path)...)
	switch s := v.(type) {
	case nil:
		if !found {
			return "", nil
		}
	case string:
		return s, nil
	case map[string]any:
		var ls metav1.LabelSelector
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(s, &ls); err != nil {
			return "", fmt.Errorf("the label selector at %s: %w", path, err)
		}
		sel, err := metav1.LabelSelectorAsSelector(&ls)
		if err != nil {
			return "", fmt.Errorf("the label selector at %s: %w", path, err)
		}
		return sel.String(), nil
	}
	return "", fmt.Errorf("the label selector at %s is a %T", path, v)
}

// asInt64 reads a JSON number that is an integer.
func asInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n == float64(int64(n)) {
			return int64(n), true
		}
	}
	return 0, false
}

// serveScale answers the scale subresource: GET reads the Scale of the object, PUT writes its
// spec.replicas to the object's SpecReplicasPath, and PATCH (JSON or merge patch) patches the
// Scale and writes it as PUT does, atomically (writeScale).
func (h *Handler) serveScale(w http.ResponseWriter, r *http.Request, t target, f format) {
	rc := h.srv.Resource(t.res.storeGVR()).Namespace(t.namespace)
	ctx := r.Context()
	switch r.Method {
	case http.MethodGet:
		var opts metav1.GetOptions
		if err := decodeQuery(r, &opts); err != nil {
			writeError(w, err)
			return
		}
		obj, err := rc.Get(ctx, t.name, opts)
		if err == nil {
			obj, err = toScale(t.res, obj)
		}
		h.respond(w, r, t, http.StatusOK, obj, err, f)
	case http.MethodPut:
		var opts metav1.UpdateOptions
		scale, err := h.readScale(r, t, &opts)
		if err != nil {
			writeError(w, err)
			return
		}
		out, err := h.writeScale(r, t, fakeapi.VerbUpdate, func(*unstructured.Unstructured) (*unstructured.Unstructured, error) { return scale, nil }, len(opts.DryRun) > 0)
		h.respond(w, r, t, http.StatusOK, out, err, f)
	case http.MethodPatch:
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		pt := types.PatchType(mt)
		if pt != types.JSONPatchType && pt != types.MergePatchType {
			writeError(w, newStatus(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType,
				fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s, %s (for the scale subresource)", types.JSONPatchType, types.MergePatchType)))
			return
		}
		opts, body, err := h.readPatch(r)
		if err != nil {
			writeError(w, err)
			return
		}
		out, err := h.writeScale(r, t, fakeapi.VerbPatch, func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			return fakeapi.PatchObject(t.res.GVR.GroupResource(), t.name, cur, pt, body)
		}, len(opts.DryRun) > 0)
		h.respond(w, r, t, http.StatusOK, out, err, f)
	default:
		writeError(w, errMethodNotAllowed(r.Method))
	}
}

// readScale decodes a Scale body (JSON or a codec's) and checks its kind.
func (h *Handler) readScale(r *http.Request, t target, opts runtime.Object) (*unstructured.Unstructured, error) {
	u, err := h.readRequest(r, t, opts)
	if err != nil {
		return nil, err
	}
	if gvk := u.GroupVersionKind(); gvk.Kind != "" && gvk != scaleGVK {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("%s cannot be handled as a Scale", gvk.Kind))
	}
	return u, nil
}

// writeScale writes a Scale into the object under the server's lock (fakeapi's Mutate): next is
// given the current Scale and returns the one to write, whose replicas go to the object's
// SpecReplicasPath; a resourceVersion in it is a precondition (409 when stale), and without one
// the write applies to the object as stored. It returns the Scale of the result.
func (h *Handler) writeScale(r *http.Request, t target, verb fakeapi.Verb, next func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error), dryRun bool) (*unstructured.Unstructured, error) {
	rc := h.srv.Resource(t.res.storeGVR()).Namespace(t.namespace)
	out, _, err := rc.Mutate(r.Context(), t.name, fakeapi.Mutation{
		Verb:   verb,
		DryRun: dryRun,
		Compute: func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			cur, err := toScale(t.res, live)
			if err != nil {
				return nil, err
			}
			want, err := next(cur)
			if err != nil {
				return nil, err
			}
			if name := want.GetName(); name != "" && name != t.name {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", name, t.name))
			}
			replicas, found, _ := unstructured.NestedFieldNoCopy(want.Object, "spec", "replicas")
			n, ok := asInt64(replicas)
			switch {
			case !found || replicas == nil:
				n = 0 // omitted: zero, as the Go type decodes it
			case !ok:
				return nil, apierrors.NewBadRequest(fmt.Sprintf("spec.replicas of the Scale is not an integer: %v", replicas))
			}
			if n < 0 || n > 1<<31-1 {
				return nil, apierrors.NewInvalid(scaleGVK.GroupKind(), t.name, field.ErrorList{
					field.Invalid(field.NewPath("spec", "replicas"), n, "must be greater than or equal to 0 and fit in an int32")})
			}
			if err := unstructured.SetNestedField(live.Object, n, scalePath(t.res.Scale.SpecReplicasPath)...); err != nil {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("cannot set %s: %v", t.res.Scale.SpecReplicasPath, err))
			}
			if rv := want.GetResourceVersion(); rv != "" {
				live.SetResourceVersion(rv)
			}
			return live, nil
		},
	})
	if err != nil {
		return nil, err
	}
	return toScale(t.res, out)
}
