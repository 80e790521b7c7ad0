package samplecontroller_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/informersim/informersim/examples/samplecontroller"
	samplev1alpha1 "github.com/informersim/informersim/examples/samplecontroller/apis/v1alpha1"
	foofake "github.com/informersim/informersim/examples/samplecontroller/clientset/fake"
	fooinformers "github.com/informersim/informersim/examples/samplecontroller/informers"
	"github.com/informersim/informersim/internal/cputime"
	"github.com/informersim/informersim/sim/world"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
)

// BenchmarkFakeClientsetRun: BenchmarkHarnessRun's controller and workload the way the
// controller's own unit tests would run them, for the harness's price against the usual way:
// client-go's fake clientset and the Foo clientset's fake (object trackers: no serialisation, no
// resourceVersions, no conflicts), client-go's informers and two workers on goroutines in real
// time, the workload's writes applied one after the other (its sleeps skipped) without its
// disruptions (the fakes have no watch drops, 410s, compactions or failing writes), until
// converged's rule holds on the trackers. It also leaves out all the harness adds: the
// simulated apiserver's semantics and faults, the control plane, the read-only and conflict
// checks, the trace. Run both in one process:
//
//	cd examples && go test -run='^$' -bench='HarnessRun$|FakeClientsetRun' -benchmem -benchtime=20x ./samplecontroller/
func BenchmarkFakeClientsetRun(b *testing.B) {
	wl := benchSpec().workload
	seed := uint64(0)
	b.ReportAllocs()
	start, startOK := cputime.Process()
	for b.Loop() {
		seed++
		if err := fakeClientsetRun(wl, seed); err != nil {
			b.Fatalf("seed %d: %v", seed, err)
		}
	}
	if end, ok := cputime.Process(); ok && startOK {
		b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
	}
}

// TestFakeClientsetRunConverges: the benchmark's run is a real one: the controller converges on
// the fakes, and a controller that never syncs makes the run fail rather than pass.
func TestFakeClientsetRunConverges(t *testing.T) {
	wl := benchSpec().workload
	for seed := uint64(1); seed <= 3; seed++ {
		if err := fakeClientsetRun(wl, seed); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	if err := fakeClientsetRunWith(wl, 1, 2*time.Second, samplecontroller.Bugs{}, 0); err == nil {
		t.Fatal("a run with no workers converged")
	}
}

func fakeClientsetRun(wl workload, seed uint64) error {
	return fakeClientsetRunWith(wl, seed, time.Minute, samplecontroller.Bugs{}, 2)
}

// fakeClientsetRunWith runs the controller with workers on the fakes under wl's writes drawn
// from seed, and waits at most timeout for convergence.
func fakeClientsetRunWith(wl workload, seed uint64, timeout time.Duration, bugs samplecontroller.Bugs, workers int) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	kube := kubefake.NewSimpleClientset()
	foo := foofake.NewSimpleClientset()
	kubeFactory := informers.NewSharedInformerFactory(kube, 0)
	fooFactory := fooinformers.NewSharedInformerFactory(foo, 0)
	c, err := samplecontroller.NewController(ctx, kube, foo, kubeFactory.Apps().V1().Deployments(),
		fooFactory.Samplecontroller().V1alpha1().Foos(), bugs)
	if err != nil {
		return err
	}
	kubeFactory.Start(ctx.Done())
	fooFactory.Start(ctx.Done())
	done := make(chan error, 1)
	go func() {
		if workers == 0 {
			<-ctx.Done()
			done <- nil
			return
		}
		done <- c.Run(ctx, workers)
	}()
	defer func() {
		cancel()
		<-done
		kubeFactory.Shutdown()
		fooFactory.Shutdown()
	}()
	// The trackers have no resourceVersions: a write between an informer's LIST and its WATCH
	// would never reach it, so the workload starts once both caches are synced, as unit tests
	// against the fakes must.
	for typ, ok := range kubeFactory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("%v did not sync", typ)
		}
	}
	for typ, ok := range fooFactory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("%v did not sync", typ)
		}
	}
	for _, op := range wl.ops(rand.New(rand.NewPCG(seed, 0))) {
		if err := applyToFakes(ctx, kube, foo, op); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%v: %w", op, err)
		}
	}
	for {
		err := convergedOnFakes(kube, foo)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("did not converge on the fakes: %w", err)
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// applyToFakes performs a workload's op through the fake clientsets, as World.Apply would
// through the apiserver; sleeps and disruptions are not applied (BenchmarkFakeClientsetRun).
func applyToFakes(ctx context.Context, kube *kubefake.Clientset, foo *foofake.Clientset, op world.Op) error {
	ns := op.Namespace
	if ns == "" {
		ns = world.DefaultNamespace
	}
	switch {
	case op.Kind == world.OpCreate && op.Resource == foosGVR:
		obj := &samplev1alpha1.Foo{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(op.Content, obj); err != nil {
			return err
		}
		obj.Name, obj.Namespace = op.Name, ns
		_, err := foo.SamplecontrollerV1alpha1().Foos(ns).Create(ctx, obj, metav1.CreateOptions{})
		return err
	case op.Kind == world.OpPatch && op.Resource == foosGVR:
		_, err := foo.SamplecontrollerV1alpha1().Foos(ns).Patch(ctx, op.Name, types.PatchType(op.PatchType), []byte(op.Patch), metav1.PatchOptions{})
		return err
	case op.Kind == world.OpDelete && op.Resource == depsGVR:
		return kube.AppsV1().Deployments(ns).Delete(ctx, op.Name, metav1.DeleteOptions{})
	case op.Kind == world.OpSleep, isDisruption(op):
		return nil
	}
	return errors.New("no way to apply it to the fakes")
}

// isDisruption says whether op is one of benchSpec's disruptions: watch closes, compactions,
// failing writes and the noise that goes with them.
func isDisruption(op world.Op) bool {
	switch op.Kind {
	case world.OpCloseWatches, world.OpCompact, world.OpFailNext:
		return true
	}
	return op.Kind == world.OpCreate && op.Resource == noise.Resource
}

// convergedOnFakes is converged's rule on the fakes' trackers.
func convergedOnFakes(kube *kubefake.Clientset, foo *foofake.Clientset) error {
	fl, err := foo.Tracker().List(foosGVR, samplev1alpha1.SchemeGroupVersion.WithKind("Foo"), "")
	if err != nil {
		return err
	}
	dl, err := kube.Tracker().List(depsGVR, appsv1.SchemeGroupVersion.WithKind("Deployment"), "")
	if err != nil {
		return err
	}
	var foos []*samplev1alpha1.Foo
	for i := range fl.(*samplev1alpha1.FooList).Items {
		foos = append(foos, &fl.(*samplev1alpha1.FooList).Items[i])
	}
	var deps []*appsv1.Deployment
	for i := range dl.(*appsv1.DeploymentList).Items {
		deps = append(deps, &dl.(*appsv1.DeploymentList).Items[i])
	}
	if len(foos) == 0 {
		return errors.New("no Foo in the tracker")
	}
	return convergedObjects(foos, deps)
}
