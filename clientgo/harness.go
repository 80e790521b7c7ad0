package clientgo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/fakeapi"
	fakerest "github.com/informersim/informersim/fakeapi/rest"
	"github.com/informersim/informersim/internal/goseed"
	"github.com/informersim/informersim/kube"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/timeline/record"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/kubernetes"
	kubescheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"reflect"
)

// Controller is what a controller's constructor returns: the shape of kubernetes/sample-
// controller's Controller, whose Run starts workers and blocks until ctx is done.
type Controller interface {
	Run(ctx context.Context, workers int) error
}

// Config is one run of a client-go controller inside a world.
type Config struct {
	// Seed decides the run: the world's every choice and the order of the controller's calls.
	Seed uint64
	// Repro is the line that replays the run, printed with its failure; empty means
	// world.Repro(Seed), which replays a seeded test. A run a fuzz input decides (Fuzz) sets
	// Go's own replay line for the input (world.FuzzRepro).
	Repro string
	// World configures the world (latencies, bounds); API the apiserver (custom resources with
	// Resources, Replicas and Routing for stale replicas, compaction...). API.Clock and API.Rand
	// must be nil: the world sets them.
	//
	// Unlike a bare world, the harness stands for a cluster: kube-controller-manager's stand-ins
	// run (World.ControlPlane; nil means controlplane.Config's defaults, see NoControlPlane),
	// the apiserver starts with kube-apiserver's system namespaces (default, kube-node-lease,
	// kube-public, kube-system) and refuses a write into a namespace that does not exist, as
	// kube-apiserver does (API.RequireNamespaces is set): Setup creates any other namespace
	// its objects live in (fakerest.EnsureNamespaces(ctx, w.Server(), "team")).
	World world.Config
	API   fakeapi.Config
	// NoControlPlane runs the controller without kube-controller-manager's stand-ins (package
	// controlplane, docs/controlplane.md): no garbage collector (owner references never
	// cascade), no namespace controller (a deleted namespace stays Terminating), no workload
	// status (a Deployment's status never moves unless Setup's actors move it). It cannot be
	// set with World.ControlPlane.
	NoControlPlane bool
	// Scheme has the Go types of every resource the controller's informers watch: nil means
	// client-go's kubernetes/scheme.Scheme; for a custom resource, a scheme with both (see
	// NewScheme).
	Scheme *runtime.Scheme
	// CRDs are CustomResourceDefinitions installed before Setup runs, through the apiserver's
	// REST front as envtest's installer installs them (a kubebuilder project's
	// config/crd/bases, read with fakerest.ReadDefinitions): their resources are served, in every
	// served version, and objects written through the front are validated, defaulted and pruned
	// by their schemas, CEL rules included (docs/fakeapi.md §5.9). A definition the apiserver
	// refuses fails the run with its answer.
	CRDs []*unstructured.Unstructured

	// Setup prepares the world before the controller starts: initial objects (Apply), a
	// workload and faults (Script, Generate, After), replica lag. It runs inside the bubble.
	Setup func(w *world.World) error
	// New builds the controller, as its main would: typically
	//
	//	func(ctx context.Context, env *clientgo.Env) (clientgo.Controller, error) {
	//		return NewController(ctx, env.Client, fooClient, env.KubeInformers.Apps().V1().Deployments(), ...), nil
	//	}
	//
	// It runs on a goroutine of the controller; the harness then starts every factory of env
	// and calls Run(ctx, Workers).
	New func(ctx context.Context, env *Env) (Controller, error)
	// Main, instead of New, is the controller's main as written for a cluster, from the
	// *rest.Config on: it builds its clientsets, its informer factories (client-go's
	// informers.NewSharedInformerFactory, a generated one, dynamicinformer, metadatainformer, a
	// cache.NewSharedIndexInformer over a ListWatch), its event broadcaster, starts them and runs
	// until ctx is done. Every LIST and WATCH they make is served by the world at a step (see
	// stream.go): no adapter, nothing rewritten. Exactly one of New and Main is set.
	Main func(ctx context.Context, cfg *rest.Config) error
	// WatchList lets the controller's reflectors start with the streaming watch-list, as
	// client-go does by default. Off (the default), the harness turns client-go's
	// WatchListClient feature off while the run goes on, so they start with a LIST: client-go
	// hands a watch-list's initial objects to the handlers in a Go map's iteration order, which
	// no seed decides (see globals.go). On, Report.UnorderedBatches counts those starts.
	WatchList bool
	// Workers is Run's workers argument; zero means 2.
	Workers int

	// FaultsFor is the safety phase: the run goes on this long (simulated) with faults on, then
	// the harness turns faults off (sim.Sim.SetFaultsEnabled(false)). Zero means one minute.
	FaultsFor time.Duration
	// Budget bounds the liveness phase (simulated): the world must become quiet and Check pass
	// within it. Zero means ten minutes.
	Budget time.Duration
	// Settle is how long the run goes on once converged, before the final checks, so a late
	// write of the controller cannot go unnoticed. Zero means 30 seconds.
	Settle time.Duration
	// Check is the controller's outcome, read from the apiserver with Server().Snapshot (which
	// changes nothing): e.g. "every Foo owns a Deployment with its replicas and a status that
	// says so". It is added to the world's checks (world.World.AddCheck), after the built-in
	// oracles, under the name "controller".
	Check func(srv *fakeapi.Server) error

	// Invariant, if set, is checked after every step of the world while the controller runs
	// (safety and liveness phases alike), on the apiserver's state read with Snapshot: e.g.
	// "no Deployment is owned by two Foos". A violation ends the run at that step, with the
	// seed and replay line, and the trace up to it in Report.Failure.
	Invariant func(srv *fakeapi.Server) error
	// OnWrite, if set, is checked on every write the controller makes (POST, PUT, PATCH,
	// DELETE), inside the step that serves it: the request, the answer, the object before and
	// after. E.g. "status.observedGeneration never goes back", "never writes an annotation from
	// a stale read". A violation ends the run at that step, like Invariant's.
	OnWrite func(w Write) error

	// BubbleT is the *testing.T whose testing/synctest bubble the run goes in when Run's t is
	// not a *testing.T (Ginkgo's GinkgoT(), a *testing.B): the go test function's own (in a
	// Ginkgo suite, the one given to RunSpecs). Unused when t is a *testing.T.
	BubbleT *testing.T

	// Hazards are what the harness does to the controller during the safety phase: crash-
	// restarts, stale reads, changes hidden in a relist, conflicts, slow calls, each counted in
	// Report.Hazards (see Hazards).
	Hazards Hazards

	// Latency is how long the response to each request of the controller takes to arrive once
	// the apiserver has served it (a slow API call makes a slow worker); r is the
	// "controller" stream. Nil means a draw in [World.MinLatency, World.MaxLatency].
	Latency func(r *rand.Rand, req *http.Request) time.Duration
}

