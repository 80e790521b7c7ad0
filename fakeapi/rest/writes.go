package rest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/informersim/informersim/fakeapi"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// A FieldTracker records managedFields on the writes that are not applies, as kube-apiserver's
// field manager does on every create, update and patch: the manager named by the request's
// fieldManager (or its User-Agent) becomes an Update manager of the fields it changed. kube/
// provides one (apimachinery's managedfields with the schemas of k8s.io/api). Without one the
// front records no managedFields, as fakeapi alone does.
//
// Track is called under the fake apiserver's lock (see fakeapi.Mutation), with the object as
// stored, so it must not call back into the server; it is called concurrently for different
// servers.
type FieldTracker interface {
	// Track returns req.Object with its managedFields updated for the write. An error is the
	// request's answer: a Status as it is, any other error as a 400. What it returns is handed
	// over to the fake apiserver, which stores its maps and lists without copying them
	// (fakeapi.Mutation's HandOver): the tracker must keep no reference to any of them, nor put
	// in values it keeps or changes later. (It may share values with req.Live, which the server
	// never changes.) Should a tracker change one later, the server reports it as a change of an
	// object lent to the front (a fakeapi.MutationError), as the answer is lent to the front.
	Track(ctx context.Context, req *TrackRequest) (*unstructured.Unstructured, error)
}

// TrackRequest is one write handed to a FieldTracker.
type TrackRequest struct {
	// Write says what the object's kind is and who writes it.
	Write
	// Live is the object as stored, nil for a create, lent read-only (fakeapi.Mutation's
	// LendTo): the tracker must not change it, nor return it (the server reports a change as a
	// fakeapi.MutationError). Object is what the write will store, the request's own; the
	// tracker may change it in place and return it.
	Live, Object *unstructured.Unstructured
}

// Write is what a Patcher or a FieldTracker knows of a write besides the objects.
type Write struct {
	// GVK is the kind of the object; Builtin says it is one of fakeapi's built-in kinds (with a
	// schema in k8s.io/api) rather than a custom resource; Status says its resource has the
	// status subresource.
	GVK     schema.GroupVersionKind
	Builtin bool
	Status  bool
	// Resource is the resource the URL names (for a view of a custom resource's other version,
	// that version's).
	Resource schema.GroupVersionResource
	// DryRun says the request asked for dryRun=All: nothing will be stored.
	DryRun bool
	// Namespace and Name are the URL's (Name is empty for a create); Subresource is "" or
	// "status".
	Namespace, Name, Subresource string
	// Manager is the field manager of the write: the fieldManager query parameter or, without
	// one, the User-Agent up to its first "/", as kube-apiserver derives it.
	Manager string
	// Now is the fake apiserver's clock at the write (managedFields timestamps).
	Now time.Time
	// Definition is the CustomResourceDefinition that defines the kind, as the front serves it
	// (read-only: the server's own), or nil for a kind the configuration declares (a built-in
	// kind, or a custom resource given as a fakeapi.Resource).
	Definition *unstructured.Unstructured
	// FieldValidation is the request's fieldValidation parameter: "Strict", "Warn", "Ignore" or
	// "" (kube-apiserver's default, Warn).
	FieldValidation string
}

// An Admission admits an object on its way to storage, as kube-apiserver's decoding (pruning and
// defaulting of custom resources) and its registry strategies (validation) do: it returns the
// object to store, or the request's answer as an error (a 422 Invalid Status for an invalid
// object; an error that is not a Status is answered 400). It is called for every create, update
// and patch the front serves, status writes included, after the patch is computed and before
// managedFields are recorded; updates and patches under the fake apiserver's lock (through
// fakeapi.Mutation), so, as a Patcher, it must not call back into the server. Its methods are
// called concurrently.
type Admission interface {
	Admit(ctx context.Context, req *AdmitRequest) (*unstructured.Unstructured, error)
}

