// Package informer is a faithful reimplementation of client-go v0.37.2's shared informer
// (k8s.io/client-go/tools/cache) whose every component is a step-driven state machine, so that
// one logic runs under two drivers: the goroutine driver, SharedInformer.Run, which works against
// a real cluster through client-go's cache.ListWatch, and a deterministic driver, [Steps], which a
// simulator uses to choose one unit of work at a time from a seed. The behavior follows
// informer.md (the project's specification of client-go); comments cite its sections.
//
// # Nouns
//
//   - Reflector: lists and watches one resource through a [ListerWatcher] and writes what it
//     learns into the Queue; a sans-IO state machine that says which request to issue and when
//     its next timer (backoff end, resync tick) is due (informer.md §7).
//   - Queue: the FIFO between the Reflector and the process loop: [RealFIFO] (default, atomic
//     relists) or the legacy [DeltaFIFO] (§5). Popping an item is one unit of work.
//   - Store/Indexer: the informer's cache, a thread-safe keyed map with indices (§8). It is
//     always updated before the matching notification is distributed.
//   - Processor: fans each notification out to the Listeners; sync-class notifications (a
//     resync, or a same-resourceVersion update) only to Listeners due for a resync (§2, §4).
//   - Listener: one per handler registration, with its own growable buffer; it delivers one
//     notification at a time, in order, to its handler (§4.4). Its handle tracks whether the
//     handler has synced (§4.6).
//   - Runner: the non-shared informer of [NewInformerWithOptions] (client-go's Controller, §1.7):
//     Reflector, Queue and Store, with one handler called inside the pop instead of a Processor.
//     "Controller" is kept for user code (style rule 19), and informer.Informer would stutter.
//
// # Contract
//
// For every delta popped from the Queue, in order: the cache is updated, then each Listener's
// buffer receives the notification. A handler sees notifications one at a time in exactly the
// order they were distributed; it sees no order relative to other handlers. The notification kind
// comes from the cache's state (present → OnUpdate, absent → OnAdd), not from the watch event's
// type. A relist delivers deletions missed while disconnected as [DeletedFinalStateUnknown]
// first, then updates and adds in list order. A handler registered after start first receives
// the cache's contents as adds with isInInitialList=true, then every later change, with no gap and
// no duplicate (§3). The informer's HasSynced becomes true once the queue's initial population has
// been processed; a registration's HasSynced once, in addition, its handler returned from every
// initial-list add (§4.6). Stopping drops every buffered notification (§14 T9).
//
// Where client-go's order is Go map order (late-join snapshot, relist tombstones), this package
// sorts by key and then permutes with the informer's injected *rand.Rand, so runs explore orders
// and a seed replays them. Fan-out order across listeners is unobservable here: each listener has
// its own buffer and the driver decides when each one delivers.
//
// # The two drivers
//
// The goroutine driver, as with client-go:
//
//	inf := informer.NewSharedIndexInformer(lw, &v1.Pod{}, 10*time.Minute, informer.Indexers{})
//	reg, _ := inf.AddEventHandler(informer.ResourceEventHandlerFuncs{AddFunc: ...})
//	go inf.Run(ctx)
//	informer.WaitForCacheSync(ctx, reg.HasSynced)
//
// The deterministic driver: build the informer with a fake clock (k8s.io/utils/clock/testing)
// and a seeded rand in [SharedIndexInformerOptions], then take its [Stepper] instead of calling
// Run. Each step performs exactly one enabled action, chosen by the caller:
//
//	st, _ := informer.Steps(inf)
//	st.SetObserver(func(e informer.StepEvent) { trace = append(trace, e.String()) })
//	st.Start()
//	for {
//	    switch {
//	    case st.Reflector().HasRequest():
//	        req, _ := st.Reflector().NextRequest()
//	        perform it against the apiserver; feed ListDone / WatchOpened
//	    case an open stream has an event (st.Reflector().Watching()):
//	        st.Reflector().WatchEvent(ev) or WatchClosed()
//	    case st.QueueLen() > 0:
//	        st.ProcessNext()               // pop, update the cache, buffer notifications
//	    case some l in st.Listeners() has l.Buffered > 0:
//	        st.DeliverNext(l.Registration) // one handler call
//	    case a deadline (st.NextDeadline()) is due after advancing the clock:
//	        st.Tick()                      // backoff end, resync tick
//	    default:
//	        quiescent
//	    }
//	}
//	st.Stop()
//
// Waiting without polling uses [DoneChecker]s: [WaitFor](ctx, "caches", inf.HasSyncedChecker(),
// reg.HasSyncedChecker()). [ShutDownEventHandler] removes a handler and, under Run, waits until
// its callback in progress has returned; under the step driver it returns at once.
//
// After a Tick, WatchEvent or WatchOpened, if a stream is open but the Reflector is no longer
// Watching, the driver stops the watcher. One informer has one driver: Run after Steps panics and
// Steps after Run fails.
//
// # Implementation notes
//
// The core components (Reflector, Queue, processor, listeners, sync tracker) have no mutex, no
// goroutine and no clock of their own. The informer wraps them with client-go's locks
// (startedLock, blockDeltas, the processor lock; informer.md §15), which the single-threaded step
// driver takes without contention. Only files named *_run.go start goroutines: the reflector loop,
// the process loop (a condition variable around the non-blocking queue; with the default atomic
// RealFIFO it releases the queue lock while it handles what it popped, as client-go's
// UnlockWhileProcessing does), and one run goroutine per listener, which takes its buffered
// notifications in batches under the processor lock and calls its handler outside every lock. Deviations from client-go: the
// listener uses a condition variable instead of a pump goroutine and unbuffered channels (same
// ordering, same dropping on removal); a handler panic under Run is not recovered (client-go's
// default HandleCrash also crashes); the informer's synced latch is set by whoever changed the
// queue (the process loop after a pop, the Reflector after a write) rather than by a helper
// goroutine, so it never lags the queue. A registration's DoneChecker names its handler as
// client-go does (handler_name.go), and WaitFor does not log. The watch-list's objects reach the
// queue in an order drawn from the seed (client-go: Go map order).
//
// Cost, which seed sweeps multiply: an object's key is computed once, when its delta is queued,
// and carried to the cache lookup, the cache write and the step events (process_keyed.go; a kept
// key is checked once per pop against the object without building a string, and recomputed if
// a handler renamed the object); the queue reuses the string of a key it built before
// (keyTable). Each popped object's resourceVersion is read once and carried to the pop event,
// the cache, its event, the sync classification and the notification's events (objRV), and
// notifications go to the listeners' buffers by pointer. Popping, processing and distributing
// allocate nothing, nor does queueing an object under a key queued before; a listener's
// buffer starts empty and grows (client-go's starts at 1,024 slots); a registration's checker
// name is built when first asked for; an index by [MetaNamespaceIndexFunc] is kept without
// calling it. None of this changes a notification, a cache state or a step event
// (TestKeyedProcessingMatchesUnkeyed, TestIndexNamespaceFastPath).
//
// # Watch-list start-up
//
// As in client-go v0.37 (informer.md §7.3, §7.5), every ListAndWatch pass of an informer's
// Reflector starts with a watch-list request {RV, resourceVersionMatch=NotOlderThan,
// sendInitialEvents, allowWatchBookmarks} unless the ListerWatcher has an
// IsWatchListSemanticsUnSupported method that returns true (client-go's fake clients do) or
// SharedIndexInformerOptions.DisableWatchList is set; the choice is made at start. The stream
// fills a temporary store until the bookmark annotated k8s.io/initial-events-end, which replaces
// the queue at its RV; the same stream then goes on as the watch. 429 and connection refused back
// off and retry, 410 retries at RV "", a stream closed before the end bookmark retries at once,
// anything else falls back to a LIST in the same pass. For a driver nothing changes: the request
// is a RequestWatch whose Options carry the watch-list fields, fed back with WatchOpened,
// WatchEvent and WatchClosed; the Reflector reports EventWatchListSynced (where list+watch
// reports EventListed), EventWatchListRetry and EventWatchListFallback.
//
// # The factory
//
// [SharedInformerFactory] is client-go's dynamic informer factory with the typed factory's
// options: one informer per GroupVersionResource over *unstructured.Unstructured, built through
// a consumer-defined [Client] (a [ClientFunc] adapts fakeapi's Server.ListerWatcher or client-go's
// dynamic client in one line). Under [WithStepDriver] the factory starts no goroutine: each
// informer is put under [Steps] when ForResource creates it and handed to a callback with its
// Stepper, ListerWatcher and tweak, so a simulator can host it like any other informer; Start
// then calls each new Stepper's Start.
//
// # Coverage of client-go's tests
//
// Each behavior of informer.md §12.1, §12.2, §12.5, §12.6 and §12.7 has a test in this package
// whose comment names the client-go test it restates, except these, which cannot apply yet or at
// all:
//
//	client-go test (informer.md)          why not here
//	TestEventPanics, logger and 1s delay   handler panics are not recovered (see above); the
//	  (§12.1)                              sync part is TestEventPanics
//	TestRemoveEventHandler_Asynchronous-   same; the asynchronous removal is
//	  Panic, the panic part (§12.1)        TestRemoveEventHandlerAsynchronous
//	Example (§12.2)                        no public Config/New controller; the Runner's example
//	                                       is ExampleNewInformerWithOptions
//	TestDeletedObjectGetObjectName,        the typed API (DeletedObject[T]) is not implemented
//	  TestDeletedObjectGetKey (§12.2)
//	TestDeltaFIFO_basic (§12.5)            the queue core is not for concurrent use; the
//	                                       goroutine driver serialises producers, which
//	                                       TestHammerController exercises under -race
//	TestCacheWithTransformer (§12.7)       no store-level transformer: the queue transforms (§1.5)
//	TestFIFOCache, fifo_test (§12.7)       FIFO (§5.4) is not implemented: informers never use it
//	TestUndeltaStore (§12.7)               UndeltaStore is not implemented: not in the pipeline
//	TestWithStoreMetricsDefaulting,        metrics and logging are not modelled; WaitFor's result
//	  TestWaitFor logging (§12.7)          is TestWaitFor
//	TestAsyncLocking (§12.7)               only the SingleFileTracker is used by informers
//
// SyncResult (TestSyncResult) is TestFactoryBadInput's AsError case; the workqueue tests are
// restated in informer/workqueue under client-go's names (queue_test.go, delaying_test.go,
// ratelimiter_test.go).
//
// # Coverage of the Reflector: informer.md §7, §12.3 and §12.4
//
// Every rule of §7 and every client-go test of §12.3 and §12.4, with the tests that restate it
// (reflector_test.go, reflector_watchlist_test.go, reflector_coverage_test.go, backoff_test.go,
// step_test.go, step_watchlist_test.go):
//
//	§7.1 timeout and backoff constants    TestWatchTimeout, TestBackoffDefaultSequence,
//	                                       TestBackoffResetAfterTwoMinutesSinceLastReset,
//	                                       TestBackoffCustom
//	§7.2 run loop, error handler, backoff  TestReflectorListError, TestReflectorWatchOpenOtherError,
//	  after every pass                     TestInfT4ExpiredInStream (no handler call for 410)
//	§7.3 watch-list first, LIST fallback   TestReflectorWatchListFallbackOnOpenError,
//	                                       TestInformerWatchListDisablement
//	§7.4 LIST path (RV choice, paging,     TestReflectorListAndWatch, TestReflectorPaginatedList,
//	  410/too large retry, tables)         TestReflectorExpiredExactResourceVersion,
//	                                       TestReflectorExpiredRetryFailsToo, TestReflectorRejectsTables
//	§7.5 watch-list                        TestReflectorWatchListSync, ...ClosedBeforeSync,
//	                                       ...CollapsesInTempStore, ...RetriesTooManyRequests,
//	                                       ...ExpiredAndStreamErrors, ...AfterSync,
//	                                       ...VeryShortAfterSync, TestInfT8WatchListInitialStream
//	§7.6 watch loop                        TestReflectorWatchHandlerSkipsWrongType,
//	                                       TestReflectorVeryShortWatch, TestReflectorBookmarkWithout-
//	                                       BookmarkQueue, TestReflectorResyncErrorBetweenStreams
//	§7.7 re-watch vs relist                TestReflectorRewatchAfterCleanClose, TestInfT3WatchTimeout,
//	                                       TestReflectorWatchOpenConnectionRefused,
//	                                       TestReflectorExpiredInStream, TestInfT4ExpiredInStream,
//	                                       TestInfT4WatchListRelist
//	§7.8 accessors                         TestReflectorListAndWatch (LastSyncResourceVersion)
//
//	client-go test (§12.3, §12.4)          here
//	TestCloseWatchChannelOnError           TestCloseWatchChannelOnError
//	TestRunUntil, ...WatchStoppedAfter     TestRunUntilStopsWatcher
//	TestReflectorResyncChan                TestReflectorResync (the timer fires after the period)
//	TestReflectorWatchStoppedBefore        TestReflectorStop, TestReflectorHandleWatchStopped
//	TestReflectorHandleWatchStopped-       TestReflectorHandleWatchStopped
//	  Before/After, TestReflectorStopWatch
//	TestReflectorHandleWatchResultChan-    TestReflectorVeryShortWatch
//	  ClosedBefore/After
//	TestReflectorWatchHandler              TestReflectorWatchHandlerSkipsWrongType,
//	                                       TestReflectorWatchListSkipsWrongType
//	TestReflectorListAndWatch              TestReflectorListAndWatch, TestReflectorWatchListSync
//	TestReflectorListAndWatchWithErrors    TestReflectorListError, TestReflectorWatchOpenOtherError
//	TestReflectorListAndWatchInitConn-     TestReflectorWatchOpenConnectionRefused
//	  Backoff
//	TestNewReflectorWithCustomBackoff      TestBackoffCustom
//	TestBackoffOnTooManyRequests           TestBackoffOnTooManyRequests
//	TestNoRelistOnTooManyRequests          TestNoRelistOnTooManyRequests
//	TestRetryInternalError                 left out: MaxInternalErrorRetryDuration is not
//	                                       modelled; informers never set it, and with its default
//	                                       0 a 500 ends the pass (TestReflectorReplacesStoreOn-
//	                                       UnsafeDelete, TestReflectorWatchListExpiredAndStreamErrors)
//	TestReflectorResync                    TestReflectorResync, TestReflectorResyncDrift
//	TestReflectorWatchListPageSize         TestReflectorWatchListPageSize
//	TestReflectorNotPaginatingNot-         TestReflectorPaginatedList
//	  ConsistentReads
//	TestReflectorPaginatingNonConsistent-  TestReflectorPaginatedList
//	  ReadsIfWatchCacheDisabled
//	TestReflectorResyncWithResourceVersion TestReflectorResyncWithResourceVersion
//	TestReflectorExpiredExactResource-     TestReflectorExpiredExactResourceVersion
//	  Version
//	TestReflectorFullListIfExpired         TestReflectorFullListIfExpired
//	TestReflectorFullListIfTooLarge        TestReflectorFullListIfTooLarge
//	TestGetTypeDescriptionFromObject,      TestTypeDescriptionAndExpectedGVK
//	  TestGetExpectedGVKFromObject
//	TestWatchTimeout                       TestWatchTimeout
//	TestReflectorResourceVersionUpdate     TestReflectorResourceVersionUpdate
//	TestReflectorListExtract               TestReflectorTypedList
//	TestReflectorReplacesStoreOnUnsafe-    TestReflectorReplacesStoreOnUnsafeDelete
//	  Delete
//	TestReflectorRespectStoreTransformer   TestInformerWatchListTransformsTwice (5 calls),
//	                                       TestReflectorWatchListTransformsTempStore
//	TestIsUnsupportedTableObject           TestReflectorRejectsTables
//	TestNewReflectorWithDisablement-       TestInformerWatchListDisablement
//	  WatchList (§12.4)
//	TestInitialEventsEndBookmarkTicker     left out: it checks log warnings only, and this
//	  (§12.4)                              package does not log
//	TestWatchListResourceVersion (§12.4)   TestReflectorWatchListCollapsesInTempStore
//	TestWatchList (§12.4), its cases       TestReflectorWatchListSync (synced after the bookmark,
//	                                       not before), ...FallbackOnOpenError (disabled, any
//	                                       open error), ...CollapsesInTempStore, ...RetriesTooMany-
//	                                       Requests, ...ClosedBeforeSync, ...AfterSync (plain
//	                                       watch after sync; 410 on re-watch returned)
package informer
