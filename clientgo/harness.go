package clientgo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informersim/informersim/clientgo/internal/introspect"
	"github.com/informersim/informersim/fakeapi"
	fakerest "github.com/informersim/informersim/fakeapi/rest"
	"github.com/informersim/informersim/internal/goseed"
	"github.com/informersim/informersim/kube"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/timeline/record"
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

// newEnv is the Env of one life of a controller built by Constructor.New: its clientset sends over
// t, and its factories' informers are new informers of the world, named after their resource
// (with "~N" in a life after N restarts: a restarted process builds its caches afresh, and the
// world keeps the dead one's apart).
func newEnv(w *world.World, b *bubble, scheme *runtime.Scheme, restCfg *rest.Config, t *transport, life int) (*Env, error) {
	c := rest.CopyConfig(restCfg)
	c.Transport = t
	client, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, fmt.Errorf("clientgo: %v", err)
	}
	env := &Env{Client: client, RESTConfig: c, World: w, b: b, scheme: scheme,
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

// T is what Run needs of the test calling it: *testing.T, *testing.B, any testing.TB and
// Ginkgo's GinkgoT() have it. A run goes in a testing/synctest bubble, which only a *testing.T
// makes: any other T is given with the *testing.T whose bubble it uses (InSuite).
type T interface {
	Helper()
	Name() string
}

// InSuite is the T of a run from a Ginkgo spec (or a benchmark, or anything else that is not a
// *testing.T): spec names the run and reports its helper frames (GinkgoT()), suite is the
// *testing.T of the go test function the run belongs to (in a Ginkgo suite, the one given to
// RunSpecs), whose testing/synctest bubble the run goes in.
//
//	var suiteT *testing.T
//
//	func TestSuite(t *testing.T) { suiteT = t; RegisterFailHandler(Fail); RunSpecs(t, "controller") }
//
//	var _ = It("converges", func() {
//		rep, err := clientgo.Run(clientgo.InSuite(suiteT, GinkgoT()), cfg)
//		Expect(err).NotTo(HaveOccurred(), rep.Failure)
//	})
func InSuite(suite *testing.T, spec T) T { return inSuite{T: spec, suite: suite} }

type inSuite struct {
	T
	suite *testing.T
}

// bubbleT_of is the *testing.T whose bubble a run of t goes in.
func suiteOf(t T) (*testing.T, error) {
	if t == nil || reflect.ValueOf(t).Kind() == reflect.Pointer && reflect.ValueOf(t).IsNil() {
		return nil, errors.New("clientgo: Run: nil test (t)")
	}
	switch t := t.(type) {
	case *testing.T:
		return t, nil
	case inSuite:
		if t.suite == nil || t.T == nil {
			return nil, errors.New("clientgo: Run: InSuite with a nil suite or spec")
		}
		return t.suite, nil
	}
	return nil, fmt.Errorf("clientgo: Run: t is a %T, not a *testing.T: testing/synctest makes a bubble only for a *testing.T; give clientgo.InSuite(suiteT, t), suiteT the *testing.T of the go test function running this (in a Ginkgo suite, the one given to RunSpecs)", t)
}

// Run runs cfg.Controller inside a new world of cfg.Seed, in a testing/synctest bubble: setup,
// then a safety phase with faults (Phases.FaultsFor), then a liveness phase until the world is
// quiet and Checks.Outcome passes (Phases.Budget), then Phases.Settle more, then the final
// checks (world.World.CheckConverged: every informer's cache and the controller's outcome). The
// error names the seed and the line that replays it.
//
// t is a *testing.T, or another T with the *testing.T whose bubble the run goes in (InSuite); that
// *testing.T may not be inside a bubble already.
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
	bubbleT, err := suiteOf(t)
	if err != nil {
		return nil, err
	}
	t.Helper()
	if cfg, err = cfg.validate(); err != nil {
		return nil, err
	}
	if err := checkControllerRuntimeImport(); err != nil {
		return nil, err
	}

	var rep *Report
	// The process-wide fixes (globals.go) hold until the bubble is over: goroutines of the
	// controller still winding down after run returns (a worker whose call got errStopped) must
	// not meet client-go's defaults (an error handler's backoff sleep would block them for good).
	runsActive.Add(1)
	defer runsActive.Add(-1)
	wd := startWatchdog()
	defer close(wd.stop)
	if cfg.Repro == "" {
		// Run's failures and the detector's markers name it: from a go test function, the line
		// that re-runs that test or subtest alone (world.TestRepro); from a Ginkgo spec, the
		// suite's with the spec's focus (world.Repro).
		cfg.Repro = world.Repro(cfg.Seed)
		if tt, ok := t.(*testing.T); ok {
			cfg.Repro = world.TestRepro(tt.Name(), cfg.Seed)
		}
		if goseed.Active() {
			cfg.Repro = "env $(informersim determinism) " + cfg.Repro // the replay is the mode's
		}
	}
	var mode *seededRun
	if goseed.Active() {
		var restore func()
		mode, restore = seedRuntime(bubbleT, cfg.Seed)
		defer restore()
	}
	markDetectedRun(cfg, t.Name(), "starts")
	synctest.Test(bubbleT, func(*testing.T) { rep, err = run(cfg, wd, mode) })
	markDetectedRun(cfg, t.Name(), "ended")
	noteReplay(bubbleT, rep)
	if rep != nil && rep.Diagnostics.Webhooks != nil && rep.Diagnostics.Webhooks.Unfired > 0 {
		bubbleT.Logf("clientgo: seed %d: %d webhook fault(s) never fired, so tested nothing: %s", rep.Seed, rep.Diagnostics.Webhooks.Unfired, rep.Diagnostics.Webhooks)
	}
	return rep, err
}