// A CallingAdmission is an Admission that may call out of the process for some writes, as
// kube-apiserver's admission webhooks do. The front admits those writes without holding the fake
// apiserver's lock: an update or a patch reads the object, computes and admits the write, and
// stores it only if the object is still the version read, else reads it again and retries, as
// kube-apiserver's GuaranteedUpdate does (at most maxAdmitAttempts times, then 409). So the
// admission may take its time, and whoever it calls may read the API meanwhile.
//
// A delete is admitted too when CallsOut reports true for it (kube-apiserver's admission sees
// deletes; the front's own Admission sees only the writes that store an object): the object is
// read, AdmitDelete called, and the object deleted only if it is still the version read, else
// the delete is admitted again.
type CallingAdmission interface {
	Admission
	// CallsOut reports whether admitting w may call out of the process.
	CallsOut(w Write) bool
	// AdmitDelete admits the delete of obj (read-only, as stored) with opts: nil, or the
	// request's answer as an error.
	AdmitDelete(ctx context.Context, w Write, obj *unstructured.Unstructured, opts metav1.DeleteOptions) error
}

// AdmitRequest is one write handed to an Admission.
type AdmitRequest struct {
	// Write says what the object's kind is, who writes it, and the definition of a custom
	// resource.
	Write
	// Old is the object as stored, nil for a create, read-only. Object is what the write will
	// store, the request's own: Admit may change it in place and return it, and must keep no
	// reference to it (it is handed over to the server as a FieldTracker's result is).
	Old, Object *unstructured.Unstructured
}

// writeOf describes a write to t by the request r.
func (h *Handler) writeOf(r *http.Request, t target, fieldManager string) Write {
	return Write{
		GVK:         t.res.GVR.GroupVersion().WithKind(t.res.Kind),
		Resource:    t.res.GVR,
		Builtin:     t.res.builtin,
		Status:      t.res.Status,
		Namespace:   t.namespace,
		Name:        t.name,
		Subresource: t.sub,
		Manager:     managerOrUserAgent(fieldManager, r.UserAgent()),
		Now:         h.now(),
		Definition:  t.res.definition(),
	}
}

// definition is the CustomResourceDefinition of a resource it defines, or nil.
func (r *resource) definition() *unstructured.Unstructured {
	if r.defined == nil {
		return nil
	}
	return r.defined.crd
}

// admit runs the Admission, if any, on obj (old nil for a create).
func (h *Handler) admit(ctx context.Context, wr Write, old, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if h.admission == nil {
		return obj, nil
	}
	out, err := h.admission.Admit(ctx, &AdmitRequest{Write: wr, Old: old, Object: obj})
	if err != nil {
		return nil, asStatus(err)
	}
	if out == nil {
		return nil, apierrors.NewInternalError(errors.New("rest: the admission returned no object"))
	}
	return out, nil
}

// managerOrUserAgent is kube-apiserver's default field manager: the fieldManager parameter if
// set (validated before), else the User-Agent's product ("kubectl" for "kubectl/v1.32 ..."),
// as productManager makes it.
func managerOrUserAgent(manager, userAgent string) string {
	if manager != "" {
		return manager
	}
	product, _, _ := strings.Cut(userAgent, "/")
	if len(product) <= validation.FieldManagerMaxLength && printableASCII(product) {
		return product // the common case, which productManager would copy as it is
	}
	return productManager(product)
}

// productManager is the manager a User-Agent's product names: its unprintable characters
// dropped, cut to the longest valid manager.
func productManager(product string) string {
	var b bytes.Buffer
	for _, c := range product {
		if !unicode.IsPrint(c) {
			continue
		}
		if b.Len()+utf8.RuneLen(c) > validation.FieldManagerMaxLength {
			break
		}
		b.WriteRune(c)
	}
	return b.String()
}

// printableASCII says s holds only printable ASCII characters (space to tilde), each of which
// unicode.IsPrint takes and utf8 encodes in one byte.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// asStatus answers a Patcher's or tracker's error: API statuses as they are, anything else as
// a 400 (what they reject is the request's content).
func asStatus(err error) error {
	var api apierrors.APIStatus
	if errors.As(err, &api) {
		return err
	}
	return apierrors.NewBadRequest(err.Error())
}

