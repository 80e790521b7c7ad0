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
	testclock "k8s.io/utils/clock/testing"
)

var depGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// keptPair is one control plane that keeps its views and one that rebuilds them at every read,
// each on its own server, driven alike.
type keptPair struct {
	srv [2]*fakeapi.Server
	clk [2]*testclock.FakeClock
	cp  [2]*ControlPlane
}

func newKeptPair(t *testing.T, seed uint64, stale bool) *keptPair {
	t.Helper()
	p := &keptPair{}
	for i := range 2 {
		p.clk[i] = testclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		srv, err := fakeapi.New(fakeapi.Config{Clock: p.clk[i], Rand: rand.New(rand.NewPCG(seed, 5)), MaxLogEntries: 30,
			MaxCacheHistoryEvents: 6, Replicas: 2, Routing: fakeapi.RoutingRoundRobin})
		if err != nil {
			t.Fatal(err)
		}
		if stale {
			if err := srv.Replicas().SetLag(1, 300*time.Millisecond); err != nil {
				t.Fatal(err)
			}
		}
		cp, err := New(srv, Config{Rand: rand.New(rand.NewPCG(seed, 6)), StaleReads: stale,
			Workload: WorkloadConfig{MaxLatency: 300 * time.Millisecond, Stuck: []string{"a/d1"}}})
		if err != nil {
			t.Fatal(err)
		}
		p.srv[i], p.cp[i] = srv, cp
	}
	p.cp[1].GC.rebuild, p.cp[1].Namespace.rebuild, p.cp[1].Workload.rebuild = true, true, true
	return p
}

// both applies f to each server and fails t when the two answer differently.
func (p *keptPair) both(t *testing.T, where string, f func(srv *fakeapi.Server, i int) error) {
	t.Helper()
	var errs [2]string
	for i := range 2 {
		errs[i] = fmt.Sprint(f(p.srv[i], i))
	}
	if errs[0] != errs[1] {
		t.Fatalf("%s: the servers answered %s and %s", where, errs[0], errs[1])
	}
}

// TestKeptViewsDecideAsRebuiltOnes runs, on many seeds, two control planes through the same
// random writes (owners and dependents, workloads created, scaled and deleted, namespaces
// deleted, finalizers, every propagation), compactions, injected failures of the components'
// requests, restarts and the passing of time, with fresh and with stale reads: one keeps its
// views between steps, the other rebuilds them at every read, as the components did before
// they kept them. At every step both must be pending alike and make the same write, and at the
// end both servers must hold the same objects and have recorded the same requests.
func TestKeptViewsDecideAsRebuiltOnes(t *testing.T) {
	ctx := context.Background()
	wrote := map[string]int{}
	for seed := uint64(1); seed <= 30; seed++ {
		stale := seed%3 == 0
		p := newKeptPair(t, seed, stale)
		rnd := rand.New(rand.NewPCG(seed, 7))
		for op := 0; op < 150; op++ {
			where := fmt.Sprintf("seed %d op %d", seed, op)
			p.randomChange(ctx, t, rnd, where)
			p.stepAlike(ctx, t, rnd, where, wrote)
		}
		p.checkSameEnd(t, seed)
	}
	t.Logf("writes compared: %v", wrote)
	for _, c := range []string{"garbage-collector", "namespace-controller", "workload-status"} {
		if wrote[c] == 0 {
			t.Errorf("%s never wrote: the comparison did not reach it", c)
		}
	}
}