func logError(ctx context.Context, err error, msg string, keysAndValues ...any) {
	klog.FromContext(ctx).Error(err, msg, keysAndValues...)
}

// run is Run inside the bubble: this goroutine is the driver. Its phases: the cluster stands
// (cluster), Setup prepares the world and the hazards are armed (prepare), the controller's
// first life starts (startLives), the driver runs the safety, liveness and settle phases
// (drive), the controller's lives end (lives.stop), and the report is read off the world.
func run(cfg Config, wd *watchdog, mode *seededRun) (*Report, error) {
	c, err := newCluster(cfg, wd, mode)
	if err != nil {
		return nil, err
	}
	// The controller's goroutines report their reconciles' outcomes to the run of their bubble,
	// until the run's lives are over (reconciles.go).
	defer registerReconciles(c.b.rec)()
	if err := c.prepare(cfg); err != nil {
		return nil, err
	}
	if !cfg.WatchList {
		listWatchRuns.Add(1)
		defer listWatchRuns.Add(-1)
	}
	l, err := startLives(c, cfg.Controller)
	if err != nil {
		return nil, err
	}
	defer l.releaseNames()
	err = drive(c.b, c.w, cfg, l.exited, c.b.streamsQuiet)
	if err == nil && !l.exited() {
		err = endReconciles(c.b, l.exited) // the hot loops, once the run passed its checks
	}
	// Whether a controller-runtime controller ran, read while its workers are still there.
	crRan := cfg.main() != nil && controllerRuntimeMayRun() && c.b.runs(crWorkerFrame)
	if lifeErr, early := l.stop(); lifeErr != nil && (err == nil || early) {
		// The controller's own error says more than "Run returned early".
		err = fmt.Errorf("%w (seed %d; %s)", lifeErr, cfg.Seed, cfg.Repro)
	}
	rep := c.report(cfg, err)
	rep.Reconciles = c.b.rec.report(crRan)
	return rep, err
}

// cluster is what a run's controller talks to: the world, the bubble coupling the controller to
// it, the REST front's transport and the *rest.Config the controller's clients are built from.
type cluster struct {
	w       *world.World
	b       *bubble
	tr      *transport
	restCfg *rest.Config
}