// create stores obj (POST), recording its managedFields first when a FieldTracker is set. obj
// is the request's own (readRequest decoded it from the body) and then the tracker's result,
// which is the request's too (FieldTracker), so it is handed over to the server, not copied
// (fakeapi.ResourceClient.CreateHandedOver). The answer is only encoded, so it is the stored
// object lent (createLender), not a copy.
func (h *Handler) create(r *http.Request, t target, obj *unstructured.Unstructured, opts metav1.CreateOptions) (*unstructured.Unstructured, error) {
	if errs := validation.ValidateCreateOptions(&opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "CreateOptions"}, "", errs)
	}
	rc := h.srv.Resource(t.res.storeGVR()).Namespace(t.namespace)
	if t.res.defined != nil && t.res.defined.terminating {
		return nil, apierrors.NewForbidden(t.res.GVR.GroupResource(), obj.GetName(), errors.New("create not allowed while custom resource definition is terminating"))
	}
	if h.admission != nil || h.tracker != nil {
		// The admission and the tracker need the object's kind; fakeapi would fill in the same.
		if obj.GetAPIVersion() == "" && obj.GetKind() == "" {
			obj.SetGroupVersionKind(t.res.GVR.GroupVersion().WithKind(t.res.Kind))
		}
	}
	if h.admission != nil && t.res.Namespaced && obj.GetNamespace() == "" {
		obj.SetNamespace(t.namespace) // as kube-apiserver's create handler fills it in first
	}
	wr := h.writeOf(r, t, opts.FieldManager)
	wr.FieldValidation = opts.FieldValidation
	wr.DryRun = len(opts.DryRun) > 0
	obj, err := h.admit(r.Context(), wr, nil, obj)
	if err != nil {
		return nil, err
	}
	if h.tracker != nil {
		tracked, err := h.tracker.Track(r.Context(), &TrackRequest{Write: wr, Object: obj})
		if err != nil {
			return nil, asStatus(err)
		}
		obj = tracked
	}
	t.toStore(obj)
	return rc.CreateHandedOver(r.Context(), obj, opts, createLender)
}

// update replaces the object (PUT), recording its managedFields under the server's lock when a
// FieldTracker is set. The tracker only reads the stored object and the answer is only encoded,
// so both are lent, not copied (updateLender names the front in a MutationError); the object
// written, the request's own as in create, is handed over.
func (h *Handler) update(r *http.Request, t target, obj *unstructured.Unstructured, opts metav1.UpdateOptions, subs []string) (*unstructured.Unstructured, error) {
	if errs := validation.ValidateUpdateOptions(&opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "UpdateOptions"}, "", errs)
	}
	rc := h.srv.Resource(t.res.storeGVR()).Namespace(t.namespace)
	if h.tracker == nil && h.admission == nil {
		t.toStore(obj)
		return rc.Update(r.Context(), obj, opts, subs...)
	}
	verb := fakeapi.VerbUpdate
	if t.sub != "" {
		verb = fakeapi.VerbUpdateStatus
	}
	wr := h.writeOf(r, t, opts.FieldManager)
	wr.FieldValidation = opts.FieldValidation
	wr.DryRun = len(opts.DryRun) > 0
	if h.admission != nil && t.res.Namespaced && obj.GetNamespace() == "" {
		obj.SetNamespace(t.namespace)
	}
	admit := func(live, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		wr.Now = h.now()
		return h.admit(r.Context(), wr, t.liveAsView(live), obj)
	}
	// track records the managedFields of obj, admitted, over live, the object as stored.
	track := func(live, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		if h.tracker != nil {
			var err error
			if obj, err = h.tracker.Track(r.Context(), &TrackRequest{Write: wr, Live: t.liveAsView(live), Object: obj}); err != nil {
				return nil, asStatus(err)
			}
		}
		t.toStore(obj)
		return obj, nil
	}
	m := fakeapi.Mutation{Verb: verb, Subresource: t.sub, DryRun: len(opts.DryRun) > 0, LendTo: updateLender, HandOver: true}
	if h.callsOut(wr) {
		body := obj
		out, _, err := h.outsideLock(r.Context(), rc, t.res.GVR.GroupResource(), t.name, m, func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			return admit(live, body.DeepCopy())
		}, track)
		return out, err
	}
	m.Compute = func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		// obj is this request's own (decoded from its body), and Compute runs once.
		obj, err := admit(live, obj)
		if err != nil {
			return nil, err
		}
		return track(live, obj)
	}
	out, _, err := rc.Mutate(r.Context(), t.name, m)
	return out, err
}

