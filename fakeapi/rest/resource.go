package rest

import (
	"errors"
	"fmt"
	"github.com/informersim/informersim/fakeapi"
	"io"
	"mime"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// serveResource dispatches a resource request on whether it names an object, then on its method.
func (h *Handler) serveResource(w http.ResponseWriter, r *http.Request, t target) {
	f, err := h.negotiate(r.Header.Get("Accept"), t)
	if err != nil {
		writeError(w, err)
		return
	}
	if t.sub == "scale" {
		h.serveScale(w, r, t, f)
		return
	}
	if h.admission != nil && (r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch) {
		r = withWarnings(r) // for the admission's warnings (warnings.go)
	}
	rc := h.srv.Resource(t.res.storeGVR()).Namespace(t.namespace)
	if t.name == "" {
		h.serveCollection(w, r, t, rc, f)
		return
	}
	h.serveObject(w, r, t, rc, f)
}

// serveCollection serves a request on a collection: list (or watch), create, delete-collection.
func (h *Handler) serveCollection(w http.ResponseWriter, r *http.Request, t target, rc *fakeapi.ResourceClient, f format) {
	switch r.Method {
	case http.MethodGet:
		var opts metav1.ListOptions
		if err := decodeQuery(r, &opts); err != nil {
			writeError(w, err)
			return
		}
		if err := t.storeListOptions(&opts); err != nil {
			writeError(w, err)
			return
		}
		if opts.Watch {
			h.watch(w, r, rc, t, opts, f)
			return
		}
		l, lent, err := h.list(r, rc, t, opts)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		h.writeList(w, t, l, f, lent)
	case http.MethodPost:
		if t.res.Namespaced && t.namespace == "" {
			writeError(w, errMethodNotAllowed(r.Method)) // no create route across namespaces
			return
		}
		var opts metav1.CreateOptions
		obj, err := h.readRequest(r, t, &opts)
		if err != nil {
			writeError(w, err)
			return
		}
		if t.res.builtin && t.res.GVR == namespacesGVR {
			defaultNamespace(obj)
		}
		out, err := h.create(r, t, obj, opts)
		h.respond(w, r, t, http.StatusCreated, out, err, f)
	case http.MethodDelete:
		var opts metav1.DeleteOptions
		var lopts metav1.ListOptions
		if err := decodeQuery(r, &lopts); err != nil {
			writeError(w, err)
			return
		}
		if err := t.storeListOptions(&lopts); err != nil {
			writeError(w, err)
			return
		}
		if err := h.readDeleteOptions(r, &opts); err != nil {
			writeError(w, err)
			return
		}
		if err := h.deleteCollection(r, t, rc, opts, lopts); err != nil {
			h.fail(w, r, err)
			return
		}
		h.writeMeta(w, http.StatusOK, successStatus(t, "", ""), f)
	default:
		writeError(w, errMethodNotAllowed(r.Method))
	}
}

// serveObject serves a request on one object or its subresource: get, update, patch, delete
// (of the object itself only).
func (h *Handler) serveObject(w http.ResponseWriter, r *http.Request, t target, rc *fakeapi.ResourceClient, f format) {
	ctx := r.Context()
	var subs []string
	if t.sub != "" {
		subs = []string{t.sub}
	}
	switch {
	case r.Method == http.MethodGet:
		var opts metav1.GetOptions
		if err := decodeQuery(r, &opts); err != nil {
			writeError(w, err)
			return
		}
		out, err := rc.Get(ctx, t.name, opts, subs...)
		h.respond(w, r, t, http.StatusOK, out, err, f)
	case r.Method == http.MethodPut:
		var opts metav1.UpdateOptions
		obj, err := h.readRequest(r, t, &opts)
		if err != nil {
			writeError(w, err)
			return
		}
		if name := obj.GetName(); name != t.name {
			writeError(w, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", name, t.name)))
			return
		}
		out, err := h.update(r, t, obj, opts, subs)
		h.respond(w, r, t, http.StatusOK, out, err, f)
	case r.Method == http.MethodPatch:
		h.patch(w, r, t, subs, f)
	case r.Method == http.MethodDelete && t.sub == "":
		var opts metav1.DeleteOptions
		if err := h.readDeleteOptions(r, &opts); err != nil {
			writeError(w, err)
			return
		}
		out, removed, err := h.deleteAdmitted(ctx, r, t, rc, t.name, opts)
		switch {
		case err != nil:
			h.fail(w, r, err)
		case removed:
			h.writeMeta(w, http.StatusOK, successStatus(t, t.name, string(out.GetUID())), f)
		default:
			h.writeObject(w, t, http.StatusOK, out, f, committed(r, out))
		}
	default:
		writeError(w, errMethodNotAllowed(r.Method))
	}
}

// list answers a LIST with the server's committed objects themselves, lent read-only
// (fakeapi's ListerWatcher.ListLent), not deep copies: the front only encodes them, and a
// LIST's copies of thousands of objects cost more than the rest of the request. A request
// whose client is gone goes through rc.List, for its error. lent says the items are lent.
func (h *Handler) list(r *http.Request, rc *fakeapi.ResourceClient, t target, opts metav1.ListOptions) (l *unstructured.UnstructuredList, lent bool, err error) {
	if r.Context().Err() != nil {
		l, err = rc.List(r.Context(), opts)
		return l, false, err
	}
	l, err = h.srv.ListerWatcher(t.res.storeGVR(), t.namespace).ListLent(opts)
	return l, true, err
}

// respond writes out with code, or err as a Status.
func (h *Handler) respond(w http.ResponseWriter, r *http.Request, t target, code int, out *unstructured.Unstructured, err error, f format) {
	writeWarnings(w, r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeObject(w, t, code, out, f, committed(r, out))
}

// committed says whether out, the object answered to r, is a committed version, whose encoding
// may be shared with other answers of that version (encache.go). Two kinds of answer carry the
// stored object's resourceVersion without being what is stored: a dry run's, never stored, and
// the answer to an update or patch that removes the last finalizer of an object being deleted,
// which deletes the object instead of storing the change and answers the object as the write
// made it (docs/fakeapi.md §5.2). The second is known by its shape: a write's answer marked for
// deletion with no finalizers left. That also catches a terminating namespace's answer and a
// pod's in its grace period, which are committed; they are merely encoded again.
func committed(r *http.Request, out *unstructured.Unstructured) bool {
	if strings.Contains(r.URL.RawQuery, "dryRun") {
		return false
	}
	if r.Method == http.MethodPut || r.Method == http.MethodPatch {
		return out == nil || out.GetDeletionTimestamp() == nil || len(out.GetFinalizers()) > 0
	}
	return true
}

// writeMeta writes a meta.k8s.io object (a Status) in f's media type.
func (h *Handler) writeMeta(w http.ResponseWriter, code int, obj runtime.Object, f format) {
	if f.codec != nil {
		h.writeEncoded(w, code, f.codec, obj)
		return
	}
	h.writeJSON(w, code, obj)
}

// successStatus is the body kube-apiserver returns when a delete removed the object at once.
func successStatus(t target, name, uid string) *metav1.Status {
	return &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess,
		Details: &metav1.StatusDetails{
			Name:  name,
			Group: t.res.GVR.Group,
			Kind:  t.res.GVR.Resource,
			UID:   types.UID(uid),
		},
	}
}

// patchTypes are the patch media types kube-apiserver accepts by default. CBOR apply
// (application/apply-patch+cbor) is not one: it needs the alpha feature gate
// CBORServingAndStorage, off by default, so it gets the 415 of an unknown type, and neither
// kubectl nor client-go sends it unless told to.
var patchTypes = map[string]types.PatchType{
	string(types.JSONPatchType):           types.JSONPatchType,
	string(types.MergePatchType):          types.MergePatchType,
	string(types.StrategicMergePatchType): types.StrategicMergePatchType,
	string(types.ApplyYAMLPatchType):      types.ApplyYAMLPatchType,
}

// patch answers PATCH. JSON and merge patches reach fakeapi. A type with a Patcher (strategic
// merge, apply: Options.Patchers) is computed by it (patchWith). Without one, strategic merge
// patch is answered 415 for custom resources, as kube-apiserver does (they have no patch
// strategy), and the rest get fakeapi's 405 (fakeapi.md: it does not model the schemas).
func (h *Handler) patch(w http.ResponseWriter, r *http.Request, t target, subs []string, f format) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	pt, ok := patchTypes[mt]
	if !ok || (pt == types.StrategicMergePatchType && !t.res.builtin) {
		accepted := "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
		if t.res.builtin {
			accepted += ", application/strategic-merge-patch+json"
		}
		writeError(w, newStatus(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType,
			fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s", accepted)))
		return
	}
	opts, body, err := h.readPatch(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if errs := validation.ValidatePatchOptions(&opts, pt); len(errs) > 0 {
		writeError(w, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "PatchOptions"}, "", errs))
		return
	}
	// A view whose fields differ from its store's (events.go) patches its own form of the
	// object, which fakeapi does not hold: patchWith converts both ways.
	viaFront := h.tracker != nil || h.admission != nil || t.res.conv != nil
	if p := h.patchers[pt]; p != nil || (viaFront && (pt == types.JSONPatchType || pt == types.MergePatchType)) {
		code, out, err := h.patchWith(r, t, p, pt, body, opts)
		h.respond(w, r, t, code, out, err, f)
		return
	}
	out, err := h.srv.Resource(t.res.storeGVR()).Namespace(t.namespace).Patch(r.Context(), t.name, pt, body, opts, subs...)
	h.respond(w, r, t, http.StatusOK, out, err, f)
}

// readPatch reads a PATCH request's options from the query and its body.
func (h *Handler) readPatch(r *http.Request) (metav1.PatchOptions, []byte, error) {
	var opts metav1.PatchOptions
	if err := decodeQuery(r, &opts); err != nil {
		return opts, nil, err
	}
	body, err := h.readBody(r)
	return opts, body, err
}

// queryCodec decodes query parameters into metav1's option types. metav1.ParameterCodec only
// encodes: its scheme lacks the url.Values conversions, which AddToGroupVersion registers.
var queryCodec = func() runtime.ParameterCodec {
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
	return runtime.NewParameterCodec(scheme)
}()

// decodeQuery decodes the query string into one of metav1's option types, answering a bad
// parameter (limit=x, watch=maybe) with 400 as kube-apiserver does.
func decodeQuery(r *http.Request, into runtime.Object) error {
	if r.URL.RawQuery == "" {
		return nil // DecodeParameters leaves into as it is for no parameters; Query makes a map
	}
	if err := queryCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, into); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	return nil
}

// readBody reads a request body of at most maxBody bytes (413 beyond).
func (h *Handler) readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, h.maxBody+1))
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("rest: reading the request body: %v", err))
	}
	if int64(len(body)) > h.maxBody {
		return nil, newStatus(http.StatusRequestEntityTooLarge, metav1.StatusReasonRequestEntityTooLarge,
			fmt.Sprintf("limit is %d", h.maxBody))
	}
	return body, nil
}