// Env is what the controller's constructor gets: clients and informer factories whose requests
// and caches are the world's. The controller code sees only client-go types. Each life of the
// controller has its own: a crash-restart (Hazards.Restarts) stops the informers of the dead
// life's Env in the world and calls New again with a new Env, whose informers start empty.
type Env struct {
	// Client is client-go's typed clientset; its requests are served by the world's apiserver
	// (through the REST front) at the simulated instant they are made.
	Client kubernetes.Interface
	// RESTConfig is the configuration behind Client, for other clientsets (a generated one of a
	// custom resource: versioned.NewForConfig(env.RESTConfig)).
	RESTConfig *rest.Config
	// KubeInformers is client-go's informers.SharedInformerFactory (all namespaces, no resync):
	// KubeInformers.Apps().V1().Deployments().Lister() reads an informer of the world. A
	// controller whose main builds its factory with a resync (sample-controller's: 30s) should
	// get one from NewKubeInformerFactory with FactoryOptions.ResyncPeriod instead: without it, a
	// change its informer never saw (made and undone while it relisted) is never healed
	// (examples/samplecontroller's TestMissedDeploymentNeedsResync).
	KubeInformers informers.SharedInformerFactory
	// World is the world, for a test's own use (Setup already had it); a controller must not
	// touch it.
	World *world.World

	b         *bubble
	scheme    *runtime.Scheme
	resources []fakeapi.Resource
	names     map[string]int
	factories []*Informers
	// life is the controller's life this Env belongs to (0, then one more at each restart);
	// tr its transport, marked when that life crashed.
	life int
	tr   *transport
}

// newEnv is the Env of one life of a controller built by Config.New: its clientset sends over
// t, and its factories' informers are new informers of the world, named after their resource
// (with "~N" in a life after N restarts: a restarted process builds its caches afresh, and the
// world keeps the dead one's apart).
func newEnv(w *world.World, b *bubble, cfg Config, restCfg *rest.Config, t *transport, life int) (*Env, error) {
	c := rest.CopyConfig(restCfg)
	c.Transport = t
	client, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, fmt.Errorf("clientgo: %v", err)
	}
	env := &Env{Client: client, RESTConfig: c, World: w, b: b, scheme: cfg.Scheme,
		resources: served(w.Server().Config()), names: map[string]int{}, life: life, tr: t}
	env.KubeInformers = env.NewKubeInformerFactory(FactoryOptions{})
	return env, nil
}

// crashed reports whether the Env's life crashed (a restart hazard): its informers refuse to
// start, its factories to build new ones, and its clientset's requests fail.
func (e *Env) crashed() bool { return e != nil && e.tr != nil && e.tr.crashed.Load() }

