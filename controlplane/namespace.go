package controlplane

import (
	"context"
	"fmt"
	"slices"
	"strings"
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
	// namespaces is the namespaces as last read (view.go), each with whether it is being
	// deleted; what is in a namespace being deleted is listed in full at each scan.
	namespaces view[bool]
}

// terminatingHooks derive a namespace's entry in the view: whether it is being deleted.
var terminatingHooks = viewHooks[bool]{
	add:  func(ns *unstructured.Unstructured) bool { return ns.GetDeletionTimestamp() != nil },
	drop: func(bool) {},
}

// NewNamespaceController returns the namespace controller of srv.
func NewNamespaceController(srv *fakeapi.Server) (*NamespaceController, error) {
	b, err := newBase("namespace-controller", srv)
	if err != nil {
		return nil, err
	}
	nc := &NamespaceController{base: b}
	nc.namespaces = newView[bool](&nc.base, fakeapi.NamespacesGVR)
	return nc, nil
}

// SetStopped implements Component: a restarted controller reads the server afresh.
func (nc *NamespaceController) SetStopped(stopped bool) {
	nc.base.SetStopped(stopped)
	nc.namespaces.forget(terminatingHooks)
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
	if err := refresh(&nc.base, &nc.namespaces, terminatingHooks); err != nil {
		if notFound(err) { // namespaces not served: nothing ever to do
			nc.done(now, rev)
			return "", nil
		}
		nc.result(now, err)
		return "", nil
	}
	for _, e := range nc.namespaces.entries {
		if !e.val {
			continue
		}
		what, err, acted := nc.finish(ctx, e.obj, now)
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

// finish makes the next write of ns's deletion, if one is due: a delete of an object in it,
// else its status conditions when they changed, else the removal of the kubernetes finalizer
// once nothing is left.
func (nc *NamespaceController) finish(ctx context.Context, ns *unstructured.Unstructured, now time.Time) (string, error, bool) {
	name := ns.GetName()
	remaining := map[string]int{}  // "resource.group" -> objects being deleted
	finalizers := map[string]int{} // finalizer -> objects being deleted that it holds
	for _, res := range nc.resources {
		if !res.Namespaced {
			continue
		}
		items, err := nc.list(res.GVR, name)
		if err != nil {
			return fmt.Sprintf("list %s in %s", res.GVR.Resource, name), err, true
		}
		for i := range items {
			if items[i].GetDeletionTimestamp() != nil {
				remaining[res.GVR.Resource+"."+res.GVR.Group]++
				for _, f := range items[i].GetFinalizers() {
					finalizers[f]++
				}
				continue
			}
			uid := items[i].GetUID()
			bg := metav1.DeletePropagationBackground
			err := nc.srv.Resource(res.GVR).Namespace(name).Delete(ctx, items[i].GetName(), metav1.DeleteOptions{
				PropagationPolicy: &bg, Preconditions: &metav1.Preconditions{UID: &uid},
			})
			switch {
			case notFound(err):
				err = nil
			case err == nil:
				nc.stats.Deletes++
			}
			return fmt.Sprintf("delete %s %s/%s (namespace terminating)", res.GVR.Resource, name, items[i].GetName()), err, true
		}
	}
	want := deletionConditions(remaining, finalizers)
	if _, changed := withConditions(ns, want, now); changed {
		return fmt.Sprintf("status of namespace %s (%s)", name, conditionsSummary(want)), nc.writeConditions(ctx, ns, want, now), true
	}
	if len(remaining) > 0 || !slices.Contains(fakeapi.NamespaceSpecFinalizers(ns), fakeapi.NamespaceFinalizer) {
		return "", nil, false
	}
	return fmt.Sprintf("finalize namespace %s (empty)", name), nc.mutateNamespace(ctx, ns, false, func(live *unstructured.Unstructured) {
		f := slices.DeleteFunc(fakeapi.NamespaceSpecFinalizers(live), func(s string) bool { return s == fakeapi.NamespaceFinalizer })
		if len(f) == 0 {
			unstructured.RemoveNestedField(live.Object, "spec", "finalizers")
		} else {
			_ = unstructured.SetNestedStringSlice(live.Object, f, "spec", "finalizers")
		}
	}), true
}

// mutateNamespace writes change to ns (its status when status is set), on the condition that it
// is still the namespace read (its uid). A namespace already gone is not an error.
func (nc *NamespaceController) mutateNamespace(ctx context.Context, ns *unstructured.Unstructured, status bool, change func(live *unstructured.Unstructured)) error {
	name, uid := ns.GetName(), ns.GetUID()
	verb, sub := fakeapi.VerbPatch, ""
	if status {
		verb, sub = fakeapi.VerbUpdateStatus, "status"
	}
	_, _, err := nc.srv.Resource(fakeapi.NamespacesGVR).Mutate(ctx, name, fakeapi.Mutation{
		Verb: verb, Subresource: sub,
		Compute: func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			if live.GetUID() != uid {
				return nil, apierrors.NewConflict(fakeapi.NamespacesGVR.GroupResource(), name, fmt.Errorf("uid %s is not %s", live.GetUID(), uid))
			}
			change(live)
			return live, nil
		},
	})
	if notFound(err) {
		return nil
	}
	return err
}

// writeConditions writes want into ns's status.conditions (docs/controlplane.md §2).
func (nc *NamespaceController) writeConditions(ctx context.Context, ns *unstructured.Unstructured, want []namespaceCondition, now time.Time) error {
	return nc.mutateNamespace(ctx, ns, true, func(live *unstructured.Unstructured) {
		if next, changed := withConditions(live, want, now); changed {
			_ = unstructured.SetNestedSlice(live.Object, next, "status", "conditions")
		}
	})
}

// namespaceCondition is one of the five conditions the namespace controller keeps on a
// namespace being deleted.
type namespaceCondition struct{ typ, status, reason, message string }

// deletionConditions returns the conditions kube-controller-manager's namespace deleter writes
// after a pass that found remaining (objects still being deleted, by "resource.group") and the
// finalizers holding them: the five types in their order, each True with the problem or False
// with its "all is well" reason and message. Discovery, group-version parsing and delete
// failures do not happen here: the server's own table is the discovery, and a refused delete
// is retried (Stats) rather than reported in a condition.
func deletionConditions(remaining, finalizers map[string]int) []namespaceCondition {
	conds := []namespaceCondition{
		{"NamespaceDeletionDiscoveryFailure", "False", "ResourcesDiscovered", "All resources successfully discovered"},
		{"NamespaceDeletionGroupVersionParsingFailure", "False", "ParsedGroupVersions", "All legacy kube types successfully parsed"},
		{"NamespaceDeletionContentFailure", "False", "ContentDeleted", "All content successfully deleted, may be waiting on finalization"},
		{"NamespaceContentRemaining", "False", "ContentRemoved", "All content successfully removed"},
		{"NamespaceFinalizersRemaining", "False", "ContentRemoved", "All content successfully removed"},
	}
	if len(remaining) > 0 {
		conds[3] = namespaceCondition{conds[3].typ, "True", "SomeResourcesRemain", "Some resources are remaining: " + counted(remaining, "%s has %d resource instances")}
	}
	if len(finalizers) > 0 {
		conds[4] = namespaceCondition{conds[4].typ, "True", "SomeFinalizerRemain", "Some finalizers are remaining: " + counted(finalizers, "%s in %d resource instances")}
	}
	return conds
}

// counted formats each name of counts with its count by format, sorted (map order never shows),
// joined by ", ".
func counted(counts map[string]int, format string) string {
	parts := make([]string, 0, len(counts))
	for name, n := range counts {
		parts = append(parts, fmt.Sprintf(format, name, n))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// conditionsSummary names the True conditions of conds, for the narration.
func conditionsSummary(conds []namespaceCondition) string {
	var on []string
	for _, c := range conds {
		if c.status == "True" {
			on = append(on, c.typ)
		}
	}
	if len(on) == 0 {
		return "content removed"
	}
	return strings.Join(on, ", ")
}

// withConditions returns ns's status.conditions with want applied as the deleter applies them
// (a condition missing is appended with lastTransitionTime now; one whose status, reason or
// message differs is updated, its lastTransitionTime moved to now only when its status
// changed), and whether anything changed.
func withConditions(ns *unstructured.Unstructured, want []namespaceCondition, now time.Time) ([]any, bool) {
	cur, _, _ := unstructured.NestedSlice(ns.Object, "status", "conditions") // a deep copy
	stamp := now.UTC().Format(time.RFC3339)
	changed := false
	for _, w := range want {
		i := slices.IndexFunc(cur, func(c any) bool { m, _ := c.(map[string]any); return m["type"] == w.typ })
		if i < 0 {
			cur = append(cur, map[string]any{"type": w.typ, "status": w.status, "lastTransitionTime": stamp, "reason": w.reason, "message": w.message})
			changed = true
			continue
		}
		m, _ := cur[i].(map[string]any)
		if m["status"] == w.status && m["reason"] == w.reason && m["message"] == w.message {
			continue
		}
		if m["status"] != w.status {
			m["lastTransitionTime"] = stamp
		}
		m["status"], m["reason"], m["message"] = w.status, w.reason, w.message
		changed = true
	}
	return cur, changed
}
