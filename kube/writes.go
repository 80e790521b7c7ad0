package kube

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/informersim/informersim/internal/fastpath"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
)

// writer computes what kube-apiserver computes on the way to storage for the writes fakeapi
// cannot compute alone: strategic merge patches (from the patch strategies and merge keys of
// k8s.io/api's Go types), server-side applies and the managedFields of every write (through
// apimachinery's managedfields, the apiserver's own field manager). Its methods are pure: they
// are handed the live object and return the object to store, so that fakeapi runs them under
// its lock (fakeapi.Mutation) and every fault of the server reaches these writes too.
type writer struct {
	fields *fieldManagers
}

// strategicMergePatch applies a strategic merge patch to live (a built-in kind) as
// kube-apiserver's patch handler does, then records the change for manager. live is not
// changed.
func (w *writer) strategicMergePatch(k Kind, live *unstructured.Unstructured, patch []byte, manager string, now time.Time) (*unstructured.Unstructured, error) {
	if !k.Builtin {
		return nil, apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "patch", schema.GroupResource{}, "",
			"strategic merge patch is not supported for custom resources", 0, false)
	}
	if live == nil {
		return nil, fmt.Errorf("kube: a strategic merge patch needs the live object")
	}
	typed, err := scheme.Scheme.New(k.GVK)
	if err != nil {
		typed, err = extensionsScheme.New(k.GVK) // CustomResourceDefinitions
	}
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("kube: no Go type for %v: %w", k.GVK, err))
	}
	meta, err := strategicpatch.NewPatchMetaFromStruct(typed)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	var patchMap map[string]any
	if err := utiljson.Unmarshal(patch, &patchMap); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if patchMap == nil {
		return nil, apierrors.NewBadRequest("the patch is null, not a JSON object")
	}
	patched, err := strategicpatch.StrategicMergeMapPatchUsingLookupPatchMeta(live.DeepCopy().Object, patchMap, meta)
	if err != nil {
		return nil, smpError(err)
	}
	// kube-apiserver decodes the result into the kind's Go type: a patch that makes a field the
	// wrong type (a string for replicas, a list of lists) is a 422 on the "patch" field. The
	// stored object stays the merged map, unknown fields included, as fakeapi keeps them on
	// every write.
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(patched, typed); err != nil {
		return nil, apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), string(patch), err.Error())})
	}
	dropDirectives(map[string]any(patched)) // a JSONMap is not a map[string]any to a type switch
	out := &unstructured.Unstructured{Object: patched}
	return w.track(k, live, out, manager, now)
}

// dropDirectives removes the directives a strategic merge patch leaves in its result where the
// object had nothing to merge them with ($retainKeys or $setElementOrder in a map the object
// lacked): kube-apiserver's decode into the Go type drops them as unknown fields, so they are
// never stored. No field of a built-in kind starts with "$".
func dropDirectives(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "$patch" || k == "$retainKeys" || strings.HasPrefix(k, "$setElementOrder/") || strings.HasPrefix(k, "$deleteFromPrimitiveList/") {
				delete(x, k)
				continue
			}
			dropDirectives(e)
		}
	case []any:
		for _, e := range x {
			dropDirectives(e)
		}
	}
}

// smpError answers a failed strategic merge patch as kube-apiserver does: 400 for a malformed
// patch, 422 for one that cannot apply to this object, 422 Invalid otherwise (its decoder
// rejects what the merge produced).
func smpError(err error) error {
	switch err {
	case mergepatch.ErrBadJSONDoc, mergepatch.ErrBadPatchFormatForPrimitiveList, mergepatch.ErrBadPatchFormatForRetainKeys,
		mergepatch.ErrBadPatchFormatForSetElementOrderList, mergepatch.ErrUnsupportedStrategicMergePatchFormat:
		return apierrors.NewBadRequest(err.Error())
	case mergepatch.ErrNoListOfLists, mergepatch.ErrPatchContentNotMatchRetainKeys:
		return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
	}
	return apierrors.NewBadRequest(err.Error())
}

// apply is a server-side apply of patch (YAML or JSON) by manager to live, or to a new object
// when live is nil. A conflict with other managers' fields is a 409 whose details list them
// (causes of type FieldManagerConflict) unless force is set. live is not changed.
func (w *writer) apply(k Kind, live *unstructured.Unstructured, patch []byte, manager string, force bool, now time.Time) (*unstructured.Unstructured, error) {
	fm, err := w.fields.get(k)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	applied := &unstructured.Unstructured{Object: map[string]any{}}
	if err := yaml.Unmarshal(patch, &applied.Object); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	if applied.Object == nil {
		return nil, apierrors.NewBadRequest("error decoding YAML: the applied configuration is empty")
	}
	base := live
	if base == nil {
		base = newObject(k.GVK)
	} else {
		base = base.DeepCopy()
	}
	out, err := fm.Apply(base, applied, manager, force)
	if err != nil {
		return nil, applyError(err)
	}
	u, ok := out.(*unstructured.Unstructured)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("kube: the field manager returned a %T", out))
	}
	stampTimes(live, u, now)
	return u, nil
}

// applyError keeps the field manager's API errors (409 conflicts, 400 for a wrong version or
// managedFields in the patch) and answers its other errors, which all come from an applied
// configuration that does not fit the schema, with 400. kube-apiserver v1.37 answers those 500
// (kubernetes#139253), which no client can act on.
func applyError(err error) error {
	if _, ok := err.(apierrors.APIStatus); ok {
		return err
	}
	return apierrors.NewBadRequest(err.Error())
}

// track records in obj's managedFields what a create (live nil), update or patch by manager
// changed, as kube-apiserver does for every write that is not an apply. Like the apiserver it
// never fails a write for its managedFields: if they cannot be computed, obj keeps live's.
func (w *writer) track(k Kind, live, obj *unstructured.Unstructured, manager string, now time.Time) (*unstructured.Unstructured, error) {
	fm, err := w.fields.get(k)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	base := live
	if base == nil {
		base = newObject(k.GVK)
	}
	// The field manager reads and writes managedFields through the objects' accessors:
	// managedObject's take the fast paths (managedobject.go); a plain build's, Unstructured's.
	var out runtime.Object
	if fastpath.Use(fastpath.ManagedFieldsAccessors) {
		out = unwrapManaged(fm.UpdateNoErrors(&managedObject{base}, &managedObject{obj}, manager))
	} else {
		out = fm.UpdateNoErrors(base, obj, manager)
	}
	u, ok := out.(*unstructured.Unstructured)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("kube: the field manager returned a %T", out))
	}
	stampTimes(live, u, now)
	return u, nil
}
