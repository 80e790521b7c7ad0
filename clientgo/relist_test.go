package clientgo

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/informersim/informersim/sim/world"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// relistMutator is a controller whose Deployment handler writes into the new object of an
// update notification that repeats a version it already had (a relist's), if mutate.
type relistMutator struct {
	env     *Env
	mutate  bool
	repeats int
}

func (c *relistMutator) Run(ctx context.Context, _ int) error {
	<-ctx.Done()
	return nil
}

// Goal: the objects a relist hands a handler (versions its informer converted before) are
// checked by the read-only check as any other: a controller that writes into them fails the run
// with the read-only-objects violation, and the same run without the write passes.
func TestRelistedVersionsStayReadOnly(t *testing.T) {
	for _, mutate := range []bool{false, true} {
		c := &relistMutator{mutate: mutate}
		cfg := Config{
			Seed: 5,
			Setup: func(w *world.World) error {
				for i := range 3 {
					content := map[string]any{"spec": map[string]any{"replicas": int64(i + 1),
						"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
						"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
							"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx"}}}}}}
					if err := w.Apply(world.Op{Kind: world.OpCreate, Name: fmt.Sprintf("web-%d", i), Content: content}); err != nil {
						return err
					}
				}
				_, err := w.Script(2*time.Second, world.Op{Kind: world.OpCloseWatches, Code: 410})
				return err
			},
			Cluster: Cluster{World: world.Config{DefaultResource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}}},
			Controller: Constructor{Workers: 1, New: func(ctx context.Context, env *Env) (Controller, error) {
				c.env = env
				_, err := env.KubeInformers.Apps().V1().Deployments().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
					UpdateFunc: func(oldObj, newObj any) {
						o, n := oldObj.(*appsv1.Deployment), newObj.(*appsv1.Deployment)
						if o.ResourceVersion != n.ResourceVersion || o == n {
							return
						}
						c.repeats++
						if c.mutate {
							n.Labels = map[string]string{"touched": "yes"}
						}
					},
				})
				return c, err
			}},
			Phases: Phases{FaultsFor: time.Minute},
		}
		_, err := Run(t, cfg)
		if c.env == nil {
			t.Fatalf("mutate=%v: the controller was never built: %v", mutate, err)
		}
		if c.repeats == 0 {
			t.Fatalf("mutate=%v: no repeated version notified: the relist did not happen", mutate)
		}
		var v *world.Violation
		switch {
		case !mutate && err != nil:
			t.Fatalf("without the write: %v", err)
		case mutate && !(errors.As(err, &v) && v.Oracle == world.OracleReadOnlyObjects):
			t.Fatalf("writing into a relisted object: %v, want the read-only-objects violation", err)
		}
	}
}
