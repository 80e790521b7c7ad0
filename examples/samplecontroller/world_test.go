package samplecontroller_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/examples/samplecontroller"
	samplev1alpha1 "github.com/informersim/informersim/examples/samplecontroller/apis/v1alpha1"
	"github.com/informersim/informersim/examples/samplecontroller/clientset"
	"github.com/informersim/informersim/examples/samplecontroller/informers/internalinterfaces"
	fooinformers "github.com/informersim/informersim/examples/samplecontroller/informers/samplecontroller"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/internal/invariant"
	"github.com/informersim/informersim/kube"
	"github.com/informersim/informersim/sim/world"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
)

// TestMain runs the tests with the thorough checks of the simulation (invariant.Thorough),
// benchmarks without.
func TestMain(m *testing.M) {
	invariant.ThoroughUnlessBenchmarking()
	klog.SetLogger(logr.Discard()) // the controller logs every retry; the trace says what happened
	os.Exit(m.Run())
}

var (
	fooGVK  = samplev1alpha1.SchemeGroupVersion.WithKind("Foo")
	foosGVR = samplev1alpha1.SchemeGroupVersion.WithResource("foos")
	depsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// apiConfig serves Foo as a CRD would: namespaced, with a status subresource and generations.
func apiConfig() fakeapi.Config {
	return fakeapi.Config{Resources: []fakeapi.Resource{clientgo.CustomResource(fooGVK, "foos", true, true)}}
}

// fooFactory is the generated Foo factory's interface over the world: the core Factory supplies
// InformerFor, Start, Shutdown and WaitForCacheSync; the group accessor is the generated one.
type fooFactory struct {
	clientgo.Factory[internalinterfaces.NewInformerFunc]
}

func (f fooFactory) Samplecontroller() fooinformers.Interface { return fooinformers.New(f, "", nil) }

// newController is the controller's main, as the harness calls it: the clients and factories come
// from env, and the controller gets only client-go types.
func newController(bugs samplecontroller.Bugs) func(context.Context, *clientgo.Env) (clientgo.Controller, error) {
	return func(ctx context.Context, env *clientgo.Env) (clientgo.Controller, error) {
		fooClient, err := clientset.NewForConfig(env.RESTConfig)
		if err != nil {
			return nil, err
		}
		foos := fooFactory{clientgo.Factory[internalinterfaces.NewInformerFunc]{Informers: env.NewInformers(clientgo.FactoryOptions{})}}
		return samplecontroller.NewController(ctx, env.Client, fooClient,
			env.KubeInformers.Apps().V1().Deployments(), foos.Samplecontroller().V1alpha1().Foos(), bugs)
	}
}

// typedList reads every object of gvr from the server as T. It takes the committed objects lent
// (Lending.Snapshot) rather than deep copies (Server.Snapshot): kube.FromUnstructured only reads
// them, and the oracle runs at every quiet turn of the liveness phase, where the copies were most
// of its cost.
func typedList[T any](srv *fakeapi.Server, gvr schema.GroupVersionResource) ([]*T, error) {
	list, err := srv.Lending().Snapshot(gvr, "", metav1.ListOptions{}, "converged")
	if err != nil {
		return nil, err
	}
	var out []*T
	for _, it := range list.Items {
		obj := new(T)
		if err := kube.FromUnstructured(it.Object, obj); err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

// converged is the controller's outcome: every Foo's Deployment exists, is controlled by that
// Foo, has its replicas, and the Foo's status has observed its generation.
func converged(srv *fakeapi.Server) error {
	foos, err := typedList[samplev1alpha1.Foo](srv, foosGVR)
	if err != nil {
		return err
	}
	deps, err := typedList[appsv1.Deployment](srv, depsGVR)
	if err != nil {
		return err
	}
	return convergedObjects(foos, deps)
}

// convergedObjects is converged's rule on the Foos and Deployments of a store.
func convergedObjects(foos []*samplev1alpha1.Foo, deps []*appsv1.Deployment) error {
	byKey := map[string]*appsv1.Deployment{}
	for _, d := range deps {
		byKey[d.Namespace+"/"+d.Name] = d
	}
	for _, foo := range foos {
		d, ok := byKey[foo.Namespace+"/"+foo.Spec.DeploymentName]
		switch {
		case !ok:
			return fmt.Errorf("Foo %s/%s has no Deployment %s", foo.Namespace, foo.Name, foo.Spec.DeploymentName)
		case !metav1.IsControlledBy(d, foo):
			return fmt.Errorf("Deployment %s is not controlled by Foo %s", d.Name, foo.Name)
		case *d.Spec.Replicas != *foo.Spec.Replicas:
			return fmt.Errorf("Deployment %s has %d replicas, Foo %s wants %d", d.Name, *d.Spec.Replicas, foo.Name, *foo.Spec.Replicas)
		case foo.Status.ObservedGeneration != foo.Generation:
			return fmt.Errorf("Foo %s: status observed generation %d, generation %d", foo.Name, foo.Status.ObservedGeneration, foo.Generation)
		}
	}
	return nil
}

// workload is a seeded script of Foo writes, Deployment deletions (someone else's), and the
// disruptions a spec is about, drawn from the world's "foos" stream.
type workload struct {
	n           int          // how many ops after the first three creates
	disruptions [][]world.Op // one group is drawn for a disruption, its ops applied at one instant
	// burst puts a Deployment deletion between a clean watch close and a compaction, so the
	// informer sees the deletion only through a relist, as a tombstone.
	burst bool
}

// noise is a write the controller does not care about: after a watch close it moves the
// revision past the informers' last one, so a compaction then makes their re-watch 410.
var noise = world.Op{Kind: world.OpCreate, Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, GenerateName: "noise-"}

func fooOp(kind world.OpKind, name string, replicas int) world.Op {
	return world.Op{Kind: kind, Resource: foosGVR, Name: name, Content: map[string]any{
		"spec": map[string]any{"deploymentName": "dep-" + strings.TrimPrefix(name, "foo-"), "replicas": int64(replicas)},
	}}
}

func (wl workload) setup(w *world.World) error {
	_, err := w.Script(100*time.Millisecond, wl.ops(w.Sim().Rand("foos"))...)
	return err
}

// ops draws the workload's script from r: ops at one instant, separated by OpSleeps.
func (wl workload) ops(r *rand.Rand) []world.Op {
	var ops []world.Op
	live := 0
	for range 3 {
		ops = append(ops, fooOp(world.OpCreate, fmt.Sprintf("foo-%d", live), 1+r.IntN(4)))
		live++
	}
	for range wl.n {
		ops = append(ops, world.Op{Kind: world.OpSleep, Duration: time.Duration(200+r.IntN(2800)) * time.Millisecond})
		pick := fmt.Sprintf("foo-%d", r.IntN(live))
		switch x := r.IntN(10); {
		case x < 3:
			ops = append(ops, world.Op{Kind: world.OpPatch, Resource: foosGVR, Name: pick, PatchType: "application/merge-patch+json",
				Patch: fmt.Sprintf(`{"spec":{"replicas":%d}}`, 1+r.IntN(4))})
		case x < 5:
			dep := "dep-" + strings.TrimPrefix(pick, "foo-")
			if wl.burst {
				ops = append(ops, world.Op{Kind: world.OpCloseWatches},
					world.Op{Kind: world.OpDelete, Resource: depsGVR, Name: dep}, world.Op{Kind: world.OpCompact})
			} else {
				ops = append(ops, world.Op{Kind: world.OpDelete, Resource: depsGVR, Name: dep})
			}
		case x < 6 && live < 6:
			ops = append(ops, fooOp(world.OpCreate, fmt.Sprintf("foo-%d", live), 1+r.IntN(4)))
			live++
		default:
			if len(wl.disruptions) > 0 {
				ops = append(ops, wl.disruptions[r.IntN(len(wl.disruptions))]...)
			}
		}
	}
	return ops
}

// spec is one condition the controller must converge under.
type spec struct {
	name     string
	workload workload
	api      func(*fakeapi.Config)
	setup    func(*world.World)
	latency  func(*rand.Rand, *http.Request) time.Duration
	// evidence says the run met the condition (a 410 happened, a conflict was answered...).
	evidence func(srv *fakeapi.Server) error
}

func count(srv *fakeapi.Server, pred func(fakeapi.RequestRecord) bool) int {
	n := 0
	for _, rq := range srv.Requests() {
		if pred(rq) {
			n++
		}
	}
	return n
}

// initialReads counts the requests that (re)build a cache: LISTs and watch-list WATCHes.
func initialReads(rq fakeapi.RequestRecord) bool {
	return rq.Err == "" && (rq.Verb == fakeapi.VerbList ||
		rq.Verb == fakeapi.VerbWatch && rq.Options.SendInitialEvents != nil && *rq.Options.SendInitialEvents)
}

var specs = []spec{
	{
		name:     "watch drops",
		workload: workload{n: 30, disruptions: [][]world.Op{{{Kind: world.OpCloseWatches}}}},
		evidence: func(srv *fakeapi.Server) error {
			if n := count(srv, func(rq fakeapi.RequestRecord) bool { return rq.Verb == fakeapi.VerbWatch }); n < 4 {
				return fmt.Errorf("only %d WATCH requests: no watch was dropped and resumed", n)
			}
			return nil
		},
	},
	{
		name: "410 relists",
		workload: workload{n: 30, disruptions: [][]world.Op{
			{{Kind: world.OpCloseWatches, Code: 410}},
			{{Kind: world.OpFailNext, Verb: fakeapi.VerbWatch, Code: 410}},
		}},
		evidence: func(srv *fakeapi.Server) error {
			if n := count(srv, initialReads); n < 3 {
				return fmt.Errorf("only %d initial reads: no relist", n)
			}
			return nil
		},
	},
	{
		name:     "compaction",
		workload: workload{n: 30, disruptions: [][]world.Op{{{Kind: world.OpCloseWatches}, noise, {Kind: world.OpCompact}}, {{Kind: world.OpCloseWatches}}}},
		evidence: func(srv *fakeapi.Server) error {
			for _, ev := range srv.WatchEvents() {
				if ev.Code == 410 {
					return nil
				}
			}
			if count(srv, func(rq fakeapi.RequestRecord) bool { return rq.Code == 410 }) > 0 {
				return nil
			}
			return fmt.Errorf("no request or watch got 410 Gone after a compaction")
		},
	},
	{
		name:     "stale replica routing",
		workload: workload{n: 30, disruptions: [][]world.Op{{{Kind: world.OpCloseWatches}}, {{Kind: world.OpCloseWatches, Code: 410}}}},
		api: func(c *fakeapi.Config) {
			c.Replicas = 3
			c.Routing = fakeapi.RoutingRandom
		},
		setup: func(w *world.World) {
			w.Server().Replicas().SetLag(1, 2*time.Second)
			w.Server().Replicas().SetLag(2, 5*time.Second)
		},
		evidence: func(srv *fakeapi.Server) error {
			if count(srv, func(rq fakeapi.RequestRecord) bool { return rq.Replica > 0 && initialReads(rq) }) == 0 {
				return fmt.Errorf("no cache was built from a lagging replica")
			}
			return nil
		},
	},
	{
		name:     "slow worker",
		workload: workload{n: 30, disruptions: [][]world.Op{{{Kind: world.OpCloseWatches}}}},
		// Every status update takes 5s to come back: the worker making it is stuck meanwhile, and
		// events for other Foos pile up for the other worker.
		latency: func(r *rand.Rand, req *http.Request) time.Duration {
			if strings.HasSuffix(req.URL.Path, "/status") {
				return 5 * time.Second
			}
			return time.Duration(1+r.IntN(50)) * time.Millisecond
		},
		evidence: func(srv *fakeapi.Server) error {
			if count(srv, func(rq fakeapi.RequestRecord) bool { return rq.Verb == fakeapi.VerbUpdateStatus }) == 0 {
				return fmt.Errorf("no status update")
			}
			return nil
		},
	},
	{
		name: "conflict on status update",
		workload: workload{n: 30, disruptions: [][]world.Op{
			{{Kind: world.OpFailNext, Verb: fakeapi.VerbUpdateStatus, Code: 409}},
		}},
		evidence: func(srv *fakeapi.Server) error {
			if count(srv, func(rq fakeapi.RequestRecord) bool { return rq.Verb == fakeapi.VerbUpdateStatus && rq.Code == 409 }) == 0 {
				return fmt.Errorf("no status update was answered 409 Conflict")
			}
			return nil
		},
	},
}

// sampleScheme is built once: a scheme is only read once built, and building client-go's types
// into a new one at every run was about a tenth of a run's CPU.
var sampleScheme = sync.OnceValues(func() (*runtime.Scheme, error) {
	return clientgo.NewScheme(samplev1alpha1.AddToScheme)
})

func runConfig(t *testing.T, s spec, seed uint64, workers int, bugs samplecontroller.Bugs, w **world.World) clientgo.Config {
	scheme, err := sampleScheme()
	if err != nil {
		t.Fatal(err)
	}
	api := apiConfig()
	if s.api != nil {
		s.api(&api)
	}
	return clientgo.Config{
		Seed: seed,
		Setup: func(world *world.World) error {
			if w != nil {
				*w = world
			}
			if s.setup != nil {
				s.setup(world)
			}
			return s.workload.setup(world)
		},
		Cluster:    clientgo.Cluster{API: api, Latency: s.latency},
		Controller: clientgo.Constructor{Scheme: scheme, Workers: workers, New: newController(bugs)},
		Phases:     clientgo.Phases{FaultsFor: 2 * time.Minute},
		Checks:     clientgo.Checks{Outcome: converged},
	}
}

// TestConverges runs the controller, unchanged, inside the world under each condition, for
// several seeds: it converges (every cache equals the apiserver, every Foo has its Deployment and
// status), and the run shows the condition happened.
// Wired through the Env without a resync, the controller converges on these seeds, not on
// every seed: TestMissedDeploymentNeedsResync shows one where only a resync heals a missed
// Deployment.
func TestConverges(t *testing.T) {
	seeds, err := world.Seeds(1, 8)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		t.Run(strings.ReplaceAll(s.name, " ", "_"), func(t *testing.T) {
			var total time.Duration
			for _, seed := range seeds {
				var w *world.World
				start := time.Now()
				rep, err := clientgo.Run(t, runConfig(t, s, seed, 2, samplecontroller.Bugs{}, &w))
				total += time.Since(start)
				if err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				if err := s.evidence(w.Server()); err != nil {
					t.Errorf("seed %d: the run did not exercise %q: %v", seed, s.name, err)
				}
				t.Logf("%v", rep)
			}
			t.Logf("%s: %d runs, %v wall time per run", s.name, len(seeds), total/time.Duration(len(seeds)))
		})
	}
}

// TestPlantedBugCaught sweeps seeds with a controller that ignores DeletedFinalStateUnknown: a
// Deployment deleted while the informer is away (a watch close, then a compaction, so the re-watch
// gets 410 and the relist finds it gone) reaches the handler as a tombstone, and the buggy handler
// drops it, so the Foo never gets its Deployment back. The sweep must catch it on some seed; each
// caught seed is printed with the line that replays it. The same seeds pass with the correct
// controller, so the failure is the bug's.
func TestPlantedBugCaught(t *testing.T) {
	n := uint64(100)
	seeds, err := world.Seeds(1, n)
	if err != nil {
		t.Fatal(err)
	}
	s := spec{name: "tombstones", workload: workload{n: 20, burst: true}}
	var caught []uint64
	start := time.Now()
	for _, seed := range seeds {
		_, err := clientgo.Run(t, runConfig(t, s, seed, 2, samplecontroller.Bugs{IgnoreTombstones: true}, nil))
		if err != nil {
			caught = append(caught, seed)
			if len(caught) <= 3 {
				t.Logf("caught: %v", err)
			}
		}
	}
	per := time.Since(start) / time.Duration(len(seeds))
	if len(caught) == 0 {
		t.Fatalf("the planted bug (IgnoreTombstones) was caught on none of %d seeds", len(seeds))
	}
	t.Logf("the planted bug was caught on %d of %d seeds (%v wall time per run); first: seed %d, replay: %s",
		len(caught), len(seeds), per, caught[0], world.Repro(caught[0]))
	for _, seed := range caught[:min(len(caught), 5)] {
		if _, err := clientgo.Run(t, runConfig(t, s, seed, 2, samplecontroller.Bugs{}, nil)); err != nil {
			t.Errorf("seed %d fails with the correct controller too: %v", seed, err)
		}
	}
}

// TestDeterminism runs each seed twice with one worker and twice with two: the trace hashes must
// be equal. INFORMERSIM_DETERMINISM_SEEDS sets the number of seeds (default 20).
func TestDeterminism(t *testing.T) {
	seeds := envSeeds(t, "INFORMERSIM_DETERMINISM_SEEDS", 20)
	s := spec{name: "determinism", workload: workload{n: 20, disruptions: [][]world.Op{
		{{Kind: world.OpCloseWatches}}, {{Kind: world.OpCloseWatches, Code: 410}}, {{Kind: world.OpCloseWatches}, noise, {Kind: world.OpCompact}},
		{{Kind: world.OpFailNext, Verb: fakeapi.VerbUpdateStatus, Code: 409}},
	}}}
	for _, workers := range []int{1, 2} {
		equal, concurrent, instants, maxConcurrent, ties, failed := 0, 0, 0, 0, 0, 0
		all := sha256.New() // over every run's hash: equal across processes and GOMAXPROCS
		start := time.Now()
		for _, seed := range seeds {
			a, errA := clientgo.Run(t, runConfig(t, s, seed, workers, samplecontroller.Bugs{}, nil))
			b, errB := clientgo.Run(t, runConfig(t, s, seed, workers, samplecontroller.Bugs{}, nil))
			if errA != nil || errB != nil {
				failed++
				t.Errorf("workers %d seed %d: %v / %v", workers, seed, errA, errB)
				continue
			}
			fmt.Fprintln(all, a.Hash)
			if a.Hash == b.Hash {
				equal++
			} else {
				t.Errorf("workers %d seed %d: trace hashes differ: %s and %s", workers, seed, a.Hash, b.Hash)
			}
			if a.Diagnostics.ConcurrentCalls > 0 {
				concurrent++
			}
			instants += a.Diagnostics.ConcurrentCalls
			maxConcurrent = max(maxConcurrent, a.Diagnostics.MaxConcurrent)
			ties += a.Diagnostics.Ties
		}
		t.Logf("workers %d: %d of %d seeds gave equal hashes on 2 runs (%d failed); %d seeds had calls from concurrent goroutines (%d instants in all, at most %d calls at once, ordered by the seed), %d ties; %v wall time, %v per run; hash of hashes %x",
			workers, equal, len(seeds), failed, concurrent, instants, maxConcurrent, ties, time.Since(start), time.Since(start)/time.Duration(2*len(seeds)), all.Sum(nil)[:8])
	}
}

// TestPlantedListerMutationCaught sweeps seeds with a controller that writes its status update
// into the lister's Foo instead of a copy. The harness compares every typed object the informers
// handed out with its copy after each step, so the run fails with the read-only-objects oracle's
// violation naming the Foo and the informer, at the step after the change; the replay line gives
// the same failure again, and the correct controller passes the same seeds.
func TestPlantedListerMutationCaught(t *testing.T) {
	n := uint64(100)
	seeds, err := world.Seeds(1, n)
	if err != nil {
		t.Fatal(err)
	}
	s := spec{name: "lister mutation", workload: workload{n: 10}}
	bug := samplecontroller.Bugs{MutateListerObject: true}
	var caught []uint64
	var first error
	for _, seed := range seeds {
		_, err := clientgo.Run(t, runConfig(t, s, seed, 2, bug, nil))
		var v *world.Violation
		switch {
		case err == nil:
		case errors.As(err, &v) && v.Oracle == world.OracleReadOnlyObjects && strings.Contains(v.Message, "foos.samplecontroller.k8s.io") && v.Key != "":
			caught = append(caught, seed)
			if first == nil {
				first = err
			}
		default:
			t.Errorf("seed %d: the run failed, but not with the read-only-objects oracle naming the Foo informer: %v", seed, err)
		}
	}
	t.Logf("the planted lister mutation was caught on %d of %d seeds; first: %v", len(caught), len(seeds), first)
	if 2*len(caught) <= len(seeds) {
		t.Fatalf("the planted lister mutation was caught on only %d of %d seeds", len(caught), len(seeds))
	}
	seed := caught[0]
	_, again := clientgo.Run(t, runConfig(t, s, seed, 2, bug, nil))
	if again == nil || again.Error() != first.Error() {
		t.Errorf("seed %d replayed: %v, want the same failure: %v", seed, again, first)
	}
	for _, seed := range caught[:min(len(caught), 5)] {
		if _, err := clientgo.Run(t, runConfig(t, s, seed, 2, samplecontroller.Bugs{}, nil)); err != nil {
			t.Errorf("seed %d fails with the correct controller too: %v", seed, err)
		}
	}
}
