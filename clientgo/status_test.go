package clientgo_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/sim/world"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

var deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

func deploymentContent(replicas int) map[string]any {
	return map[string]any{"spec": map[string]any{
		"replicas": replicas,
		"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
		"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}},
	}}
}

// observingMain writes each Deployment's status.observedGeneration through the status
// subresource (UpdateStatus), retrying on a conflict from a fresh read, as controllers do.
func observingMain(ctx context.Context, c *rest.Config) error {
	client, err := kubernetes.NewForConfig(c)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	deps := client.AppsV1().Deployments("default")
	observe := func(obj any) {
		d, ok := obj.(*appsv1.Deployment)
		if !ok || d.Status.ObservedGeneration == d.Generation {
			return
		}
		for range 5 {
			fresh, err := deps.Get(ctx, d.Name, metav1.GetOptions{})
			if err != nil {
				return
			}
			fresh.Status.ObservedGeneration = fresh.Generation
			if _, err = deps.UpdateStatus(ctx, fresh, metav1.UpdateOptions{}); err == nil || ctx.Err() != nil {
				return
			}
		}
	}
	_, err = factory.Apps().V1().Deployments().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    observe,
		UpdateFunc: func(_, obj any) { observe(obj) },
	})
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	<-ctx.Done()
	factory.Shutdown()
	return nil
}

// TestOnWriteSeesStatusWrites: Checks.OnWrite is called on the controller's writes to the status
// subresource with the object before and after, and the conflict hazard answers them 409 too; a
// check that refuses a status write ends the run at it.
func TestOnWriteSeesStatusWrites(t *testing.T) {
	var mu sync.Mutex
	var status []clientgo.Write
	cfg := clientgo.Config{
		Seed: 1,
		Setup: func(w *world.World) error {
			for i := range 3 {
				if err := w.Apply(world.Op{Kind: world.OpCreate, Name: fmt.Sprintf("web-%d", i), Content: deploymentContent(1)}); err != nil {
					return err
				}
			}
			// A scale a second for nine seconds: each raises a generation to observe, while the
			// conflict hazard is armed.
			for k := 1; k <= 9; k++ {
				op := world.Op{Kind: world.OpUpdate, Name: fmt.Sprintf("web-%d", k%3), Content: deploymentContent(k + 1)}
				if _, err := w.Script(time.Duration(k)*time.Second, op); err != nil {
					return err
				}
			}
			return nil
		},
		Hazards:    clientgo.Hazards{Conflicts: 2},
		Cluster:    clientgo.Cluster{World: world.Config{DefaultResource: deploymentsGVR}},
		Controller: clientgo.Main(observingMain),
		Phases:     clientgo.Phases{FaultsFor: 10 * time.Second},
		Checks: clientgo.Checks{OnWrite: func(w clientgo.Write) error {
			if strings.HasSuffix(w.Path, "/status") {
				mu.Lock()
				status = append(status, w)
				mu.Unlock()
			}
			return nil
		}},
	}
	rep, err := clientgo.Run(t, cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, rep.Failure)
	}
	observed := map[string]bool{}
	for _, w := range status {
		if w.Method != "PUT" || w.Resource != deploymentsGVR || w.Before == nil || w.After == nil {
			t.Fatalf("a status write as OnWrite saw it: %v, resource %v, before %v, after %v", w, w.Resource, w.Before != nil, w.After != nil)
		}
		gen, _, _ := unstructured.NestedInt64(w.After.Object, "status", "observedGeneration")
		if w.Code == 200 && gen == w.After.GetGeneration() {
			observed[w.Name] = true
		}
	}
	if len(observed) != 3 {
		t.Fatalf("OnWrite saw the status of %d Deployments observed, want 3: %v", len(observed), status)
	}
	conflicts := 0
	for _, h := range rep.Hazards {
		if h.Name == clientgo.HazardConflict {
			conflicts = h.Fired
		}
	}
	if conflicts == 0 || !strings.Contains(rep.Trace, "/status\" code=409") {
		t.Fatalf("the conflict hazard fired %d times, and no status write was answered 409:\n%s", conflicts, rep.Trace)
	}

	cfg.Hazards = clientgo.Hazards{}
	cfg.Checks.OnWrite = func(w clientgo.Write) error {
		if strings.HasSuffix(w.Path, "/status") {
			return fmt.Errorf("no status write allowed: %v", w)
		}
		return nil
	}
	if _, err := clientgo.Run(t, cfg); err == nil || !strings.Contains(err.Error(), "no status write allowed: PUT /apis/apps/v1/namespaces/default/deployments/web-") {
		t.Fatalf("a check refusing status writes: %v", err)
	}
}
