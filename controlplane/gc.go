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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// GarbageCollector is kube-controller-manager's garbage collector as a step-driven component
// (docs/controlplane.md §1). Each Step reads every served resource, builds the owner graph by
// uid, and makes the first write the collector would make, in resource-table and key order:
//
//   - an owner being deleted with the orphan finalizer: its dependents lose their references to
//     it, one per step, then the finalizer is removed;
//   - an owner being deleted with the foregroundDeletion finalizer: its dependents are deleted
//     (as dependents of an owner waiting for them), and once none with blockOwnerDeletion
//     remains the finalizer is removed, which deletes the owner;
//   - a dependent none of whose owners is solid (existing with the uid referenced and not
//     waiting for its dependents) is deleted, with the propagation its own finalizers ask
//     (foreground when an owner waits and it has dependents itself);
//   - a dependent with a solid owner and some dangling or waiting ones loses the latter
//     references.
type GarbageCollector struct {
	base
	reported map[types.UID]bool // dependents already given an OwnerRefInvalidNamespace event
	events   int                // events written, for their names
	// kinds is the server's resources by group and kind (the last of a kind's versions), made
	// once: the table does not change.
	kinds map[schema.GroupKind]fakeapi.Resource
}

// NewGarbageCollector returns the collector of srv.
func NewGarbageCollector(srv *fakeapi.Server) (*GarbageCollector, error) {
	b, err := newBase("garbage-collector", srv)
	if err != nil {
		return nil, err
	}
	kinds := make(map[schema.GroupKind]fakeapi.Resource, len(b.resources))
	for _, res := range b.resources {
		kinds[schema.GroupKind{Group: res.GVR.Group, Kind: res.Kind}] = res
	}
	return &GarbageCollector{base: b, reported: map[types.UID]bool{}, kinds: kinds}, nil
}

// Pending implements Component.
func (gc *GarbageCollector) Pending(now time.Time) bool { return gc.pending(now) }

// NextTimer implements Component.
func (gc *GarbageCollector) NextTimer() (time.Time, bool) { return gc.timer() }

// node is one object of the graph.
type node struct {
	res fakeapi.Resource
	obj *unstructured.Unstructured
}

func (n *node) terminating() bool { return n.obj.GetDeletionTimestamp() != nil }
func (n *node) has(finalizer string) bool {
	return slices.Contains(n.obj.GetFinalizers(), finalizer)
}
func (n *node) String() string {
	if n.obj.GetNamespace() == "" {
		return fmt.Sprintf("%s %s", n.res.GVR.Resource, n.obj.GetName())
	}
	return fmt.Sprintf("%s %s/%s", n.res.GVR.Resource, n.obj.GetNamespace(), n.obj.GetName())
}

// graph is the collector's view of the server at one read.
type graph struct {
	nodes      []*node
	byUID      map[types.UID]*node
	byIdentity map[identity]*node
	dependents map[types.UID][]*node                 // owner uid -> dependents referencing it, in node order
	kinds      map[schema.GroupKind]fakeapi.Resource // the collector's, only read
}

type identity struct {
	gvr      schema.GroupVersionResource
	ns, name string
}

func (gc *GarbageCollector) read() (*graph, uint64, error) { // the graph and the server revision before it
	gc.stats.Scans++
	gc.beginScan()
	rev := gc.srv.Revision()
	// Every list first, so that the graph's maps are made at their size.
	lists := make([][]unstructured.Unstructured, len(gc.resources))
	total := 0
	for i, res := range gc.resources {
		items, err := gc.list(res.GVR, "")
		if err != nil {
			return nil, 0, fmt.Errorf("listing %v: %w", res.GVR, err)
		}
		lists[i] = items
		total += len(items)
	}
	g := &graph{nodes: make([]*node, 0, total), byUID: make(map[types.UID]*node, total), byIdentity: make(map[identity]*node, total),
		dependents: map[types.UID][]*node{}, kinds: gc.kinds}
	nodes := make([]node, total)
	for i, res := range gc.resources {
		for j := range lists[i] {
			n := &nodes[len(g.nodes)]
			*n = node{res: res, obj: &lists[i][j]}
			g.nodes = append(g.nodes, n)
			g.byUID[n.obj.GetUID()] = n
			g.byIdentity[identity{res.GVR, n.obj.GetNamespace(), n.obj.GetName()}] = n
		}
	}
	for _, n := range g.nodes {
		for _, ref := range n.obj.GetOwnerReferences() {
			if !slices.Contains(g.dependents[ref.UID], n) {
				g.dependents[ref.UID] = append(g.dependents[ref.UID], n)
			}
		}
	}
	return g, rev, nil
}

// ownerState classifies one owner reference of a dependent.
type ownerState int

const (
	solid      ownerState = iota // the owner exists with the uid referenced
	dangling                     // absent, or present with another uid
	waiting                      // exists, being deleted in the foreground
	unresolved                   // the kind is not served: the collector cannot tell (retried)
	invalid                      // a cluster-scoped dependent naming a namespaced owner kind
)

