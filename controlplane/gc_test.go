package controlplane_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/fakeapi"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestBackgroundDeletesDependentsAfterTheOwner(t *testing.T) {
	e := newEnv(t)
	owner := e.create(configmaps, "a", "owner")
	e.create(configmaps, "a", "dep1", ref(owner, true))
	e.create(configmaps, "a", "dep2", ref(owner, false))
	e.delete(configmaps, "a", "owner", metav1.DeleteOptions{}) // no policy: the default, background
	if e.get(configmaps, "a", "owner") != nil {
		t.Fatal("a background delete keeps the owner")
	}
	if e.get(configmaps, "a", "dep1") == nil {
		t.Fatal("the apiserver deleted a dependent itself")
	}
	e.settle()
	for _, n := range []string{"dep1", "dep2"} {
		if e.get(configmaps, "a", n) != nil {
			t.Errorf("%s outlives its owner", n)
		}
	}
	if s := e.cp.GC.Stats(); s.Deletes != 2 || s.Writes != 2 {
		t.Errorf("collector stats %+v, want 2 deletes and 2 writes", s)
	}
}

func TestForegroundHoldsTheOwnerUntilBlockingDependentsAreGone(t *testing.T) {
	e := newEnv(t)
	// The owner comes first in key order, so the collector meets it before its dependent.
	owner := e.create(configmaps, "a", "a-owner")
	e.create(configmaps, "a", "z-dep", ref(owner, true))
	e.delete(configmaps, "a", "a-owner", policy(metav1.DeletePropagationForeground))
	got := e.get(configmaps, "a", "a-owner")
	if got == nil || got.GetDeletionTimestamp() == nil || !slices.Contains(got.GetFinalizers(), metav1.FinalizerDeleteDependents) {
		t.Fatalf("owner after a foreground delete: %v", got)
	}
	ctx, now := context.Background(), e.clk.Now()
	what, err := e.cp.GC.Step(ctx, now)
	if err != nil || !strings.HasPrefix(what, "delete configmaps a/z-dep") {
		t.Fatalf("first step: %q %v", what, err)
	}
	if e.get(configmaps, "a", "a-owner") == nil {
		t.Fatal("the owner went before its blocking dependent")
	}
	what, _ = e.cp.GC.Step(ctx, now)
	if !strings.Contains(what, "remove finalizer foregroundDeletion") {
		t.Fatalf("second step: %q", what)
	}
	if e.get(configmaps, "a", "a-owner") != nil {
		t.Fatal("the owner outlives its foreground deletion")
	}
	e.settle()
}

