// Package clientgo connects client-go (v0.37.2) and controller-runtime to informersim's fake
// apiserver. It lives in a nested module so that the main module stays free of client-go.
//
// # Contract
//
// Run runs an unmodified controller (its constructor on an Env, its own main, or a
// controller-runtime manager's main: Config.Controller) inside a world of package sim/world, and its seed replays it:
//
//   - In the deterministic mode (a test binary built with the overlay `informersim determinism`
//     prints: env $(informersim determinism) go test ./...; docs/determinism.md), every run
//     replays from its seed alone, at any GOMAXPROCS and whatever ran before it in the process:
//     the Go runtime's map order, select choices and the scheduling of the controller's
//     goroutines are the seed's. Report.Seeded is true and nothing is counted as unordered; a
//     controller that changes an object a client-go informer handed out fails the run with the
//     read-only-objects violation (client-go's mutation detector, on for the run unless
//     INFORMERSIM_MUTATION_DETECTOR=off). Runs take turns in the process. Report.ReplayGuaranteed
//     says the seed replays the run (docs/determinism.md); the one order the mode leaves to the
//     process, a range over a map of more than eight entries keyed by addresses, is counted
//     (Diagnostics.AddressKeyedRanges) and makes it false.
//   - Outside it, a run replays as far as the world can tell when Report.MapOrdered is zero:
//     what client-go hands over in a Go map's order (a resync, a relist's tombstones, a
//     watch-list start) and controller-runtime's priority queue's hand-overs are counted, with a
//     trace line. A failing run's Report.Failure opens with whether its replay line is
//     guaranteed; a go test function whose runs counted such orders says so once in its log.
//
// # Usage
//
// Every Kubernetes client that takes a *rest.Config works against a *fakeapi.Server through the
// REST front (package fakeapi/rest), in process, with no port:
//
//	srv, _ := fakeapi.New(fakeapi.Config{Resources: []fakeapi.Resource{
//		clientgo.CustomResource(widgetGVK, "widgets", true, true),
//	}})
//	cfg, _ := clientgo.RESTConfig(srv)
//	cs := kubernetes.NewForConfigOrDie(cfg)            // typed clientset
//	c, _ := ctrlclient.New(cfg, ctrlclient.Options{})  // controller-runtime
//
// Faults injected into srv (closed watches, 410s, compaction, replica lag, 429s) reach those
// clients as they would reach them from kube-apiserver. [Dynamic] is the direct, HTTP-free
// alternative for the dynamic client: it makes *fakeapi.Server a dynamic.Interface.
//
// # Implementation notes
//
// RESTConfig disables client-side rate limiting (QPS -1): the simulated apiserver has no
// priority-and-fairness, and tests and benchmarks should not sleep in a token bucket. It leaves
// the content configuration at client-go's default, as a kubeconfig-loaded one is: the front has
// kube.RESTOptions (protobuf, strategic merge patch, server-side apply), so typed clients of
// built-in kinds speak protobuf as they do against a cluster, and custom resources JSON. Forcing
// JSON would test a path no controller takes in production; it costs the protobuf conversions
// (a LIST of 10,000 pods takes about 15% more CPU than in JSON). The in-process transport is a
// real http.RoundTripper, so requests go through client-go's whole stack: URL building,
// parameter encoding, protobuf or JSON decoding, watch stream decoding, retries on 429. The
// system namespaces of the server given are not created (its runs would change):
// rest.EnsureNamespaces does it (Run does, for its world).
//
// # Running a client-go controller inside the world
//
// Run runs an unmodified client-go controller (the shape of kubernetes/sample-controller:
// NewController(ctx, kubeclient, ..., informers...) and Run(ctx, workers)) inside a world of
// package sim/world, so a seed replays its run, faults included:
//
//	rep, err := clientgo.Run(t, clientgo.Config{
//		Seed:    seed,
//		Cluster: clientgo.Cluster{API: fakeapi.Config{Resources: ...}},
//		Setup:   func(w *world.World) error { _, err := w.Script(...); return err }, // workload, faults
//		Controller: clientgo.Constructor{Scheme: scheme, New: func(ctx context.Context, env *clientgo.Env) (clientgo.Controller, error) {
//			return NewController(ctx, env.Client, env.KubeInformers.Apps().V1().Deployments()), nil
//		}},
//		Checks: clientgo.Checks{Outcome: func(srv *fakeapi.Server) error { ... }}, // the controller's outcome
//	})
//
// What the controller gets (Env) is client-go's: a typed clientset whose transport hands each
// request to the world's apiserver (through the REST front, fakeapi/rest) at the simulated
// instant it is made, so the write is narrated and traced like any other; and
// informers.SharedInformerFactory whose InformerFor hands out adapters that are
// cache.SharedIndexInformers over informers of the world: the cache holds typed objects (the
// unstructured objects converted through Constructor.Scheme by the informer's transform), listers read
// it through a cache.Indexer, and handlers get client-go's cache.DeletedFinalStateUnknown. A
// generated factory of a custom resource gets the same with Factory[F] (F its NewInformerFunc).
//
// The controller's goroutines (workers, workqueue, WaitForCacheSync, the factories' Run) run in a
// testing/synctest bubble, whose clock starts at the world's epoch, with the world driven by one
// goroutine of the same bubble. The world takes a step only when every other goroutine is durably
// blocked (synctest.Wait), and the controller's timers fire at their simulated instant: when the
// world has nothing to do now, the driver sleeps until the world's next deadline, and a
// controller timer due earlier fires first; if it leads to a request, the request wakes the
// driver at that instant. Requests made at the same instant by several goroutines (two workers
// woken by one step) are sorted by content and ordered by a draw of the "controller" stream, and
// the Report counts those instants (ConcurrentCalls) and identical requests among them (Ties).
// What goroutines do between two calls, without touching the world, is Go's scheduler's to
// order; the coupling makes it invisible to the world as long as it does not depend on which
// goroutine runs first. The same-seed hash equality of examples/samplecontroller measures that.
//
// # The cluster around the controller
//
// A controller never runs alone, so a run stands for a cluster, not a bare apiserver:
// kube-controller-manager's stand-ins (package controlplane, docs/controlplane.md) run as actors
// of the world, so owner references cascade through the garbage collector, a deleted namespace
// is emptied and removed, and Deployments, ReplicaSets and StatefulSets report their replicas
// (Cluster.ControlPlane configures them or turns them off), and
// Report.Diagnostics.ControlPlane counts what they did. The apiserver starts with kube-apiserver's system namespaces and refuses
// a write into a namespace that does not exist with kube-apiserver's 404 (fakeapi.Config's
// RequireNamespaces), so Setup creates the other namespaces it writes in
// (Report.Diagnostics.MissingNamespaceWrites counts the world's writes refused for want of one).
//
// # Checks while the controller runs
//
// Checks.Invariant is checked after every step of the world, Checks.OnWrite on every write the
// controller makes (the request, the answer, the object at the apiserver before and after, read
// with Snapshot), inside the step that serves it. A violation ends the run at that step: the
// error names the step or the write, the seed and the replay line, and Report.Failure has the
// trace up to it. A bug the outcome check cannot see (a controller mirroring its own mirrors,
// TestChecksWhileRunning) is caught this way at its first wrong write.
//
// # Reconcile errors and hot loops
//
// Report.Reconciles counts, per controller and key, the reconciles that failed or asked to be
// requeued: a controller-runtime controller's outcomes as it logs them (through the root
// logger clientgo/controllerruntime installs), a client-go workqueue controller's errors as it
// hands them to utilruntime.HandleErrorWithContext with the object's key. A key whose last
// Checks.HotLoop.Failures outcomes (10 by default) were failures in a row when the run
// converged, after the faults stopped, and whose next retry fails again fails the run with the
// hot-loop oracle's violation (the key, the count, the last error, the seed and the replay
// line), unless Checks.HotLoop.Allow (reconciles.go).
//
// # Read-only objects
//
// The typed objects the Env's informers hand out, to handlers and through listers, are the
// harness's conversions of the apiserver's objects: it keeps a deep copy of each and compares
// them after every step at which the controller's code can have run (reflect.DeepEqual the first
// time, then a snapshot of the object's memory that answers as DeepEqual would), so a
// controller that changes a lister's object instead of a DeepCopy fails the run with the
// read-only-objects oracle's violation, naming the object and the informer, with the seed and
// the replay line (readonly.go). The informers a controller builds
// itself under a Main (client-go's, generated, controller-runtime's cache) decode the REST
// front's bytes into objects the harness holds no reference to, so it cannot compare them;
// client-go's own cache mutation detector can (KUBE_CACHE_MUTATION_DETECTOR=true in the test
// process's environment): it runs on the bubble's clock, leaves the trace unchanged, and panics
// the process at the first changed object, after the harness wrote the run's seed and replay
// line to standard error (detector.go). Report.Diagnostics.ClientGoMutationDetector says whether it was on,
// and Report.String says when those objects went unchecked.
//
// # Hazards
//
// Config.Hazards are what a controller must survive, done by the harness at instants drawn from
// the seed in the safety phase: crash-restarts of the controller (its context cancelled, its
// connections refused from then on, its watches ended, under Constructor.New its Env's informers
// stopped in the world; once its goroutines have returned, main is called again with a new
// *rest.Config, or New with a new Env and new informers, with empty caches, while the world went
// on), LISTs served by a replica lagging behind (the informer starts from the past: the LISTs
// of the informers a main builds, of the Env's informers, of the controller's clientsets),
// deletes and updates hidden inside a relist (watches closed, the write, compaction), updates answered 409 without being served,
// and slow responses. Each is a client fault of the world (world.OpCrashRestart to
// OpHiddenChange) aimed at the client "controller", which the harness registers with
// world.World.AddClient: the harness scripts it as an op at its instant, so the trace narrates
// it, the world records it among its ops, a fuzzed run's failing ops hold it and the shrink may
// drop it; replayed, those ops give the same run. Each is armed at its instant and fires at
// its next occasion; the Report counts both (Report.Hazards), so a hazard that never fired is
// seen, not assumed. Perturb's campaigns take their perturbations from world.Perturbation, the
// one definition the world-hosted campaigns (scenarios.Perturb) use too.
//
// # Admission webhooks
//
// With Cluster.Webhooks (the webhooks' servers as http.Handlers, by the host of their URL), the
// apiserver runs kube-apiserver's admission webhook plugins on every write of the controller,
// calling the handlers in process inside the step that serves the write; each call's delay is
// drawn from the seed, and the webhook faults (slow-webhook past timeoutSeconds: a timeout;
// refuse-webhook; fail-webhook code=500) are ops of the world's table, answered by the plugins
// as kube-apiserver answers them under the webhook's failurePolicy. A write's validating
// webhooks, called in parallel, are let go in the order their answers arrive, so the first
// refusal is the seed's. Report.Diagnostics.Webhooks lists every webhook fault with whether it fired
// (webhooks.go; docs/serve.md "Webhooks in the world").
//
// # A controller's own main
//
// Under a Main instead of a Constructor, the harness hands the controller's main a *rest.Config and
// nothing else: its clientsets, client-go's informers.NewSharedInformerFactory, generated
// factories, dynamicinformer, metadatainformer, a bare cache.NewSharedIndexInformer over a
// ListWatch, record.EventBroadcaster all run unchanged. Their LISTs are calls like any request;
// their WATCHes are served by the REST front on a goroutine per stream, and the driver hands
// each stream its events one per step (stream.go), so every fault of the apiserver reaches them
// (closes, 410s, compaction, a lagging replica, failed requests) at the step the seed chose.
// Report.Diagnostics.Streams counts the watches served, by resource and form. What client-go decides from
// process-wide state is fixed while runs go on (globals.go): backoff jitter, the watch timeout
// its reflector draws (drawn again from the seed), and the watch-list start-up, whose initial
// objects reach the handlers in a Go map's order (off unless Config.WatchList; then
// Report.Diagnostics.UnorderedBatches counts them). A request to another host than the world's fails the run.
//
// # A controller-runtime manager
//
// A manager built by the operator's main from the *rest.Config (ctrl.NewManager(cfg,
// ctrl.Options{...}), its controllers with For and Owns, its client, cache and event recorder,
// mgr.Start(ctx)) runs under a Main unchanged: its cache's informers are client-go's, served
// as above; its priority queue, runnables and timers run on the bubble's clock. The test files
// that run one import package clientgo/controllerruntime for its effect (this package does not
// link controller-runtime, so that a module testing client-go controllers only does not require
// it):
//
//	import _ "github.com/informersim/informersim/clientgo/controllerruntime"
//
// What the harness and that package add for a manager (static.go, watchdog.go,
// controllerruntime/):
//
//   - Discovery, version, OpenAPI and health requests are answered at once on the caller's
//     goroutine from the front's fixed documents (Report.Diagnostics.StaticRequests), not at a step:
//     controller-runtime discovers while holding a sync.Mutex, and a goroutine waiting for a
//     mutex is not durably blocked, so a step could never come.
//   - controller-runtime's process-wide controller names are given back when a run ends, so the
//     next run of the process can build its controllers again (within a run a duplicate name is
//     refused, as in a cluster; runs in parallel of managers with the same controller names
//     collide, and the error says so). A binary that links controller-runtime without
//     clientgo/controllerruntime is refused by Run at once, naming the import (read from the
//     binary's function table, linked.go; where that table cannot be read, the name error and
//     the watchdog name it instead).
//   - The metrics server's default address is "0" (off) in a process that imports
//     clientgo/controllerruntime (without it, ":8080": the watchdog names the listener).
//     Health probes, pprof and a metrics address the main sets itself are real listeners: leave
//     them off (the watchdog names them). Leader election (off by default) is not tried.
//   - What the world cannot order is counted in Report.Diagnostics.UnorderedBatches (priorityqueue.go): a
//     relist reaching controller-runtime's priority queue, whose goroutines race over which of
//     its changed and unchanged objects an idle worker gets first, and a manager's first LIST
//     of two objects or more, which client-go hands the handlers the manager adds once the
//     informer synced in a Go map's order (every restart). A manager with
//     config.Controller{UsePriorityQueue: ptr.To(false)} and nothing in the world at its start
//     replays from its seed (examples/operator's TestDeterminism measures both).
//   - A watchdog ends a run stuck on something the bubble cannot see (a real listener, a mutex
//     held across a call, a channel from outside the run): after two minutes of wall-clock time with
//     no progress it panics, naming each such goroutine, its stack and the seed; a goroutine
//     accepting connections on a real address (a health-probe server on ":8081") it names after
//     a few seconds, with the addresses to set to "0".
//
// Limits: a handler's resync period, selectors and namespaces of the Env factories follow the
// world's informers; client-go's own informers hand some batches to the handlers in a Go map's
// order, which no seed decides: the tombstones of a relist that finds several objects gone
// (counted in Report.Diagnostics.UnorderedBatches, with a trace line) and a resync of several objects
// (counted in Report.Diagnostics.ResyncWakes: the world cannot see a resync, but it starts at a whole number
// of milliseconds after the informer's LIST, which the world served); a controller that writes
// in that order can differ between runs of one seed (sample-controller wired by its main: 4 of
// 240 seeds at GOMAXPROCS 2, each counted); the record
// package's retry of a failed event write sleeps a random time.
package clientgo
