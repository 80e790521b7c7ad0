package controlplane

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/informersim/informersim/fakeapi"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// NamespaceController is kube-controller-manager's namespace controller as a step-driven
// component (docs/controlplane.md §2). For each namespace being deleted (Terminating, see
// fakeapi's two-phase namespace delete), in name order, a Step deletes one object of it that is
// not yet being deleted (background propagation, in resource-table and key order); once nothing
// is left in it, it removes the kubernetes finalizer from spec.finalizers, and the apiserver
// removes the namespace when no other finalizer holds it. Objects held by finalizers, or pods
// in their grace period, keep the namespace Terminating until they go.
type NamespaceController struct {
	base
}

// NewNamespaceController returns the namespace controller of srv.
func NewNamespaceController(srv *fakeapi.Server) (*NamespaceController, error) {
	b, err := newBase("namespace-controller", srv)
	if err != nil {
		return nil, err
	}
	return &NamespaceController{base: b}, nil
}

// Pending implements Component.
func (nc *NamespaceController) Pending(now time.Time) bool { return nc.pending(now) }

// NextTimer implements Component.
func (nc *NamespaceController) NextTimer() (time.Time, bool) { return nc.timer() }

// Step implements Component.
func (nc *NamespaceController) Step(ctx context.Context, now time.Time) (string, error) {
	if !nc.ready(now) {
		return "", nil
	}
	nc.stats.Scans++
	nc.beginScan()
	rev := nc.srv.Revision()
	nss, err := nc.list(fakeapi.NamespacesGVR, "")
	if err != nil {
		if apierrors.IsNotFound(err) { // namespaces not served: nothing ever to do
			nc.done(now, rev)
			return "", nil
		}
		nc.result(now, err)
		return "", nil
	}
	for i := range nss {
		ns := &nss[i]
		if ns.GetDeletionTimestamp() == nil {
			continue
		}
		what, err, acted := nc.finish(ctx, ns)
		if acted {
			nc.result(now, err)
			if err != nil {
				return fmt.Sprintf("%s failed: %v", what, err), nil
			}
			return what, nil
		}
	}
	nc.done(now, rev)
	return "", nil
}

// finish makes the next write of ns's deletion, if one is due.
func (nc *NamespaceController) finish(ctx context.Context, ns *unstructured.Unstructured) (string, error, bool) {
	name := ns.GetName()
	remaining := false
	for _, res := range nc.srv.Config().Resources {
		if !res.Namespaced {
			continue
		}
		items, err := nc.list(res.GVR, name)
		if err != nil {
			return fmt.Sprintf("list %s in %s", res.GVR.Resource, name), err, true
		}
		for i := range items {
			if items[i].GetDeletionTimestamp() != nil {
				remaining = true
				continue
			}
			uid := items[i].GetUID()
			bg := metav1.DeletePropagationBackground
			err := nc.srv.Resource(res.GVR).Namespace(name).Delete(ctx, items[i].GetName(), metav1.DeleteOptions{
				PropagationPolicy: &bg, Preconditions: &metav1.Preconditions{UID: &uid},
			})
			switch {
			case apierrors.IsNotFound(err):
				err = nil
			case err == nil:
				nc.stats.Deletes++
			}
			return fmt.Sprintf("delete %s %s/%s (namespace terminating)", res.GVR.Resource, name, items[i].GetName()), err, true
		}
	}
	if remaining || !slices.Contains(fakeapi.NamespaceSpecFinalizers(ns), fakeapi.NamespaceFinalizer) {
		return "", nil, false
	}
	uid := ns.GetUID()
	_, _, err := nc.srv.Resource(fakeapi.NamespacesGVR).Mutate(ctx, name, fakeapi.Mutation{
		Verb: fakeapi.VerbPatch,
		Compute: func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			if live.GetUID() != uid {
				return nil, apierrors.NewConflict(fakeapi.NamespacesGVR.GroupResource(), name, fmt.Errorf("uid %s is not %s", live.GetUID(), uid))
			}
			f := slices.DeleteFunc(fakeapi.NamespaceSpecFinalizers(live), func(s string) bool { return s == fakeapi.NamespaceFinalizer })
			if len(f) == 0 {
				unstructured.RemoveNestedField(live.Object, "spec", "finalizers")
			} else {
				_ = unstructured.SetNestedStringSlice(live.Object, f, "spec", "finalizers")
			}
			return live, nil
		},
	})
	if apierrors.IsNotFound(err) {
		err = nil
	}
	return fmt.Sprintf("finalize namespace %s (empty)", name), err, true
}