// randomChange draws one change and makes it on both sides: a write (configmaps, deployments,
// namespaces, finalizers), a compaction, an injected failure of a component's request, a
// component stopped or started, or time passing.
func (p *keptPair) randomChange(ctx context.Context, t *testing.T, rnd *rand.Rand, where string) {
	t.Helper()
	all, err := p.srv[0].Snapshot(cmGVR, "", metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns := []string{"a", "b", "c"}[rnd.IntN(3)]
	name := fmt.Sprintf("o%d", rnd.IntN(8))
	switch k := rnd.IntN(14); {
	case k < 4: // a configmap, maybe with owners among the configmaps and namespaces
		p.createOwnedConfigMap(ctx, t, rnd, where, ns, name, all)
	case k < 6: // a deployment created or scaled
		p.createOrScaleDeployment(ctx, t, rnd, where, ns)
	case k < 8 && len(all.Items) > 0: // a configmap deleted
		o := all.Items[rnd.IntN(len(all.Items))]
		pol := []metav1.DeletionPropagation{metav1.DeletePropagationBackground, metav1.DeletePropagationForeground, metav1.DeletePropagationOrphan}[rnd.IntN(3)]
		p.both(t, where, func(srv *fakeapi.Server, _ int) error {
			return srv.Resource(cmGVR).Namespace(o.GetNamespace()).Delete(ctx, o.GetName(), metav1.DeleteOptions{PropagationPolicy: &pol})
		})
	case k < 9: // a namespace created, or deleted
		p.both(t, where, func(srv *fakeapi.Server, _ int) error {
			c := srv.Resource(fakeapi.NamespacesGVR)
			if _, err := c.Get(ctx, ns, metav1.GetOptions{}); apierrors.IsNotFound(err) {
				// As kube-apiserver makes one: the namespace controller finishes its deletion.
				u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
					"metadata": map[string]any{"name": ns}, "spec": map[string]any{"finalizers": []any{fakeapi.NamespaceFinalizer}}}}
				_, err := c.Create(ctx, u, metav1.CreateOptions{})
				return err
			}
			return c.Delete(ctx, ns, metav1.DeleteOptions{})
		})
	case k < 10 && len(all.Items) > 0: // a finalizer released
		o := all.Items[rnd.IntN(len(all.Items))]
		p.both(t, where, func(srv *fakeapi.Server, _ int) error {
			u := o.DeepCopy()
			u.SetFinalizers(slices.DeleteFunc(u.GetFinalizers(), func(f string) bool { return f == "example.com/hold" }))
			_, err := srv.Resource(cmGVR).Namespace(o.GetNamespace()).Update(ctx, u, metav1.UpdateOptions{})
			return err
		})
	case k < 11:
		back := uint64(rnd.IntN(4))
		p.both(t, where, func(srv *fakeapi.Server, _ int) error {
			return srv.Faults().Compact(max(srv.Revision(), back+1) - back)
		})
	case k < 12: // a failure for one of the components' requests
		verb := []fakeapi.Verb{fakeapi.VerbList, fakeapi.VerbPatch, fakeapi.VerbDelete, fakeapi.VerbUpdateStatus}[rnd.IntN(4)]
		p.both(t, where, func(srv *fakeapi.Server, _ int) error {
			srv.Faults().FailNext(verb, apierrors.NewInternalError(fmt.Errorf("injected")))
			return nil
		})
	case k < 13: // a restart
		c, stop := rnd.IntN(3), rnd.IntN(2) == 0
		for i := range 2 {
			p.cp[i].Components()[c].SetStopped(stop)
		}
	default:
		d := time.Duration(1+rnd.IntN(400)) * time.Millisecond
		for i := range 2 {
			p.clk[i].Step(d)
		}
	}
}

// createOwnedConfigMap creates ConfigMap ns/name on both sides with up to two owners, among the
// existing configmaps or a deployment that is gone, and sometimes a finalizer.
func (p *keptPair) createOwnedConfigMap(ctx context.Context, t *testing.T, rnd *rand.Rand, where, ns, name string, all *unstructured.UnstructuredList) {
	t.Helper()
	var refs []metav1.OwnerReference
	for range rnd.IntN(3) {
		block := rnd.IntN(2) == 0
		if len(all.Items) > 0 && rnd.IntN(3) > 0 {
			o := all.Items[rnd.IntN(len(all.Items))]
			refs = append(refs, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: o.GetName(), UID: o.GetUID(), BlockOwnerDeletion: &block})
		} else {
			refs = append(refs, metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d1", UID: "gone", BlockOwnerDeletion: &block})
		}
	}
	fin := rnd.IntN(5) == 0
	p.both(t, where, func(srv *fakeapi.Server, _ int) error {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
		u.SetName(name)
		if len(refs) > 0 {
			u.SetOwnerReferences(refs)
		}
		if fin {
			u.SetFinalizers([]string{"example.com/hold"})
		}
		_, err := srv.Resource(cmGVR).Namespace(ns).Create(ctx, u, metav1.CreateOptions{})
		return err
	})
}

