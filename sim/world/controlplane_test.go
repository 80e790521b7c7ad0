package world

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world/narration"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var cpConfigMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// controlWorld is a world with the control plane and an informer on configmaps, an owner and
// two dependents created, and the owner deleted with policy.
func controlWorld(t *testing.T, seed uint64, cfg *controlplane.Config, policy metav1.DeletionPropagation) *World {
	t.Helper()
	w, err := NewFromConfig(sim.Config{Seed: seed}, fakeapi.Config{}, Config{DefaultResource: cpConfigMaps, ControlPlane: cfg})
	if err != nil {
		t.Fatal(err)
	}
	n, err := w.AddInformer("cms", InformerSpec{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddHandler(n, "h", nil, HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	c := w.Server().Resource(cpConfigMaps).Namespace("ns")
	mk := func(name string, owner *unstructured.Unstructured) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
		u.SetName(name)
		if owner != nil {
			yes := true
			u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.GetName(), UID: owner.GetUID(), BlockOwnerDeletion: &yes}})
		}
		out, err := c.Create(context.Background(), u, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	owner := mk("owner", nil)
	mk("dep1", owner)
	mk("dep2", owner)
	if err := c.Delete(context.Background(), "owner", metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
		t.Fatal(err)
	}
	w.Settle()
	return w
}

func exists(t *testing.T, w *World, name string) bool {
	t.Helper()
	_, err := w.Server().Resource(cpConfigMaps).Namespace("ns").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// Goal: with Config.ControlPlane the collector runs on the engine as its own actor, a foreground
// delete finishes before the world is Quiet, the informer sees the cascade, and the run is
// seeded (same seed, same trace hash); without it, nothing cascades and the owner stays
// terminating (the world's runs are those of before).
func TestWorldRunsTheControlPlane(t *testing.T) {
	var hashes []string
	for range 2 {
		w := controlWorld(t, 7, &controlplane.Config{}, metav1.DeletePropagationForeground)
		mustConverge(t, w)
		for _, n := range []string{"owner", "dep1", "dep2"} {
			if exists(t, w, n) {
				t.Errorf("%s remains after the world converged", n)
			}
		}
		did := 0
		for _, e := range w.Sim().Trace().Events() {
			if e.Actor == narration.ActorGarbageCollector && e.Kind == narration.KindDid {
				did++
			}
		}
		if did != 3 { // two dependents deleted, then the owner's finalizer removed
			t.Errorf("the collector narrated %d writes, want 3\n%s", did, tail(w, 30))
		}
		if got := len(w.Informers()[0].SharedIndexInformer().GetStore().List()); got != 0 {
			t.Errorf("the informer's cache holds %d objects, want none", got)
		}
		hashes = append(hashes, w.Sim().Trace().Hash())
	}
	if hashes[0] != hashes[1] {
		t.Errorf("same seed, two trace hashes: %v", hashes)
	}
	w := controlWorld(t, 7, nil, metav1.DeletePropagationForeground)
	mustConverge(t, w)
	if !exists(t, w, "owner") || !exists(t, w, "dep1") || w.ControlPlane() != nil {
		t.Error("a world without Config.ControlPlane ran a collector")
	}
	if _, err := NewFromConfig(sim.Config{Seed: 1}, fakeapi.Config{}, Config{ControlPlane: &controlplane.Config{Rand: w.Sim().Rand("x")}}); err == nil || !strings.Contains(err.Error(), "Rand") {
		t.Errorf("a ControlPlane config with its own Rand: %v", err)
	}
}

// Goal: a slow collector is not Quiet until it has acted, a delay later; a stopped one leaves
// the dependents (and the world Quiet) until restarted.
func TestWorldSlowAndStoppedCollector(t *testing.T) {
	w := controlWorld(t, 3, &controlplane.Config{}, metav1.DeletePropagationBackground)
	if err := w.ControlPlane().GC.SetDelay(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	start := w.Sim().Now()
	mustConverge(t, w)
	if exists(t, w, "dep1") || w.Sim().Now()-start < 10*time.Second {
		t.Fatalf("a collector slowed by 10s: dep1 exists %v, converged after %v", exists(t, w, "dep1"), w.Sim().Now()-start)
	}
	w = controlWorld(t, 3, &controlplane.Config{}, metav1.DeletePropagationBackground)
	w.ControlPlane().GC.SetStopped(true)
	w.Settle()
	mustConverge(t, w)
	if !exists(t, w, "dep1") {
		t.Fatal("a stopped collector deleted a dependent")
	}
	w.ControlPlane().GC.SetStopped(false)
	w.Settle()
	mustConverge(t, w)
	if exists(t, w, "dep1") || exists(t, w, "dep2") {
		t.Fatal("a restarted collector did not catch up")
	}
}

// Goal: in a world with the control plane, a Job written by the world's ops is run by the job
// controller on the engine: the world is not Quiet until its seeded pods have ended, an informer
// on Jobs sees it finish, and one seed gives one trace.
func TestWorldRunsJobs(t *testing.T) {
	jobsGVR := controlplane.JobsGVR
	run := func(seed uint64) (string, *unstructured.Unstructured) {
		cfg := &controlplane.Config{Jobs: controlplane.JobConfig{MinDuration: time.Second, MaxDuration: 20 * time.Second}}
		w, err := NewFromConfig(sim.Config{Seed: seed}, fakeapi.Config{}, Config{DefaultResource: jobsGVR, ControlPlane: cfg})
		if err != nil {
			t.Fatal(err)
		}
		n, err := w.AddInformer("jobs", InformerSpec{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.AddHandler(n, "h", nil, HandlerOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		job := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "batch/v1", "kind": "Job",
			"metadata": map[string]any{"name": "pi", "namespace": "ns"},
			"spec":     map[string]any{"completions": int64(3), "parallelism": int64(2)}}}
		if _, err := w.Server().Resource(jobsGVR).Namespace("ns").Create(context.Background(), job, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		mustConverge(t, w)
		got, err := w.Server().Resource(jobsGVR).Namespace("ns").Get(context.Background(), "pi", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(w.Sim().Trace().Narrate(), narration.ActorJobController) {
			t.Fatalf("no step of %s in the trace", narration.ActorJobController)
		}
		return w.Sim().Trace().Hash(), got
	}
	h1, job := run(3)
	h2, _ := run(3)
	if h1 != h2 {
		t.Fatalf("seed 3 gave two traces")
	}
	conds, _, _ := unstructured.NestedSlice(job.Object, "status", "conditions")
	if len(conds) != 2 || conds[1].(map[string]any)["type"] != "Complete" {
		t.Fatalf("the Job did not complete before the world was quiet: %v", job.Object["status"])
	}
	if n, _, _ := unstructured.NestedInt64(job.Object, "status", "succeeded"); n != 3 {
		t.Fatalf("succeeded %d", n)
	}
}
