package clientgo_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/fakeapi"
	fakerest "github.com/informersim/informersim/fakeapi/rest"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/timeline/record"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"slices"
)

// mirror is a small client-go controller: for every ConfigMap "x" whose name does not end in
// "-mirror" it keeps a ConfigMap "x-mirror" with the same data, and deletes mirrors whose
// source is gone. It knows nothing of informersim.
type mirror struct {
	client kubernetes.Interface
	lister corelisters.ConfigMapLister
	synced cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]
	// deletes counts delete notifications by their type, to see what the handler was given.
	deletes map[string]int
	// mirrorsMirrors plants a bug: the handler no longer maps a mirror to its source, so the
	// controller mirrors its own mirrors (x-mirror-mirror, and on).
	mirrorsMirrors bool
}

func newMirror(client kubernetes.Interface, cms coreinformers.ConfigMapInformer) (*mirror, error) {
	m := &mirror{client: client, lister: cms.Lister(), synced: cms.Informer().HasSynced,
		queue:   workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		deletes: map[string]int{}}
	enqueue := func(obj any) {
		key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
		if err != nil {
			panic(fmt.Sprintf("mirror: %v", err)) // a tombstone of the wrong type ends the run
		}
		if m.mirrorsMirrors {
			m.queue.Add(key)
			return
		}
		m.queue.Add(strings.TrimSuffix(key, "-mirror"))
	}
	_, err := cms.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: func(obj any) {
			m.deletes[fmt.Sprintf("%T", obj)]++
			enqueue(obj)
		},
	})
	return m, err
}

func (m *mirror) Run(ctx context.Context, workers int) error {
	return runWorkers(ctx, "mirror", m.queue, m.synced, workers, m.sync)
}

// runWorkers is a client-go controller's Run: once synced, workers goroutines take keys from
// queue and sync them (a failed key again after the queue's backoff) until ctx ends.
func runWorkers(ctx context.Context, name string, queue workqueue.TypedRateLimitingInterface[string], synced cache.InformerSynced,
	workers int, sync func(ctx context.Context, key string) error) error {
	defer queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), synced) {
		return fmt.Errorf("%s: caches did not sync", name)
	}
	next := func(ctx context.Context) bool {
		key, quit := queue.Get()
		if quit {
			return false
		}
		defer queue.Done(key)
		if err := sync(ctx, key); err != nil {
			queue.AddRateLimited(key)
			return true
		}
		queue.Forget(key)
		return true
	}
	for range workers {
		go wait.UntilWithContext(ctx, func(ctx context.Context) {
			for next(ctx) {
			}
		}, time.Second)
	}
	<-ctx.Done()
	return nil
}

func (m *mirror) sync(ctx context.Context, key string) error {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	src, err := m.lister.ConfigMaps(ns).Get(name)
	cms := m.client.CoreV1().ConfigMaps(ns)
	if apierrors.IsNotFound(err) {
		err := cms.Delete(ctx, name+"-mirror", metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	if err != nil {
		return err
	}
	dst, err := m.lister.ConfigMaps(ns).Get(name + "-mirror")
	if apierrors.IsNotFound(err) {
		_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name + "-mirror"}, Data: src.Data}, metav1.CreateOptions{})
		return err
	}
	if err != nil || maps.Equal(dst.Data, src.Data) {
		return err
	}
	dst = dst.DeepCopy()
	dst.Data = src.Data
	_, err = cms.Update(ctx, dst, metav1.UpdateOptions{})
	return err
}

// mirrorCheck says every source has a mirror with its data, and every mirror a source.
func mirrorCheck(srv *fakeapi.Server) error {
	// Lent, not copied: the check only reads the objects (their data, printed).
	list, err := srv.Lending().Snapshot(cmsGVR, "", metav1.ListOptions{}, "mirrorCheck")
	if err != nil {
		return err
	}
	data := map[string]map[string]any{}
	for _, it := range list.Items {
		d, _ := it.Object["data"].(map[string]any)
		data[it.GetNamespace()+"/"+it.GetName()] = d
	}
	for key, d := range data {
		if src, ok := strings.CutSuffix(key, "-mirror"); ok {
			if _, ok := data[src]; !ok {
				return fmt.Errorf("mirror %s has no source", key)
			}
			continue
		}
		m, ok := data[key+"-mirror"]
		if !ok {
			return fmt.Errorf("%s has no mirror", key)
		}
		if fmt.Sprint(m) != fmt.Sprint(d) {
			return fmt.Errorf("%s's mirror has %v, want %v", key, m, d)
		}
	}
	return nil
}

