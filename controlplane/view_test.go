package controlplane

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/informersim/informersim/fakeapi"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	testclock "k8s.io/utils/clock/testing"
)

var (
	cmGVR   = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	nodeGVR = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
)

// fullGraph is the graph a full read of every resource builds, the collector's read before it
// kept its graph between steps: every resource listed in table order, each in key order, the
// last node of a uid winning, dependents in node order.
type fullGraph struct {
	nodes      []*unstructured.Unstructured
	byUID      map[types.UID]*unstructured.Unstructured
	byIdentity map[identity]*unstructured.Unstructured
	dependents map[types.UID][]*unstructured.Unstructured
}

func readFull(t *testing.T, srv *fakeapi.Server, resources []fakeapi.Resource) fullGraph {
	t.Helper()
	f := fullGraph{byUID: map[types.UID]*unstructured.Unstructured{}, byIdentity: map[identity]*unstructured.Unstructured{},
		dependents: map[types.UID][]*unstructured.Unstructured{}}
	for _, res := range resources {
		// An observer's read: the same committed objects a list lends, with no effect on the run.
		l, err := srv.Lending().Snapshot(res.GVR, "", metav1.ListOptions{}, "test")
		if err != nil {
			t.Fatal(err)
		}
		for i := range l.Items {
			u := &l.Items[i]
			f.nodes = append(f.nodes, u)
			f.byUID[u.GetUID()] = u
			f.byIdentity[identity{res.GVR, u.GetNamespace(), u.GetName()}] = u
		}
	}
	for _, u := range f.nodes {
		for _, ref := range u.GetOwnerReferences() {
			if !slices.ContainsFunc(f.dependents[ref.UID], func(d *unstructured.Unstructured) bool { return same(d, u) }) {
				f.dependents[ref.UID] = append(f.dependents[ref.UID], u)
			}
		}
	}
	return f
}

func same(a, b *unstructured.Unstructured) bool { return sameContent(a, b) }

// compareGraphs fails t where the collector's kept graph is not the full read's.
func compareGraphs(t *testing.T, where string, g *graph, f fullGraph) {
	t.Helper()
	var nodes []*node
	for i := range g.views {
		for _, e := range g.views[i].entries {
			nodes = append(nodes, e.val)
		}
	}
	if len(nodes) != len(f.nodes) {
		t.Fatalf("%s: %d nodes, a full read %d", where, len(nodes), len(f.nodes))
	}
	for i, n := range nodes {
		u := f.nodes[i]
		if !same(n.obj, u) {
			t.Fatalf("%s: node %d is %s at %s, a full read's %s/%s at %s", where, i, n, n.obj.GetResourceVersion(), u.GetNamespace(), u.GetName(), u.GetResourceVersion())
		}
		if n.uid != u.GetUID() || n.ns != u.GetNamespace() || n.name != u.GetName() || n.terminating != (u.GetDeletionTimestamp() != nil) ||
			!reflect.DeepEqual(n.refs, u.GetOwnerReferences()) || !reflect.DeepEqual(n.finalizers, u.GetFinalizers()) {
			t.Fatalf("%s: node %s reads other fields than its object", where, n)
		}
	}
	var actors []*node
	for _, n := range nodes {
		if len(n.refs) > 0 || n.terminating {
			actors = append(actors, n)
		}
	}
	if !slices.Equal(actors, g.actors) {
		t.Fatalf("%s: the collector would visit %d nodes, %d have owners or are being deleted", where, len(g.actors), len(actors))
	}
	if len(g.byUID) != len(f.byUID) || len(g.byIdentity) != len(f.byIdentity) || len(g.dependents) != len(f.dependents) {
		t.Fatalf("%s: indexes of %d uids, %d identities, %d owners, a full read's %d, %d, %d", where,
			len(g.byUID), len(g.byIdentity), len(g.dependents), len(f.byUID), len(f.byIdentity), len(f.dependents))
	}
	for uid, u := range f.byUID {
		if o := g.owner(uid); o == nil || !same(o.obj, u) {
			t.Fatalf("%s: uid %s is not the full read's", where, uid)
		}
	}
	for id, u := range f.byIdentity {
		if n := g.byIdentity[id]; n == nil || !same(n.obj, u) {
			t.Fatalf("%s: %v is not the full read's", where, id)
		}
	}
	for uid, want := range f.dependents {
		got := g.dependents[uid]
		if len(got) != len(want) {
			t.Fatalf("%s: owner %s has %d dependents, the full read %d", where, uid, len(got), len(want))
		}
		for i := range got {
			if !same(got[i].obj, want[i]) {
				t.Fatalf("%s: owner %s's dependent %d is %s, the full read's %s", where, uid, i, got[i], want[i].GetName())
			}
		}
	}
}