// callsOut reports whether the admission of wr calls out of the process (CallingAdmission).
func (h *Handler) callsOut(wr Write) bool {
	c, ok := h.admission.(CallingAdmission)
	return ok && c.CallsOut(wr)
}

// deleteAdmitted deletes name as rc.DeleteResult does, admitting the delete first when the
// admission calls out (CallingAdmission): the object is read and admitted, then deleted with
// preconditions on the version admitted, and if it changed meanwhile read and admitted again.
// Preconditions of the request's own are kept; a conflict with them is the request's answer.
func (h *Handler) deleteAdmitted(ctx context.Context, r *http.Request, t target, rc *fakeapi.ResourceClient, name string, opts metav1.DeleteOptions) (*unstructured.Unstructured, bool, error) {
	wr := h.writeOf(r, t, "")
	wr.Name = name
	wr.DryRun = len(opts.DryRun) > 0
	if !h.callsOut(wr) {
		return rc.DeleteResult(ctx, name, opts)
	}
	calling := h.admission.(CallingAdmission)
	own := opts.Preconditions != nil && opts.Preconditions.ResourceVersion != nil
	for attempt := 1; ; attempt++ {
		live, err := rc.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, false, err
		}
		wr.Namespace = live.GetNamespace()
		if err := calling.AdmitDelete(ctx, wr, t.liveAsView(live), opts); err != nil {
			return nil, false, asStatus(err)
		}
		pinned := opts
		if !own {
			uid, rv := live.GetUID(), live.GetResourceVersion()
			pinned.Preconditions = &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}
			if opts.Preconditions != nil && opts.Preconditions.UID != nil {
				pinned.Preconditions.UID = opts.Preconditions.UID
			}
		}
		out, removed, err := rc.DeleteResult(ctx, name, pinned)
		if own || !apierrors.IsConflict(err) || attempt == maxAdmitAttempts {
			return out, removed, err
		}
	}
}

// errStaleRead ends a write admitted outside the lock whose object changed meanwhile.
var errStaleRead = errors.New("rest: the object changed while the write was admitted")

// maxAdmitAttempts bounds how often a write admitted outside the lock is read and admitted again
// because the object changed meanwhile (kube-apiserver retries without a bound; a write that
// loses this many races is answered 409).
const maxAdmitAttempts = 16

// outsideLock runs a write whose admission calls out of the process (admission webhooks) as
// kube-apiserver's GuaranteedUpdate runs every write: the object is read, computed and admitted
// (compute, on a private copy of the stored object, nil when it is missing and m.Create is set)
// without the server's lock, then stored under it through m, after commit, only if it is still
// the version read; otherwise it is read again and the write computed again. So a webhook is
// never called while the server is locked, and a webhook server that reads the API meanwhile is
// answered.
func (h *Handler) outsideLock(ctx context.Context, rc *fakeapi.ResourceClient, gr schema.GroupResource, name string, m fakeapi.Mutation,
	compute func(live *unstructured.Unstructured) (*unstructured.Unstructured, error),
	commit func(live, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)) (*unstructured.Unstructured, bool, error) {
	for attempt := 1; ; attempt++ {
		read, err := rc.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) && m.Create {
			read, err = nil, nil
		}
		if err != nil {
			return nil, false, err
		}
		obj, err := compute(read)
		if err != nil {
			return nil, false, err
		}
		stale := false
		m := m
		m.Compute = func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			if (live == nil) != (read == nil) || (live != nil && (live.GetUID() != read.GetUID() || live.GetResourceVersion() != read.GetResourceVersion())) {
				stale = true
				return nil, errStaleRead
			}
			return commit(live, obj)
		}
		out, created, err := rc.Mutate(ctx, name, m)
		if !stale {
			return out, created, err
		}
		if attempt == maxAdmitAttempts {
			return nil, false, apierrors.NewConflict(gr, name,
				fmt.Errorf("the object changed each of the %d times the write was admitted", maxAdmitAttempts))
		}
	}
}