func mirrorConfig(seed uint64, workers int, deletes *map[string]int) clientgo.Config {
	return clientgo.Config{
		Seed: seed,
		Setup: func(w *world.World) error {
			for i := range 3 {
				if err := w.Apply(world.Op{Kind: world.OpCreate, Name: fmt.Sprintf("c%d", i), Content: map[string]any{"data": map[string]any{"v": "0"}}}); err != nil {
					return err
				}
			}
			_, err := w.Generate(world.GenConfig{Ops: 40, FaultOps: true, FaultPoints: true, HotNames: 2, ColdNames: 3})
			return err
		},
		Cluster: clientgo.Cluster{World: world.Config{DefaultResource: cmsGVR}},
		Controller: clientgo.Constructor{Workers: workers, New: func(ctx context.Context, env *clientgo.Env) (clientgo.Controller, error) {
			m, err := newMirror(env.Client, env.KubeInformers.Core().V1().ConfigMaps())
			if deletes != nil {
				*deletes = m.deletes
			}
			return m, err
		}},
		Phases: clientgo.Phases{FaultsFor: 2 * time.Minute},
		Checks: clientgo.Checks{Outcome: mirrorCheck},
	}
}

// TestHarnessMirror runs the mirror controller under a generated workload with watch closes,
// 410s, compactions and failed requests, and checks it converges; the same seed twice gives the
// same trace hash.
func TestHarnessMirror(t *testing.T) {
	tombstones := 0
	for _, workers := range []int{1, 2} {
		for seed := uint64(1); seed <= 5; seed++ {
			var deletes map[string]int
			rep, err := clientgo.Run(t, mirrorConfig(seed, workers, &deletes))
			if err != nil {
				t.Fatalf("workers %d: %v", workers, err)
			}
			again, err := clientgo.Run(t, mirrorConfig(seed, workers, nil))
			if err != nil {
				t.Fatalf("workers %d, second run: %v", workers, err)
			}
			if rep.Hash != again.Hash {
				t.Errorf("workers %d seed %d: trace hashes differ: %s, %s", workers, seed, rep.Hash, again.Hash)
			}
			t.Logf("workers %d: %v; deletes %v", workers, rep, deletes)
			tombstones += deletes["cache.DeletedFinalStateUnknown"]
		}
	}
	// The handler's cache.DeletionHandlingMetaNamespaceKeyFunc would have failed (and the run
	// with it) on informersim's own tombstone type; some runs must have delivered one.
	if tombstones == 0 {
		t.Fatal("no run delivered a cache.DeletedFinalStateUnknown")
	}
}

// shapes is a "controller" whose constructor checks the client-go shapes the harness hands out,
// then does nothing.
type shapes struct{ err chan error }

func (s shapes) Run(ctx context.Context, _ int) error { <-ctx.Done(); return nil }

