package controlplane_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/fakeapi"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
)

// TestRunSleepsWhileIdle: Run, on the real clock, sleeps while its components have nothing to
// do (asking whether the server was written is not a change of the server's state, which would
// wake it at once: it spun, a million wakes in 200ms), and a write wakes it: the collector
// deletes a dependent whose owner is gone long before the poll.
func TestRunSleepsWhileIdle(t *testing.T) {
	srv, err := fakeapi.New(fakeapi.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cp, err := controlplane.New(srv, controlplane.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var sections atomic.Int64
	srv.OnStateChange(func() { sections.Add(1) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- controlplane.Run(ctx, cp, clock.RealClock{}, time.Hour) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	time.Sleep(200 * time.Millisecond)
	if n := sections.Load(); n > 100 {
		t.Errorf("%d sections of the server's state in 200ms without a write: Run does not sleep", n)
	}

	cms := srv.Resource(configmaps).Namespace("default")
	dep := cm("dep")
	dep.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "gone", UID: "uid-of-nothing"}})
	if _, err := cms.Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		l, err := cms.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the dependent of a missing owner was not collected within 10s of its write")
		}
	}
}