// drop stops, in the world, every informer the Env's factories built (in the order they were
// built): a crashed process's caches die with it. Their handlers are removed with what they had
// buffered, so none runs again; their watches are closed. It runs on the driver, between steps.
func (e *Env) drop() {
	for _, f := range e.factories {
		f.drop()
	}
}

// NewKubeInformerFactory is informers.NewSharedInformerFactoryWithOptions over the world.
func (e *Env) NewKubeInformerFactory(o FactoryOptions) informers.SharedInformerFactory {
	return kubeFactory{Factory[internalinterfaces.NewInformerFunc]{e.NewInformers(o)}}
}

// NewInformers returns the core of a new factory (see Factory for a generated one):
//
//	fooFactory := myFactory{clientgo.Factory[internalinterfaces.NewInformerFunc]{env.NewInformers(clientgo.FactoryOptions{})}}
//
// The harness starts it after the constructor returns, like KubeInformers.
func (e *Env) NewInformers(o FactoryOptions) *Informers {
	f := &Informers{b: e.b, opts: o, env: e, informers: map[reflect.Type]*sharedIndexInformer{}, started: map[reflect.Type]bool{}}
	e.factories = append(e.factories, f)
	return f
}

func (e *Env) resourceFor(gvk schema.GroupVersionKind) (fakeapi.Resource, bool) {
	for _, r := range e.resources {
		if r.GVR.GroupVersion() == gvk.GroupVersion() && r.Kind == gvk.Kind {
			return r, true
		}
	}
	return fakeapi.Resource{}, false
}

func (e *Env) resource(gvr schema.GroupVersionResource) (fakeapi.Resource, bool) {
	for _, r := range e.resources {
		if r.GVR == gvr {
			return r, true
		}
	}
	return fakeapi.Resource{}, false
}

// informerName is the world name of a new informer: its resource, then its namespace, with a
// counter when two factories watch the same thing, and the life after a restart.
func (e *Env) informerName(gvr schema.GroupVersionResource, ns string) string {
	name := informerNameFor(gvr, ns)
	e.names[name]++
	if n := e.names[name]; n > 1 {
		name = fmt.Sprintf("%s#%d", name, n)
	}
	if e.life > 0 {
		name = fmt.Sprintf("%s~%d", name, e.life)
	}
	return name
}

// NewScheme returns a scheme with client-go's types and those added by each of add (a generated
// package's AddToScheme).
func NewScheme(add ...func(*runtime.Scheme) error) (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := kubescheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("clientgo: %v", err)
	}
	for _, f := range add {
		if f == nil {
			return nil, errors.New("clientgo: NewScheme: nil AddToScheme")
		}
		if err := f(s); err != nil {
			return nil, fmt.Errorf("clientgo: %v", err)
		}
	}
	return s, nil
}

