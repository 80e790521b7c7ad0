package controlplane

import (
	"cmp"
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
// (docs/controlplane.md §1). Each Step reads every served resource, brings its owner graph up
// to date, and makes the first write the collector would make, in resource-table and key order:
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
//
// The graph is kept between steps and updated from what changed on the server since the last
// read (view.go), as the real collector keeps its graph from watch events: it is at every read
// the graph a full read of every resource would build.
type GarbageCollector struct {
	base
	reported map[types.UID]bool // dependents already given an OwnerRefInvalidNamespace event
	events   int                // events written, for their names
	g        *graph
}

// NewGarbageCollector returns the collector of srv.
func NewGarbageCollector(srv *fakeapi.Server) (*GarbageCollector, error) {
	b, err := newBase("garbage-collector", srv)
	if err != nil {
		return nil, err
	}
	gc := &GarbageCollector{base: b, reported: map[types.UID]bool{}}
	gc.g = newGraph(&gc.base)
	return gc, nil
}

// Pending implements Component.
func (gc *GarbageCollector) Pending(now time.Time) bool { return gc.pending(now) }

// NextTimer implements Component.
func (gc *GarbageCollector) NextTimer() (time.Time, bool) { return gc.timer() }

// SetStopped implements Component: a restarted collector builds its graph afresh, as the real
// one lists everything again when it starts.
func (gc *GarbageCollector) SetStopped(stopped bool) {
	gc.base.SetStopped(stopped)
	gc.g.forget()
}

// node is one object of the graph, with what the collector reads of it, taken once when the
// object enters the graph (a committed object never changes).
type node struct {
	res         fakeapi.Resource
	resIndex    int // the resource's place in the table: with the key, the node's order
	obj         *unstructured.Unstructured
	uid         types.UID
	ns, name    string
	refs        []metav1.OwnerReference
	finalizers  []string
	terminating bool
}

func newNode(res fakeapi.Resource, resIndex int, obj *unstructured.Unstructured) *node {
	return &node{res: res, resIndex: resIndex, obj: obj, uid: obj.GetUID(), ns: obj.GetNamespace(), name: obj.GetName(),
		refs: obj.GetOwnerReferences(), finalizers: obj.GetFinalizers(), terminating: obj.GetDeletionTimestamp() != nil}
}

// compareNodes orders nodes as the collector visits them: by resource-table order, then key.
func compareNodes(a, b *node) int {
	return cmp.Or(cmp.Compare(a.resIndex, b.resIndex), cmp.Compare(a.ns, b.ns), cmp.Compare(a.name, b.name))
}

func (n *node) has(finalizer string) bool { return slices.Contains(n.finalizers, finalizer) }
func (n *node) String() string {
	if n.ns == "" {
		return fmt.Sprintf("%s %s", n.res.GVR.Resource, n.name)
	}
	return fmt.Sprintf("%s %s/%s", n.res.GVR.Resource, n.ns, n.name)
}

// graph is the collector's view of the server: every served resource's objects (views, in
// table order, each in key order) and the indexes a decision reads.
type graph struct {
	views      []view[*node]
	hooks      []viewHooks[*node]
	byUID      map[types.UID][]*node // the nodes of a uid, in node order (one, but for a duplicated uid)
	byIdentity map[identity]*node
	dependents map[types.UID][]*node                 // owner uid -> dependents referencing it, in node order
	kinds      map[schema.GroupKind]fakeapi.Resource // the server's resources by group and kind
	// actors are the nodes the collector may act on, in node order: those with owner
	// references or being deleted. Any other node is neither a dependent to collect nor an
	// owner whose deletion waits, so a step visits only these.
	actors []*node
}

type identity struct {
	gvr      schema.GroupVersionResource
	ns, name string
}

func newGraph(b *base) *graph {
	g := &graph{byUID: map[types.UID][]*node{}, byIdentity: map[identity]*node{}, dependents: map[types.UID][]*node{},
		kinds: make(map[schema.GroupKind]fakeapi.Resource, len(b.resources))}
	for i, res := range b.resources {
		// The last of a kind's versions: the table does not change, so this is made once.
		g.kinds[schema.GroupKind{Group: res.GVR.Group, Kind: res.Kind}] = res
		g.views = append(g.views, newView[*node](b, res.GVR))
		g.hooks = append(g.hooks, viewHooks[*node]{
			add:  func(obj *unstructured.Unstructured) *node { n := newNode(res, i, obj); g.add(n); return n },
			drop: g.remove,
		})
	}
	return g
}

// forget empties the graph: the next read is a full one.
func (g *graph) forget() {
	for i := range g.views {
		g.views[i].forget(g.hooks[i])
	}
}

// insertSorted inserts n into list, kept in node order, unless it is there.
func insertSorted(list []*node, n *node) []*node {
	i, found := slices.BinarySearchFunc(list, n, compareNodes)
	if found {
		return list
	}
	return slices.Insert(list, i, n)
}

// removeSorted removes n from list, kept in node order.
func removeSorted(list []*node, n *node) []*node {
	if i, found := slices.BinarySearchFunc(list, n, compareNodes); found && list[i] == n {
		return slices.Delete(list, i, i+1)
	}
	return list
}

// add indexes n, which entered the graph.
func (g *graph) add(n *node) {
	g.byUID[n.uid] = insertSorted(g.byUID[n.uid], n)
	g.byIdentity[identity{n.res.GVR, n.ns, n.name}] = n
	for _, ref := range n.refs {
		g.dependents[ref.UID] = insertSorted(g.dependents[ref.UID], n)
	}
	if n.mayAct() {
		g.actors = insertSorted(g.actors, n)
	}
}

// mayAct reports whether the collector can ever act on n: a node without owner references
// that is not being deleted has no write of its own (act finds nothing for it).
func (n *node) mayAct() bool { return len(n.refs) > 0 || n.terminating }

// remove unindexes n, which left the graph.
func (g *graph) remove(n *node) {
	if l := removeSorted(g.byUID[n.uid], n); len(l) > 0 {
		g.byUID[n.uid] = l
	} else {
		delete(g.byUID, n.uid)
	}
	delete(g.byIdentity, identity{n.res.GVR, n.ns, n.name})
	for _, ref := range n.refs {
		if l := removeSorted(g.dependents[ref.UID], n); len(l) > 0 {
			g.dependents[ref.UID] = l
		} else {
			delete(g.dependents, ref.UID)
		}
	}
	if n.mayAct() {
		g.actors = removeSorted(g.actors, n)
	}
}

// owner returns the node of uid (the last in node order, should a uid be duplicated), or nil.
func (g *graph) owner(uid types.UID) *node {
	if l := g.byUID[uid]; len(l) > 0 {
		return l[len(l)-1]
	}
	return nil
}

// read brings the graph up to date and returns the server revision before it.
func (gc *GarbageCollector) read() (uint64, error) {
	gc.stats.Scans++
	gc.beginScan()
	if gc.rebuild {
		gc.g = newGraph(&gc.base) // every index made anew, none of it maintained (base.rebuild)
	}
	rev := gc.srv.Revision()
	for i := range gc.g.views {
		if err := refresh(&gc.base, &gc.g.views[i], gc.g.hooks[i]); err != nil {
			return 0, fmt.Errorf("listing %v: %w", gc.resources[i].GVR, err)
		}
	}
	return rev, nil
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
	if res.Namespaced && dep.ns == "" {
		return invalid, nil
	}
	ns := ""
	if res.Namespaced {
		ns = dep.ns
	}
	owner := g.byIdentity[identity{res.GVR, ns, ref.Name}]
	if owner == nil || owner.uid != ref.UID {
		var elsewhere *node
		if o := g.owner(ref.UID); o != nil && o.res.Namespaced && o.ns != dep.ns {
			elsewhere = o
		}
		return dangling, elsewhere
	}
	if owner.terminating && owner.has(metav1.FinalizerDeleteDependents) {
		return waiting, nil
	}
	return solid, nil
}

// Step implements Component.
func (gc *GarbageCollector) Step(ctx context.Context, now time.Time) (string, error) {
	if !gc.ready(now) {
		return "", nil
	}
	rev, err := gc.read()
	if err != nil {
		gc.result(now, err)
		return "", nil
	}
	for _, n := range gc.g.actors { // in resource-table and key order, as every node
		if what, err, acted := gc.act(ctx, gc.g, n); acted {
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
	uid := n.uid
	if n.terminating && n.has(metav1.FinalizerOrphanDependents) {
		for _, d := range g.dependents[uid] {
			return fmt.Sprintf("orphan %s (owner %s)", d, n), gc.dropRefs(ctx, d, []types.UID{uid}), true
		}
		return fmt.Sprintf("remove finalizer orphan from %s", n), gc.dropFinalizer(ctx, n, metav1.FinalizerOrphanDependents), true
	}
	if n.terminating && n.has(metav1.FinalizerDeleteDependents) {
		blocked := false
		for _, d := range g.dependents[uid] {
			if !blocks(d, uid) {
				continue
			}
			blocked = true
			if !d.terminating {
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
	for _, ref := range d.refs {
		if ref.UID == owner && ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion {
			return true
		}
	}
	return false
}

// actAsDependent is the collector's attemptToDeleteItem for n.
func (gc *GarbageCollector) actAsDependent(ctx context.Context, g *graph, n *node) (string, error, bool) {
	refs := n.refs
	if len(refs) == 0 || n.terminating {
		// Being deleted: the apiserver and the finalizers finish it (a foreground one is
		// handled as an owner above).
		return "", nil, false
	}
	var solids int
	var drop []types.UID
	waitingOwner := false
	for _, ref := range refs {
		st, elsewhere := g.resolve(n, ref)
		if st == dangling && gc.stale {
			confirmed, err := gc.confirmDangling(ctx, g, n, ref)
			if err != nil {
				return fmt.Sprintf("look up owner %s %s of %s", ref.Kind, ref.Name, n), err, true
			}
			if st = confirmed; st != dangling {
				elsewhere = nil
			}
		}
		if (st == invalid || elsewhere != nil) && !gc.reported[n.uid] {
			gc.reported[n.uid] = true
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
	case waitingOwner && len(g.dependents[n.uid]) > 0:
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

// confirmDangling looks up, with a consistent GET, an owner that a stale read did not show (or
// showed with another uid), as kube-controller-manager's collector does before it believes its
// caches (isDangling): with stale reads the lists of one scan come from watch caches at
// different revisions, and a dependent read from a fresh cache may name an owner that a lagging
// one has not shown yet. The live owner decides: absent or of another uid, dangling; being
// deleted in the foreground, waiting; else solid. Without stale reads the graph is the server's
// state at one revision and needs no such look-up.
func (gc *GarbageCollector) confirmDangling(ctx context.Context, g *graph, n *node, ref metav1.OwnerReference) (ownerState, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return dangling, nil // resolve found the kind: not reached
	}
	res := g.kinds[schema.GroupKind{Group: gv.Group, Kind: ref.Kind}]
	c := gc.srv.Resource(res.GVR)
	if res.Namespaced {
		c = c.Namespace(n.ns)
	}
	live, err := c.Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case notFound(err):
		return dangling, nil
	case err != nil:
		return dangling, err
	case live.GetUID() != ref.UID:
		return dangling, nil
	case live.GetDeletionTimestamp() != nil && slices.Contains(live.GetFinalizers(), metav1.FinalizerDeleteDependents):
		return waiting, nil
	}
	return solid, nil
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
	if notFound(err) {
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
	if notFound(err) {
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
	if notFound(err) {
		return nil // events not served
	}
	return err
}