// TestHarnessShapes checks the shapes a controller gets: listers of client-go's factory read typed
// objects from the world's cache (through the namespace index), ForResource gives a generic
// lister, and a type the apiserver does not serve fails the run with a clear error.
func TestHarnessShapes(t *testing.T) {
	var got []string
	cfg := clientgo.Config{
		Seed: 7,
		Setup: func(w *world.World) error {
			// The harness refuses writes into a namespace nobody created, as kube-apiserver does.
			if err := fakerest.EnsureNamespaces(context.Background(), w.Server(), "ns1"); err != nil {
				return err
			}
			for _, name := range []string{"a", "b"} {
				if err := w.Apply(world.Op{Kind: world.OpCreate, Resource: depsGVR, Namespace: "ns1", Name: name,
					Content: map[string]any{"spec": map[string]any{"replicas": int64(2)}}}); err != nil {
					return err
				}
			}
			return nil
		},
		Controller: clientgo.Constructor{New: func(ctx context.Context, env *clientgo.Env) (clientgo.Controller, error) {
			deps := env.KubeInformers.Apps().V1().Deployments()
			lister := deps.Lister()
			generic, err := env.KubeInformers.ForResource(depsGVR)
			if err != nil {
				return nil, err
			}
			env.KubeInformers.Start(ctx.Done())
			if !cache.WaitForCacheSync(ctx.Done(), deps.Informer().HasSynced) {
				return nil, fmt.Errorf("no sync")
			}
			typed, err := lister.Deployments("ns1").List(labels.Everything())
			if err != nil {
				return nil, err
			}
			for _, d := range typed {
				got = append(got, fmt.Sprintf("%s/%s replicas=%d kind=%q", d.Namespace, d.Name, *d.Spec.Replicas, d.Kind))
			}
			objs, err := generic.Lister().ByNamespace("ns1").List(labels.Everything())
			if err != nil {
				return nil, err
			}
			got = append(got, fmt.Sprintf("generic %d %T", len(objs), objs[0]))
			return shapes{}, nil
		}},
		Phases: clientgo.Phases{FaultsFor: time.Second},
	}
	if _, err := clientgo.Run(t, cfg); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{`generic 2 *v1.Deployment`, `ns1/a replicas=2 kind=""`, `ns1/b replicas=2 kind=""`}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}

	// An informer of a resource the apiserver does not serve: the run fails and says why.
	cfg.Setup = nil
	cfg.Controller = clientgo.Constructor{New: func(ctx context.Context, env *clientgo.Env) (clientgo.Controller, error) {
		env.KubeInformers.Extensions().V1beta1().Ingresses().Informer() // removed from kube-apiserver in 1.22
		return shapes{}, nil
	}}
	cfg.Cluster.API = fakeapi.Config{}
	_, err := clientgo.Run(t, cfg)
	if err == nil || !strings.Contains(err.Error(), "serves no resource of kind") {
		t.Fatalf("an unserved resource: %v", err)
	}
}

// TestRunBadInput: every bad Config is an error, not a panic.
func TestRunBadInput(t *testing.T) {
	newFn := func(context.Context, *clientgo.Env) (clientgo.Controller, error) { return shapes{}, nil }
	for name, cfg := range map[string]clientgo.Config{
		"no controller":                 {},
		"nil New":                       {Controller: clientgo.Constructor{}},
		"nil main":                      {Controller: clientgo.Main(nil)},
		"negative workers":              {Controller: clientgo.Constructor{New: newFn, Workers: -1}},
		"negative budget":               {Controller: clientgo.Constructor{New: newFn}, Phases: clientgo.Phases{Budget: -time.Second}},
		"api clock":                     {Controller: clientgo.Constructor{New: newFn}, Cluster: clientgo.Cluster{API: fakeapi.Config{Clock: clocktesting.NewFakePassiveClock(time.Time{})}}},
		"world control plane":           {Controller: clientgo.Constructor{New: newFn}, Cluster: clientgo.Cluster{World: world.Config{ControlPlane: &controlplane.Config{}}}},
		"control plane off, configured": {Controller: clientgo.Constructor{New: newFn}, Cluster: clientgo.Cluster{ControlPlane: clientgo.ControlPlane{Off: true, Config: controlplane.Config{StaleReads: true}}}},
		"negative hazard":               {Controller: clientgo.Constructor{New: newFn}, Hazards: clientgo.Hazards{Conflicts: -1}},
		"negative restart instant":      {Controller: clientgo.Main(func(context.Context, *rest.Config) error { return nil }), Hazards: clientgo.Hazards{RestartAt: []time.Duration{-time.Second}}},
	} {
		rep, err := clientgo.Run(t, cfg)
		if err == nil || !strings.HasPrefix(err.Error(), "clientgo: ") {
			t.Errorf("%s: %v", name, err)
			continue
		}
		// A run that could not start still has a Report, so t.Fatal(err, rep.Failure) is safe.
		if rep == nil || rep.Failure != err.Error() {
			t.Errorf("%s: the Report of a run that could not start: %+v", name, rep)
		}
	}
	if _, err := clientgo.Run(nil, clientgo.Config{Controller: clientgo.Constructor{New: newFn}}); err == nil {
		t.Error("nil *testing.T: no error")
	}
	constructorErr := func(context.Context, *clientgo.Env) (clientgo.Controller, error) { return nil, fmt.Errorf("boom") }
	if _, err := clientgo.Run(t, clientgo.Config{Controller: clientgo.Constructor{New: constructorErr}}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("a failing constructor: %v", err)
	}
}

