package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
)

// The seam: what the front cannot do without the Go types of k8s.io/api (which this module does
// not import) is plugged in through Options. The nested module kube/ fills it (kube.RESTOptions):
// a protobuf Codec and the strategic merge and apply Patchers. With nothing plugged in, the front
// speaks JSON only and answers those patch types as fakeapi does.

// A Codec serves one media type besides JSON (application/vnd.kubernetes.protobuf, say) for
// request bodies, responses and watch streams. Its methods are called concurrently. Every slice
// it returns is the caller's: the front keeps items (ItemCodec) and hands bodies to its
// in-process transport without copying them, so a codec must never change or reuse one
// afterwards.
type Codec interface {
	// MediaType is the media type it serves, without parameters.
	MediaType() string
	// StreamMediaType is the Content-Type of a watch stream in this media type (for protobuf,
	// "application/vnd.kubernetes.protobuf;stream=watch").
	StreamMediaType() string
	// Supports reports whether objects of kind gvk have this representation: the built-in kinds
	// and the meta.k8s.io kinds (Status, Table, PartialObjectMetadata, DeleteOptions, WatchEvent)
	// do in protobuf, custom resources do not.
	Supports(gvk schema.GroupVersionKind) bool
	// Encode returns the body of obj: an *unstructured.Unstructured or
	// *unstructured.UnstructuredList of a supported kind, or a meta.k8s.io object (*metav1.Status,
	// *metav1.Table, *metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList).
	Encode(obj runtime.Object) ([]byte, error)
	// Decode decodes a request body into into: an *unstructured.Unstructured whose kind must be
	// gvk (it is filled with the object's JSON form), or a meta.k8s.io options type
	// (*metav1.DeleteOptions). A body that is not a valid encoding is an error; the front answers
	// it 400. What it puts into into belongs to into alone: the front hands the object over to the
	// fake apiserver, which stores its maps and lists without copying them, so a codec must keep
	// no reference to any of them.
	Decode(body []byte, gvk schema.GroupVersionKind, into runtime.Object) error
	// EncodeWatchEvent returns one event of a watch stream, framed as the stream needs it (for
	// protobuf, a length-prefixed metav1.WatchEvent). obj is as for Encode.
	EncodeWatchEvent(typ watch.EventType, obj runtime.Object) ([]byte, error)
}

// An ItemCodec is a Codec that can also encode one object alone, as an item, and build a body,
// a list and a watch event around items. The front encodes each committed version of an object
// once per codec and shares the item between every response that carries it (encache.go). What
// the three assemble must be byte for byte what Encode and EncodeWatchEvent give for the same
// object and list.
type ItemCodec interface {
	Codec
	// EncodeItem returns the item of obj, an object of a supported kind.
	EncodeItem(obj *unstructured.Unstructured) ([]byte, error)
	// ItemBody returns the body of the object of kind gvk whose item is item.
	ItemBody(gvk schema.GroupVersionKind, item []byte) ([]byte, error)
	// ItemList returns the body of a list of kind gvk (ObjectList) with metadata meta and items.
	ItemList(gvk schema.GroupVersionKind, meta metav1.ListMeta, items [][]byte) ([]byte, error)
	// ItemWatchEvent returns the frame of a watch event of type typ carrying the object of kind
	// gvk whose item is item.
	ItemWatchEvent(typ watch.EventType, gvk schema.GroupVersionKind, item []byte) ([]byte, error)
}

// A TypeChecker is a Codec that also tells whether an object in its JSON form fits the Go type
// of its kind. kube-apiserver decodes every object a client writes into that type, so a body
// with, say, a string where an integer belongs is a 400 there; the front asks the codec that
// supports the kind, for each object written (create, update, and a patch's result), and
// answers a misfit the same way. Fields the type lacks are not misfits (fakeapi keeps them).
type TypeChecker interface {
	// CheckObject reports whether obj fits the Go type of gvk (the kind the URL names; obj may
	// lack its own apiVersion and kind).
	CheckObject(gvk schema.GroupVersionKind, obj *unstructured.Unstructured) error
}

// A Patcher computes patches of one type (strategic merge, apply) that fakeapi does not model.
// The front calls it under the fake apiserver's lock with the object as stored (through
// fakeapi.Mutation), so a patch is atomic with respect to the resourceVersion, is recorded as a
// patch and takes every fault injected for patches, as JSON patches do. It must therefore not
// call back into the server. Its methods are called concurrently for different servers.
type Patcher interface {
	// Patch returns the object that req's patch makes of req.Current. Current is nil when the
	// object does not exist: a Patcher that creates (apply) returns the new object, any other
	// returns a NotFound error. Errors that are API statuses are answered with their code; any
	// other is a 400 BadRequest.
	Patch(ctx context.Context, req *PatchRequest) (*unstructured.Unstructured, error)
}

