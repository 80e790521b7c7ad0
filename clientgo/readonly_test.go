package clientgo_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/sim/world"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// planter is a client-go controller of Deployments that writes into an object its informer
// lent it (the bug the read-only check exists for) at a chosen moment, in a chosen way. Its
// sync otherwise annotates each Deployment a few times through a copy, so that the run has new
// versions, events and lent objects to compare.
type planter struct {
	client kubernetes.Interface
	lister appslisters.DeploymentLister
	synced cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]
	plant  plant
	syncs  int
	// kept is the object of the plant's sync, for a plant that acts on it later.
	kept *appsv1.Deployment
}

// plant is one way of writing into a lent Deployment, and when.
type plant struct {
	name string
	// change writes into d; restore, if set, undoes it.
	change, restore func(d *appsv1.Deployment)
	// atSync is the sync (counted from 1) whose lister object is changed; 0 changes the new
	// object of the atUpdate-th update notification in the handler instead.
	atSync, atUpdate int
	// when, if set, counts only the syncs of objects it holds for.
	when func(d *appsv1.Deployment) bool
	// restoreAt is when restore undoes the change: "at once", before the worker blocks
	// (nothing to see at any step), or at the "next sync". after, if set, changes the kept
	// object this long after the plant's sync, from a goroutine of the controller, instead of
	// during it.
	restoreAt string
	after     time.Duration
	// caught says whether the run fails with the read-only-objects violation.
	caught bool
}

func newPlanter(client kubernetes.Interface, env *clientgo.Env, p plant) (*planter, error) {
	deps := env.KubeInformers.Apps().V1().Deployments()
	c := &planter{client: client, lister: deps.Lister(), synced: deps.Informer().HasSynced, plant: p,
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())}
	updates := 0
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			c.queue.Add(key)
		}
	}
	_, err := deps.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(_, obj any) {
			updates++
			if p.atSync == 0 && updates == p.atUpdate {
				p.change(obj.(*appsv1.Deployment))
			}
			enqueue(obj)
		},
		DeleteFunc: enqueue,
	})
	return c, err
}

func (c *planter) Run(ctx context.Context, workers int) error {
	return runWorkers(ctx, "planter", c.queue, c.synced, workers, c.sync)
}

func (c *planter) sync(ctx context.Context, key string) error {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	d, err := c.lister.Deployments(ns).Get(name)
	if err != nil {
		return nil // gone
	}
	p := c.plant
	if p.when == nil || p.when(d) {
		c.syncs++
	}
	switch {
	case c.syncs == p.atSync && p.after > 0:
		c.kept = d
		go func() {
			time.Sleep(p.after)
			p.change(c.kept)
		}()
	case c.syncs == p.atSync:
		c.kept = d
		p.change(d)
		if p.restoreAt == "at once" {
			p.restore(d)
		}
	case c.syncs == p.atSync+1 && p.restoreAt == "next sync":
		p.restore(c.kept)
	}
	n, _ := strconv.Atoi(d.Annotations["synced"])
	if n >= 3 {
		return nil
	}
	d = d.DeepCopy()
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	d.Annotations["synced"] = strconv.Itoa(n + 1)
	_, err = c.client.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{})
	return err
}

// richDeploymentContent is a Deployment's spec with a field of every shape the check meets:
// maps (labels, a selector, resource limits), pointers (replicas, the rolling update's
// IntOrStrings, a grace period), slices of structs and of strings.
func richDeploymentContent(i int) map[string]any {
	grace := int64(30 + i)
	maxSurge := intstr.FromString("25%")
	maxUnavailable := intstr.FromInt32(1)
	spec := appsv1.DeploymentSpec{
		Replicas: ptrTo(int32(2 + i)),
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &maxSurge, MaxUnavailable: &maxUnavailable}},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: &grace,
				Containers: []corev1.Container{{
					Name: "web", Image: fmt.Sprintf("nginx:1.%d", 20+i), Args: []string{"-g", "daemon off;"},
					Env: []corev1.EnvVar{{Name: "MODE", Value: "prod"}},
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")}},
				}},
			},
		},
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&spec)
	if err != nil {
		panic(err)
	}
	return map[string]any{"spec": m}
}