// bodyCodec resolves a request's Content-Type: nil for JSON (or no Content-Type), the codec of
// its media type when the codec supports gvk, and 415 otherwise (a media type the front lacks,
// or protobuf for a custom resource, as kube-apiserver answers).
func (h *Handler) bodyCodec(r *http.Request, gvk schema.GroupVersionKind) (Codec, error) {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil, nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && mt == "application/json" {
		return nil, nil
	}
	if c := h.codecs[mt]; err == nil && c != nil && c.Supports(gvk) {
		return c, nil
	}
	accepted := "application/json"
	for _, m := range h.codecOrder {
		if h.codecs[m].Supports(gvk) {
			accepted += ", " + m
		}
	}
	return nil, newStatus(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType,
		"the body of the request was in an unknown format - accepted media types include: "+accepted)
}

// readRequest decodes the options of a create or update from the query and its object from the
// body: JSON, or a codec's media type for the kinds it supports (415 for any other); a
// malformed body is a 400 naming the kind the URL expects.
func (h *Handler) readRequest(r *http.Request, t target, opts runtime.Object) (*unstructured.Unstructured, error) {
	gvk := t.bodyKind()
	c, err := h.bodyCodec(r, gvk)
	if err != nil {
		return nil, err
	}
	if err := decodeQuery(r, opts); err != nil {
		return nil, err
	}
	body, err := h.readBody(r)
	if err != nil {
		return nil, err
	}
	if c != nil {
		u := &unstructured.Unstructured{}
		if err := c.Decode(body, gvk, u); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)", gvk.Kind, err, summarize(body)))
		}
		return u, nil
	}
	var m map[string]any
	if err := utiljson.Unmarshal(body, &m); err != nil || m == nil {
		if err == nil {
			err = errors.New("the body is not a JSON object")
		}
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)", gvk.Kind, err, summarize(body)))
	}
	u := &unstructured.Unstructured{Object: m}
	if err := h.checkType(gvk, u, false); err != nil {
		return nil, err
	}
	return u, nil
}

