package clientgo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim/world"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kubescheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// Config is one run of a client-go controller inside a world, grouped by concern: the cluster it
// runs against, the controller, the run's phases, what is checked, and what the harness does to
// the controller (its hazards). Every field is independent of the others: each zero value has a
// meaning, and no field constrains another.
type Config struct {
	// Seed decides the run: the world's every choice and the order of the controller's calls.
	Seed uint64
	// Repro is the line that replays the run, printed with its failure; empty means
	// world.TestRepro of Run's *testing.T and Seed, which re-runs that test or subtest alone at
	// the seed (world.Repro(Seed) for another T, such as a Ginkgo spec's). A run a fuzz input decides (Fuzz) sets
	// Go's own replay line for the input (world.FuzzRepro).
	Repro string
	// Cluster is what the controller runs against: the world, the apiserver, the control plane's
	// stand-ins, the custom resources, the network's latency.
	Cluster Cluster
	// Setup prepares the world before the controller starts: initial objects (Apply), a
	// workload and faults (Script, Generate, After), replica lag. It runs inside the bubble, once
	// the cluster stands (its system namespaces and CRDs installed).
	Setup func(w *world.World) error
	// Controller is the controller under test: its main as written for a cluster (Main) or its
	// constructor (Constructor). Required.
	Controller Program
	// WatchList lets the controller's reflectors start with the streaming watch-list, as
	// client-go does by default. Off (the default), the harness turns client-go's
	// WatchListClient feature off while the run goes on, so they start with a LIST: client-go
	// hands a watch-list's initial objects to the handlers in a Go map's iteration order, which
	// no seed decides (see globals.go). On, Diagnostics.UnorderedBatches counts those starts.
	WatchList bool
	// Phases are how long the safety, liveness and settle phases last (simulated).
	Phases Phases
	// Checks are what the run checks besides the world's built-in oracles.
	Checks Checks
	// Hazards are what the harness does to the controller during the safety phase: crash-
	// restarts, stale reads, changes hidden in a relist, conflicts, slow calls, each a client
	// fault of the world scripted as an op and counted in Report.Hazards (see Hazards).
	Hazards Hazards
}

// Cluster is the cluster a run's controller talks to.
//
// Unlike a bare world, the harness's stands for a cluster: kube-controller-manager's stand-ins
// run (ControlPlane), the apiserver starts with kube-apiserver's system namespaces (default,
// kube-node-lease, kube-public, kube-system) and refuses a write into a namespace that does not
// exist, as kube-apiserver does (API.RequireNamespaces is set): Setup creates any other namespace
// its objects live in (fakerest.EnsureNamespaces(ctx, w.Server(), "team")).
type Cluster struct {
	// World configures the world (latencies, bounds). Its ControlPlane must be nil: the
	// harness's ControlPlane decides the control plane.
	World world.Config
	// API configures the apiserver (custom resources with Resources, Replicas and Routing for
	// stale replicas, compaction...). API.Clock and API.Rand must be nil: the world sets them.
	// API.ServiceCIDR "" means fakeapi.DefaultServiceCIDR: Services get cluster IPs from
	// 10.0.0.0/24, as envtest's kube-apiserver gives them.
	API fakeapi.Config
	// ControlPlane says which of kube-controller-manager's stand-ins run (package controlplane,
	// docs/controlplane.md): the zero value runs them with controlplane.Config's defaults.
	ControlPlane ControlPlane
	// CRDs are CustomResourceDefinitions installed before Setup runs, through the apiserver's
	// REST front as envtest's installer installs them (a kubebuilder project's
	// config/crd/bases, read with fakerest.ReadDefinitions): their resources are served, in every
	// served version, and objects written through the front are validated, defaulted and pruned
	// by their schemas, CEL rules included (docs/fakeapi.md §5.9). A definition the apiserver
	// refuses fails the run with its answer.
	CRDs []*unstructured.Unstructured
	// Latency is how long the response to each request of the controller takes to arrive once
	// the apiserver has served it (a slow API call makes a slow worker); r is the
	// "controller" stream. Nil means a draw in [World.MinLatency, World.MaxLatency].
	Latency func(r *rand.Rand, req *http.Request) time.Duration
	// Webhooks are the servers of the admission webhooks the cluster calls, each an
	// http.Handler (controller-runtime's webhook.Server's WebhookMux(), or any handler), by the
	// host of the URL the configurations name: "webhook.test:9443" for clientConfig.url
	// https://webhook.test:9443/validate, "NAME.NAMESPACE.svc:443" for a service (port 443
	// unless it says one). With any set, the apiserver runs kube-apiserver's admission webhook
	// plugins on every write the controller makes, honouring the MutatingWebhookConfigurations
	// and ValidatingWebhookConfigurations Setup or the controller wrote, and the world takes the
	// webhook fault ops (slow-webhook, refuse-webhook, fail-webhook), drawn by a Generator or
	// applied by Setup; a call to a host without a handler is a refused connection. The
	// handlers are called in process, inside the step that serves the write (webhooks.go says
	// why and how); a validating webhook's handler must not call the apiserver (the run fails
	// saying so: the write that called it is still being served). The world's own writes (Setup's ops) are
	// not admitted.
	Webhooks map[string]http.Handler
}

