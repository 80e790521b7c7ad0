// Package informersim is a deterministic simulator of the Kubernetes informer.
//
// An in-memory fake apiserver with real resourceVersion, watch, bookmark, compaction and error
// semantics drives a full reimplementation of client-go's informer on an injected fake clock.
// Scripted and generated scenarios check the guarantees client-go promises, and one seed replays
// any run exactly, byte for byte.
//
// # Who it is for
//
//   - Controller and library authors testing handlers against watch drops, 410s, stale lists and
//     slow handlers from Ginkgo or go test, without a cluster and without flakes.
//   - Fuzzing: seed sweeps and go test -fuzz over workloads and fault schedules.
//   - Anyone learning how informers really work: every run narrates what the apiserver, the
//     Reflector, the queue, the Indexer and each handler did, step by step.
//
// # Packages
//
//   - [github.com/informersim/informersim/sim/world]: the world, what users build on: a fake
//     apiserver and any number of informers joined by a simulated network whose every list
//     response and watch event is a scheduled step, ops as data, workloads and faults, the
//     user's own actors, timers and checks, and oracles (per-object order, cache before notify,
//     convergence).
//   - [github.com/informersim/informersim/sim]: the engine (a seed split into named random
//     streams, a virtual clock that fires timers one deadline at a time, a scheduler of enabled
//     actions with random, fifo and pct policies, fault points, and the trace with its SHA-256
//     hash). It knows nothing of Kubernetes.
//   - [github.com/informersim/informersim/fakeapi]: the fake apiserver: one global revision, an
//     event log with a compaction floor, list and watch with the real resourceVersion rules,
//     bookmarks, watch-list, writes with conflicts and finalizers, replicas with lagging watch
//     caches, and fault hooks.
//   - [github.com/informersim/informersim/informer]: client-go's shared informer rebuilt as
//     step-driven state machines (Reflector, queue, Indexer, processor, listeners) with two
//     drivers: the simulator steps them one unit of work at a time, and Run(ctx) gives them
//     client-go's goroutines for use against a real cluster.
//
// Imports flow one way: sim/world imports sim, fakeapi and informer; sim imports none of them;
// fakeapi and informer never import each other, sim or sim/world.
//
// # A short example
//
// A world hosts the fake apiserver and informers on one seeded scheduler. This one syncs an
// informer, cuts its watch with a 410 while a pod is deleted, and lets simulated time run until
// every cache and handler agrees with the apiserver again:
//
//	w, _ := world.New(1, world.Config{})
//	_ = w.Apply(world.Op{Kind: world.OpCreate, Name: "a"})
//	inf, _ := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
//	h, _ := w.AddHandler(inf, "h1", myHandler, world.HandlerOptions{})
//	_ = inf.Start()
//	_ = w.RunUntilConverged(time.Minute)    // list, sync, watch
//	_ = w.Apply(world.Op{Kind: world.OpCloseWatches, Code: 410})
//	_ = w.Apply(world.Op{Kind: world.OpDelete, Name: "a"})
//	err := w.RunUntilConverged(time.Minute) // simulated time; nil once converged
//	fmt.Println(h.Deliveries().Strings())      // [add(default/a@2,true) del(tomb default/a@2)]
//	fmt.Print(w.Sim().Trace())               // the narrated run; the same seed prints the same
//
// Run `make demo` for a narrated run and `make test` for the whole suite. The behaviour the code
// follows is written down in docs/: informer.md for informer, fakeapi.md for fakeapi,
// simulation.md for the engine and the world, design.md and style.md for the rest.
package informersim
