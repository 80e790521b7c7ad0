package samplecontroller_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/examples/samplecontroller"
	"github.com/informersim/informersim/examples/samplecontroller/clientset"
	fooinformers "github.com/informersim/informersim/examples/samplecontroller/informers"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim/world"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
)

// applyRealTime performs op on srv directly, as World.Apply would in a world: the real-time
// runs replay the same kind of workload without a world.
func applyRealTime(ctx context.Context, srv *fakeapi.Server, op world.Op) error {
	ns := op.Namespace
	if ns == "" {
		ns = world.DefaultNamespace
	}
	client := srv.Resource(op.Resource).Namespace(ns)
	switch op.Kind {
	case world.OpCreate:
		obj := map[string]any{"apiVersion": op.Resource.GroupVersion().String(), "metadata": map[string]any{"name": op.Name, "generateName": op.GenerateName}}
		kind := "ConfigMap"
		if op.Resource == foosGVR {
			kind = "Foo"
		}
		obj["kind"] = kind
		for k, v := range op.Content {
			obj[k] = v
		}
		_, err := client.Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
		return err
	case world.OpPatch:
		_, err := client.Patch(ctx, op.Name, op.PatchType, []byte(op.Patch), metav1.PatchOptions{})
		return err
	case world.OpDelete:
		return client.Delete(ctx, op.Name, metav1.DeleteOptions{})
	case world.OpCloseWatches:
		var err error
		if op.Code != 0 {
			err = fakeapi.NewWatchError(op.Code)
		}
		srv.Faults().CloseAllWatches(err)
		return nil
	case world.OpCompact:
		return srv.Faults().Compact(srv.Revision())
	case world.OpFailNext:
		var err error = fakeapi.NewWatchError(op.Code)
		if op.Code == 409 {
			err = apierrors.NewConflict(schema.GroupResource{Group: foosGVR.Group, Resource: "foos"}, "", fmt.Errorf("injected"))
		}
		srv.Faults().FailNext(op.Verb, err)
		return nil
	}
	return fmt.Errorf("applyRealTime: op %v", op)
}

// TestRealTimeClientGoInformers runs the same controller against client-go's own informers
// and factories over the REST front (in process, HTTP, streaming watches) in real time, with no
// world: the same kind of workload, sleeps cut a hundredfold, the same disruptions. It converges
// too; the log gives the wall time per run beside the world's.
func TestRealTimeClientGoInformers(t *testing.T) {
	wl := workload{n: 30, disruptions: [][]world.Op{
		{{Kind: world.OpCloseWatches}}, {{Kind: world.OpCloseWatches, Code: 410}}, {{Kind: world.OpCloseWatches}, noise, {Kind: world.OpCompact}},
		{{Kind: world.OpFailNext, Verb: fakeapi.VerbUpdateStatus, Code: 409}},
	}}
	const runs = 5
	var total time.Duration
	for seed := uint64(1); seed <= runs; seed++ {
		start := time.Now()
		func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			srv, err := fakeapi.New(apiConfig())
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := clientgo.RESTConfig(srv)
			if err != nil {
				t.Fatal(err)
			}
			kube, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			foo, err := clientset.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			kubeFactory := informers.NewSharedInformerFactory(kube, 0)
			fooFactory := fooinformers.NewSharedInformerFactory(foo, 0)
			c, err := samplecontroller.NewController(ctx, kube, foo, kubeFactory.Apps().V1().Deployments(),
				fooFactory.Samplecontroller().V1alpha1().Foos(), samplecontroller.Bugs{})
			if err != nil {
				t.Fatal(err)
			}
			kubeFactory.Start(ctx.Done())
			fooFactory.Start(ctx.Done())
			done := make(chan error, 1)
			go func() { done <- c.Run(ctx, 2) }()
			defer func() {
				cancel()
				<-done
				kubeFactory.Shutdown()
				fooFactory.Shutdown()
			}()

			r := rand.New(rand.NewPCG(seed, 0))
			for _, op := range wl.ops(r) {
				if op.Kind == world.OpSleep {
					time.Sleep(op.Duration / 100)
					continue
				}
				if err := applyRealTime(ctx, srv, op); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsAlreadyExists(err) {
					t.Fatalf("seed %d: %v: %v", seed, op, err)
				}
			}
			for {
				err := converged(srv)
				if err == nil {
					break
				}
				select {
				case <-ctx.Done():
					t.Fatalf("seed %d: did not converge in real time: %v", seed, err)
				case <-time.After(10 * time.Millisecond):
				}
			}
		}()
		d := time.Since(start)
		total += d
		t.Logf("seed %d: converged in %v wall time", seed, d)
	}
	t.Logf("client-go's informers, REST front, real time: %d runs, %v wall time per run", runs, total/runs)
}