// updateLender and patchLender are the names the objects of an update and of a JSON or merge
// patch are lent to (fakeapi.Mutation's LendTo), createLender the name a create's answer is
// lent to (fakeapi.ResourceClient.CreateLent: the answer is only encoded).
const (
	updateLender = "the REST front's update (fakeapi/rest)"
	patchLender  = "the REST front's patch (fakeapi/rest)"
	createLender = "the REST front's create (fakeapi/rest)"
)

// patchWith answers a patch of type pt: with a Patcher for pt (strategic merge, apply) or, for
// JSON and merge patches, fakeapi's own computation followed by the FieldTracker. Either runs
// under the server's lock through fakeapi.Mutation, on the object as stored, so the patch is
// atomic with respect to the resourceVersion (kube-apiserver retries a conflict on a fresh read
// to the same effect), is recorded as a patch, and takes the faults injected for patches. It
// returns the status code of the answer (201 when an apply created the object).
func (h *Handler) patchWith(r *http.Request, t target, p Patcher, pt types.PatchType, body []byte, opts metav1.PatchOptions) (int, *unstructured.Unstructured, error) {
	rc := h.srv.Resource(t.res.storeGVR()).Namespace(t.namespace)
	wr := h.writeOf(r, t, opts.FieldManager)
	wr.FieldValidation = opts.FieldValidation
	wr.DryRun = len(opts.DryRun) > 0
	apply := pt == types.ApplyYAMLPatchType || pt == types.ApplyCBORPatchType
	if apply {
		wr.Manager = opts.FieldManager // required for apply, never derived
	}
	// fakeapi's own JSON and merge patches read live (PatchObject patches a copy of it) and the
	// tracker only reads it, so those borrow it and their answer, and hand over the patched
	// object, the request's own (as the tracker's result is); a Patcher is promised a private
	// copy (PatchRequest.Current), and its result is copied.
	lendTo := ""
	if p == nil {
		lendTo = patchLender
	}
	// compute patches live (nil for an apply that creates) and admits the result; commit, under
	// the lock, records its managedFields over live as stored (a Patcher records its own).
	compute := func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		wr.Now = h.now()
		if p != nil {
			// live is a private copy: a view's Patcher sees it in the view's version. The Patcher
			// may change it; the admission needs it as stored.
			if t.res.conv != nil && live != nil {
				live.Object = t.res.conv.fromStore(live.Object)
			} else if t.res.view() && live != nil {
				live.SetAPIVersion(t.res.GVR.GroupVersion().String())
			}
			old := live
			if h.admission != nil && live != nil {
				old = live.DeepCopy()
			}
			out, err := p.Patch(r.Context(), &PatchRequest{Write: wr, Type: pt, Current: live, Patch: body, Options: opts})
			if err == nil && out == nil {
				err = errNilObject
			}
			if err != nil {
				return nil, asStatus(err)
			}
			if err := h.checkType(t.res.GVR.GroupVersion().WithKind(t.res.Kind), out, true); err != nil {
				return nil, err
			}
			if h.admission != nil && t.res.Namespaced && out.GetNamespace() == "" {
				out.SetNamespace(t.namespace) // an apply that creates
			}
			return h.admit(r.Context(), wr, old, out)
		}
		patched, err := fakeapi.PatchObject(t.res.GVR.GroupResource(), t.name, t.fromStore(live), pt, body)
		if err != nil {
			return nil, err
		}
		if err := h.checkType(t.res.GVR.GroupVersion().WithKind(t.res.Kind), patched, true); err != nil {
			return nil, err
		}
		// As fakeapi's own patch: the URL names the object, a patch cannot move it.
		patched.SetName(t.name)
		patched.SetNamespace(live.GetNamespace())
		return h.admit(r.Context(), wr, t.liveAsView(live), patched)
	}
	commit := func(live, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		if p == nil && h.tracker != nil {
			// obj shares nothing with live (PatchObject patched a copy of it), which the
			// tracker only reads.
			var err error
			if obj, err = h.tracker.Track(r.Context(), &TrackRequest{Write: wr, Live: t.liveAsView(live), Object: obj}); err != nil {
				return nil, asStatus(err)
			}
		}
		t.toStore(obj)
		return obj, nil
	}
	m := fakeapi.Mutation{Verb: fakeapi.VerbPatch, Subresource: t.sub, Create: apply, DryRun: len(opts.DryRun) > 0, LendTo: lendTo, HandOver: p == nil}
	var out *unstructured.Unstructured
	var created bool
	var err error
	if h.callsOut(wr) {
		out, created, err = h.outsideLock(r.Context(), rc, t.res.GVR.GroupResource(), t.name, m, compute, commit)
	} else {
		m.Compute = func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			obj, err := compute(live)
			if err != nil {
				return nil, err
			}
			return commit(live, obj)
		}
		out, created, err = rc.Mutate(r.Context(), t.name, m)
	}
	if err != nil {
		return 0, nil, err
	}
	if created {
		return http.StatusCreated, out, nil
	}
	return http.StatusOK, out, nil
}

