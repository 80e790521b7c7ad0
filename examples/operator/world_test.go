package operator_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/examples/operator"
	webappv1 "github.com/informersim/informersim/examples/operator/api/v1"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/internal/invariant"
	"github.com/informersim/informersim/kube"
	"github.com/informersim/informersim/sim/world"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
)

// TestMain runs the tests with the thorough checks of the simulation, and silences the
// operator's logs (the trace says what happened).
func TestMain(m *testing.M) {
	invariant.ThoroughUnlessBenchmarking()
	klog.SetLogger(logr.Discard())
	ctrl.SetLogger(logr.Discard())
	os.Exit(m.Run())
}

var (
	webappGVK  = webappv1.GroupVersion.WithKind("WebApp")
	webappsGVR = webappv1.GroupVersion.WithResource("webapps")
	depsGVR    = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// scheme is built once: a scheme is only read once built.
var scheme = sync.OnceValues(operator.NewScheme)

// apiConfig serves WebApp as its CRD would: namespaced, with a status subresource.
func apiConfig() fakeapi.Config {
	return fakeapi.Config{Resources: []fakeapi.Resource{clientgo.CustomResource(webappGVK, "webapps", true, true)}}
}

// typedList reads every object of gvr from the server as T, lent (Lending.Snapshot) rather than
// deep-copied: kube.FromUnstructured only reads them.
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

// converged is the operator's outcome: every WebApp controls a Deployment with its replicas and
// image; its status has observed its generation and says every replica is available, with the
// Available condition at that generation; no Deployment outlives the WebApp that controlled it
// (the control plane's garbage collector deleted it).
func converged(srv *fakeapi.Server) error {
	apps, err := typedList[webappv1.WebApp](srv, webappsGVR)
	if err != nil {
		return err
	}
	deps, err := typedList[appsv1.Deployment](srv, depsGVR)
	if err != nil {
		return err
	}
	byName := map[string]*appsv1.Deployment{}
	for _, d := range deps {
		byName[d.Namespace+"/"+d.Name] = d
	}
	owners := map[string]bool{}
	for _, app := range apps {
		owners[string(app.UID)] = true
		want := ptr.Deref(app.Spec.Replicas, 1)
		d, ok := byName[app.Namespace+"/"+app.Name]
		switch {
		case !ok:
			return fmt.Errorf("WebApp %s has no Deployment", app.Name)
		case !metav1.IsControlledBy(d, app):
			return fmt.Errorf("Deployment %s is not controlled by WebApp %s", d.Name, app.Name)
		case ptr.Deref(d.Spec.Replicas, 1) != want:
			return fmt.Errorf("Deployment %s has %d replicas, WebApp %s wants %d", d.Name, ptr.Deref(d.Spec.Replicas, 1), app.Name, want)
		case len(d.Spec.Template.Spec.Containers) != 1 || d.Spec.Template.Spec.Containers[0].Image != app.Spec.Image:
			return fmt.Errorf("Deployment %s does not run image %s", d.Name, app.Spec.Image)
		case app.Status.ObservedGeneration != app.Generation:
			return fmt.Errorf("WebApp %s: status.observedGeneration %d, generation %d", app.Name, app.Status.ObservedGeneration, app.Generation)
		case app.Status.Replicas != want || app.Status.AvailableReplicas != want:
			return fmt.Errorf("WebApp %s: status says %d of %d replicas available, spec wants %d", app.Name, app.Status.AvailableReplicas, app.Status.Replicas, want)
		}
		var available *metav1.Condition
		for i := range app.Status.Conditions {
			if app.Status.Conditions[i].Type == webappv1.ConditionAvailable {
				available = &app.Status.Conditions[i]
			}
		}
		if available == nil || available.Status != metav1.ConditionTrue || available.ObservedGeneration != app.Generation {
			return fmt.Errorf("WebApp %s: condition Available %+v at generation %d", app.Name, available, app.Generation)
		}
	}
	for _, d := range deps {
		if ref := metav1.GetControllerOf(d); ref == nil || !owners[string(ref.UID)] {
			return fmt.Errorf("Deployment %s outlives its WebApp", d.Name)
		}
	}
	return nil
}

// generationsNeverGoBack is the check on every write of the operator: a WebApp's
// status.observedGeneration, and each condition's observedGeneration, never go back.
func generationsNeverGoBack(w clientgo.Write) error {
	if w.Resource != webappsGVR || w.Before == nil || w.After == nil {
		return nil
	}
	before, after := observed(w.Before), observed(w.After)
	for what, b := range before {
		if a, ok := after[what]; ok && a < b {
			return fmt.Errorf("WebApp %s: %s went back from %d to %d", w.Name, what, b, a)
		}
	}
	return nil
}

// observed are the observed generations of a WebApp's status, by field.
func observed(obj *unstructured.Unstructured) map[string]int64 {
	out := map[string]int64{}
	if g, ok, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration"); ok {
		out["status.observedGeneration"] = g
	}
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		typ, _ := m["type"].(string)
		if g, ok := m["observedGeneration"].(int64); ok {
			out["condition "+typ+".observedGeneration"] = g
		}
	}
	return out
}

