package rest

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// serveResource dispatches a resource request on its method and on whether it names an object.
func (h *Handler) serveResource(w http.ResponseWriter, r *http.Request, t target) {
	f, err := negotiate(r.Header.Get("Accept"))
	if err != nil {
		writeError(w, err)
		return
	}
	rc := h.srv.Resource(t.res.GVR).Namespace(t.namespace)
	ctx := r.Context()
	var subs []string
	if t.sub != "" {
		subs = []string{t.sub}
	}
	switch {
	case t.name == "" && r.Method == http.MethodGet:
		var opts metav1.ListOptions
		if err := decodeQuery(r, &opts); err != nil {
			writeError(w, err)
			return
		}
		if opts.Watch {
			h.watch(w, r, rc, t, opts, f)
			return
		}
		l, err := rc.List(ctx, opts)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		h.writeList(w, t, l, f)
	case t.name == "" && r.Method == http.MethodPost:
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
		out, err := rc.Create(ctx, obj, opts)
		h.respond(w, r, t, http.StatusCreated, out, err, f)
	case t.name == "" && r.Method == http.MethodDelete:
		var opts metav1.DeleteOptions
		var lopts metav1.ListOptions
		if err := decodeQuery(r, &lopts); err != nil {
			writeError(w, err)
			return
		}
		if err := h.readDeleteOptions(r, &opts); err != nil {
			writeError(w, err)
			return
		}
		if err := rc.DeleteCollection(ctx, opts, lopts); err != nil {
			h.fail(w, r, err)
			return
		}
		h.writeJSON(w, http.StatusOK, successStatus(t, "", ""))
	case t.name == "":
		writeError(w, errMethodNotAllowed(r.Method))
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
		out, err := rc.Update(ctx, obj, opts, subs...)
		h.respond(w, r, t, http.StatusOK, out, err, f)
	case r.Method == http.MethodPatch:
		h.patch(w, r, t, subs, f)
	case r.Method == http.MethodDelete && t.sub == "":
		var opts metav1.DeleteOptions
		if err := h.readDeleteOptions(r, &opts); err != nil {
			writeError(w, err)
			return
		}
		out, removed, err := rc.DeleteResult(ctx, t.name, opts)
		switch {
		case err != nil:
			h.fail(w, r, err)
		case removed:
			h.writeJSON(w, http.StatusOK, successStatus(t, t.name, string(out.GetUID())))
		default:
			h.writeObject(w, t, http.StatusOK, out, f)
		}
	default:
		writeError(w, errMethodNotAllowed(r.Method))
	}
}

// respond writes out with code, or err as a Status.
func (h *Handler) respond(w http.ResponseWriter, r *http.Request, t target, code int, out *unstructured.Unstructured, err error, f format) {
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeObject(w, t, code, out, f)
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

// patchTypes are the patch media types kube-apiserver knows.
var patchTypes = map[string]types.PatchType{
	string(types.JSONPatchType):           types.JSONPatchType,
	string(types.MergePatchType):          types.MergePatchType,
	string(types.StrategicMergePatchType): types.StrategicMergePatchType,
	string(types.ApplyYAMLPatchType):      types.ApplyYAMLPatchType,
	string(types.ApplyCBORPatchType):      types.ApplyCBORPatchType,
}

// patch answers PATCH. JSON and merge patches reach fakeapi; strategic merge patch is answered
// 415 for custom resources, as kube-apiserver does (they have no patch strategy), and 405 by
// fakeapi for built-in kinds (fakeapi.md: it does not model the schemas); apply patches get
// fakeapi's 405 too.
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
	var opts metav1.PatchOptions
	if err := decodeQuery(r, &opts); err != nil {
		writeError(w, err)
		return
	}
	body, err := h.readBody(r)
	if err != nil {
		writeError(w, err)
		return
	}
	out, err := h.srv.Resource(t.res.GVR).Namespace(t.namespace).Patch(r.Context(), t.name, pt, body, opts, subs...)
	h.respond(w, r, t, http.StatusOK, out, err, f)
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

// readRequest decodes the options of a create or update from the query and its object from the
// JSON body. Only JSON bodies are accepted (415 otherwise, as for a media type the apiserver
// lacks); malformed JSON is a 400 naming the kind the URL expects.
func (h *Handler) readRequest(r *http.Request, t target, opts runtime.Object) (*unstructured.Unstructured, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return nil, newStatus(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType,
				fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: application/json"))
		}
	}
	if err := decodeQuery(r, opts); err != nil {
		return nil, err
	}
	body, err := h.readBody(r)
	if err != nil {
		return nil, err
	}
	m, ok := decodeObject(body)
	if ok {
		return &unstructured.Unstructured{Object: m}, nil
	}
	// Not a plain object decodeObject takes: Unmarshal decodes it or says what is wrong.
	if err := utiljson.Unmarshal(body, &m); err != nil || m == nil {
		if err == nil {
			err = errors.New("the body is not a JSON object")
		}
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)", t.res.Kind, err, summarize(body)))
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// readDeleteOptions reads DeleteOptions from the query and, if there is one, the JSON body (a
// body wins, as in kube-apiserver, where clients such as client-go send the options there).
func (h *Handler) readDeleteOptions(r *http.Request, opts *metav1.DeleteOptions) error {
	if err := decodeQuery(r, opts); err != nil {
		return err
	}
	body, err := h.readBody(r)
	if err != nil || len(body) == 0 {
		return err
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