// TestForegroundWaitsForADependentBeingDeleted: a blocking dependent that is being deleted but
// held by a finalizer of someone else's still holds its owner's foreground deletion; a
// non-blocking one held the same way does not hold it.
func TestForegroundWaitsForADependentBeingDeleted(t *testing.T) {
	e := newEnv(t)
	hold := func(name string) {
		t.Helper()
		dep := e.get(configmaps, "a", name)
		dep.SetFinalizers([]string{"example.com/hold"})
		if _, err := e.srv.Resource(configmaps).Namespace("a").Update(context.Background(), dep, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	owner := e.create(configmaps, "a", "owner")
	e.create(configmaps, "a", "blocking", ref(owner, true))
	hold("blocking")
	other := e.create(configmaps, "a", "other")
	e.create(configmaps, "a", "loose", ref(other, false))
	hold("loose")
	e.delete(configmaps, "a", "owner", policy(metav1.DeletePropagationForeground))
	e.delete(configmaps, "a", "other", policy(metav1.DeletePropagationForeground))
	e.settle()
	if dep := e.get(configmaps, "a", "blocking"); dep == nil || dep.GetDeletionTimestamp() == nil {
		t.Fatalf("the blocking dependent was not deleted: %v", dep)
	}
	if e.get(configmaps, "a", "owner") == nil {
		t.Fatal("the owner went while a blocking dependent was still being deleted")
	}
	if e.get(configmaps, "a", "other") != nil {
		t.Fatal("a dependent without blockOwnerDeletion held its owner's foreground deletion")
	}
	// The finalizer's owner lets go: the dependent goes, then the owner.
	dep := e.get(configmaps, "a", "blocking")
	dep.SetFinalizers(nil)
	if _, err := e.srv.Resource(configmaps).Namespace("a").Update(context.Background(), dep, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.settle()
	if e.get(configmaps, "a", "blocking") != nil || e.get(configmaps, "a", "owner") != nil {
		t.Fatal("the owner outlives its last blocking dependent")
	}
}

func TestForegroundWithoutDependentsFinishes(t *testing.T) {
	e := newEnv(t)
	e.create(configmaps, "a", "lonely")
	e.delete(configmaps, "a", "lonely", policy(metav1.DeletePropagationForeground))
	e.settle()
	if e.get(configmaps, "a", "lonely") != nil {
		t.Fatal("kubectl delete --cascade=foreground hangs on an object with no dependents")
	}
}

func TestForegroundCascadesThroughGenerations(t *testing.T) {
	e := newEnv(t)
	top := e.create(configmaps, "a", "top")
	mid := e.create(configmaps, "a", "mid", ref(top, true))
	e.create(configmaps, "a", "leaf", ref(mid, true))
	e.create(configmaps, "a", "loose", ref(top, false)) // not blocking: deleted all the same
	e.delete(configmaps, "a", "top", policy(metav1.DeletePropagationForeground))
	ctx := context.Background()
	var order []string
	for i := 0; i < 50 && e.cp.GC.Pending(e.clk.Now()); i++ {
		what, err := e.cp.GC.Step(ctx, e.clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		if what != "" {
			order = append(order, what)
		}
		if e.get(configmaps, "a", "top") == nil && e.get(configmaps, "a", "leaf") != nil {
			t.Fatalf("top went before leaf: %q", order)
		}
	}
	for _, n := range []string{"top", "mid", "leaf", "loose"} {
		if e.get(configmaps, "a", n) != nil {
			t.Errorf("%s remains after %q", n, order)
		}
	}
	if !slices.ContainsFunc(order, func(s string) bool { return strings.HasPrefix(s, "delete configmaps a/mid (foreground") }) {
		t.Errorf("mid, which has dependents, was not deleted in the foreground: %q", order)
	}
}

func TestOrphanKeepsDependentsWithoutTheReference(t *testing.T) {
	for name, opts := range map[string]metav1.DeleteOptions{
		"propagationPolicy": policy(metav1.DeletePropagationOrphan),
		"orphanDependents":  {OrphanDependents: ptr(true)},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			owner := e.create(configmaps, "a", "owner")
			other := e.create(configmaps, "a", "other")
			e.create(configmaps, "a", "dep", ref(owner, true), ref(other, false))
			e.create(configmaps, "a", "only", ref(owner, true))
			e.delete(configmaps, "a", "owner", opts)
			if got := e.get(configmaps, "a", "owner"); got == nil || !slices.Contains(got.GetFinalizers(), metav1.FinalizerOrphanDependents) {
				t.Fatalf("owner after an orphan delete: %v", got)
			}
			e.settle()
			if e.get(configmaps, "a", "owner") != nil {
				t.Fatal("the orphan finalizer was never removed")
			}
			if only := e.get(configmaps, "a", "only"); only == nil || len(only.GetOwnerReferences()) != 0 {
				t.Fatalf("a dependent whose only owner was deleted with orphan: %v", only)
			}
			dep := e.get(configmaps, "a", "dep")
			if dep == nil {
				t.Fatal("an orphaned dependent was deleted")
			}
			if got := ownerUIDs(dep); !slices.Equal(got, ownerUIDs(e.create(configmaps, "a", "probe", ref(other, false)))) {
				t.Fatalf("dependent's owners %v: want only the other owner", got)
			}
		})
	}
}

func TestDanglingAndMismatchedOwners(t *testing.T) {
	e := newEnv(t)
	// An owner that never existed.
	e.create(configmaps, "a", "orphan-of-ghost", metav1OwnerRef("v1", "ConfigMap", "ghost", "uid-ghost"))
	// An owner recreated under the same name: the reference's uid is not the live one.
	old := e.create(configmaps, "a", "reborn")
	e.create(configmaps, "a", "dep-of-old", ref(old, true))
	e.delete(configmaps, "a", "reborn", policy(metav1.DeletePropagationOrphan))
	e.settle() // orphaned: dep-of-old loses its reference
	if dep := e.get(configmaps, "a", "dep-of-old"); dep == nil || len(dep.GetOwnerReferences()) != 0 {
		t.Fatalf("orphaned dependent: %v", dep)
	}
	e.create(configmaps, "a", "reborn")
	e.create(configmaps, "a", "stale-ref", ref(old, true)) // the old uid, the live name
	// One solid owner and one dangling: kept, the dangling reference removed.
	solid := e.create(configmaps, "a", "solid")
	e.create(configmaps, "a", "half", ref(solid, false), metav1OwnerRef("v1", "ConfigMap", "gone", "uid-gone"))
	e.settle()
	if e.get(configmaps, "a", "orphan-of-ghost") != nil {
		t.Error("a dependent of an owner that never existed survives")
	}
	if e.get(configmaps, "a", "stale-ref") != nil {
		t.Error("a dependent whose owner's uid does not match survives")
	}
	if e.get(configmaps, "a", "reborn") == nil {
		t.Error("the live object of a mismatched uid was deleted")
	}
	half := e.get(configmaps, "a", "half")
	if half == nil || len(half.GetOwnerReferences()) != 1 || half.GetOwnerReferences()[0].Name != "solid" {
		t.Errorf("a dependent with a solid and a dangling owner: %v", half)
	}
}

func TestOwnersAcrossScopes(t *testing.T) {
	e := newEnv(t)
	// A namespaced dependent of a cluster-scoped owner: valid, cascades.
	node := e.create(nodes, "", "n1")
	e.create(configmaps, "a", "of-node", ref(node, true))
	// A namespaced owner in another namespace: treated as absent, with a warning event.
	owner := e.create(configmaps, "a", "owner")
	e.create(configmaps, "b", "cross", ref(owner, true))
	// A cluster-scoped dependent of a namespaced kind: never collected, with a warning event.
	e.create(nodes, "", "n2", ref(owner, true))
	// An owner of a kind the server does not serve: the collector cannot tell, leaves it.
	e.create(configmaps, "a", "unknown-kind", metav1OwnerRef("example.com/v1", "Gadget", "g", "uid-g"))
	e.settle()
	if e.get(configmaps, "a", "of-node") == nil {
		t.Fatal("a dependent of a live cluster-scoped owner was deleted")
	}
	if e.get(configmaps, "b", "cross") != nil {
		t.Error("a dependent naming an owner in another namespace survives")
	}
	if e.get(nodes, "", "n2") == nil {
		t.Error("a cluster-scoped dependent of a namespaced kind was deleted")
	}
	if e.get(configmaps, "a", "unknown-kind") == nil {
		t.Error("a dependent of an unserved kind was deleted")
	}
	evs, err := e.srv.Resource(events).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var warned []string
	for _, ev := range evs.Items {
		if r, _, _ := unstructuredString(ev.Object, "reason"); r == "OwnerRefInvalidNamespace" {
			n, _, _ := unstructuredString(ev.Object, "involvedObject", "name")
			warned = append(warned, n)
		}
	}
	slices.Sort(warned)
	if !slices.Equal(warned, []string{"cross", "n2"}) {
		t.Errorf("OwnerRefInvalidNamespace events for %v, want cross and n2", warned)
	}
	e.delete(nodes, "", "n1", metav1.DeleteOptions{})
	e.settle()
	if e.get(configmaps, "a", "of-node") != nil {
		t.Error("deleting a cluster-scoped owner left its namespaced dependent")
	}
}

func TestOrphanByDefaultResource(t *testing.T) {
	legacy := schema.GroupVersionResource{Group: "example.com", Version: "v1beta1", Resource: "widgets"}
	e := newEnv(t, fakeapi.Resource{GVR: legacy, Kind: "Widget", Namespaced: true, OrphanByDefault: true})
	w := e.create(legacy, "a", "w")
	e.create(configmaps, "a", "dep", ref(w, true))
	e.delete(legacy, "a", "w", metav1.DeleteOptions{})
	e.settle()
	if e.get(legacy, "a", "w") != nil {
		t.Fatal("owner remains")
	}
	if dep := e.get(configmaps, "a", "dep"); dep == nil || len(dep.GetOwnerReferences()) != 0 {
		t.Fatalf("a resource that orphans by default: dependent %v", dep)
	}
}

// TestStaleReadsActOnTheWatchCache: with Config.StaleReads the collector reads the replicas'
// watch caches (resourceVersion "0"): a frozen replica still shows the deleted owner, so the
// dependent stays until the replica resumes; reading storage, it goes at once.
func TestStaleReadsActOnTheWatchCache(t *testing.T) {
	for _, stale := range []bool{false, true} {
		e, srv := replicatedEnv(t, 1, controlplane.Config{StaleReads: stale})
		owner := e.create(configmaps, "a", "owner")
		e.create(configmaps, "a", "dep", ref(owner, true))
		if err := srv.Replicas().Freeze(0); err != nil {
			t.Fatal(err)
		}
		e.delete(configmaps, "a", "owner", metav1.DeleteOptions{})
		e.settle()
		if gone := e.get(configmaps, "a", "dep") == nil; gone == stale {
			t.Fatalf("stale reads %v: dependent gone %v with the replica frozen", stale, gone)
		}
		if err := srv.Replicas().Resume(0); err != nil {
			t.Fatal(err)
		}
		if at, ok := e.cp.GC.NextTimer(); stale != ok {
			t.Fatalf("stale reads %v: a collector behind its cache has a timer %v %v", stale, ok, at)
		}
		e.advance() // a stale reader reads again after its poll; a fresh one has no timer
		e.settle()
		if e.get(configmaps, "a", "dep") != nil {
			t.Fatalf("stale reads %v: the dependent outlives the replica's resume", stale)
		}
	}
}

// TestStaleReadsConfirmAnAbsentOwner: with stale reads the lists of one scan may come from
// caches at different revisions: here the dependent's resource from a fresh replica and its
// owner's from one frozen before the owner was created. The collector looks the owner up before
// it believes it gone, as kube-controller-manager's does (isDangling's GET), so the dependent
// stays; once the owner is really gone, the dependent goes.
func TestStaleReadsConfirmAnAbsentOwner(t *testing.T) {
	e, srv := replicatedEnv(t, 2, controlplane.Config{StaleReads: true})
	if err := srv.Replicas().Freeze(1); err != nil {
		t.Fatal(err)
	}
	owner := e.create(nodes, "", "n1")
	e.create(configmaps, "a", "dep", ref(owner, true))
	// Each of the collector's lists, in table order: nodes from the frozen replica, the rest
	// from the fresh one.
	step := func() {
		t.Helper()
		e.clk.Step(time.Second) // past the poll after a read from a lagging cache
		for _, res := range srv.Config().Resources {
			r := 0
			if res.GVR == nodes {
				r = 1
			}
			if err := srv.Replicas().RouteNext(r); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.cp.GC.Step(context.Background(), e.clk.Now()); err != nil {
			t.Fatal(err)
		}
	}
	step()
	if e.get(configmaps, "a", "dep") == nil {
		t.Fatal("the collector deleted a dependent whose owner only a lagging cache lacked")
	}
	if got := e.cp.GC.Stats(); got.Deletes != 0 || got.Errors != 0 {
		t.Fatalf("stats %+v", got)
	}
	e.delete(nodes, "", "n1", metav1.DeleteOptions{})
	step()
	if e.get(configmaps, "a", "dep") != nil {
		t.Fatal("the dependent of an owner gone outlives the collector's step")
	}
}