// workload is a seeded script: WebApps created, scaled, given a new image and deleted, their
// Deployments deleted by someone else, and the disruptions a spec is about.
type workload struct {
	n           int
	disruptions [][]world.Op
}

func webappOp(kind world.OpKind, name string, replicas int, image string) world.Op {
	return world.Op{Kind: kind, Resource: webappsGVR, Name: name, Content: map[string]any{
		"spec": map[string]any{"replicas": int64(replicas), "image": image},
	}}
}

// noise moves the revision past the informers' last one, so a compaction then makes their
// re-watch 410.
var noise = world.Op{Kind: world.OpCreate, Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, GenerateName: "noise-"}

func (wl workload) ops(r *rand.Rand) []world.Op {
	var ops []world.Op
	live := []string{}
	next := 0
	create := func() {
		name := fmt.Sprintf("web-%d", next)
		next++
		live = append(live, name)
		ops = append(ops, webappOp(world.OpCreate, name, 1+r.IntN(4), fmt.Sprintf("nginx:1.%d", r.IntN(3))))
	}
	for range 3 {
		create()
	}
	for range wl.n {
		ops = append(ops, world.Op{Kind: world.OpSleep, Duration: time.Duration(200+r.IntN(2800)) * time.Millisecond})
		if len(live) == 0 {
			create()
			continue
		}
		pick := live[r.IntN(len(live))]
		switch x := r.IntN(12); {
		case x < 3:
			ops = append(ops, world.Op{Kind: world.OpPatch, Resource: webappsGVR, Name: pick, PatchType: "application/merge-patch+json",
				Patch: fmt.Sprintf(`{"spec":{"replicas":%d}}`, 1+r.IntN(4))})
		case x < 4:
			ops = append(ops, world.Op{Kind: world.OpPatch, Resource: webappsGVR, Name: pick, PatchType: "application/merge-patch+json",
				Patch: fmt.Sprintf(`{"spec":{"image":"nginx:1.%d"}}`, r.IntN(3))})
		case x < 5:
			ops = append(ops, world.Op{Kind: world.OpDelete, Resource: depsGVR, Name: pick})
		case x < 6:
			ops = append(ops, world.Op{Kind: world.OpDelete, Resource: webappsGVR, Name: pick})
			for i, l := range live {
				if l == pick {
					live = append(live[:i], live[i+1:]...)
					break
				}
			}
		case x < 7 && len(live) < 6:
			create()
		default:
			if len(wl.disruptions) > 0 {
				ops = append(ops, wl.disruptions[r.IntN(len(wl.disruptions))]...)
			}
		}
	}
	return ops
}

