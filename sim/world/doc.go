// Package world is a simulated Kubernetes cluster for testing informers and the controllers
// built on them: a fake apiserver (package fakeapi), any number of informers (package informer),
// the network between them, the user's own actors, and oracles that say whether every cache
// and handler got it right, all on one deterministic engine (package sim). One seed replays a
// run exactly, byte for byte.
//
// # Contract
//
//   - Deterministic: a run is a function of the seed, the Config and what the caller does to the
//     world. The same calls give the same trace, its hash included, in any process and at any
//     GOMAXPROCS (TestPinnedHashes and the cross-process tests check it). The world starts no
//     goroutine, reads no wall clock and never lets map order reach its output.
//   - Everything is narrated: every write to the apiserver (whoever made it), every fault (an
//     Op), every request, response and watch event an informer sees, every pop, cache write and
//     handler call, as events of the trace whose actors, kinds and fields package
//     sim/world/narration declares.
//   - Correctness is checked while it runs: per-object order, cache before notify and read-only
//     objects stop the run at their first violation with a *Violation (the oracle, the event,
//     the trace before it, the seed and the one command that replays the run); CheckConverged
//     is eventual consistency. Package sim/world/oracle catalogues every oracle and checks the
//     others.
//   - Bad input is an error, never a panic: every exported entry point checks what it is given
//     (an Op, a Config, a name, a duration) and says what is wrong. A write the apiserver
//     refuses (404, 409, 422) is returned and narrated, and does not fail the run.
//
// # Usage
//
//	w, _ := world.New(seed, world.Config{})                   // apiserver on the sim's clock
//	_ = w.Apply(world.Op{Kind: world.OpCreate, Name: "a",      // narrated "apiserver: ADDED ..."
//		Labels: map[string]string{"app": "web"}})
//	inf, _ := w.AddInformer("inf1", world.InformerSpec{Namespace: "default", LabelSelector: "app=web"})
//	h, _ := w.AddHandler(inf, "ctrl", myHandler, world.HandlerOptions{})
//	_ = w.AddActor(myWorker)                                  // a controller's worker
//	_ = w.AddCheck("derived state", func() error { ... })     // reported like an oracle
//	_ = inf.Start()
//	gen, _ := w.Generate(world.GenConfig{FaultOps: true, FaultPoints: true})
//	_ = w.Sim().RunUntil(gen.Finished, time.Hour)             // safety phase
//	w.Sim().SetFaultsEnabled(false)
//	err := w.RunUntilConverged(time.Hour)                     // liveness phase, then the checks
//	fmt.Print(sim.Narrate(w.Sim().Trace().Events()), h.Deliveries().Strings())
//
// A seed sweep takes its seeds from Seeds(first, n); a failing run's error ends with a repro
// line (Repro) such as `INFORMERSIM_SEED=42 go test -run '^TestX$' ./pkg`, which runs that
// seed alone.
//
// # What a user can put in a world
//
// Informers: AddInformer builds one (resource, namespace, label and field selectors, transform,
// the informer's own options); NewFactory returns a SharedInformerFactory whose informers are
// the world's; a controller that builds its own informers asks NewSource for a ListerWatcher,
// clock and random stream on the world, builds the informer, and hands it to HostInformer. Either way the world drives it step by step, in classic list+watch
// or, with InformerSpec.WatchList, the watch-list start-up. Converging with an informer that
// was never started is an error.
//
// Handlers: every registration of an informer is the world's, however it was made (AddHandler,
// the informer's own AddEventHandler, a factory): the world discovers registrations from the
// informer's listeners, gives each an actor that delivers its notifications one at a time, a
// DeliveryLog that narrates and checks each delivery, and counts its buffer in Quiet.
// HandlerOptions.CallDuration makes each call take simulated time (a slow handler).
//
// Work of the user's own: AddActor (a worker that offers "work" while its queue has items),
// After (a timer: a retry, a mid-run action), AddDeadlines (a component's own deadlines, such as
// a step-driven workqueue's NextDeadline and FireDue), AddQuietCondition (Quiet waits for it)
// and AddCheck (a named convergence check run by CheckConverged). Actors with an action to
// offer, armed timers and pending deadlines count against Quiet, so RunUntilConverged does not
// return while a controller is still busy.
//
// Ops: an Op is data. It creates, updates, patches or deletes any served resource (cluster-
// scoped ones too) with full content (labels, annotations, finalizers, generateName, data or
// spec), sleeps (in a Script), or injects one of the apiserver's faults: close the watches,
// compact, fail the next request, burn revisions, cut slow consumers off, send bookmarks, lag,
// freeze, resume or reinitialise a replica, route the next request to one; or a client fault,
// aimed at a client the world does not run but its host registered (AddClient: clientgo's
// harness registers its controller): crash-restart it, answer its next update 409, slow its
// next call, send its next cached LIST to a lagging replica, hide a change from its informers
// (clientfaults.go). Sieve's perturbations are ops too, defined once (Perturbation, perturb.go).
// Its String form parses back with Parse. Apply runs one now, Script schedules a list, Generate draws a seeded
// random workload (of every kind with GenConfig.FaultOpKinds) and records the ops it issued. Every write to the apiserver is
// narrated, whoever made it: an op, a test, a handler or an actor through the server's client
// API.
//
// # Oracles
//
// Each DeliveryLog checks per-object order and cache-before-notify on every delivery; a violation
// panics with a *Violation naming the oracle (OraclePerObjectOrder, OracleCacheBeforeNotify),
// the violating event and the trace before it, which ends the run with a *sim.RunError that
// unwraps to it, as a panicking handler does. CheckConverged is eventual consistency
// (OracleEventualConsistency): it compares every started informer's cache, and every handler's
// replayed view, with the apiserver's state for its resource, namespace and selectors, after the
// informer's transform (or with its Equal), then runs the user's checks. It reads the apiserver
// through fakeapi.Lending.Snapshot, which routes nothing, draws nothing, consumes no injected
// failure and records nothing, so a run with checks is the same run as one without. The
// world's informers take the apiserver's own objects, lent read-only instead of copied
// (fakeapi.md §10.5), as client-go's informer shares one object between its cache and its
// handlers; the apiserver notices a change to one when a write acts on it, and the world ends the
// run at the end of that step with a *Violation of OracleReadOnlyObjects (CheckConverged checks
// every lent object first); with Config.CheckReadOnlyEachDelivery the objects a handler was
// given are checked at the end of its delivery step, so the run stops at the handler that
// changed one. An informer with a transform gets copies. The other
// named oracles (resync alignment, late join, tombstones, the apiserver's watch guarantees) live
// in package world/oracle, which reads the trace and the apiserver's record; for them a
// registration's narration carries its resync periods (requested, resync, check).
//
// # Random streams
//
// Latencies draw from "network", the workload from "workload", every fault decision (which
// fault point fires, which request fails and how) from "faults", the apiserver from
// "apiserver", each informer from "jitter/<name>", the scheduler from "scheduling". Turning
// faults off leaves the workload's ops unchanged.
//
// # The actors
//
// Actors of an informer named inf1: inf1/reflector ("request": the Reflector's LIST or WATCH,
// served by the apiserver at once; timer "tick" at the informer's next deadline for backoffs and
// resync ticks), inf1/watch ("pull": the next event or end of the open stream), inf1/net
// (deliveries), inf1/queue ("process": one turn of the process loop) and one actor per
// registration ("deliver"; timer "done" ends a CallDuration). Each actor offers its action only
// while its component has work. The reflector actor asks Reflector.HasRequest, which changes
// nothing, and takes the request with NextRequest inside its "request" action, so the request
// is marked in flight (and a WATCH's timeout drawn) in the step that sends it. The apiserver's
// own deadlines (bookmarks, watch deadlines, compaction, lagging caches) fire as timer
// "apiserver advance". At the end of every step the world re-arms these timers and drops any
// watch stream the Reflector has left; after driving the apiserver or an informer directly from
// outside a step, call Settle.
//
// # The network
//
// A response reaches the Reflector one latency after the request (latencies in
// [Config.MinLatency, MaxLatency]). A watch stream is a TCP connection: event i arrives at
// max(pull time + latency_i, arrival of event i-1), its end after its last event, and at most
// Config.MaxInFlightEvents are on the wire (flow control: beyond it the apiserver's buffer fills
// and may cut the watch as a slow consumer). When the Reflector leaves a stream (an Error event,
// a resync error, Stop) the world stops the apiserver's watcher and drops what is still on the
// wire.
//
// # Quiescence
//
// With a watch open the apiserver always has a deadline within a minute (the next bookmark),
// and a resync period keeps a tick pending, so sim.Sim.RunUntilQuiescent does not return; run
// a world with RunUntilConverged (until Quiet) or for a duration with sim.Sim.RunFor. A world
// whose informers are stopped quiesces as usual.
package world
