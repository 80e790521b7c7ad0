package fakeapi

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Mutation is a write whose new object is computed from the stored one, under the server's lock,
// by code the core does not know: a strategic merge patch or a server-side apply (which need the
// schemas of k8s.io/api, outside this module), or an update that records managedFields. Because
// Compute runs under the lock with the object as stored at that moment, the write is atomic with
// respect to the resourceVersion: there is nothing to retry, as kube-apiserver's patcher retries
// a conflict with the fresh object.
type Mutation struct {
	// Verb names the request in the record and selects the injected failures it takes (see
	// [Faults.FailNext]): VerbPatch, VerbUpdate or VerbUpdateStatus.
	Verb Verb
	// Subresource is "" or "status": a status write changes only .status, a write to the main
	// resource keeps the stored .status (fakeapi.md §5.5).
	Subresource string
	// Create lets the write create a missing object, as a server-side apply does: Compute is then
	// called with nil and what it returns is created (a uid in it is a 409, as in kube-apiserver).
	// Without Create a missing object is a 404 and Compute is not called.
	Create bool
	// DryRun computes and validates the write without storing it.
	DryRun bool
	// Compute returns the object to store. live is a private deep copy of the stored object
	// (Compute may change and return it), or nil when the object is missing and Create is set.
	// An error it returns is the request's answer as is: return a *apierrors.StatusError.
	//
	// As in a patch, a result without metadata.resourceVersion writes unconditionally and one
	// with it must match the stored version (409 otherwise); with Verb VerbUpdate or
	// VerbUpdateStatus the result is checked as an update's body is (a missing resourceVersion
	// is a 422 for resources with RequireResourceVersion). The name must be the request's (400
	// otherwise, as kube-apiserver's checkName); an empty one is filled in, as is the namespace.
	Compute func(live *unstructured.Unstructured) (*unstructured.Unstructured, error)
	// LendTo, when set, lends the caller the objects a Mutation otherwise copies for it, as
	// ListerWatcher.ListLent lends list items (see "Ownership of objects" in the package
	// documentation; LendTo names the caller in a MutationError): Compute is handed the stored
	// object itself, and Mutate returns the version it committed itself, both read-only. For a
	// caller that only reads them, as an HTTP front that computes managedFields from live and
	// encodes the answer: the two deep copies were a tenth of such an update's allocations.
	// Compute must then return a new object, never live (a 500). The server checks live's
	// fingerprint as soon as Compute returns, and the answer's as it checks every lent object;
	// a change is a MutationError (Lending.Mutation). A dry run's answer, never committed, is
	// still a copy.
	LendTo string
	// HandOver says that Compute hands the object it returns over to the server with everything
	// in it, as an HTTP front hands over the object it decoded from a request body: the server
	// stores its maps and lists themselves, checked and converted in place, instead of a copy of
	// them (see "Ownership of objects" in the package documentation). Compute must hold no other
	// reference to any of them and must not read or change them once it returned. Values shared
	// with live, which the server never changes, are allowed; the object's top-level map must
	// not be live's (a 500 with LendTo; without it, live is a copy anyway). Without HandOver the
	// result is copied, and Compute may keep it.
	HandOver bool
}

// Mutate performs m on the object name and returns the object written (a copy, or lent with
// LendTo) and whether it was created. It takes the same injected failures, records the same request and emits the
// same events as the write it models: one MODIFIED (ADDED when created), none for a no-op.
func (c *ResourceClient) Mutate(ctx context.Context, name string, m Mutation) (*unstructured.Unstructured, bool, error) {
	created := false
	verb := m.Verb
	if verb != VerbPatch && verb != VerbUpdate && verb != VerbUpdateStatus {
		return nil, false, fmt.Errorf("fakeapi: Mutate: verb %v is not patch, update or update-status", verb)
	}
	if m.Compute == nil {
		return nil, false, fmt.Errorf("fakeapi: Mutate: nil Compute")
	}
	out, err := c.write(verb, name, func() (*unstructured.Unstructured, error) {
		w, made, err := c.mutate_locked(ctx, name, m)
		created = made
		return w, err
	})
	if err != nil {
		return nil, false, err
	}
	return out, created, nil
}