// Report is what a run did.
type Report struct {
	Seed uint64
	// Hash is the SHA-256 of the trace's canonical text: the same seed gives the same hash.
	Hash string
	// Steps and SimTime are the sim's at the end.
	Steps   int64
	SimTime time.Duration
	// Calls is the number of calls of the controller served (requests, informer starts,
	// registrations); Requests counts the requests among them by verb.
	Calls int
	// ConcurrentCalls is the number of instants at which two or more goroutines of the
	// controller were blocked in calls at once (MaxConcurrent at most): their order was drawn
	// from the seed after sorting them by content. Ties counts identical calls among them, whose
	// callers the order cannot tell apart: a controller whose goroutines differ in more than
	// their work (a per-worker state) could then behave differently across runs of one seed.
	ConcurrentCalls, MaxConcurrent, Ties int
	// Streams counts the watches the world served to the controller's own informers (those it
	// built from the rest.Config: client-go's, generated, dynamic, metadata), by resource and
	// form, with the events delivered on them; WatchesServed() sums them up.
	Streams []StreamKind
	// WatchTimeoutsRedrawn counts the watches whose timeoutSeconds, drawn by client-go's
	// reflector from the process-wide math/rand, the world drew again from the seed.
	WatchTimeoutsRedrawn int
	// StaticRequests counts the discovery, version, OpenAPI and health requests, answered at
	// once with the front's fixed documents rather than at a step (static.go): not traced.
	StaticRequests int
	// UnorderedBatches counts what client-go handed the controller's handlers in an order no
	// seed decides, a Go map's: the watch-list starts that gave a reflector two objects or more
	// (see Config.WatchList), and the relists that found two objects or more of its cache gone
	// (their tombstones). A run with none replays from its seed as far as the world can tell;
	// one with some may differ between runs of the seed.
	UnorderedBatches int
	// ResyncWakes counts the instants at which the controller, woken by a timer of its own
	// (nothing of the world woke it), called the world a whole number of milliseconds after the
	// response to the last LIST of one of its informers holding two objects or more: the instants
	// of a reflector's resync (its timer starts with the LIST and fires every resync period). A
	// resync hands every object of the informer's cache to its handlers in the order of a Go
	// map, which no seed decides, and the world cannot see inside client-go's informers: it
	// counts the wakes that can be one (a workqueue's retry falls on such an instant only by
	// chance: the responses it follows arrive after latencies drawn to the nanosecond). A resync
	// whose workers were all busy starts no call at its instant and is not counted.
	ResyncWakes int
	// Hazards counts, for each hazard configured (Config.Hazards), how often it was armed and
	// how often it fired: a hazard armed but never fired is there with Fired 0.
	Hazards []HazardCount
	// ControlPlane is what kube-controller-manager's stand-ins did in the run (each component's
	// counters: the collector's deletes, the workload status writes...), nil when none ran
	// (Config.NoControlPlane).
	ControlPlane *ControlPlaneReport
	// ClientGoMutationDetector says whether client-go's cache mutation detector was on for the
	// informers the controller built itself under Config.Main (client-go reads
	// KUBE_CACHE_MUTATION_DETECTOR=true once, at the process's start). Their objects are
	// client-go's, which the harness's read-only check cannot see (detector.go): off, a
	// controller that writes into a lister's object is caught only by what the change leads to;
	// on, client-go panics the process at the first changed object, and the harness has written
	// the run's seed and replay line to standard error as it started.
	ClientGoMutationDetector bool
	// Seeded says whether the run was made in the deterministic mode (a test binary built with
	// the overlay `informersim determinism` prints): the Go runtime's map order, select choices
	// and the scheduling of the controller's goroutines were then the seed's, so the seed replays
	// the run, and UnorderedBatches and ResyncWakes count nothing. Outside it, a run with
	// MapOrdered zero replays as far as the world can tell.
	Seeded bool
	// unsure is set when a run in the deterministic mode crash-restarted a controller-runtime
	// manager: a residue of such runs differ between runs of their seed (docs/determinism.md,
	// "What it does not decide"), which nothing counts yet.
	unsure bool
	// MissingNamespaceWrites counts the world's own writes (Setup's Apply, Script and Generate
	// ops) that the apiserver refused because their namespace does not exist (kube-apiserver's
	// 404, see Config.World). Each is narrated in the trace, but a workload written into a
	// namespace nobody created does nothing, and a Check can pass on the empty world it leaves:
	// Setup creates the namespaces its ops write in (fakerest.EnsureNamespaces).
	MissingNamespaceWrites int
	// Trace is the run's narrated trace (sim.Narrate).
	Trace string
	// Failure is Run's error told for a person (world.World.Explain), "" when the run passed:
	// the seed and replay command once, and for an oracle's violation the history of the object
	// concerned (every event about it, from the apiserver to each handler) and the trace before
	// it; otherwise the end of the trace. Print it rather than the one-line error:
	// t.Fatal(rep.Failure). Its line after the replay command names the run's HTML timeline
	// (package timeline/record, written by record.Explain: a lane per component, the
	// violating event marked), in $INFORMERSIM_ARTIFACTS or the system's temporary directory.
	Failure string
}

// ControlPlaneReport is what the control plane's components did in a run.
type ControlPlaneReport struct {
	GarbageCollector, NamespaceController, WorkloadStatus, JobController controlplane.Stats
}

// String summarises it: "collector 2 deletes of 3 writes, namespace controller 0 deletes of 0
// writes, workload status 5 writes", with the refused writes when there were some, and the job
// controller's writes when it made some.
func (c *ControlPlaneReport) String() string {
	part := func(name string, s controlplane.Stats, deletes bool) string {
		out := fmt.Sprintf("%s %d writes", name, s.Writes)
		if deletes {
			out = fmt.Sprintf("%s %d deletes of %d writes", name, s.Deletes, s.Writes)
		}
		if s.Errors > 0 {
			out += fmt.Sprintf(" (%d refused)", s.Errors)
		}
		return out
	}
	s := part("collector", c.GarbageCollector, true) + ", " + part("namespace controller", c.NamespaceController, true) +
		", " + part("workload status", c.WorkloadStatus, false)
	if c.JobController.Scans > 0 {
		s += ", " + part("job controller", c.JobController, false)
	}
	return s
}