// ControlPlane is the control plane of a run's cluster.
type ControlPlane struct {
	// Off runs the controller without kube-controller-manager's stand-ins: no garbage collector
	// (owner references never cascade), no namespace controller (a deleted namespace stays
	// Terminating), no workload status (a Deployment's status never moves unless Setup's actors
	// move it). Config must then be zero.
	Off bool
	// Config configures the stand-ins (the workload status's latencies, stale reads); its Rand
	// must be nil (the world draws from its controlplane stream).
	Config controlplane.Config
}

// Phases are how long a run's phases last, in simulated time.
type Phases struct {
	// FaultsFor is the safety phase: the run goes on this long with faults on, then the harness
	// turns faults off (sim.Sim.SetFaultsEnabled(false)). Zero means one minute.
	FaultsFor time.Duration
	// Budget bounds the liveness phase: the world must become quiet and Checks.Outcome pass
	// within it. Zero means ten minutes.
	Budget time.Duration
	// Settle is how long the run goes on once converged, before the final checks, so a late
	// write of the controller cannot go unnoticed. Zero means 30 seconds.
	Settle time.Duration
}

// Checks are a run's own checks, besides the world's oracles. Each is optional.
type Checks struct {
	// Outcome is the controller's outcome, read from the apiserver with Server().Snapshot (which
	// changes nothing): e.g. "every Foo owns a Deployment with its replicas and a status that
	// says so". It is added to the world's checks (world.World.AddCheck), after the built-in
	// oracles, under the name "controller", and the liveness phase waits for it to pass.
	Outcome func(srv *fakeapi.Server) error
	// Invariant is checked after every step of the world while the controller runs (safety
	// and liveness phases alike), on the apiserver's state read with Snapshot: e.g. "no
	// Deployment is owned by two Foos". A violation ends the run at that step, with the seed and
	// replay line, and the trace up to it in Report.Failure.
	Invariant func(srv *fakeapi.Server) error
	// OnWrite is checked on every write the controller makes (POST, PUT, PATCH, DELETE), inside
	// the step that serves it: the request, the answer, the object before and after. E.g.
	// "status.observedGeneration never goes back", "never writes an annotation from a stale
	// read". A violation ends the run at that step, like Invariant's.
	OnWrite func(w Write) error
	// HotLoop configures the hot-loop check (reconciles.go): a key of the controller whose last
	// HotLoop.Failures outcomes (10 by default) were failures in a row when the run converged,
	// after the faults stopped, and whose next retry fails again, fails the run unless
	// HotLoop.Allow is set. Report.Reconciles counts every key's errors and requeues either way.
	HotLoop HotLoop
}

// Program is how the harness starts the controller, once at the start and again after each
// crash-restart (Hazards.Restarts): Main, the controller's main from the *rest.Config on, or
// Constructor, a constructor given an Env whose controller's Run the harness calls. Only those
// two types are Programs.
type Program interface {
	program() string
}

// Main is the controller's main as written for a cluster, from the *rest.Config on: it builds its
// clientsets, its informer factories (client-go's informers.NewSharedInformerFactory, a
// generated one, dynamicinformer, metadatainformer, a cache.NewSharedIndexInformer over a
// ListWatch), its event broadcaster, starts them and runs until ctx is done. Every LIST and WATCH
// they make is served by the world at a step (see stream.go): no adapter, nothing rewritten.
//
//	Controller: clientgo.Main(func(ctx context.Context, cfg *rest.Config) error { ... }),
type Main func(ctx context.Context, cfg *rest.Config) error

func (Main) program() string { return "main" }

