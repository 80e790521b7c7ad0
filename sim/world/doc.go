// Package world is a simulated Kubernetes cluster for testing informers and the controllers
// built on them: a fake apiserver (package fakeapi), any number of informers (package informer),
// the network between them, the user's own actors, and oracles that say whether every cache
// and handler got it right, all on one deterministic engine (package sim). One seed replays a
// run exactly, byte for byte.
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
// freeze, resume or reinitialise a replica, route the next request to one. Its String form
// parses back with Parse. Apply runs one now, Script schedules a list, Generate draws a seeded
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
// through fakeapi.Server.SnapshotLent, which routes nothing, draws nothing, consumes no injected
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
//
// # Implementation notes
//
// Discovery: the informer's step observer reports each registration (StepRegistered,
// StepJoined) from inside the registration call, with the informer's locks held, so the world
// only records it there (name, actor, DeliveryLog) and looks its handle up in Stepper.Listeners
// once the call has returned. AddHandler announces the name it wants before calling the
// informer, so nothing predicts registration IDs. Deliveries reach the DeliveryLog as
// StepDelivered events, which carry the object handed to the handler, just before the call.
//
// Narration of writes hangs on fakeapi.Server.OnCommit, called inside the apiserver's commit,
// so every revision the informers may see is explained in the trace at the step that made it.
//
// Cost per step: handler actors are cached actors of the engine (sim.Sim.AddCachedActor): the
// engine asks one for its actions only after the handler's state changed (a notification
// buffered into an empty buffer, a delivery, a removal, a Stop, its "done" timer), so the many
// idle handlers of a world cost a step nothing; test binaries re-ask them all at every step
// (invariant.Thorough) to catch a missed change. The reflector, watch and queue actors are
// cached too: the world wakes all three whenever it feeds the Reflector a response or the
// stream's opening or end, at Start, Stop and when a stream is dropped, and the queue actor
// after a resync tick; a watch event that leaves the stream open wakes only those whose offers
// it changed (the queue stopped being empty, the wire was full, the Reflector's request
// changed); the apiserver's watcher of the
// open stream wakes the watch actor itself whenever its buffer grows or it closes
// (fakeapi.Watcher.OnReady, called inside the write, the clock advance or the fault, whoever
// made it), so a handler's delivery, most steps of a busy world, asks none of them. Per
// delivery, a handler's DeliveryLog finds its state for the key by a number the world gave the key
// once, when the informer distributed the notification to every handler (Handler's mirror of
// its buffer keeps the numbers in order), rather than by hashing the key once per handler.
// After every step the world re-arms the apiserver's timer at its NextDeadline, which it asks
// only when the apiserver's state may have changed (fakeapi.Server.OnStateChange) or the clock
// moved; test binaries ask anyway and check the kept answer.
// Network deliveries re-arm fired "recv" timers (Reset: to the engine the same as a new timer)
// and the wire reuses its buffer, so a watch event costs the world no allocation; narration
// fields are built only when narration reaches someone (sim.Sim.Narrated).
package world