// String summarises the report on one line.
func (r *Report) String() string {
	s := fmt.Sprintf("seed %d: %d steps, sim time %s, %d controller calls, %d instants with concurrent calls (max %d, %d ties), trace %s",
		r.Seed, r.Steps, sim.FormatSimTime(r.SimTime), r.Calls, r.ConcurrentCalls, r.MaxConcurrent, r.Ties, r.Hash[:16])
	if len(r.Streams) > 0 {
		s += fmt.Sprintf(", %d watches served over %d kinds, %d unordered batches, %d resync wakes", r.WatchesServed(), len(r.Streams), r.UnorderedBatches, r.ResyncWakes)
		if r.MapOrdered() > 0 {
			s += " (objects handed over in a Go map's order: a rerun of this seed may differ)"
		}
	}
	if len(r.Hazards) > 0 {
		s += fmt.Sprintf(", hazards fired/armed %v", r.Hazards)
	}
	if r.ControlPlane == nil {
		s += ", no control plane"
	} else {
		s += ", control plane: " + r.ControlPlane.String()
	}
	if len(r.Streams) > 0 {
		if r.ClientGoMutationDetector {
			s += ", client-go's cache mutation detector on"
		} else {
			s += ", objects of client-go's informers not checked read-only (KUBE_CACHE_MUTATION_DETECTOR off)"
		}
	}
	if r.MissingNamespaceWrites > 0 {
		s += fmt.Sprintf(", %d world writes refused: their namespace does not exist", r.MissingNamespaceWrites)
	}
	return s
}

// T is what Run needs of the test calling it: *testing.T, *testing.B, any testing.TB and
// Ginkgo's GinkgoT() have it.
type T interface {
	Helper()
	Name() string
}

// Run runs the controller cfg.New builds inside a new world of cfg.Seed, in a testing/synctest
// bubble: setup, then a safety phase with faults (FaultsFor), then a liveness phase until the
// world is quiet and Check passes (Budget), then Settle more, then the final checks
// (world.World.CheckConverged: every informer's cache and the controller's outcome). The error
// names the seed and the line that replays it.
//
// testing/synctest makes a bubble only for a *testing.T: t itself when it is one, otherwise
// Config.BubbleT, the *testing.T of the go test function the run belongs to (in a Ginkgo suite,
// the one given to RunSpecs; Ginkgo's GinkgoT() is not a *testing.T). Neither may be inside a
// bubble already.
//
// While it runs, utilruntime.ErrorHandlers logs without its 1ms backoff: that backoff keeps the
// wall-clock time of the last error in a global, which a bubble's clock (back at 2000-01-01)
// would turn into a sleep of decades.
//
// The Report is never nil: a run that could not start (bad input, a failing Setup) has one with
// the seed and Failure set to the error, so t.Fatal(err, rep.Failure) is always safe.
func Run(t T, cfg Config) (*Report, error) {
	rep, err := runTest(t, cfg)
	if rep == nil && err != nil {
		rep = &Report{Seed: cfg.Seed, Failure: err.Error()}
	}
	return rep, err
}

// runTest is Run, which may return a nil Report with its error.
func runTest(t T, cfg Config) (*Report, error) {
	if t == nil || reflect.ValueOf(t).Kind() == reflect.Pointer && reflect.ValueOf(t).IsNil() {
		return nil, errors.New("clientgo: Run: nil test (t)")
	}
	t.Helper()
	bubbleT, ok := t.(*testing.T)
	if !ok {
		if cfg.BubbleT == nil {
			return nil, fmt.Errorf("clientgo: Run: t is a %T, not a *testing.T, and Config.BubbleT is nil: testing/synctest makes a bubble only for a *testing.T; set Config.BubbleT to the *testing.T of the go test function running this (in a Ginkgo suite, the one given to RunSpecs)", t)
		}
		bubbleT = cfg.BubbleT
	}
	if (cfg.New == nil) == (cfg.Main == nil) {
		return nil, errors.New("clientgo: Run: set exactly one of Config.New and Config.Main")
	}
	if cfg.API.Clock != nil || cfg.API.Rand != nil {
		return nil, errors.New("clientgo: Run: Config.API.Clock and Rand must be nil: the world sets them")
	}
	if err := checkControllerRuntimeImport(); err != nil {
		return nil, err
	}
	if err := cfg.Hazards.validate(cfg); err != nil {
		return nil, err
	}
	if cfg.NoControlPlane && cfg.World.ControlPlane != nil {
		return nil, errors.New("clientgo: Run: Config.NoControlPlane is set with a World.ControlPlane to run: set one")
	}
	if cfg.Workers < 0 || cfg.FaultsFor < 0 || cfg.Budget < 0 || cfg.Settle < 0 {
		return nil, fmt.Errorf("clientgo: Run: negative Workers (%d), FaultsFor, Budget or Settle", cfg.Workers)
	}
	if cfg.Workers == 0 {
		cfg.Workers = 2
	}
	if cfg.FaultsFor == 0 {
		cfg.FaultsFor = time.Minute
	}
	if cfg.Budget == 0 {
		cfg.Budget = 10 * time.Minute
	}
	if cfg.Settle == 0 {
		cfg.Settle = 30 * time.Second
	}
	if cfg.Scheme == nil {
		cfg.Scheme = kubescheme.Scheme
	}
	if !cfg.NoControlPlane && cfg.World.ControlPlane == nil {
		cfg.World.ControlPlane = &controlplane.Config{}
	}
	cfg.API.RequireNamespaces = true
	cfg.World.RecordOps = true // for Report.MissingNamespaceWrites

	var rep *Report
	var err error
	// The process-wide fixes (globals.go) hold until the bubble is over: goroutines of the
	// controller still winding down after run returns (a worker whose call got errStopped) must
	// not meet client-go's defaults (an error handler's backoff sleep would block them for good).
	runsActive.Add(1)
	defer runsActive.Add(-1)
	wd := startWatchdog()
	defer close(wd.stop)
	if cfg.Repro == "" {
		cfg.Repro = world.Repro(cfg.Seed) // run's failures and the detector's markers name it
		if goseed.Active() {
			cfg.Repro = "env $(informersim determinism) " + cfg.Repro // the replay is the mode's
		}
	}
	var reports *goseed.Reports
	if goseed.Active() {
		var restore func()
		reports, restore = seedRuntime(bubbleT, cfg.Seed)
		defer restore()
	}
	markDetectedRun(cfg, t.Name(), "starts")
	synctest.Test(bubbleT, func(*testing.T) { rep, err = run(cfg, wd, reports) })
	markDetectedRun(cfg, t.Name(), "ended")
	noteReplay(bubbleT, rep)
	return rep, err
}

