package samplecontroller_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/examples/samplecontroller"
	samplev1alpha1 "github.com/informersim/informersim/examples/samplecontroller/apis/v1alpha1"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim/world"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// withStatus is converged plus what the control plane's stand-ins give (docs/controlplane.md):
// every Deployment's status reports its replicas available, every Foo's status copies it, and no
// Deployment outlives the Foo that controls it (the garbage collector deleted it).
func withStatus(srv *fakeapi.Server) error {
	if err := converged(srv); err != nil {
		return err
	}
	foos, err := typedList[samplev1alpha1.Foo](srv, foosGVR)
	if err != nil {
		return err
	}
	deps, err := typedList[appsv1.Deployment](srv, depsGVR)
	if err != nil {
		return err
	}
	owners := map[string]bool{}
	for _, foo := range foos {
		owners[string(foo.UID)] = true
		if foo.Status.AvailableReplicas != *foo.Spec.Replicas {
			return fmt.Errorf("Foo %s: status.availableReplicas %d, spec.replicas %d", foo.Name, foo.Status.AvailableReplicas, *foo.Spec.Replicas)
		}
	}
	for _, d := range deps {
		if d.Status.AvailableReplicas != *d.Spec.Replicas || d.Status.ObservedGeneration != d.Generation {
			return fmt.Errorf("Deployment %s: status %+v", d.Name, d.Status)
		}
		if ref := metav1.GetControllerOf(d); ref == nil || !owners[string(ref.UID)] {
			return fmt.Errorf("Deployment %s outlives its Foo", d.Name)
		}
	}
	return nil
}

// TestControlPlaneStandIns runs sample-controller, unchanged and with no status actor of the
// test's, under the harness with its default control plane (clientgo.Cluster.ControlPlane.Off
// unset): its Foos' status converges through the workload status stand-in, at once and with a
// seeded latency up to 2s (World.ControlPlane), a scale reaches the Foo's status, and deleting
// a Foo deletes its Deployment through the garbage collector (sample-controller sets a
// controller reference with blockOwnerDeletion), which the run's Report counts.
func TestControlPlaneStandIns(t *testing.T) {
	scheme, err := sampleScheme()
	if err != nil {
		t.Fatal(err)
	}
	for _, cp := range []controlplane.Config{{}, {Workload: controlplane.WorkloadConfig{MaxLatency: 2 * time.Second}}} {
		for _, seed := range []uint64{1, 2, 3} {
			var w *world.World
			rep, err := clientgo.Run(t, clientgo.Config{
				Seed: seed,
				Setup: func(ww *world.World) error {
					w = ww
					_, err := ww.Script(100*time.Millisecond,
						fooOp(world.OpCreate, "foo-0", 2), fooOp(world.OpCreate, "foo-1", 3),
						world.Op{Kind: world.OpSleep, Duration: 10 * time.Second},
						world.Op{Kind: world.OpPatch, Resource: foosGVR, Name: "foo-0", PatchType: "application/merge-patch+json", Patch: `{"spec":{"replicas":4}}`},
						world.Op{Kind: world.OpDelete, Resource: foosGVR, Name: "foo-1"})
					return err
				},
				Cluster:    clientgo.Cluster{API: apiConfig(), ControlPlane: clientgo.ControlPlane{Config: cp}},
				Controller: clientgo.Constructor{Scheme: scheme, Workers: 2, New: newController(samplecontroller.Bugs{})},
				Phases:     clientgo.Phases{FaultsFor: 30 * time.Second},
				Checks:     clientgo.Checks{Outcome: withStatus},
			})
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			deps, err := typedList[appsv1.Deployment](w.Server(), depsGVR)
			if err != nil {
				t.Fatal(err)
			}
			if len(deps) != 1 || deps[0].Status.AvailableReplicas != 4 {
				t.Fatalf("seed %d: deployments %d, want dep-0 alone with 4 available", seed, len(deps))
			}
			// The collector deletes dep-1 once, or twice: on some seeds sample-controller sees
			// the Deployment's deletion before its Foo's and recreates it from its stale Foo
			// cache, with a reference to the Foo now gone, which the collector deletes again.
			if rep.Diagnostics.ControlPlane == nil || rep.Diagnostics.ControlPlane.GarbageCollector.Deletes < 1 || rep.Diagnostics.ControlPlane.WorkloadStatus.Writes == 0 {
				t.Errorf("seed %d: the report's control plane: %v, want the collector's delete of dep-1 and status writes", seed, rep.Diagnostics.ControlPlane)
			}
			t.Logf("seed %d: %v", seed, rep)
		}
	}
}

// TestWithoutTheControlPlaneNothingCascades: the same run with the stand-ins off
// (clientgo.Cluster.ControlPlane.Off) leaves the deleted Foo's Deployment behind and no
// Deployment's status moves: what the stand-ins do above is theirs.
func TestWithoutTheControlPlaneNothingCascades(t *testing.T) {
	scheme, err := sampleScheme()
	if err != nil {
		t.Fatal(err)
	}
	var w *world.World
	rep, err := clientgo.Run(t, clientgo.Config{
		Seed: 1,
		Setup: func(ww *world.World) error {
			w = ww
			_, err := ww.Script(100*time.Millisecond, fooOp(world.OpCreate, "foo-0", 2), fooOp(world.OpCreate, "foo-1", 3),
				world.Op{Kind: world.OpSleep, Duration: 10 * time.Second}, world.Op{Kind: world.OpDelete, Resource: foosGVR, Name: "foo-1"})
			return err
		},
		Cluster:    clientgo.Cluster{API: apiConfig(), ControlPlane: clientgo.ControlPlane{Off: true}},
		Controller: clientgo.Constructor{Scheme: scheme, Workers: 2, New: newController(samplecontroller.Bugs{})},
		Phases:     clientgo.Phases{FaultsFor: 30 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	deps, err := typedList[appsv1.Deployment](w.Server(), depsGVR)
	if err != nil {
		t.Fatal(err)
	}
	if len(deps) != 2 {
		t.Fatalf("%d deployments, want both: nothing collects dep-1", len(deps))
	}
	for _, d := range deps {
		if d.Status.AvailableReplicas != 0 || d.Status.ObservedGeneration != 0 {
			t.Errorf("Deployment %s has a status without the control plane: %+v", d.Name, d.Status)
		}
	}
	if err := withStatus(w.Server()); err == nil {
		t.Error("withStatus passes without the control plane")
	}
	if rep.Diagnostics.ControlPlane != nil {
		t.Errorf("the report has a control plane: %v", rep)
	}
}
