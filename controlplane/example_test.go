package controlplane_test

import (
	"context"
	"fmt"
	"time"

	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/fakeapi"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testclock "k8s.io/utils/clock/testing"
)

// A foreground delete of an owner with a blocking dependent, finished by the garbage collector:
// each Step is one write, the dependent's delete before the owner's finalizer goes.
func Example() {
	ctx := context.Background()
	clk := testclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	srv, _ := fakeapi.New(fakeapi.Config{Clock: clk})
	cp, _ := controlplane.New(srv, controlplane.Config{})
	cms := srv.Resource(configmaps).Namespace("default")

	owner, _ := cms.Create(ctx, cm("owner"), metav1.CreateOptions{})
	dep := cm("dep")
	block := true
	dep.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: owner.GetUID(), BlockOwnerDeletion: &block}})
	_, _ = cms.Create(ctx, dep, metav1.CreateOptions{})

	fg := metav1.DeletePropagationForeground
	_ = cms.Delete(ctx, "owner", metav1.DeleteOptions{PropagationPolicy: &fg})
	for cp.GC.Pending(clk.Now()) {
		if what, _ := cp.GC.Step(ctx, clk.Now()); what != "" {
			fmt.Println(what)
		}
	}
	left, _ := cms.List(ctx, metav1.ListOptions{})
	fmt.Println("left:", len(left.Items))
	// Output:
	// delete configmaps default/dep (Background: no owner left)
	// remove finalizer foregroundDeletion from configmaps default/owner
	// left: 0
}