// fewUIDs draws from only a few values, so that the server gives several objects one uid.
type fewUIDs struct{ src rand.Source }

func (f fewUIDs) Uint64() uint64 { return f.src.Uint64() % 3 }

// TestKeptGraphIsAFullRead runs the collector among random writes (objects with owner
// references to live, gone and unknown owners, some with uids the server gave twice, finalizers, deletions with each propagation),
// compactions and a log that trims itself, on many seeds, and after each of its reads compares
// the graph it keeps with the one a full read of the server builds.
func TestKeptGraphIsAFullRead(t *testing.T) {
	var tally graphTally
	for seed := uint64(1); seed <= 40; seed++ {
		r := newGraphRun(t, seed, &tally)
		away := 0
		for op := 0; op < 120; op++ {
			r.randomChange(r.all())
			if r.rnd.IntN(20) == 0 {
				away = op + 5 + r.rnd.IntN(20) // a long pause: the history may be compacted past the graph
			}
			if r.rnd.IntN(3) == 0 || op < away {
				continue // the collector reads at irregular intervals: several writes to catch up on
			}
			if r.gc.Stopped() {
				continue
			}
			r.readAndCompare(fmt.Sprintf("seed %d op %d", seed, op))
		}
		if err := r.srv.Lending().Check(); err != nil {
			t.Fatal(err)
		}
	}
	reads, compacted, steps, writes := tally.reads, tally.compacted, tally.steps, tally.writes
	t.Logf("%d reads compared (%d views compacted past), %d collector steps, %d writes of the test's", reads, compacted, steps, writes)
	if reads < 1000 || compacted == 0 || steps == 0 {
		t.Fatalf("too little was compared: %d reads, %d views compacted past, %d steps", reads, compacted, steps)
	}
}

// graphTally counts, over all seeds of TestKeptGraphIsAFullRead, what it compared and did, so
// that it fails when too little was compared.
type graphTally struct{ reads, steps, writes, compacted int }

// graphRun is one seed of TestKeptGraphIsAFullRead: a server (whose uids may repeat), its
// garbage collector, and the test's random source.
type graphRun struct {
	t     *testing.T
	ctx   context.Context
	clk   *testclock.FakeClock
	srv   *fakeapi.Server
	gc    *GarbageCollector
	rnd   *rand.Rand
	tally *graphTally
}

func newGraphRun(t *testing.T, seed uint64, tally *graphTally) *graphRun {
	t.Helper()
	clk := testclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	src := rand.Source(rand.NewPCG(seed, 3))
	if seed%4 == 0 {
		src = fewUIDs{rand.NewPCG(seed, 3)} // uids repeat: the last node of a uid is its owner
	}
	srv, err := fakeapi.New(fakeapi.Config{Clock: clk, Rand: rand.New(src), MaxLogEntries: 20, MaxCacheHistoryEvents: 4})
	if err != nil {
		t.Fatal(err)
	}
	gc, err := NewGarbageCollector(srv)
	if err != nil {
		t.Fatal(err)
	}
	return &graphRun{t: t, ctx: context.Background(), clk: clk, srv: srv, gc: gc, rnd: rand.New(rand.NewPCG(seed, 4)), tally: tally}
}

