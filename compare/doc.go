// Package compare runs client-go's informer and informersim's side by side. It is a nested
// module, the only place in the repository allowed to import k8s.io/client-go; the root
// module's `go test ./...` does not enter it.
//
// # What it compares
//
//   - Differential test (fakeapi.md §10.4 item 16, TestDifferential): a real client-go
//     informer (cache.NewSharedIndexInformer over fakeapi's ListerWatcher, with
//     *unstructured.Unstructured pods) in watch-list mode and in list+watch mode, and our
//     informer under its goroutine driver, all on one fakeapi server. A sequence of writes
//     and faults (clean watch closes, a close with 410, deletes while watches are down,
//     compaction so that the re-watch gets 410 and a relist happens) is applied; after each
//     phase the test polls, on the real clock and under a deadline, until every informer's
//     store equals fakeapi's state. It then checks that the stores agree key by key on
//     resourceVersions, that each handler's replayed view equals its store, that each key's
//     notifications agree across the informers, and that deletes missed while disconnected
//     reached client-go's handlers as cache.DeletedFinalStateUnknown and ours as
//     informer.DeletedFinalStateUnknown.
//   - Watch-list side by side (watchlist_test.go, TestDifferentialWatchList): client-go's
//     informer and ours, both in watch-list mode, through the same phases; the stores equal
//     fakeapi's state after each phase, the per-key notifications of the two handlers are
//     identical, and both sent the same requests (no LIST).
//   - Relist storm (TestRelistStorm): a replica reinitialisation disconnects 50 of our
//     informers and a client-go one at once, in each start-up mode; all recover and converge,
//     and each of ours sends exactly client-go's requests (list+watch: 2 LISTs, 3 WATCHes;
//     watch-list: 2 watch-lists, 1 plain WATCH).
//   - informer.SharedInformerFactory beside client-go's dynamicinformer factory over the same
//     dynamic client (TestFactoryMatchesDynamicInformerFactory, ExampleSharedInformerFactory),
//     and informer/workqueue's interfaces assigned to client-go's and back at compile time
//     (factory_workqueue_test.go). Example_controllerLoop runs a controller's informer and
//     rate-limited workqueue step by step on one fake clock.
//   - Compile-time checks (compile_test.go): fakeapi's ListerWatcher is a client-go
//     cache.ListerWatcher(WithContext); client-go's *cache.ListWatch is an
//     informer.ListerWatcher; fakeapi's ResourceClient is a dynamic.ResourceInterface, and
//     two thin adapters make Server.Resource's result a dynamic.NamespaceableResourceInterface
//     and the server a dynamic.Interface, with which client-go's dynamicinformer factory runs
//     on fakeapi unchanged (TestDynamicInformerOnFakeAPI).
//   - Benchmarks, same run and same inputs for both sides:
//     BenchmarkPipeline/{clientgo,ours}/handlers={1,4,16} (events per second from watch event
//     to N handlers, goroutine drivers, one in-memory ListerWatcher type, classic list+watch),
//     BenchmarkCacheMemory/{clientgo,ours} (heap bytes the Indexer adds per cached object at
//     100,000 objects, objects themselves excluded) and
//     BenchmarkFakeAPIvsFakeClientset/{clientgo,fakeapi} (one LIST of 10,000 pods through the
//     dynamic client interface: client-go's dynamic fake client against fakeapi).
//
// # Findings worth knowing
//
//   - After a relist, both client-go and our informer hand every handler an OnUpdate for each
//     unchanged object (same resourceVersion), even with no resync period: client-go registers
//     a listener as "syncing" and, without resync ticks, never clears that, so sync-class
//     notifications reach it. Ours reproduces this; the differential test allows such
//     same-RV updates and checks that the informers agree on them.
//   - In watch-list mode client-go never LISTs: its start-up and both relists are watches with
//     sendInitialEvents=true, resourceVersionMatch=NotOlderThan, the relists from the last RV
//     even after a compaction past it, which fakeapi (like the watch cache) serves without 410.
//   - goleak finds nothing left behind once every informer's Run has returned: no client-go
//     goroutine needs an exception, so the test ignores only the goroutines present before it
//     started.
//
// # README: running it
//
//	cd compare
//	go test ./...                                             # differential test, < 10 s
//	go test -run='^$' -bench=. -benchmem -count=3             # benchmarks
//
// Reading the benchmarks: each pair differs only in the last path element (clientgo vs ours,
// or clientgo vs fakeapi). The ratio to quote is ours/client-go of the custom metric:
//
//   - events/s (BenchmarkPipeline): higher is better; a ratio above 1 means our pipeline
//     moves more events per second than client-go's. ns/op is per event, so the inverse ratio
//     of ns/op says the same thing.
//   - B/obj (BenchmarkCacheMemory): lower is better; a ratio of 1 means the caches cost the
//     same heap per object. ns/op there is the time to add 100,000 objects.
//   - ns/op (BenchmarkFakeAPIvsFakeClientset): lower is better.
//
// The pipeline figures depend on GOMAXPROCS (the reflector, the process loop and every
// handler run on their own goroutines), so compare pairs from one run on one machine, and
// prefer -count=3 or more (benchstat, where available, prints the ratios directly).
package compare