// spec is one condition the operator must converge under.
type spec struct {
	name     string
	workload workload
	api      func(*fakeapi.Config)
	setup    func(*world.World)
	hazards  clientgo.Hazards
	// evidence says the run met the condition.
	evidence func(srv *fakeapi.Server, rep *clientgo.Report) error
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

func initialReads(rq fakeapi.RequestRecord) bool {
	return rq.Err == "" && (rq.Verb == fakeapi.VerbList ||
		rq.Verb == fakeapi.VerbWatch && rq.Options.SendInitialEvents != nil && *rq.Options.SendInitialEvents)
}

// staleRouting is three apiserver replicas, two of them lagging, with reads routed at random.
func staleRouting(c *fakeapi.Config) {
	c.Replicas = 3
	c.Routing = fakeapi.RoutingRandom
}

func lagReplicas(w *world.World) {
	w.Server().Replicas().SetLag(1, 2*time.Second)
	w.Server().Replicas().SetLag(2, 5*time.Second)
}

var specs = []spec{
	{
		name: "410 relists",
		workload: workload{n: 30, disruptions: [][]world.Op{
			{{Kind: world.OpCloseWatches, Code: 410}},
			{{Kind: world.OpFailNext, Verb: fakeapi.VerbWatch, Code: 410}},
		}},
		evidence: func(srv *fakeapi.Server, _ *clientgo.Report) error {
			if n := count(srv, initialReads); n < 3 {
				return fmt.Errorf("only %d initial reads: no relist", n)
			}
			return nil
		},
	},
	{
		name:     "compaction",
		workload: workload{n: 30, disruptions: [][]world.Op{{{Kind: world.OpCloseWatches}, noise, {Kind: world.OpCompact}}, {{Kind: world.OpCloseWatches}}}},
		evidence: func(srv *fakeapi.Server, _ *clientgo.Report) error {
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
		api:      staleRouting,
		setup:    lagReplicas,
		evidence: func(srv *fakeapi.Server, _ *clientgo.Report) error {
			if count(srv, func(rq fakeapi.RequestRecord) bool { return rq.Replica > 0 && initialReads(rq) }) == 0 {
				return fmt.Errorf("no cache was built from a lagging replica")
			}
			return nil
		},
	},
	{
		name: "conflicts",
		workload: workload{n: 30, disruptions: [][]world.Op{
			{{Kind: world.OpFailNext, Verb: fakeapi.VerbUpdateStatus, Code: 409}},
			{{Kind: world.OpFailNext, Verb: fakeapi.VerbUpdate, Code: 409}},
		}},
		evidence: func(srv *fakeapi.Server, _ *clientgo.Report) error {
			if count(srv, func(rq fakeapi.RequestRecord) bool { return rq.Code == 409 }) == 0 {
				return fmt.Errorf("no write was answered 409 Conflict")
			}
			return nil
		},
	},
	{
		name:     "crash-restarts",
		workload: workload{n: 30, disruptions: [][]world.Op{{{Kind: world.OpCloseWatches}}}},
		api:      staleRouting,
		setup:    lagReplicas,
		// The operator's process crashes twice and starts afresh; a restarted manager's first
		// LIST may be served by a replica 10s behind (time travel).
		hazards: clientgo.Hazards{Restarts: 2, StaleReads: 2},
		evidence: func(_ *fakeapi.Server, rep *clientgo.Report) error {
			for _, h := range rep.Hazards {
				if h.Name == clientgo.HazardRestart && h.Fired > 0 {
					return nil
				}
			}
			return fmt.Errorf("no crash-restart fired: %v", rep.Hazards)
		},
	},
}

// mixed is every disruption of the specs at once, with stale replica routing: the determinism
// sweep's condition.
var mixed = spec{
	name: "mixed",
	workload: workload{n: 30, disruptions: [][]world.Op{
		{{Kind: world.OpCloseWatches}}, {{Kind: world.OpCloseWatches, Code: 410}},
		{{Kind: world.OpCloseWatches}, noise, {Kind: world.OpCompact}},
		{{Kind: world.OpFailNext, Verb: fakeapi.VerbUpdateStatus, Code: 409}},
		{{Kind: world.OpFailNext, Verb: fakeapi.VerbUpdate, Code: 409}},
	}},
	api:   staleRouting,
	setup: lagReplicas,
}

// restarts is mixed with the operator's process crashing twice and starting afresh, its first
// LIST after a start possibly served by a replica 10s behind (time travel), and two updates
// answered 409: the planted bugs' condition. (Runs with crash-restarts of a controller-runtime
// manager do not all replay from their seed: see TestDeterminism.)
var restarts = spec{
	name:     "restarts",
	workload: mixed.workload,
	api:      staleRouting,
	setup:    lagReplicas,
	hazards:  clientgo.Hazards{Restarts: 3, StaleReads: 3, Conflicts: 2},
}

// runConfig runs the operator's Main, built with opts, under s for seed; w, if not nil, gets
// the world.
func runConfig(t *testing.T, s spec, seed uint64, opts operator.Options, w **world.World) clientgo.Config {
	api := apiConfig()
	if s.api != nil {
		s.api(&api)
	}
	return clientgo.Config{
		Seed: seed,
		Setup: func(ww *world.World) error {
			if w != nil {
				*w = ww
			}
			if s.setup != nil {
				s.setup(ww)
			}
			_, err := ww.Script(100*time.Millisecond, s.workload.ops(ww.Sim().Rand("webapps"))...)
			return err
		},
		Hazards:    s.hazards,
		Cluster:    clientgo.Cluster{API: api, ControlPlane: clientgo.ControlPlane{Config: controlplane.Config{Workload: controlplane.WorkloadConfig{MaxLatency: 2 * time.Second}}}},
		Controller: clientgo.Main(func(ctx context.Context, cfg *rest.Config) error { return opts.Main(ctx, cfg) }),
		Phases:     clientgo.Phases{FaultsFor: 2 * time.Minute},
		Checks:     clientgo.Checks{Outcome: converged, OnWrite: generationsNeverGoBack},
	}
}

// correct is the operator as cmd/main.go runs it, without metrics or probes; fifo is it with a
// FIFO workqueue.
var (
	correct = operator.Options{MetricsBindAddress: "0"}
	fifo    = operator.Options{MetricsBindAddress: "0", FIFOQueue: true}
)

// envInt reads a sweep's size from the environment.
func envInt(t *testing.T, name string, def int) int {
	if v := os.Getenv(name); v != "" {
		if _, err := fmt.Sscan(v, &def); err != nil || def < 1 {
			t.Fatalf("%s=%q: want a positive number (%v)", name, v, err)
		}
	}
	return def
}

func seeds(t *testing.T, n int) []uint64 {
	s, err := world.Seeds(1, uint64(n))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