// all is every configmap and node on the server.
func (r *graphRun) all() []*unstructured.Unstructured {
	t, srv := r.t, r.srv
	var out []*unstructured.Unstructured
	for _, gvr := range []schema.GroupVersionResource{cmGVR, nodeGVR} {
		l, err := srv.Snapshot(gvr, "", metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	}
	return out
}

// client is the client of u's resource and namespace.
func (r *graphRun) client(u *unstructured.Unstructured) *fakeapi.ResourceClient {
	if u.GetKind() == "Node" {
		return r.srv.Resource(nodeGVR)
	}
	return r.srv.Resource(cmGVR).Namespace(u.GetNamespace())
}

// randomChange draws one change among objs, the server's objects: a create with owners, a
// delete with a propagation, a finalizer released, a compaction, the collector stopped or
// started, or a second passing. Writes the server refuses are not counted.
func (r *graphRun) randomChange(objs []*unstructured.Unstructured) {
	t, ctx, srv, gc, clk, rnd := r.t, r.ctx, r.srv, r.gc, r.clk, r.rnd
	switch k := rnd.IntN(12); {
	case k < 5: // create, with owners
		r.createOwned(objs)
	case k < 7 && len(objs) > 0: // delete, with a propagation
		o := objs[rnd.IntN(len(objs))]
		p := []metav1.DeletionPropagation{metav1.DeletePropagationBackground, metav1.DeletePropagationForeground, metav1.DeletePropagationOrphan}[rnd.IntN(3)]
		if err := r.client(o).Delete(ctx, o.GetName(), metav1.DeleteOptions{PropagationPolicy: &p}); err == nil {
			r.tally.writes++
		}
	case k < 8 && len(objs) > 0: // release a finalizer
		o := objs[rnd.IntN(len(objs))].DeepCopy()
		o.SetFinalizers(slices.DeleteFunc(o.GetFinalizers(), func(f string) bool { return f == "example.com/hold" }))
		if _, err := r.client(o).Update(ctx, o, metav1.UpdateOptions{}); err == nil {
			r.tally.writes++
		}
	case k < 9:
		back := uint64(rnd.IntN(4))
		if err := srv.Faults().Compact(max(srv.Revision(), back+1) - back); err != nil && !apierrors.IsBadRequest(err) {
			t.Logf("compact: %v", err)
		}
	case k < 10:
		gc.SetStopped(rnd.IntN(2) == 0) // a restart reads everything again
	default:
		clk.Step(time.Second)
	}
}

// createOwned creates a configmap or a node with up to two owners (among objs, gone ones, or of
// an unknown kind), sometimes with a finalizer.
func (r *graphRun) createOwned(objs []*unstructured.Unstructured) {
	ctx, rnd := r.ctx, r.rnd
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	if rnd.IntN(4) == 0 {
		u.SetKind("Node")
	} else {
		u.SetNamespace([]string{"a", "b"}[rnd.IntN(2)])
	}
	u.SetName(fmt.Sprintf("o%d", rnd.IntN(12)))
	var refs []metav1.OwnerReference
	for range rnd.IntN(3) {
		block := rnd.IntN(2) == 0
		switch {
		case len(objs) > 0 && rnd.IntN(4) > 0:
			o := objs[rnd.IntN(len(objs))]
			refs = append(refs, metav1.OwnerReference{APIVersion: "v1", Kind: o.GetKind(), Name: o.GetName(), UID: o.GetUID(), BlockOwnerDeletion: &block})
		case rnd.IntN(2) == 0:
			refs = append(refs, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "gone", UID: types.UID(fmt.Sprint("gone-", rnd.IntN(3)))})
		default:
			refs = append(refs, metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Unknown", Name: "x", UID: "unknown"})
		}
	}
	if len(refs) > 0 {
		u.SetOwnerReferences(refs)
	}
	if rnd.IntN(5) == 0 {
		u.SetFinalizers([]string{"example.com/hold"})
	}
	if _, err := r.client(u).Create(ctx, u, metav1.CreateOptions{}); err == nil {
		r.tally.writes++
	}
}

// readAndCompare has the collector read, compares the graph it keeps with a full read's, then
// lets it take up to three steps.
func (r *graphRun) readAndCompare(where string) {
	t, ctx, srv, gc, clk, rnd := r.t, r.ctx, r.srv, r.gc, r.clk, r.rnd
	for i := range gc.g.views {
		if v := gc.g.views[i].rev; v != 0 && v < srv.CompactedRevision() {
			r.tally.compacted++ // compacted past the graph: read in full, compared key by key
		}
	}
	if _, err := gc.read(); err != nil {
		t.Fatal(err)
	}
	r.tally.reads++
	compareGraphs(t, where, gc.g, readFull(t, srv, gc.resources))
	for range rnd.IntN(4) {
		if gc.Pending(clk.Now()) {
			if _, err := gc.Step(ctx, clk.Now()); err != nil {
				t.Fatal(err)
			}
			r.tally.steps++
		}
	}
}