// resolve looks the owner of ref up as the collector does: by the kind's resource and the
// reference's name, in the dependent's namespace when the owner's kind is namespaced, then
// compares uids. It returns the state and, for a reference whose uid names an object in another
// namespace, that object (a cross-namespace reference the collector warns about).
func (g *graph) resolve(dep *node, ref metav1.OwnerReference) (ownerState, *node) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return unresolved, nil
	}
	res, ok := g.kinds[schema.GroupKind{Group: gv.Group, Kind: ref.Kind}]
	if !ok {
		return unresolved, nil
	}
	if res.Namespaced && dep.obj.GetNamespace() == "" {
		return invalid, nil
	}
	ns := ""
	if res.Namespaced {
		ns = dep.obj.GetNamespace()
	}
	owner := g.byIdentity[identity{res.GVR, ns, ref.Name}]
	if owner == nil || owner.obj.GetUID() != ref.UID {
		var elsewhere *node
		if o := g.byUID[ref.UID]; o != nil && o.res.Namespaced && o.obj.GetNamespace() != dep.obj.GetNamespace() {
			elsewhere = o
		}
		return dangling, elsewhere
	}
	if owner.terminating() && owner.has(metav1.FinalizerDeleteDependents) {
		return waiting, nil
	}
	return solid, nil
}

// Step implements Component.
func (gc *GarbageCollector) Step(ctx context.Context, now time.Time) (string, error) {
	if !gc.ready(now) {
		return "", nil
	}
	g, rev, err := gc.read()
	if err != nil {
		gc.result(now, err)
		return "", nil
	}
	for _, n := range g.nodes {
		if what, err, acted := gc.act(ctx, g, n); acted {
			gc.result(now, err)
			if err != nil {
				return fmt.Sprintf("%s failed: %v", what, err), nil
			}
			return what, nil
		}
	}
	gc.done(now, rev)
	return "", nil
}

// act makes n's first write, if it has one.
func (gc *GarbageCollector) act(ctx context.Context, g *graph, n *node) (string, error, bool) {
	uid := n.obj.GetUID()
	if n.terminating() && n.has(metav1.FinalizerOrphanDependents) {
		for _, d := range g.dependents[uid] {
			return fmt.Sprintf("orphan %s (owner %s)", d, n), gc.dropRefs(ctx, d, []types.UID{uid}), true
		}
		return fmt.Sprintf("remove finalizer orphan from %s", n), gc.dropFinalizer(ctx, n, metav1.FinalizerOrphanDependents), true
	}
	if n.terminating() && n.has(metav1.FinalizerDeleteDependents) {
		blocked := false
		for _, d := range g.dependents[uid] {
			if !blocks(d, uid) {
				continue
			}
			blocked = true
			if !d.terminating() {
				// Its reference to n is waiting: the dependent's own turn below deletes it.
				if what, err, acted := gc.actAsDependent(ctx, g, d); acted {
					return what, err, true
				}
			}
		}
		if !blocked {
			return fmt.Sprintf("remove finalizer foregroundDeletion from %s", n), gc.dropFinalizer(ctx, n, metav1.FinalizerDeleteDependents), true
		}
	}
	return gc.actAsDependent(ctx, g, n)
}

// blocks reports whether d holds a reference to owner with blockOwnerDeletion.
func blocks(d *node, owner types.UID) bool {
	for _, ref := range d.obj.GetOwnerReferences() {
		if ref.UID == owner && ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion {
			return true
		}
	}
	return false
}

// actAsDependent is the collector's attemptToDeleteItem for n.
func (gc *GarbageCollector) actAsDependent(ctx context.Context, g *graph, n *node) (string, error, bool) {
	refs := n.obj.GetOwnerReferences()
	if len(refs) == 0 || n.terminating() {
		// Being deleted: the apiserver and the finalizers finish it (a foreground one is
		// handled as an owner above).
		return "", nil, false
	}
	var solids int
	var drop []types.UID
	waitingOwner := false
	for _, ref := range refs {
		st, elsewhere := g.resolve(n, ref)
		if (st == invalid || elsewhere != nil) && !gc.reported[n.obj.GetUID()] {
			gc.reported[n.obj.GetUID()] = true
			return fmt.Sprintf("warn OwnerRefInvalidNamespace on %s", n), gc.warnInvalidNamespace(ctx, n, ref), true
		}
		switch st {
		case unresolved, invalid:
			// The collector cannot decide (unknown kind), or never will (a cluster-scoped
			// dependent of a namespaced kind): it leaves the dependent alone.
			return "", nil, false
		case solid:
			solids++
		case dangling:
			drop = append(drop, ref.UID)
		case waiting:
			waitingOwner = true
			drop = append(drop, ref.UID)
		}
	}
	switch {
	case solids > 0:
		if len(drop) == 0 {
			return "", nil, false
		}
		return fmt.Sprintf("remove dangling or waiting owner references from %s", n), gc.dropRefs(ctx, n, drop), true
	case waitingOwner && len(g.dependents[n.obj.GetUID()]) > 0:
		return fmt.Sprintf("delete %s (foreground: an owner waits, it has dependents)", n), gc.delete(ctx, n, metav1.DeletePropagationForeground), true
	}
	policy := metav1.DeletePropagationBackground
	switch {
	case n.has(metav1.FinalizerOrphanDependents):
		policy = metav1.DeletePropagationOrphan
	case n.has(metav1.FinalizerDeleteDependents):
		policy = metav1.DeletePropagationForeground
	}
	return fmt.Sprintf("delete %s (%s: no owner left)", n, policy), gc.delete(ctx, n, policy), true
}