// planterConfig runs the planter on three rich Deployments, with a second update of each,
// a watch drop with a 410 (a relist hands out new objects of the same versions) and a
// compaction along the way, and the control plane's status writes.
func planterConfig(seed uint64, p plant) clientgo.Config {
	return clientgo.Config{
		Seed: seed,
		Setup: func(w *world.World) error {
			var later []world.Op
			for i := range 3 {
				name := fmt.Sprintf("web-%d", i)
				if err := w.Apply(world.Op{Kind: world.OpCreate, Name: name, Content: richDeploymentContent(i),
					Labels: map[string]string{"app": "web", "tier": "front"}, Annotations: map[string]string{"note": "hello"}}); err != nil {
					return err
				}
				later = append(later, world.Op{Kind: world.OpUpdate, Name: name, Content: richDeploymentContent(i + 3)})
			}
			if _, err := w.Script(2*time.Second, later...); err != nil {
				return err
			}
			_, err := w.Script(3*time.Second, world.Op{Kind: world.OpCloseWatches, Code: 410}, world.Op{Kind: world.OpSleep, Duration: time.Second}, world.Op{Kind: world.OpCompact})
			return err
		},
		Cluster: clientgo.Cluster{World: world.Config{DefaultResource: depsGVR}},
		// One worker: which sync is the plant's does not depend on the goroutines' race.
		Controller: clientgo.Constructor{Workers: 1, New: func(ctx context.Context, env *clientgo.Env) (clientgo.Controller, error) {
			return newPlanter(env.Client, env, p)
		}},
		Phases: clientgo.Phases{FaultsFor: 4 * time.Minute},
	}
}

// plants are the writes into lent objects the check must see (or not see), of every kind.
var plants = []plant{
	{name: "a string field", atSync: 4, caught: true,
		change: func(d *appsv1.Deployment) { d.Spec.Template.Spec.SchedulerName = "other" }},
	{name: "a slice element's string", atSync: 5, caught: true,
		change: func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image += "-patched" }},
	{name: "a slice element", atSync: 3, caught: true,
		change: func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Args[1] = "daemon on;" }},
	{name: "a slice grown", atSync: 4, caught: true,
		change: func(d *appsv1.Deployment) { d.Finalizers = append(d.Finalizers, "example.com/hold") }},
	{name: "a map entry", atSync: 6, caught: true,
		change: func(d *appsv1.Deployment) { d.Annotations["note"] = "bye" }},
	{name: "a label added", atSync: 2, caught: true,
		change: func(d *appsv1.Deployment) { d.Labels["added"] = "x" }},
	{name: "a label deleted", atSync: 4, caught: true,
		change: func(d *appsv1.Deployment) { delete(d.Labels, "tier") }},
	{name: "a selector's label", atSync: 5, caught: true,
		change: func(d *appsv1.Deployment) { d.Spec.Selector.MatchLabels["app"] = "db" }},
	{name: "a nested pointer field", atSync: 4, caught: true,
		change: func(d *appsv1.Deployment) { *d.Spec.Strategy.RollingUpdate.MaxSurge = intstr.FromInt32(3) }},
	{name: "a pointer's target", atSync: 3, caught: true,
		change: func(d *appsv1.Deployment) { *d.Spec.Template.Spec.TerminationGracePeriodSeconds = 0 }},
	{name: "a pointer set to nil", atSync: 5, caught: true,
		change: func(d *appsv1.Deployment) { d.Spec.Replicas = nil }},
	{name: "a resource quantity", atSync: 4, caught: true,
		change: func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = resource.MustParse("2")
		}},
	{name: "a status field", atSync: 6, caught: true,
		change: func(d *appsv1.Deployment) { d.Status.ObservedGeneration += 7 }},
	{name: "a status condition's message", atSync: 1, caught: true,
		when:   func(d *appsv1.Deployment) bool { return len(d.Status.Conditions) > 0 },
		change: func(d *appsv1.Deployment) { d.Status.Conditions[0].Message = "changed" }},
	{name: "in the handler", atUpdate: 3, caught: true,
		change: func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Env[0].Value = "dev" }},
	{name: "restored at the next sync", atSync: 4, restoreAt: "next sync", caught: true,
		change:  func(d *appsv1.Deployment) { d.Labels["tier"] = "back" },
		restore: func(d *appsv1.Deployment) { d.Labels["tier"] = "front" }},
	{name: "restored before the worker blocks", atSync: 4, restoreAt: "at once", caught: false,
		change:  func(d *appsv1.Deployment) { d.Labels["tier"] = "back" },
		restore: func(d *appsv1.Deployment) { d.Labels["tier"] = "front" }},
	{name: "a minute after it was lent", atSync: 2, after: time.Minute, caught: true,
		change: func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "late" }},
	{name: "after the retention", atSync: 2, after: 3 * time.Minute, caught: false,
		change: func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "late" }},
	{name: "nothing", atSync: 1 << 30, caught: false, change: func(*appsv1.Deployment) {}},
}