// createOrScaleDeployment creates one of three deployments of ns on both sides, or scales it if
// it exists.
func (p *keptPair) createOrScaleDeployment(ctx context.Context, t *testing.T, rnd *rand.Rand, where, ns string) {
	t.Helper()
	replicas := int64(rnd.IntN(4))
	dname := fmt.Sprintf("d%d", rnd.IntN(3))
	p.both(t, where, func(srv *fakeapi.Server, _ int) error {
		c := srv.Resource(depGVR).Namespace(ns)
		u, err := c.Get(ctx, dname, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			u = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"name": dname}, "spec": map[string]any{"replicas": replicas}}}
			_, err = c.Create(ctx, u, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		_ = unstructured.SetNestedField(u.Object, replicas, "spec", "replicas")
		_, err = c.Update(ctx, u, metav1.UpdateOptions{})
		return err
	})
}

// stepAlike steps each pending component of both control planes a random number of rounds: both
// sides must be pending alike, make the same write (counted in wrote) and then have the same next
// timer and statistics.
func (p *keptPair) stepAlike(ctx context.Context, t *testing.T, rnd *rand.Rand, where string, wrote map[string]int) {
	t.Helper()
	for range rnd.IntN(8) {
		for ci := range 3 {
			a, b := p.cp[0].Components()[ci], p.cp[1].Components()[ci]
			pa, pb := a.Pending(p.clk[0].Now()), b.Pending(p.clk[1].Now())
			if pa != pb {
				t.Fatalf("%s: %s pending %v, rebuilding %v", where, a.Name(), pa, pb)
			}
			if !pa {
				continue
			}
			wa, ea := a.Step(ctx, p.clk[0].Now())
			wb, eb := b.Step(ctx, p.clk[1].Now())
			if wa != wb || fmt.Sprint(ea) != fmt.Sprint(eb) {
				t.Fatalf("%s: %s did %q (%v), rebuilding %q (%v)", where, a.Name(), wa, ea, wb, eb)
			}
			if wa != "" {
				wrote[a.Name()]++
			}
			ta, oka := a.NextTimer()
			tb, okb := b.NextTimer()
			if oka != okb || !ta.Equal(tb) || a.Stats() != b.Stats() {
				t.Fatalf("%s: %s timer %v %v stats %+v, rebuilding %v %v %+v", where, a.Name(), ta, oka, a.Stats(), tb, okb, b.Stats())
			}
		}
	}
}

// checkSameEnd: after a seed both servers recorded the same requests and hold the same objects,
// and no lent object was changed.
func (p *keptPair) checkSameEnd(t *testing.T, seed uint64) {
	t.Helper()
	if ra, rb := p.srv[0].Requests(), p.srv[1].Requests(); !reflect.DeepEqual(ra, rb) {
		t.Fatalf("seed %d: the request records differ (%d and %d)", seed, len(ra), len(rb))
	}
	for _, res := range p.srv[0].Config().Resources {
		la, _ := p.srv[0].Snapshot(res.GVR, "", metav1.ListOptions{})
		lb, _ := p.srv[1].Snapshot(res.GVR, "", metav1.ListOptions{})
		if !reflect.DeepEqual(la, lb) {
			t.Fatalf("seed %d: the servers hold different %s", seed, res.GVR.Resource)
		}
	}
	for i := range 2 {
		if err := p.srv[i].Lending().Check(); err != nil {
			t.Fatal(err)
		}
	}
}