func logError(ctx context.Context, err error, msg string, keysAndValues ...any) {
	klog.FromContext(ctx).Error(err, msg, keysAndValues...)
}

// run is Run inside the bubble: this goroutine is the driver.
func run(cfg Config, wd *watchdog, reports *goseed.Reports) (*Report, error) {
	w, err := world.NewFromConfig(sim.Config{Seed: cfg.Seed, Repro: cfg.Repro}, cfg.API, cfg.World)
	if err != nil {
		return nil, err
	}
	b := newBubble(w)
	b.seeded = goseed.Active()
	b.reports = reports
	b.checks = checks{invariant: cfg.Invariant, onWrite: cfg.OnWrite, repro: fmt.Sprintf("seed %d; %s", cfg.Seed, cfg.Repro)}
	wd.repro.Store(&b.checks.repro)
	wd.b.Store(b)
	tr := &transport{b: b, host: strings.TrimPrefix(Host, "http://")}
	opts := kube.RESTOptions()
	opts.Watch = openWatch
	handler, err := fakerest.NewHandler(w.Server(), opts)
	if err != nil {
		return nil, err
	}
	tr.handler = handler
	wcfg := w.Config()
	latency := cfg.Latency
	if latency == nil {
		latency = func(r *rand.Rand, _ *http.Request) time.Duration {
			return wcfg.MinLatency + time.Duration(r.Int64N(int64(wcfg.MaxLatency-wcfg.MinLatency)+1))
		}
	}
	rnd := w.Sim().Rand(StreamController)
	tr.latency = func(req *http.Request) time.Duration { return latency(rnd, req) }
	restCfg := &rest.Config{
		Host:      Host,
		Transport: tr,
		QPS:       -1,
	}
	if cfg.Check != nil {
		if err := w.AddCheck("controller", func() error { return cfg.Check(w.Server()) }); err != nil {
			return nil, err
		}
	}
	// The namespaces kube-apiserver starts with, written at time zero like Setup's objects.
	if err := fakerest.EnsureNamespaces(context.Background(), w.Server(), fakerest.SystemNamespaces...); err != nil {
		return nil, fmt.Errorf("clientgo: %w", err)
	}
	if err := kube.InstallDefinitions(handler, cfg.CRDs); err != nil {
		return nil, err
	}
	if err := w.Settle(); err != nil {
		return nil, err
	}
	if cfg.Setup != nil {
		if err := cfg.Setup(w); err != nil {
			return nil, fmt.Errorf("clientgo: Setup: %w (seed %d; %s)", err, cfg.Seed, cfg.Repro)
		}
		w.Settle()
	}
	if cfg.Hazards.any() {
		if err := b.armHazards(cfg.Hazards, cfg.FaultsFor); err != nil {
			return nil, fmt.Errorf("clientgo: Hazards: %w", err)
		}
	}

	if !cfg.WatchList {
		listWatchRuns.Add(1)
		defer listWatchRuns.Add(-1)
	}
	// The controller's life: one incarnation, or one after each crash-restart (Hazards).
	var lives []*incarnation
	start := func(t *transport) (*incarnation, error) {
		ctx, cancel := context.WithCancel(context.Background())
		inc := &incarnation{cancel: cancel, done: make(chan struct{}), tr: t}
		if cfg.New != nil {
			env, err := newEnv(w, b, cfg, restCfg, t, len(lives))
			if err != nil {
				cancel()
				return nil, err
			}
			inc.env = env
			if b.hz != nil {
				b.hz.env = env
			}
		}
		lives = append(lives, inc)
		b.controllerWoken()
		go func() {
			defer close(inc.done)
			if cfg.Main != nil {
				c := rest.CopyConfig(restCfg)
				c.Transport = t
				if err := cfg.Main(ctx, c); err != nil && ctx.Err() == nil {
					inc.err = fmt.Errorf("clientgo: the controller's main: %w", err)
					if hint := nameCollisionHint(); hint != "" && nameCollision(err) {
						inc.err = fmt.Errorf("%w (%s)", inc.err, hint)
					}
				}
				return
			}
			env := inc.env
			c, err := cfg.New(ctx, env)
			if err != nil {
				if ctx.Err() == nil {
					inc.err = fmt.Errorf("clientgo: the controller's constructor: %w", err)
				}
				return
			}
			if c == nil {
				inc.err = errors.New("clientgo: the controller's constructor returned nil")
				return
			}
			for _, f := range env.factories {
				f.Start(ctx.Done())
			}
			if err := c.Run(ctx, cfg.Workers); err != nil && ctx.Err() == nil {
				inc.err = fmt.Errorf("clientgo: the controller's Run: %w", err)
			}
		}()
		return inc, nil
	}
	// controller-runtime's controller names (controllernames.go): those taken during the run
	// are given back when it ends, and when a crashed controller's main has returned.
	names := controllerNames()
	defer releaseControllerNames(names)
	cur, err := start(tr)
	if err != nil {
		return nil, err
	}
	var crashed []*incarnation // crashed incarnations whose goroutines have not all returned yet
	b.onTurn = func() {
		if b.hz == nil || (len(crashed) == 0 && !b.hz.restartDue) {
			return
		}
		// What follows depends on how far the controller's goroutines got: let them all block
		// first, as a turn does before its step, so a replay crashes and restarts the
		// controller at the same point of its run.
		b.quiesce()
		if len(crashed) > 0 {
			if !crashed[0].gone() {
				if since := b.s.Now() - crashed[0].crashedAt; since >= restartGrace {
					panic(stuckRestartReport(b.driverID, crashed[0], since, b.checks.repro))
				}
				return
			}
			// The crashed controller returned: start it afresh.
			crashed = crashed[1:]
			releaseControllerNames(names)
			t := &transport{b: b, host: tr.host, handler: tr.handler, latency: tr.latency}
			next, err := start(t)
			if err != nil {
				b.fail(fmt.Errorf("clientgo: restarting the controller: %w", err))
				return
			}
			cur = next
			b.fire(HazardRestart, sim.F("life", strconv.Itoa(len(lives)-1)))
			return
		}
		b.hz.restartDue = false
		cur.tr.crashed.Store(true)
		cur.crashedAt = b.s.Now()
		cur.cancel()
		b.controllerWoken()
		b.endStreamsOf(cur.tr)
		if cur.env != nil {
			// The process's informers die with it: stopped in the world, their handlers
			// removed with what they had buffered, their watches closed.
			cur.env.drop()
		}
		// A new process has empty caches: the world's view of them starts afresh.
		b.views, b.listedAt = nil, nil
		b.s.Emit(ControllerActor, "crash", sim.F("hazard", HazardRestart))
		crashed = append(crashed, cur)
	}
	exited := func() bool { return len(crashed) == 0 && cur.exited() }
	defer func() { cur.cancel() }()

	err = drive(b, w, cfg, exited, b.streamsQuiet)
	stoppedEarly := exited()
	b.onTurn = nil
	cur.cancel()
	for _, inc := range crashed {
		inc.cancel()
	}
	b.shutdown(append(crashed, cur))
	for _, inc := range lives {
		if inc.env != nil {
			for _, f := range inc.env.factories {
				f.Shutdown()
			}
		}
	}
	if cur.err != nil && (err == nil || stoppedEarly) {
		// The controller's own error says more than "Run returned early".
		err = fmt.Errorf("%w (seed %d; %s)", cur.err, cfg.Seed, cfg.Repro)
	}
	s := w.Sim()
	rep := &Report{Seed: cfg.Seed, Hash: s.Trace().Hash(), Steps: s.StepCount(), SimTime: s.Now(),
		Calls: b.served, ConcurrentCalls: b.concurrentCalls, MaxConcurrent: b.maxConcurrent, Ties: b.ties,
		Streams: b.streams.sorted(), WatchTimeoutsRedrawn: b.timeoutsRedrawn, StaticRequests: int(b.staticRequests.Load()), UnorderedBatches: b.unorderedBatches,
		ResyncWakes: b.resyncWakes, ClientGoMutationDetector: clientGoMutationDetector && cfg.Main != nil, Seeded: b.seeded,
		Hazards: b.hazardCounts(), Trace: s.Trace().Narrate()}
	if cp := w.ControlPlane(); cp != nil {
		rep.ControlPlane = &ControlPlaneReport{GarbageCollector: cp.GC.Stats(), NamespaceController: cp.Namespace.Stats(), WorkloadStatus: cp.Workload.Stats(), JobController: cp.Jobs.Stats()}
	}
	rep.MissingNamespaceWrites = missingNamespaceWrites(w)
	rep.unsure = b.seeded && cfg.Main != nil && controllerRuntimeMayRun() && rep.fired(HazardRestart) > 0
	if err != nil {
		rep.Failure = replayNote(rep) + record.Explain(w, err)
	}
	return rep, err
}