func (gc *GarbageCollector) client(n *node) *fakeapi.ResourceClient {
	c := gc.srv.Resource(n.res.GVR)
	if ns := n.obj.GetNamespace(); ns != "" {
		c = c.Namespace(ns)
	}
	return c
}

// delete deletes n with policy, on the condition that it is still the object read (its uid).
func (gc *GarbageCollector) delete(ctx context.Context, n *node, policy metav1.DeletionPropagation) error {
	uid := n.obj.GetUID()
	err := gc.client(n).Delete(ctx, n.obj.GetName(), metav1.DeleteOptions{
		PropagationPolicy: &policy,
		Preconditions:     &metav1.Preconditions{UID: &uid},
	})
	if apierrors.IsNotFound(err) {
		return nil // gone already: nothing was to do
	}
	if err == nil {
		gc.stats.Deletes++
	}
	return err
}

// mutate writes compute's change to n, on the condition that it is still the object read.
func (gc *GarbageCollector) mutate(ctx context.Context, n *node, compute func(live *unstructured.Unstructured)) error {
	uid := n.obj.GetUID()
	_, _, err := gc.client(n).Mutate(ctx, n.obj.GetName(), fakeapi.Mutation{
		Verb: fakeapi.VerbPatch,
		Compute: func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			if live.GetUID() != uid {
				return nil, apierrors.NewConflict(n.res.GVR.GroupResource(), n.obj.GetName(), fmt.Errorf("uid %s is not %s", live.GetUID(), uid))
			}
			compute(live)
			return live, nil
		},
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// dropRefs removes n's owner references to the uids given.
func (gc *GarbageCollector) dropRefs(ctx context.Context, n *node, uids []types.UID) error {
	return gc.mutate(ctx, n, func(live *unstructured.Unstructured) {
		refs := live.GetOwnerReferences()
		refs = slices.DeleteFunc(refs, func(r metav1.OwnerReference) bool { return slices.Contains(uids, r.UID) })
		if len(refs) == 0 {
			unstructured.RemoveNestedField(live.Object, "metadata", "ownerReferences")
			return
		}
		live.SetOwnerReferences(refs)
	})
}

// dropFinalizer removes one finalizer of n; the apiserver deletes n when none remains.
func (gc *GarbageCollector) dropFinalizer(ctx context.Context, n *node, finalizer string) error {
	return gc.mutate(ctx, n, func(live *unstructured.Unstructured) {
		f := slices.DeleteFunc(live.GetFinalizers(), func(s string) bool { return s == finalizer })
		if len(f) == 0 {
			unstructured.RemoveNestedField(live.Object, "metadata", "finalizers")
			return
		}
		live.SetFinalizers(f)
	})
}

// warnInvalidNamespace writes the Warning event the collector records on a dependent whose
// owner reference cannot be valid: a namespaced owner in another namespace, or a namespaced
// owner kind named by a cluster-scoped dependent.
func (gc *GarbageCollector) warnInvalidNamespace(ctx context.Context, n *node, ref metav1.OwnerReference) error {
	gc.events++
	ns := n.obj.GetNamespace()
	evNS := ns
	if evNS == "" {
		evNS = "default"
	}
	ev := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Event",
		"metadata":   map[string]any{"name": fmt.Sprintf("%s.gc%d", n.obj.GetName(), gc.events), "namespace": evNS},
		"involvedObject": map[string]any{
			"apiVersion": n.obj.GetAPIVersion(), "kind": n.obj.GetKind(), "name": n.obj.GetName(),
			"namespace": ns, "uid": string(n.obj.GetUID()),
		},
		"reason":  "OwnerRefInvalidNamespace",
		"type":    "Warning",
		"message": fmt.Sprintf("ownerRef [%s/%s, namespace: %s, name: %s, uid: %s] does not exist in namespace %q", ref.APIVersion, ref.Kind, ns, ref.Name, ref.UID, ns),
		"source":  map[string]any{"component": "garbage-collector-controller"},
		"count":   int64(1),
	}}
	_, err := gc.srv.Resource(schema.GroupVersionResource{Version: "v1", Resource: "events"}).Namespace(evNS).Create(ctx, ev, metav1.CreateOptions{})
	if apierrors.IsNotFound(err) {
		return nil // events not served
	}
	return err
}
