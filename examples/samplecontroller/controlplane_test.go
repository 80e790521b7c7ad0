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
// test's, in a world with the control plane (world.Config.ControlPlane): its Foos' status
// converges through the workload status stand-in (seeded latency up to 2s), a scale reaches the
// Foo's status, and deleting a Foo deletes its Deployment through the garbage collector
// (sample-controller sets a controller reference with blockOwnerDeletion).
func TestControlPlaneStandIns(t *testing.T) {
	scheme, err := sampleScheme()
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{1, 2, 3} {
		var w *world.World
		rep, err := clientgo.Run(t, clientgo.Config{
			Seed: seed, API: apiConfig(), Scheme: scheme, Workers: 2,
			World: world.Config{ControlPlane: &controlplane.Config{Workload: controlplane.WorkloadConfig{MaxLatency: 2 * time.Second}}},
			Setup: func(ww *world.World) error {
				w = ww
				_, err := ww.Script(100*time.Millisecond,
					fooOp(world.OpCreate, "foo-0", 2), fooOp(world.OpCreate, "foo-1", 3),
					world.Op{Kind: world.OpSleep, Duration: 10 * time.Second},
					world.Op{Kind: world.OpPatch, Resource: foosGVR, Name: "foo-0", PatchType: "application/merge-patch+json", Patch: `{"spec":{"replicas":4}}`},
					world.Op{Kind: world.OpDelete, Resource: foosGVR, Name: "foo-1"})
				return err
			},
			New:       newController(samplecontroller.Bugs{}),
			FaultsFor: 30 * time.Second,
			Check:     withStatus,
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
		if s := w.ControlPlane().GC.Stats(); s.Writes == 0 {
			t.Errorf("seed %d: the collector wrote nothing: %+v", seed, s)
		}
		t.Logf("seed %d: %v", seed, rep)
	}
}
