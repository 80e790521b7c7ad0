package clientgo_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/sim/world"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestControllerRuntimeBatchesCounted: what a manager's informers hand over in an order no seed
// decides is counted, and only for a manager. Three Widgets exist before the manager starts (its
// handlers, added once its informers synced, get them in a Go map's order: a late-handler
// batch) and a 410 makes its informers relist them into its priority queue (a priority-queue
// batch). A client-go controller over the same world counts neither: the harness told the two
// apart by the goroutines of the run (bubbleRuns).
func TestControllerRuntimeBatchesCounted(t *testing.T) {
	setup := func(w *world.World) error {
		for i := range 3 {
			if err := w.Apply(world.Op{Kind: world.OpCreate, Resource: widgetsGVR, Name: fmt.Sprintf("w%d", i),
				Content: map[string]any{"spec": map[string]any{"size": int64(i)}}}); err != nil {
				return err
			}
		}
		_, err := w.Script(2*time.Second, world.Op{Kind: world.OpCloseWatches, Code: 410})
		return err
	}
	cfg := widgetManagerConfig(t, 1)
	cfg.Setup = setup
	rep, err := clientgo.Run(t, cfg)
	if err != nil {
		t.Fatalf("manager: %v\n%s", err, rep.Failure)
	}
	for _, why := range []string{"late-handler", "priority-queue"} {
		if !strings.Contains(rep.Trace, "why="+why) {
			t.Errorf("manager: no %s batch counted (unordered batches %d)", why, rep.Diagnostics.UnorderedBatches)
		}
	}

	plain := widgetManagerConfig(t, 1)
	plain.Setup = setup
	plain.Checks.Outcome = nil
	plain.Controller = clientgo.Main(func(ctx context.Context, c *rest.Config) error {
		cs, err := kubernetes.NewForConfig(c)
		if err != nil {
			return err
		}
		f := informers.NewSharedInformerFactory(cs, 0)
		f.Core().V1().Namespaces().Informer() // the four namespaces kube-apiserver starts with: lists of two or more
		f.Start(ctx.Done())
		<-ctx.Done()
		return nil
	})
	rep, err = clientgo.Run(t, plain)
	if err != nil {
		t.Fatalf("client-go controller: %v\n%s", err, rep.Failure)
	}
	if rep.Diagnostics.UnorderedBatches != 0 {
		t.Errorf("client-go controller: %d unordered batches counted", rep.Diagnostics.UnorderedBatches)
	}
	if rep.Diagnostics.WatchesServed() < 2 {
		t.Errorf("client-go controller: %d watches served, want a relist after the 410", rep.Diagnostics.WatchesServed())
	}
}
