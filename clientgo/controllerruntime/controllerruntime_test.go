package controllerruntime

import (
	"context"
	"testing"

	"github.com/informersim/informersim/clientgo/internal/crhooks"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestNamesAreGivenBack builds a controller, sees its name taken, gives it back, and builds a
// controller of that name again, which controller-runtime refuses without the release.
func TestNamesAreGivenBack(t *testing.T) {
	if crhooks.ControllerNames == nil {
		t.Fatal("the package did not install its hook")
	}
	noop := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })
	build := func() error {
		_, err := controller.NewUnmanaged("names-given-back", controller.Options{Reconciler: noop})
		return err
	}
	before := crhooks.ControllerNames.Taken()
	if err := build(); err != nil {
		t.Fatal(err)
	}
	if !crhooks.ControllerNames.Taken()["names-given-back"] {
		t.Fatal("the controller's name is not among the taken ones")
	}
	if err := build(); err == nil {
		t.Fatal("controller-runtime built a second controller of one name: the test cannot tell a release")
	}
	crhooks.ControllerNames.Release(before)
	if crhooks.ControllerNames.Taken()["names-given-back"] {
		t.Fatal("the name is still taken after Release")
	}
	if err := build(); err != nil {
		t.Fatalf("after Release: %v", err)
	}
	crhooks.ControllerNames.Release(before)
}

func TestMetricsServerOffByDefault(t *testing.T) {
	if metricsserver.DefaultBindAddress != "0" {
		t.Fatalf("metrics default address %q, want \"0\"", metricsserver.DefaultBindAddress)
	}
}