// toStore gives obj, the request's own object of a view (resource.store), the apiVersion of the
// resource that stores it; other objects are left alone.
func (t target) toStore(obj *unstructured.Unstructured) {
	if t.res.conv != nil && obj != nil {
		obj.Object = t.res.conv.toStore(obj.Object)
		return
	}
	if t.res.view() && obj != nil && obj.GetAPIVersion() == t.res.GVR.GroupVersion().String() {
		obj.SetAPIVersion(t.res.store.GroupVersion().String())
	}
}

// fromStore returns u, an object of the resource storing a view's objects, as the view serves
// it: a copy of its top level with the view's apiVersion (the rest shared, read-only). Any other
// object is returned as it is.
func (t target) fromStore(u *unstructured.Unstructured) *unstructured.Unstructured {
	if t.res.conv != nil && u != nil {
		return &unstructured.Unstructured{Object: t.res.conv.fromStore(u.Object)}
	}
	if !t.res.view() || u == nil || u.GetAPIVersion() != t.res.store.GroupVersion().String() {
		return u
	}
	m := make(map[string]any, len(u.Object))
	for k, v := range u.Object {
		m[k] = v
	}
	m["apiVersion"] = t.res.GVR.GroupVersion().String()
	return &unstructured.Unstructured{Object: m}
}

// liveAsView is the stored object live as a view whose fields differ from its store's serves it
// (resource.conv), for the admission and the tracker, which compare it with the request's object
// in the view's form; live itself for any other resource.
func (t target) liveAsView(live *unstructured.Unstructured) *unstructured.Unstructured {
	if t.res.conv == nil || live == nil {
		return live
	}
	return t.fromStore(live)
}

// deleteCollection deletes the objects lopts selects, as rc.DeleteCollection does; when the
// admission calls out, as kube-apiserver does it: each object deleted on its own, admitted first
// (deleteAdmitted), the first refusal ending the request.
func (h *Handler) deleteCollection(r *http.Request, t target, rc *fakeapi.ResourceClient, opts metav1.DeleteOptions, lopts metav1.ListOptions) error {
	wr := h.writeOf(r, t, "")
	wr.DryRun = len(opts.DryRun) > 0
	if !h.callsOut(wr) {
		return rc.DeleteCollection(r.Context(), opts, lopts)
	}
	l, err := rc.List(r.Context(), lopts)
	if err != nil {
		return err
	}
	for _, item := range l.Items {
		irc := h.srv.Resource(t.res.storeGVR()).Namespace(item.GetNamespace())
		if _, _, err := h.deleteAdmitted(r.Context(), r, t, irc, item.GetName(), opts); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}
