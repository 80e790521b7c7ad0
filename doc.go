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
//   - [github.com/informersim/informersim/sim]: the engine. A seed split into named random
//     streams, a virtual clock that fires timers one deadline at a time, a scheduler of enabled
//     actions with random, fifo and pct policies, fault points, and the trace with its SHA-256
//     hash.
//   - [github.com/informersim/informersim/fakeapi]: the fake apiserver: one global revision, an
//     event log with a compaction floor, list and watch with the real resourceVersion rules,
//     bookmarks, watch-list, writes with conflicts and finalizers, replicas with lagging watch
//     caches, and fault hooks.
//   - [github.com/informersim/informersim/informer]: client-go's shared informer rebuilt as
//     step-driven state machines (Reflector, queue, Indexer, processor, listeners) with two
//     drivers: the simulator steps them one unit of work at a time, and Run(ctx) gives them
//     client-go's goroutines for use against a real cluster.
//
// Imports flow one way: sim imports fakeapi and informer; fakeapi and informer never import each
// other, and informer never imports sim.
//
// # A short example
//
// A simulation is created from a seed; the same seed always produces the same trace:
//
//	s, err := sim.New(sim.Config{Seed: 1})
//	if err != nil { ... }
//	// register actors, then
//	err = s.RunUntilQuiescent()
//	fmt.Println(s.Trace().Hash())
//
// Run `make demo` for a narrated run and `make test` for the whole suite.
package informersim
