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
}

// Mutate performs m on the object name and returns the object written (a copy) and whether it
// was created. It takes the same injected failures, records the same request and emits the
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
		s := c.srv
		var subs []string
		if m.Subresource != "" {
			subs = []string{m.Subresource}
		}
		status, err := statusSubresource(c.gvr, subs)
		if err != nil {
			return nil, err
		}
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		res, key, err := c.target_locked(verb, name)
		if err != nil {
			return nil, err
		}
		if status && !res.info.Status {
			return nil, apierrors.NewNotFound(c.gvr.GroupResource(), name)
		}
		cur := s.live_locked(res, key)
		if cur == nil && (!m.Create || status) { // a /status write never creates (its store does not allow it)
			return nil, apierrors.NewNotFound(c.gvr.GroupResource(), name)
		}
		var live *unstructured.Unstructured
		if cur != nil {
			live = cur.DeepCopy()
		}
		u, err := m.Compute(live)
		if err != nil {
			return nil, err
		}
		if u == nil || u.Object == nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("fakeapi: Mutate: Compute returned no object"))
		}
		switch objName := metaStr(u, "name"); {
		case objName == "":
			setMeta(u, "name", key.name)
		case objName != key.name:
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", objName, key.name))
		}
		if cur == nil {
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
			w, err := s.insert_locked(res, key.ns, u, opts)
			if err != nil {
				return nil, err
			}
			created = true
			return copyWriteAnswer(w), nil
		}
		if verb == VerbPatch && metaValue(u, "resourceVersion") == nil {
			setMeta(u, "resourceVersion", cur.GetResourceVersion()) // unconditional, as a patch
		}
		in, err := s.input(res, key.ns, u, cur)
		if err != nil {
			return nil, err
		}
		if errs := validateMeta(res, in, cur); len(errs) > 0 {
			return nil, s.invalid(res, name, errs)
		}
		w, err := s.applyUpdateManaged_locked(res, key, cur, in, true, status, m.DryRun, true)
		if err != nil {
			return nil, err
		}
		return copyWriteAnswer(w), nil
	})
	if err != nil {
		return nil, false, err
	}
	return out, created, nil
}