// TestReadOnlyCheckAnswersAsDeepEqual plants each write into a lent Deployment on several
// seeds and runs each twice: with the read-only check as it runs (snapshots of the objects'
// memory, comparisons only after the steps at which the controller ran), and with every lent
// object compared by reflect.DeepEqual with its copy at each check. Both runs must end alike:
// the same violation (same step, same message: the error text names both) or the same trace
// hash; and the plant must be caught, or not, as it says.
//
// Not a test for -race. A planted write into a lent object is a data race by the Go memory
// model: the object is shared with every reader of the cache, and the check is one of them. The
// detector reports it when no happens-before edge leads from the check's earlier read to the
// write, which is so when the writing worker was woken by a timer (a retry after its backoff:
// synctest moves its clock only once every goroutine is blocked, but the detector, like the
// memory model, takes no order from time). Measured with -race: "a status condition's message"
// is reported (its sync follows a retry), the other plants and "nothing" are not. The checks a
// step's wakes could race with wait for them (bubble.turn), so a run without a plant has no
// report.
func TestReadOnlyCheckAnswersAsDeepEqual(t *testing.T) {
	seeds, err := world.Seeds(7, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plants {
		t.Run(strings.ReplaceAll(p.name, " ", "_"), func(t *testing.T) {
			caught := 0
			for _, seed := range seeds {
				var errs [2]error
				var hashes [2]string
				for i, byDeepEqual := range []bool{false, true} {
					restore := clientgo.SetCheckByDeepEqual(byDeepEqual)
					rep, err := clientgo.Run(t, planterConfig(seed, p))
					restore()
					errs[i] = err
					if rep != nil {
						hashes[i] = rep.Hash
					}
				}
				if fmt.Sprint(errs[0]) != fmt.Sprint(errs[1]) || hashes[0] != hashes[1] {
					t.Fatalf("seed %d: the check answers\n  %v (hash %s)\nwhere DeepEqual at every check answers\n  %v (hash %s)", seed, errs[0], hashes[0], errs[1], hashes[1])
				}
				var v *world.Violation
				switch {
				case errs[0] == nil:
				case errors.As(errs[0], &v) && v.Oracle == world.OracleReadOnlyObjects:
					caught++
				default:
					t.Fatalf("seed %d: %v", seed, errs[0])
				}
			}
			if want := map[bool]int{true: len(seeds), false: 0}[p.caught]; caught != want {
				t.Errorf("caught on %d of %d seeds, want %d", caught, len(seeds), want)
			}
		})
	}
}