// newCluster stands the cluster up: the world, the coupling, the REST front, the controller's
// latencies, the outcome check, kube-apiserver's system namespaces and the CRDs.
func newCluster(cfg Config, wd *watchdog, mode *seededRun) (*cluster, error) {
	w, err := world.NewFromConfig(sim.Config{Seed: cfg.Seed, Repro: cfg.Repro}, cfg.Cluster.API, cfg.Cluster.World)
	if err != nil {
		return nil, err
	}
	b := newBubble(w)
	b.hz = newHazards(b)
	// The controller is a client of the world's apiserver the world does not run: the client
	// faults aimed at it (the hazards, a perturbation's restart, a replayed file's) are its.
	if err := w.AddClient(ControllerActor, b.hz.takeFault); err != nil {
		return nil, err
	}
	b.rec = newReconciles(w.Sim(), cfg.Checks.HotLoop)
	b.seeded = goseed.Active()
	b.mode = mode
	b.checks = checks{b: b, invariant: cfg.Checks.Invariant, onWrite: cfg.Checks.OnWrite, repro: fmt.Sprintf("seed %d; %s", cfg.Seed, cfg.Repro)}
	wd.repro.Store(&b.checks.repro)
	wd.b.Store(b)
	plugins := &kube.AdmissionPlugins{}
	opts := kube.RESTOptions()
	if len(cfg.Cluster.Webhooks) > 0 {
		if opts, err = kube.RESTOptionsWith(kube.Options{Plugins: plugins}); err != nil {
			return nil, err
		}
	}
	opts.Watch = openWatch
	handler, err := fakerest.NewHandler(w.Server(), opts)
	if err != nil {
		return nil, err
	}
	if len(cfg.Cluster.Webhooks) > 0 {
		if b.hooks, err = installWebhooks(b, plugins, cfg.Cluster.Webhooks); err != nil {
			return nil, err
		}
	}
	tr := &transport{b: b, host: strings.TrimPrefix(Host, "http://"), handler: handler, latency: requestLatency(w, cfg.Cluster.Latency)}
	c := &cluster{w: w, b: b, tr: tr, restCfg: &rest.Config{Host: Host, Transport: tr, QPS: -1}}
	if outcome := cfg.Checks.Outcome; outcome != nil {
		if err := w.AddCheck("controller", func() error { return outcome(w.Server()) }); err != nil {
			return nil, err
		}
	}
	// The namespaces kube-apiserver starts with, written at time zero like Setup's objects.
	if err := fakerest.EnsureNamespaces(context.Background(), w.Server(), fakerest.SystemNamespaces...); err != nil {
		return nil, fmt.Errorf("clientgo: %w", err)
	}
	if err := kube.InstallDefinitions(handler, cfg.Cluster.CRDs); err != nil {
		return nil, err
	}
	if err := w.Settle(); err != nil {
		return nil, err
	}
	return c, nil
}

// requestLatency is how long each response to the controller takes to arrive: latency's draw
// from the "controller" stream, or one in the world's [MinLatency, MaxLatency] when it is nil.
func requestLatency(w *world.World, latency func(*rand.Rand, *http.Request) time.Duration) func(*http.Request) time.Duration {
	if latency == nil {
		wcfg := w.Config()
		latency = func(r *rand.Rand, _ *http.Request) time.Duration {
			return wcfg.MinLatency + time.Duration(r.Int64N(int64(wcfg.MaxLatency-wcfg.MinLatency)+1))
		}
	}
	rnd := w.Sim().Rand(StreamController)
	return func(req *http.Request) time.Duration { return latency(rnd, req) }
}

// prepare runs Setup in the standing cluster and scripts the hazards' ops, from the controller's
// start.
func (c *cluster) prepare(cfg Config) error {
	if cfg.Setup != nil {
		if err := cfg.Setup(c.w); err != nil {
			return fmt.Errorf("clientgo: Setup: %w (seed %d; %s)", err, cfg.Seed, cfg.Repro)
		}
	}
	// Scripted where a Setup that replays them (a written-out run's) scripts them: at the end
	// of Setup, before the world settles, so that the replay is the same run.
	if cfg.Hazards.any() {
		if _, err := scriptHazards(c.w, cfg.Hazards, cfg.Phases.FaultsFor); err != nil {
			return fmt.Errorf("clientgo: Hazards: %w", err)
		}
	}
	if cfg.Setup != nil {
		c.w.Settle()
	}
	return nil
}