// TestHarnessNarratesWrites: a write the controller makes through its clientset is a world event
// at the simulated instant it was made, narrated by the apiserver like any other write, in the
// same step as the controller's response line.
func TestHarnessNarratesWrites(t *testing.T) {
	rep, err := clientgo.Run(t, mirrorConfig(1, 2, nil))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(rep.Trace, "\n")
	writes := 0
	for i, l := range lines {
		at, rest, ok := strings.Cut(l, " ")
		if !ok || !strings.HasPrefix(rest, "apiserver: ADDED obj=configmaps/default/") || !strings.Contains(rest, "-mirror ") {
			continue
		}
		writes++
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], at+` controller: response request="POST /api/v1/namespaces/default/configmaps" code=201`) {
			t.Fatalf("the apiserver's narration of a mirror's creation is not followed, at the same instant, by the controller's response:\n%s", strings.Join(lines[i:min(len(lines), i+2)], "\n"))
		}
	}
	if writes < 3 {
		t.Fatalf("%d creations of mirrors narrated, want at least 3:\n%s", writes, rep.Trace)
	}
}

// TestRunFailureIsToldForAPerson: a run whose check fails returns a one-line error and a
// Report whose Failure states the error, the seed and the replay command once each, the run's
// HTML timeline on the line after the replay command, and the end of the trace; a run that
// passes has no Failure.
func TestRunFailureIsToldForAPerson(t *testing.T) {
	artifacts := t.TempDir()
	t.Setenv(record.ArtifactsEnv, artifacts)
	cfg := mirrorConfig(1, 1, nil)
	cfg.Checks.Outcome = func(*fakeapi.Server) error { return errors.New("the mirror is never right") }
	rep, err := clientgo.Run(t, cfg)
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Fatalf("got %v, want a one-line error", err)
	}
	for _, want := range []string{"clientgo: the controller did not converge within 10m0s after the faults stopped: the mirror is never right\n", "\nseed: 1\n", "\nreplay: ", "\ntrace before the failure:\n"} {
		if !strings.Contains(rep.Failure, want) {
			t.Errorf("Failure lacks %q:\n%s", want, rep.Failure)
		}
	}
	for _, once := range []string{"seed", world.TestRepro(t.Name(), 1)} {
		if n := strings.Count(rep.Failure, once); n != 1 {
			t.Errorf("%q is stated %d times, want once:\n%s", once, n, rep.Failure)
		}
	}
	_, afterReplay, _ := strings.Cut(rep.Failure, "\nreplay: ")
	_, afterReplay, _ = strings.Cut(afterReplay, "\n")
	path, _, _ := strings.Cut(strings.TrimPrefix(afterReplay, "timeline: "), "\n")
	if !strings.HasPrefix(afterReplay, "timeline: ") || filepath.Dir(path) != artifacts || !strings.HasPrefix(filepath.Base(path), "informersim-1-") {
		t.Errorf("the line after the replay command does not name the timeline in %s:\n%s", artifacts, rep.Failure)
	} else if page, err := os.ReadFile(path); err != nil || !strings.Contains(string(page), "the mirror is never right") {
		t.Errorf("the timeline %s is not the failed run's page (%v)", path, err)
	}
	rep, err = clientgo.Run(t, mirrorConfig(1, 1, nil))
	if err != nil || rep.Failure != "" {
		t.Errorf("a passing run: %v, Failure %q", err, rep.Failure)
	}
}

// TestHandlersNamedAfterTheirResource: a handler the controller registers is named after its
// informer's resource and its rank there ("configmaps#1"), in the trace, not the world's h1.
func TestHandlersNamedAfterTheirResource(t *testing.T) {
	rep, err := clientgo.Run(t, mirrorConfig(1, 2, nil))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Trace, "configmaps/configmaps#1: register") {
		t.Errorf("no handler named configmaps#1 in the trace:\n%s", rep.Trace[:min(len(rep.Trace), 2000)])
	}
	if strings.Contains(rep.Trace, "/h1:") {
		t.Errorf("a handler is still named h1")
	}
}