// deleteOptionsGVK is the kind of a DeleteOptions body.
var deleteOptionsGVK = metav1.SchemeGroupVersion.WithKind("DeleteOptions")

// readDeleteOptions reads DeleteOptions from the query and, if there is one, the body (JSON or
// a codec's media type; a body wins, as in kube-apiserver, where clients such as client-go send
// the options there).
func (h *Handler) readDeleteOptions(r *http.Request, opts *metav1.DeleteOptions) error {
	if err := decodeQuery(r, opts); err != nil {
		return err
	}
	body, err := h.readBody(r)
	if err != nil || len(body) == 0 {
		return err
	}
	c, err := h.bodyCodec(r, deleteOptionsGVK)
	if err != nil {
		return err
	}
	if c != nil {
		if err := c.Decode(body, deleteOptionsGVK, opts); err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type DeleteOptions): %v (%s)", err, summarize(body)))
		}
		return nil
	}
	if err := utiljson.Unmarshal(body, opts); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type DeleteOptions): %v (%s)", err, summarize(body)))
	}
	if kind := opts.Kind; kind != "" && kind != "DeleteOptions" {
		return apierrors.NewBadRequest(fmt.Sprintf("%s cannot be handled as a DeleteOptions", kind))
	}
	return nil
}

// summarize quotes at most the first 30 bytes of a body for an error message.
func summarize(body []byte) string {
	if len(body) > 30 {
		return fmt.Sprintf("%q...", body[:30])
	}
	return fmt.Sprintf("%q", body)
}

// newStatus is a failure Status with no constructor in apimachinery.
func newStatus(code int32, reason metav1.StatusReason, msg string) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: code, Reason: reason, Message: msg, Details: &metav1.StatusDetails{},
	}}
}