// mutate_locked is Mutate's write, under the server's lock: it finds the target, has Compute
// make the new object, then creates it (Create, the object missing) or updates the stored one.
// It returns the answer and whether the write created the object.
func (c *ResourceClient) mutate_locked(ctx context.Context, name string, m Mutation) (*unstructured.Unstructured, bool, error) {
	verb := m.Verb
	s := c.srv
	var subs []string
	if m.Subresource != "" {
		subs = []string{m.Subresource}
	}
	status, err := statusSubresource(c.gvr, subs)
	if err != nil {
		return nil, false, err
	}
	if err := ctxErr(ctx); err != nil {
		return nil, false, err
	}
	res, key, err := c.target_locked(verb, name)
	if err != nil {
		return nil, false, err
	}
	if status && !res.info.Status {
		return nil, false, apierrors.NewNotFound(c.gvr.GroupResource(), name)
	}
	cur := s.live_locked(res, key)
	if cur == nil && (!m.Create || status) { // a /status write never creates (its store does not allow it)
		return nil, false, apierrors.NewNotFound(c.gvr.GroupResource(), name)
	}
	u, err := c.computeMutation_locked(res, key, cur, m)
	if err != nil {
		return nil, false, err
	}
	switch objName := metaStr(u, "name"); {
	case objName == "":
		setMeta(u, "name", key.name)
	case objName != key.name:
		return nil, false, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", objName, key.name))
	}
	if cur == nil {
		w, err := c.createFromMutation_locked(res, key, u, m)
		if err != nil {
			return nil, false, err
		}
		return c.mutationAnswer_locked(res, key, m, w), true, nil
	}
	if verb == VerbPatch && metaValue(u, "resourceVersion") == nil {
		setMeta(u, "resourceVersion", cur.GetResourceVersion()) // unconditional, as a patch
	}
	in, err := s.input(res, key.ns, u, cur, m.HandOver)
	if err != nil {
		return nil, false, err
	}
	if errs := validateMeta(res, in, cur); len(errs) > 0 {
		return nil, false, s.invalid(res, name, errs)
	}
	w, err := s.applyUpdateManaged_locked(res, key, cur, in, true, status, m.DryRun, true)
	if err != nil {
		return nil, false, err
	}
	return c.mutationAnswer_locked(res, key, m, w), false, nil
}

// computeMutation_locked calls m.Compute with the stored cur (lent with LendTo, else a deep copy;
// nil when missing) and checks what it returned: an object, and not cur itself; a lent cur must
// come back unchanged.
func (c *ResourceClient) computeMutation_locked(res *resourceStore, key objKey, cur *unstructured.Unstructured, m Mutation) (*unstructured.Unstructured, error) {
	s := c.srv
	var live *unstructured.Unstructured
	switch {
	case cur != nil && m.LendTo != "":
		live = cur
		s.lend_locked(cur, res.keys[key], m.LendTo, false)
	case cur != nil:
		live = cur.DeepCopy()
	}
	u, err := m.Compute(live)
	if live == cur {
		s.checkLent_locked(cur, "the Mutation it was lent to")
	}
	if err != nil {
		return nil, err
	}
	if u == nil || u.Object == nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("fakeapi: Mutate: Compute returned no object"))
	}
	if cur != nil && live == cur && contentKey(u.Object) == contentKey(cur.Object) {
		return nil, apierrors.NewInternalError(fmt.Errorf("fakeapi: Mutate: Compute returned the stored object it was lent"))
	}
	return u, nil
}

// createFromMutation_locked creates the object a Mutation computed for a missing name, as
// kube-apiserver's patcher does for a server-side apply.
func (c *ResourceClient) createFromMutation_locked(res *resourceStore, key objKey, u *unstructured.Unstructured, m Mutation) (*unstructured.Unstructured, error) {
	s, name := c.srv, key.name
	// Created by the write (server-side apply), as kube-apiserver's patcher does: a uid
	// names an object that is not there; the other system fields are the server's.
	if uid := metaStr(u, "uid"); uid != "" {
		return nil, apierrors.NewConflict(c.gvr.GroupResource(), name, fmt.Errorf("uid mismatch: the provided object specified uid %s, and no existing object was found", uid))
	}
	for _, f := range []string{"resourceVersion", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"} {
		removeMeta(u, f)
	}
	opts := metav1.CreateOptions{}
	if m.DryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	w, err := s.insert_locked(res, key.ns, u, opts, m.HandOver)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// mutationAnswer_locked is what Mutate returns of w, the object written: the committed version
// itself when it is lent, else a copy.
func (c *ResourceClient) mutationAnswer_locked(res *resourceStore, key objKey, m Mutation, w *unstructured.Unstructured) *unstructured.Unstructured {
	if h := res.keys[key]; m.LendTo != "" && !m.DryRun && h != nil && h.latest() == w {
		c.srv.lend_locked(w, h, m.LendTo, false)
		return w
	}
	return copyObject(w)
}