// PatchRequest is one patch handed to a Patcher.
type PatchRequest struct {
	// Write says what the object's kind is and who patches it (for an apply, Manager is the
	// fieldManager parameter, which the front requires).
	Write
	// Type is the patch type (the request's Content-Type).
	Type types.PatchType
	// Current is a private copy of the object as stored (nil when it does not exist); the
	// Patcher may change it and return it.
	Current *unstructured.Unstructured
	// Patch is the request body; Options the decoded query.
	Patch   []byte
	Options metav1.PatchOptions
}

// A TableConvertor builds server-side tables (metav1.Table, what `kubectl get` prints) for the
// kinds it knows columns of, as kube-apiserver's table convertors do. Its methods are called
// concurrently, outside the fake apiserver's lock.
type TableConvertor interface {
	// ConvertToTable returns a table with the column definitions and one row of cells per
	// object of req.Objects, in order, or nil for a kind it knows no columns of (the front then
	// gives Name and Age). The front fills in the rest (the list metadata, each row's object,
	// headers left out when the client asks for none). An error is answered as a 500.
	ConvertToTable(ctx context.Context, req *TableRequest) (*metav1.Table, error)
}

// TableRequest is one table asked of a TableConvertor.
type TableRequest struct {
	// GVK is the kind of the objects; Definition the CustomResourceDefinition that defines it
	// (read-only), nil for a kind of the configuration.
	GVK        schema.GroupVersionKind
	Definition *unstructured.Unstructured
	// Objects are the rows' objects, read-only (they may be the server's own, lent).
	Objects []unstructured.Unstructured
	// Now is the fake apiserver's clock, which ages are counted from.
	Now time.Time
}

// checkType returns kube-apiserver's answer for obj, of kind gvk, when a codec that supports
// the kind says it does not fit its Go type, and nil otherwise. For a body (create, update) that
// is a 400 BadRequest; for the result of a patch, a 422 on the field "patch" carrying the patched
// object, as the apiserver's patcher reports a result it cannot decode.
func (h *Handler) checkType(gvk schema.GroupVersionKind, obj *unstructured.Unstructured, patched bool) error {
	for _, mt := range h.codecOrder {
		c := h.codecs[mt]
		tc, ok := c.(TypeChecker)
		if !ok || !c.Supports(gvk) {
			continue
		}
		err := tc.CheckObject(gvk, obj)
		switch {
		case err == nil:
			return nil
		case patched:
			js, _ := json.Marshal(obj.Object) // plain maps always encode
			return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), string(js), err.Error())})
		default:
			return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", gvk.Kind, gvk.Version, gvk.Kind, err))
		}
	}
	return nil
}

// validateSeam checks the codecs and patchers of opts.
func validateSeam(opts Options) error {
	seen := map[string]bool{}
	for i, c := range opts.Codecs {
		if c == nil {
			return fmt.Errorf("rest: Codecs[%d] is nil", i)
		}
		mt, _, err := mime.ParseMediaType(c.MediaType())
		switch {
		case err != nil || mt != c.MediaType():
			return fmt.Errorf("rest: Codecs[%d] has media type %q: want a media type without parameters", i, c.MediaType())
		case mt == "application/json" || strings.Contains(mt, "*"):
			return fmt.Errorf("rest: Codecs[%d]: the front serves %q itself", i, mt)
		case seen[mt]:
			return fmt.Errorf("rest: Codecs[%d]: media type %q given twice", i, mt)
		}
		seen[mt] = true
	}
	for pt, p := range opts.Patchers {
		if p == nil {
			return fmt.Errorf("rest: the Patcher of %q is nil", pt)
		}
		if _, ok := patchTypes[string(pt)]; !ok {
			return fmt.Errorf("rest: Patchers: %q is not a patch type", pt)
		}
		if pt == types.JSONPatchType || pt == types.MergePatchType {
			return fmt.Errorf("rest: Patchers: fakeapi applies %q itself", pt)
		}
	}
	return nil
}

// errNilObject is a Patcher's answer of no object and no error.
var errNilObject = errors.New("rest: the patcher returned no object")