// MapOrdered is the number of times client-go handed the controller's handlers several objects
// in a Go map's order (UnorderedBatches plus ResyncWakes): zero means the run replays from its
// seed as far as the world can tell.
func (r *Report) MapOrdered() int { return r.UnorderedBatches + r.ResyncWakes }

// drive runs the three phases of a run.
func drive(b *bubble, w *world.World, cfg Config, exited func() bool, streamsQuiet func() bool) error {
	s := w.Sim()
	repro := fmt.Sprintf("seed %d; %s", cfg.Seed, cfg.Repro)
	// Safety phase: faults on.
	if err := b.runUntil(exited, cfg.FaultsFor); err != nil && !errors.Is(err, errBudget) {
		return err
	}
	if exited() {
		return fmt.Errorf("clientgo: the controller's Run returned before the end of the run (%s)", repro)
	}
	s.SetFaultsEnabled(false)
	// Liveness phase: until the world is quiet and the controller's outcome is right.
	var last error
	converged := func() bool {
		if exited() {
			return true
		}
		if !w.Quiet() || !streamsQuiet() {
			return false
		}
		if cfg.Check != nil {
			last = cfg.Check(w.Server())
			return last == nil
		}
		return true
	}
	if err := b.runUntil(converged, s.Now()+cfg.Budget); err != nil {
		if errors.Is(err, errBudget) {
			if last == nil {
				last = errors.New("the world did not become quiet")
			}
			return fmt.Errorf("clientgo: the controller did not converge within %v after the faults stopped: %v (%s)", cfg.Budget, last, repro)
		}
		return err
	}
	if exited() {
		return fmt.Errorf("clientgo: the controller's Run returned before the end of the run (%s)", repro)
	}
	// Settle, then the final checks: every cache, every handler's view, the outcome.
	if err := b.runUntil(exited, s.Now()+cfg.Settle); err != nil && !errors.Is(err, errBudget) {
		return err
	}
	if err := b.runUntil(func() bool { return (w.Quiet() && streamsQuiet()) || exited() }, s.Now()+cfg.Budget); err != nil {
		if errors.Is(err, errBudget) {
			return fmt.Errorf("clientgo: the world did not become quiet again after settling (%s)", repro)
		}
		return err
	}
	return w.CheckConverged()
}

