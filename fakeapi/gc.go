package fakeapi

import (
	"errors"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
)

// This file holds what the apiserver does for the garbage collector and the namespace
// controller (package controlplane), which it does not run itself: the finalizers a delete
// sets from its propagation policy, a namespace's two-phase deletion (spec.finalizers), and
// the NamespaceLifecycle admission plugin's refusal to delete the system namespaces (fakeapi.md
// §5.3; its refusals of writes into a namespace are in nsadmission.go).

// NamespacesGVR is the core/v1 namespaces resource, whose deletion is two-phase.
var NamespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// immortalNamespaces cannot be deleted (the NamespaceLifecycle admission plugin's list).
var immortalNamespaces = []string{"default", "kube-public", "kube-system"}

// NamespaceFinalizer is the spec.finalizers entry the namespace controller removes once the
// namespace is empty (through /finalize in kube-apiserver; here a write of spec.finalizers).
const NamespaceFinalizer = "kubernetes"

func isNamespaces(res *resourceStore) bool { return res.info.GVR == NamespacesGVR }

// validateDeleteOptions is kube-apiserver's ValidateDeleteOptions for the fields fakeapi reads.
func validateDeleteOptions(opts metav1.DeleteOptions) error {
	if opts.PropagationPolicy == nil { // the common delete: nothing to check, no path to build
		return nil
	}
	var errs field.ErrorList
	p := field.NewPath("propagationPolicy")
	if opts.OrphanDependents != nil {
		errs = append(errs, field.Invalid(p, *opts.PropagationPolicy, "orphanDependents and deletionPropagation cannot be both set"))
	}
	switch pp := opts.PropagationPolicy; *pp {
	case metav1.DeletePropagationForeground, metav1.DeletePropagationBackground, metav1.DeletePropagationOrphan:
	default:
		errs = append(errs, field.NotSupported(p, *pp, []string{string(metav1.DeletePropagationForeground), string(metav1.DeletePropagationBackground), string(metav1.DeletePropagationOrphan)}))
	}
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs)
}

// gcFinalizers returns the finalizers an object keeps when a delete with opts marks it, as the
// registry's deletionFinalizersForGarbageCollection computes them: an explicit orphanDependents
// or propagationPolicy decides; else a garbage-collection finalizer already on the object; else
// the resource's default. Both collector finalizers are dropped first and the chosen one is
// appended, so an explicit background delete removes an earlier orphan or foreground request.
// cur itself is returned when the set is unchanged.
func gcFinalizers(cur []string, opts metav1.DeleteOptions, orphanByDefault bool) []string {
	orphan, foreground := orphanByDefault, false
	explicit := true
	switch {
	case opts.OrphanDependents != nil:
		orphan = *opts.OrphanDependents
	case opts.PropagationPolicy != nil:
		orphan = *opts.PropagationPolicy == metav1.DeletePropagationOrphan
		foreground = *opts.PropagationPolicy == metav1.DeletePropagationForeground
	default:
		explicit = false
	}
	if !explicit {
		for _, f := range cur {
			if f == metav1.FinalizerOrphanDependents {
				orphan, foreground = true, false
				break
			}
			if f == metav1.FinalizerDeleteDependents {
				orphan, foreground = false, true
				break
			}
		}
	}
	// The set changes only if a collector finalizer's presence differs from what was chosen;
	// the common delete (no finalizer, none chosen) returns here without building a list.
	if slices.Contains(cur, metav1.FinalizerOrphanDependents) == orphan && slices.Contains(cur, metav1.FinalizerDeleteDependents) == foreground {
		return cur
	}
	next := make([]string, 0, len(cur)+1)
	for _, f := range cur {
		if f != metav1.FinalizerOrphanDependents && f != metav1.FinalizerDeleteDependents {
			next = append(next, f)
		}
	}
	if orphan {
		next = append(next, metav1.FinalizerOrphanDependents)
	}
	if foreground {
		next = append(next, metav1.FinalizerDeleteDependents)
	}
	return next
}

// admitNamespaceDelete refuses to delete the namespaces the cluster needs, as the
// NamespaceLifecycle admission plugin does (403).
func admitNamespaceDelete(gr schema.GroupResource, name string) error {
	if slices.Contains(immortalNamespaces, name) {
		return apierrors.NewForbidden(gr, name, errors.New("this namespace may not be deleted"))
	}
	return nil
}

// NamespaceSpecFinalizers returns a namespace's spec.finalizers (nil when it has none or ns is
// not a namespace's shape).
func NamespaceSpecFinalizers(ns *unstructured.Unstructured) []string {
	f, _, _ := unstructured.NestedStringSlice(ns.Object, "spec", "finalizers")
	return f
}

// deleteNamespace_locked is the namespace registry's Delete: a namespace with spec.finalizers
// (the kubernetes finalizer the namespace controller owns) is not removed but marked: a
// deletionTimestamp and status.phase Terminating. A terminating namespace whose spec and
// metadata finalizers are all gone is removed by the next delete (the namespace controller's
// last call).
func (s *Server) deleteNamespace_locked(res *resourceStore, key objKey, cur *unstructured.Unstructured, finalizers []string) (*unstructured.Unstructured, error) {
	spec := NamespaceSpecFinalizers(cur)
	if terminating(cur) {
		if len(spec) == 0 && len(cur.GetFinalizers()) == 0 {
			return s.commit_locked(res, key, watch.Deleted, nil, cur), nil
		}
		return cur, nil
	}
	if len(spec) == 0 && len(finalizers) == 0 {
		return s.commit_locked(res, key, watch.Deleted, nil, cur), nil
	}
	next := cur.DeepCopy()
	setFinalizers(next, finalizers)
	s.markDeleting(next, 0)
	_ = unstructured.SetNestedField(next.Object, "Terminating", "status", "phase")
	return s.commit_locked(res, key, watch.Modified, next, cur), nil
}