// report reads the run's Report off the world and the coupling; err is the run's failure.
func (c *cluster) report(cfg Config, err error) *Report {
	b, s := c.b, c.w.Sim()
	rep := &Report{Seed: cfg.Seed, Hash: s.Trace().Hash(), Steps: s.StepCount(), SimTime: s.Now(), Seeded: b.seeded,
		Hazards: b.hz.hazardCounts(), Trace: s.Trace().Narrate(), Diagnostics: Diagnostics{
			Calls: b.served, ConcurrentCalls: b.concurrentCalls, MaxConcurrent: b.maxConcurrent, Ties: b.ties,
			Streams: b.streams.sorted(), WatchTimeoutsRedrawn: b.timeoutsRedrawn, StaticRequests: int(b.staticRequests.Load()),
			UnorderedBatches: b.unorderedBatches, ResyncWakes: b.resyncWakes,
			ClientGoMutationDetector: introspect.MutationDetectionEnabled() && cfg.main() != nil, DetectorSnapshotAnswers: b.mode.snapshotAnswers(),
			MissingNamespaceWrites: missingNamespaceWrites(c.w)}}
	rep.Diagnostics.AddressKeyedRanges, rep.Diagnostics.AddressKeyedMaps = b.mode.addressKeyedRanges()
	if cp := c.w.ControlPlane(); cp != nil {
		rep.Diagnostics.ControlPlane = &ControlPlaneReport{GarbageCollector: cp.GC.Stats(), NamespaceController: cp.Namespace.Stats(), WorkloadStatus: cp.Workload.Stats(), JobController: cp.Jobs.Stats()}
	}
	rep.Diagnostics.Webhooks = b.hooks.report()
	if err != nil {
		rep.Failure = replayNote(rep) + record.Explain(c.w, err)
	}
	return rep
}

// drive runs the three phases of a run.
func drive(b *bubble, w *world.World, cfg Config, exited func() bool, streamsQuiet func() bool) error {
	s := w.Sim()
	repro := fmt.Sprintf("seed %d; %s", cfg.Seed, cfg.Repro)
	// Safety phase: faults on.
	if err := b.runUntil(exited, cfg.Phases.FaultsFor); err != nil && !errors.Is(err, errBudget) {
		return err
	}
	if exited() {
		return fmt.Errorf("clientgo: the controller's Run returned before the end of the run (%s)", repro)
	}
	s.SetFaultsEnabled(false)
	b.rec.faultsStopped()
	// Liveness phase: until the world is quiet and the controller's outcome is right.
	var last error
	converged := func() bool {
		if exited() {
			return true
		}
		if !w.Quiet() || !streamsQuiet() {
			return false
		}
		if cfg.Checks.Outcome != nil {
			last = cfg.Checks.Outcome(w.Server())
			return last == nil
		}
		return true
	}
	if err := b.runUntil(converged, s.Now()+cfg.Phases.Budget); err != nil {
		if errors.Is(err, errBudget) {
			if last == nil {
				last = errors.New("the world did not become quiet")
			}
			return fmt.Errorf("clientgo: the controller did not converge within %v after the faults stopped: %v (%s)", cfg.Phases.Budget, last, repro)
		}
		return err
	}
	if exited() {
		return fmt.Errorf("clientgo: the controller's Run returned before the end of the run (%s)", repro)
	}
	// Settle, then the final checks: every cache, every handler's view, the outcome.
	if err := b.runUntil(exited, s.Now()+cfg.Phases.Settle); err != nil && !errors.Is(err, errBudget) {
		return err
	}
	if err := b.runUntil(func() bool { return (w.Quiet() && streamsQuiet()) || exited() }, s.Now()+cfg.Phases.Budget); err != nil {
		if errors.Is(err, errBudget) {
			return fmt.Errorf("clientgo: the world did not become quiet again after settling (%s)", repro)
		}
		return err
	}
	return w.CheckConverged()
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