// incarnation is one life of the controller: from its main's (or constructor's) call to its
// return.
type incarnation struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when it returned
	err    error         // its error, read once done is closed
	tr     *transport
	// env is the life's Env (Config.New), nil under Config.Main.
	env *Env
	// crashedAt is when a restart hazard crashed it.
	crashedAt time.Duration
}

// gone reports whether a crashed life is over: its main (or constructor and Run) returned, and
// so did the goroutines its Env's factories started (Start runs each informer in one).
func (inc *incarnation) gone() bool {
	if !inc.exited() {
		return false
	}
	if inc.env != nil {
		for _, f := range inc.env.factories {
			if f.running.Load() > 0 {
				return false
			}
		}
	}
	return true
}

func (inc *incarnation) exited() bool {
	select {
	case <-inc.done:
		return true
	default:
		return false
	}
}

// missingNamespaceWrites counts the world's ops whose write was refused because the namespace
// it names does not exist: the answer is that namespace's own 404 (fakeapi.Config's
// RequireNamespaces), which names it.
func missingNamespaceWrites(w *world.World) int {
	ops, err := w.Ops()
	if err != nil {
		return 0 // not recorded: Run always records them
	}
	n := 0
	for _, op := range ops {
		ns := op.Op.Namespace
		if ns == "" {
			ns = world.DefaultNamespace
		}
		if op.Err != "" && strings.Contains(op.Err, fmt.Sprintf("namespaces %q not found", ns)) {
			n++
		}
	}
	return n
}