// Constructor builds the controller on an Env, as its main would, and the harness runs it: it
// calls New on a goroutine of the controller, starts every factory of the Env and calls
// Run(ctx, Workers).
//
//	Controller: clientgo.Constructor{New: func(ctx context.Context, env *clientgo.Env) (clientgo.Controller, error) {
//		return NewController(ctx, env.Client, fooClient, env.KubeInformers.Apps().V1().Deployments(), ...), nil
//	}},
type Constructor struct {
	// New builds the controller. Required.
	New func(ctx context.Context, env *Env) (Controller, error)
	// Workers is Run's workers argument; zero means 2.
	Workers int
	// Scheme has the Go types of every resource the Env's informers watch: nil means
	// client-go's kubernetes/scheme.Scheme; for a custom resource, a scheme with both (see
	// NewScheme).
	Scheme *runtime.Scheme
}

func (Constructor) program() string { return "constructor" }

// Controller is what a controller's constructor returns: the shape of kubernetes/sample-
// controller's Controller, whose Run starts workers and blocks until ctx is done.
type Controller interface {
	Run(ctx context.Context, workers int) error
}

// validate checks cfg and returns it with its defaults filled in.
func (cfg Config) validate() (Config, error) {
	switch p := cfg.Controller.(type) {
	case nil:
		return cfg, errors.New("clientgo: Run: Config.Controller is nil: set clientgo.Main(main) or clientgo.Constructor{New: ...}")
	case Main:
		if p == nil {
			return cfg, errors.New("clientgo: Run: Config.Controller is a nil Main")
		}
	case Constructor:
		switch {
		case p.New == nil:
			return cfg, errors.New("clientgo: Run: Config.Controller is a Constructor with a nil New")
		case p.Workers < 0:
			return cfg, fmt.Errorf("clientgo: Run: Constructor.Workers is negative (%d)", p.Workers)
		}
		if p.Workers == 0 {
			p.Workers = 2
		}
		if p.Scheme == nil {
			p.Scheme = kubescheme.Scheme
		}
		cfg.Controller = p
	}
	c := &cfg.Cluster
	switch {
	case c.API.Clock != nil || c.API.Rand != nil:
		return cfg, errors.New("clientgo: Run: Config.Cluster.API.Clock and Rand must be nil: the world sets them")
	case c.World.ControlPlane != nil:
		return cfg, errors.New("clientgo: Run: Config.Cluster.World.ControlPlane must be nil: Cluster.ControlPlane configures the control plane")
	case c.ControlPlane.Off && !reflect.ValueOf(c.ControlPlane.Config).IsZero():
		return cfg, errors.New("clientgo: Run: Cluster.ControlPlane is Off with a Config: the stand-ins it configures do not run")
	}
	for _, host := range slices.Sorted(maps.Keys(c.Webhooks)) {
		if h := c.Webhooks[host]; host == "" || strings.Contains(host, "/") || h == nil {
			return cfg, fmt.Errorf("clientgo: Run: Cluster.Webhooks[%q]: want a host[:port] and a handler", host)
		}
	}
	if err := cfg.Hazards.validate(); err != nil {
		return cfg, err
	}
	if cfg.Checks.HotLoop.Failures < 0 {
		return cfg, fmt.Errorf("clientgo: Run: negative Checks.HotLoop.Failures (%d)", cfg.Checks.HotLoop.Failures)
	}
	p := &cfg.Phases
	if p.FaultsFor < 0 || p.Budget < 0 || p.Settle < 0 {
		return cfg, fmt.Errorf("clientgo: Run: negative phase: %+v", *p)
	}
	if p.FaultsFor == 0 {
		p.FaultsFor = time.Minute
	}
	if p.Budget == 0 {
		p.Budget = 10 * time.Minute
	}
	if p.Settle == 0 {
		p.Settle = 30 * time.Second
	}
	if !c.ControlPlane.Off {
		cp := c.ControlPlane.Config
		c.World.ControlPlane = &cp
	}
	*c = cfg.Hazards.cluster(*c) // a stale read comes from a lagging replica (the last)
	c.API.RequireNamespaces = true
	if c.API.ServiceCIDR == "" {
		c.API.ServiceCIDR = fakeapi.DefaultServiceCIDR // Services get cluster IPs, as in a cluster
	}
	c.World.RecordOps = true // for Diagnostics.MissingNamespaceWrites
	return cfg, nil
}

// main is the run's Main, nil under a Constructor.
func (cfg Config) main() Main {
	m, _ := cfg.Controller.(Main)
	return m
}
