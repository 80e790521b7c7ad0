package informer

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/informersim/informersim/internal/invariant"
)

// ListerWatcher lists and watches one resource. Its method set is exactly client-go's
// cache.ListerWatcherWithContext, so client-go's cache.ListWatch (a real cluster) and the fake
// apiserver's adapter both satisfy it without an adapter (design.md; style rule 2).
type ListerWatcher interface {
	// ListWithContext returns a list object (a meta.List) for options.
	ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error)
	// WatchWithContext opens a watch stream for options.
	WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error)
}

// WatchErrorHandler is called with each error a ListAndWatch pass of the informer's Reflector
// returns: a failed LIST or a watch that could not be opened (informer.md §7.2). Most failures in
// an open stream end the pass without an error and never reach it.
type WatchErrorHandler func(r *Reflector, err error)

// WatchErrorHandlerWithContext is a [WatchErrorHandler] that also receives the context the
// informer runs under: Run's ctx, or context.Background() under the step driver (informer.md §1.5).
type WatchErrorHandlerWithContext func(ctx context.Context, r *Reflector, err error)

// QueueMode selects the queue between the Reflector and the process loop (informer.md §0.2, §5).
type QueueMode int

// The queue modes.
const (
	// QueueRealFIFO is client-go v0.37's default: RealFIFO with atomic events (one ReplacedAll
	// per relist, one SyncAll per resync, Bookmark items).
	QueueRealFIFO QueueMode = iota + 1
	// QueueRealFIFONonAtomic is RealFIFO with one item per object on relist and resync (the
	// AtomicFIFO gate off).
	QueueRealFIFONonAtomic
	// QueueDeltaFIFO is the legacy DeltaFIFO (the InOrderInformers gate off).
	QueueDeltaFIFO
)

// String returns the mode's name.
func (m QueueMode) String() string {
	switch m {
	case QueueRealFIFO:
		return "RealFIFO"
	case QueueRealFIFONonAtomic:
		return "RealFIFONonAtomic"
	case QueueDeltaFIFO:
		return "DeltaFIFO"
	}
	return fmt.Sprintf("QueueMode(%d)", int(m))
}

// SharedIndexInformerOptions configures an informer (informer.md §1.1). The zero value of each
// field is a documented default.
type SharedIndexInformerOptions struct {
	// ResyncPeriod is the default resync period of handlers and the initial resync check
	// period; 0 means the informer never resyncs (informer.md §2).
	ResyncPeriod time.Duration
	// Indexers are the cache's initial indexers.
	Indexers Indexers
	// ObjectDescription names the listed type in the Reflector's errors and events; default:
	// the example object's Go type.
	ObjectDescription string

	// Clock drives resync and Reflector timers; default clock.RealClock{}. The deterministic
	// driver needs a fake clock (k8s.io/utils/clock/testing).
	Clock clock.WithTicker
	// Rand seeds every random choice of the informer: watch timeouts and backoff jitter (the
	// Reflector), the order of late-join snapshots and of relist tombstones. Default: a fixed
	// seed, so that even an unconfigured informer replays.
	Rand *rand.Rand
	// QueueMode selects the queue; 0 means QueueRealFIFO.
	QueueMode QueueMode
	// DisableWatchList turns off the streaming watch-list start-up for this informer (client-go's
	// WatchListClient gate off, informer.md §0.2): every pass lists, then watches. By default,
	// as in client-go v0.37, each pass tries watch-list first unless the ListerWatcher has an
	// IsWatchListSemanticsUnSupported() method that returns true (informer.md §7.3).
	DisableWatchList bool
	// DisableBatchPop makes the process loop pop one item at a time even from a RealFIFO. By
	// default it pops batches, like client-go v0.37 with InOrderInformersBatchProcess on
	// (informer.md §0.2, §5.3).
	DisableBatchPop bool
}

// HandlerOptions configures one handler registration (informer.md §1.2).
type HandlerOptions struct {
	// ResyncPeriod requests a resync period for this handler; nil means the informer's
	// ResyncPeriod. It is adjusted as informer.md §2.2 says.
	ResyncPeriod *time.Duration
}

// ResourceEventHandlerRegistration is the handle AddEventHandler returns; pass it to
// RemoveEventHandler to unregister (informer.md §1.2).
type ResourceEventHandlerRegistration interface {
	// HasSynced reports whether the informer has synced and this handler has returned from
	// every initial-list add it was given, including a late joiner's snapshot (informer.md
	// §3, §4.6). Sticky.
	HasSynced() bool
	// HasSyncedChecker is HasSynced as a [DoneChecker], for [WaitFor]. Its name is the
	// informer checker's name + " + event handler <name>", the handler named as client-go
	// names it: a ResourceEventHandlerFuncs after its functions, any other after its type.
	HasSyncedChecker() DoneChecker
}

// SharedInformer maintains a cache of one resource from a ListerWatcher and fans its changes out
// to any number of handlers (informer.md §1). See the package documentation for the contract.
type SharedInformer interface {
	// AddEventHandler registers handler with the informer's default resync period.
	AddEventHandler(handler ResourceEventHandler) (ResourceEventHandlerRegistration, error)
	// AddEventHandlerWithResyncPeriod registers handler asking for resyncPeriod (§2.2).
	AddEventHandlerWithResyncPeriod(handler ResourceEventHandler, resyncPeriod time.Duration) (ResourceEventHandlerRegistration, error)
	// AddEventHandlerWithOptions registers handler with options. After start the handler
	// first receives the cache's contents as initial-list adds (§3). Fails only once the
	// informer has stopped.
	AddEventHandlerWithOptions(handler ResourceEventHandler, options HandlerOptions) (ResourceEventHandlerRegistration, error)
	// RemoveEventHandler unregisters a handle and drops its pending notifications; an unknown
	// handle is a no-op (§1.3).
	RemoveEventHandler(handle ResourceEventHandlerRegistration) error
	// GetStore returns the cache.
	GetStore() Store
	// Run starts the goroutine driver and blocks until ctx is done (§1.6).
	Run(ctx context.Context)
	// HasSynced reports whether the queue's initial population has been processed (§1.4);
	// with a DeltaFIFO, popped: it may turn true while the last initial item is processed (§5.2).
	HasSynced() bool
	// HasSyncedChecker is HasSynced as a [DoneChecker] named "SharedIndexInformer <type>", for
	// [WaitFor] (§1.4).
	HasSyncedChecker() DoneChecker
	// LastSyncResourceVersion is the Reflector's last synced resourceVersion; "" before start.
	LastSyncResourceVersion() string
	// SetWatchErrorHandler sets the Reflector's error handler; only before start (§1.5).
	SetWatchErrorHandler(handler WatchErrorHandler) error
	// SetWatchErrorHandlerWithContext is SetWatchErrorHandler for a handler that takes the
	// informer's context; the last call of either wins (§1.5).
	SetWatchErrorHandlerWithContext(handler WatchErrorHandlerWithContext) error
	// SetTransform sets the function applied to objects before they are queued; only before
	// start (§1.5).
	SetTransform(handler TransformFunc) error
	// IsStopped reports whether the informer has stopped (§1.4).
	IsStopped() bool
}

// SharedIndexInformer is a SharedInformer whose cache has indices.
type SharedIndexInformer interface {
	SharedInformer
	// AddIndexers adds indices to the cache, before or after start; not after stop (§1.5).
	AddIndexers(indexers Indexers) error
	// GetIndexer returns the cache (the same object as GetStore).
	GetIndexer() Indexer
}

// Error messages of client-go (informer.md §1.2, §1.3, §1.5).
var (
	errAlreadyStarted = errors.New("informer has already started")
)

// minimumResyncPeriod is the smallest resync period a handler gets (informer.md §2.1).
const minimumResyncPeriod = 1 * time.Second

// defaultSeed seeds the informer's random source when the options give none.
const defaultSeed = 0x1f0a_2b3c_4d5e_6f70

// driverKind records which driver owns an informer: they must not be mixed.
type driverKind int

const (
	driverNone driverKind = iota
	driverStep
	driverRun
)

// watchListUnsupported is client-go's DoesClientNotSupportWatchListSemantics: a ListerWatcher
// that has an IsWatchListSemanticsUnSupported method returning true (fake clientsets, for
// example) gets classic list+watch; every other one, watch-list (informer.md §7.3).
func watchListUnsupported(lw any) bool {
	p, ok := lw.(interface{ IsWatchListSemanticsUnSupported() bool })
	return ok && p.IsWatchListSemanticsUnSupported()
}

// NewSharedInformer returns an informer without indices (informer.md §1.1).
func NewSharedInformer(lw ListerWatcher, exampleObject runtime.Object, defaultEventHandlerResyncPeriod time.Duration) SharedInformer {
	return NewSharedIndexInformer(lw, exampleObject, defaultEventHandlerResyncPeriod, Indexers{})
}

// NewSharedIndexInformer returns an informer whose cache has indexers (informer.md §1.1).
func NewSharedIndexInformer(lw ListerWatcher, exampleObject runtime.Object, defaultEventHandlerResyncPeriod time.Duration, indexers Indexers) SharedIndexInformer {
	return NewSharedIndexInformerWithOptions(lw, exampleObject, SharedIndexInformerOptions{
		ResyncPeriod: defaultEventHandlerResyncPeriod,
		Indexers:     indexers,
	})
}

// NewSharedIndexInformerWithOptions returns an informer configured by options (informer.md
// §1.1). Nothing happens until it is started by Run or by [Steps]. An invalid QueueMode or a
// negative ResyncPeriod is a programming error and panics.
func NewSharedIndexInformerWithOptions(lw ListerWatcher, exampleObject runtime.Object, options SharedIndexInformerOptions) SharedIndexInformer {
	o := options // never touch the caller's value (style rule 17)
	if o.QueueMode == 0 {
		o.QueueMode = QueueRealFIFO
	}
	// Checked first: Check's arguments would be boxed (allocated) even when it passes.
	if o.QueueMode < QueueRealFIFO || o.QueueMode > QueueDeltaFIFO {
		invariant.Check(false, "informer: invalid QueueMode %d", int(o.QueueMode))
	}
	if o.ResyncPeriod < 0 {
		invariant.Check(false, "informer: negative ResyncPeriod %v", o.ResyncPeriod)
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Rand == nil {
		o.Rand = rand.New(rand.NewPCG(defaultSeed, 0))
	}
	if o.ObjectDescription == "" && exampleObject != nil {
		o.ObjectDescription = reflect.TypeOf(exampleObject).String()
	}
	if o.Indexers == nil {
		o.Indexers = Indexers{}
	}
	// Two independent streams: the Reflector draws on its own goroutine in the goroutine
	// driver, the process loop and late joins (under blockDeltas) on another.
	reflectorRand := rand.New(rand.NewPCG(o.Rand.Uint64(), o.Rand.Uint64()))
	orderRand := rand.New(rand.NewPCG(o.Rand.Uint64(), o.Rand.Uint64()))
	c := newCache(DeletionHandlingMetaNamespaceKeyFunc, o.Indexers)
	return &sharedIndexInformer{
		lw:                              lw,
		exampleObject:                   exampleObject,
		objectDescription:               o.ObjectDescription,
		indexer:                         c,
		cache:                           c,
		clock:                           o.Clock,
		reflectorRand:                   reflectorRand,
		orderRand:                       orderRand,
		shuffle:                         orderRand.Shuffle,
		queueMode:                       o.QueueMode,
		batchPop:                        !o.DisableBatchPop,
		disableWatchList:                o.DisableWatchList,
		defaultEventHandlerResyncPeriod: o.ResyncPeriod,
		resyncCheckPeriod:               o.ResyncPeriod,
		processor:                       newProcessor(),
		syncedCh:                        make(chan struct{}),
	}
}

// sharedIndexInformer implements SharedIndexInformer for both drivers. The logic (queue,
// Reflector, processor, listeners) is step-driven and lock-free; the informer serialises access
// with client-go's locks (informer.md §15), which the single-threaded step driver takes too but
// never contends. Lock order: startedLock → reflectorLock → queueLock (goroutine driver) →
// blockDeltas → procLock → the cache's own lock.
type sharedIndexInformer struct {
	lw                              ListerWatcher
	exampleObject                   runtime.Object
	objectDescription               string
	indexer                         Indexer
	clock                           clock.WithTicker
	reflectorRand                   *rand.Rand
	queueMode                       QueueMode
	batchPop                        bool
	disableWatchList                bool
	defaultEventHandlerResyncPeriod time.Duration // never changes (§2.1)
	// cache is indexer itself, for the keyed writes of the process loop (process_keyed.go).
	cache *cache

	// startedLock guards the fields below it (client-go's startedLock).
	startedLock       sync.Mutex
	started           bool
	stopped           bool
	driver            driverKind
	resyncCheckPeriod time.Duration // lowered by pre-start registrations, frozen at start (§2.2)
	transform         TransformFunc
	watchErrorHandler WatchErrorHandlerWithContext
	stepper           *Stepper
	run               *runDriver // goroutine driver state, nil in the step driver

	// reflectorLock serialises calls into reflector in the goroutine driver.
	reflectorLock sync.Mutex
	// queue and reflector are built at start and never replaced.
	queue     Queue
	reflector *Reflector

	// blockDeltas is held for a whole delta-handling call, a late join and a removal, so that
	// no delta is applied while a handler joins or leaves (informer.md §3, §1.3, §6.2).
	blockDeltas sync.Mutex
	// orderRand draws the orders client-go leaves to Go map iteration; used under blockDeltas.
	orderRand *rand.Rand
	// shuffle is orderRand.Shuffle, which permutes relist tombstones (client-go takes their
	// order from a Go map, §6.3). It is bound once here: a method value made at each pop
	// would be one allocation per relist or per delta.
	shuffle func(n int, swap func(i, j int))

	// procLock guards processor and every listener's state (client-go's processor lock).
	procLock  sync.Mutex
	processor *processor

	// synced latches when the queue's initial population has been processed (§1.4); syncedCh
	// is closed at the same moment, for HasSyncedChecker.
	synced   atomic.Bool
	syncedCh chan struct{}

	// direct, set only for a [Runner], is the one handler processDeltas calls in place of the
	// processor (informer.md §1.7). It never changes.
	direct ResourceEventHandler

	// observer receives step events (step driver only; set before start, read without lock).
	observer func(StepEvent)

	// processBatch and processSingle are s.handleBatchDeltas and s.handleDeltas, the queue's
	// process functions, as method values built once at start (popOnce would otherwise
	// allocate two per pop). Set at start, read only by whoever pops.
	processBatch  ProcessBatchFunc
	processSingle PopProcessFunc
	// processKeyed is s.handleKeyed, what the process loop gives a RealFIFO (popKeyed), built
	// once at start like the two above.
	processKeyed keyedProcessFunc

	// unkeyed makes the process loop pop a RealFIFO with PopBatch or Pop, as it does a
	// DeltaFIFO, instead of popKeyed: the path the keyed one must match exactly. Only tests set
	// it (TestKeyedProcessingMatchesUnkeyed), before start.
	unkeyed bool

	// batchTxns and batchCalls are handleKeyed's scratch space for a batch, reused from batch to
	// batch under blockDeltas and zeroed after each.
	batchTxns  []Transaction
	batchCalls []batchCall
	// poppedRVs is handleKeyed's memo of the resourceVersion of each delta it processes (see
	// objRV), by the delta's index; under blockDeltas, zeroed after each pop.
	poppedRVs []objRV
	// listKeys is handleKeyed's scratch space for the keys of a relist, under blockDeltas.
	listKeys []string
}

var _ SharedIndexInformer = (*sharedIndexInformer)(nil)

// AddEventHandler implements SharedInformer.
func (s *sharedIndexInformer) AddEventHandler(handler ResourceEventHandler) (ResourceEventHandlerRegistration, error) {
	return s.AddEventHandlerWithOptions(handler, HandlerOptions{})
}

// AddEventHandlerWithResyncPeriod implements SharedInformer.
func (s *sharedIndexInformer) AddEventHandlerWithResyncPeriod(handler ResourceEventHandler, resyncPeriod time.Duration) (ResourceEventHandlerRegistration, error) {
	return s.AddEventHandlerWithOptions(handler, HandlerOptions{ResyncPeriod: &resyncPeriod})
}

// AddEventHandlerWithOptions implements SharedInformer: informer.md §1.2, §2.2 and §3.
func (s *sharedIndexInformer) AddEventHandlerWithOptions(handler ResourceEventHandler, options HandlerOptions) (ResourceEventHandlerRegistration, error) {
	if handler == nil {
		// client-go takes it and panics at the first notification; refuse it where it is made.
		return nil, errors.New("informer: AddEventHandler: nil handler (pass ResourceEventHandlerFuncs{} for one that does nothing)")
	}
	s.startedLock.Lock()
	defer s.startedLock.Unlock()
	if s.stopped {
		return nil, fmt.Errorf("handler %v was not added to shared informer because it has stopped already", handler)
	}

	// informer.md §2.2: adjust the requested period.
	p := s.defaultEventHandlerResyncPeriod
	if options.ResyncPeriod != nil {
		p = *options.ResyncPeriod
	}
	requested := p
	if p > 0 && p < minimumResyncPeriod {
		p = minimumResyncPeriod
	}
	if p > 0 && p < s.resyncCheckPeriod {
		if s.started {
			p = s.resyncCheckPeriod
		} else {
			s.resyncCheckPeriod = p
			s.procLock.Lock()
			for _, l := range s.processor.listeners {
				l.resyncPeriod = determineResyncPeriod(l.requestedResyncPeriod, s.resyncCheckPeriod)
			}
			s.procLock.Unlock()
		}
	}
	effective := determineResyncPeriod(p, s.resyncCheckPeriod)

	if !s.started {
		s.procLock.Lock()
		l := s.newListener(handler, p, effective)
		s.processor.addListener(l)
		s.procLock.Unlock()
		s.emit(StepEvent{Kind: StepRegistered, Handler: l.id, RequestedResyncPeriod: requested, ResyncPeriod: effective, CheckPeriod: s.resyncCheckPeriod})
		return l, nil
	}

	// informer.md §3: late join. Under blockDeltas no delta is applied until the snapshot is
	// in the new listener's buffer, so nothing is lost or duplicated across the boundary.
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	// client-go replays the cache in Go map order; ours is sorted, then permuted by the
	// seeded rand, so runs explore orders and still replay.
	keys, snapshot := s.cache.listKeyed()
	s.orderRand.Shuffle(len(snapshot), func(i, j int) {
		snapshot[i], snapshot[j] = snapshot[j], snapshot[i]
		keys[i], keys[j] = keys[j], keys[i]
	})
	s.procLock.Lock()
	l := s.newListener(handler, p, effective)
	s.processor.addListener(l)
	if s.run != nil {
		s.run.startListener_locked(l)
	}
	s.emit(StepEvent{Kind: StepJoined, Handler: l.id, Count: len(snapshot), RequestedResyncPeriod: requested, ResyncPeriod: effective, CheckPeriod: s.resyncCheckPeriod})
	for i, obj := range snapshot {
		n := s.withKey(notification{kind: NotificationAdd, newObj: obj, isInInitialList: true, key: cachedKey(keys[i], obj)})
		l.add(&n)
		s.emitNotification(StepDistributed, &n, false, l.self[:])
	}
	// The sync watcher starts after the pushes (§3 step 5): the counter already covers them.
	var latched bool
	if s.synced.Load() {
		latched = l.tracker.UpstreamSynced()
	}
	s.procLock.Unlock()
	if latched {
		s.emit(StepEvent{Kind: StepHandlerSynced, Handler: l.id})
	}
	return l, nil
}

// newListener builds the listener of a new registration; its sync checker is named after the
// informer's (informer.md §4.6). Must hold procLock.
func (s *sharedIndexInformer) newListener(handler ResourceEventHandler, requested, effective time.Duration) *listener {
	l := newListener(s.processor.newID(), handler, requested, effective, s.clock.Now())
	handlerPart := l.tracker.nameFunc
	l.tracker.nameFunc = func() string { return s.checkerName() + " + " + handlerPart() }
	return l
}

// determineResyncPeriod is informer.md §2.2's rule.
func determineResyncPeriod(desired, check time.Duration) time.Duration {
	switch {
	case desired == 0:
		return 0
	case check == 0:
		return 0 // the informer never resyncs
	case desired < check:
		return check
	}
	return desired
}

// RemoveEventHandler implements SharedInformer (informer.md §1.3).
func (s *sharedIndexInformer) RemoveEventHandler(handle ResourceEventHandlerRegistration) error {
	s.startedLock.Lock()
	defer s.startedLock.Unlock()
	l, ok := handle.(*listener)
	if !ok {
		return fmt.Errorf("invalid key type %T", handle)
	}
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	s.procLock.Lock()
	found := s.processor.removeListener(l)
	s.procLock.Unlock()
	if found {
		s.emit(StepEvent{Kind: StepRemoved, Handler: l.id})
	}
	return nil
}

// ShutDownEventHandler removes handle from informer, as RemoveEventHandler does, and then waits
// until the handler can no longer be called: under Run, until the registration's goroutine has
// returned from the callback it was in, if any; under the step driver, or for an informer that
// never ran, at once, since nothing calls a handler concurrently (informer.md §1.3, v0.37).
// Like RemoveEventHandler it is idempotent: a removed handle, or one removed by the informer's
// stop, returns at once. It must not be called from inside that handler's own callback under Run
// (it would wait for itself), and a handle of another informer makes it wait until that informer
// lets go of it, as in client-go. A handle that is not this package's gives an error.
func ShutDownEventHandler(informer SharedInformer, handle ResourceEventHandlerRegistration) error {
	if err := informer.RemoveEventHandler(handle); err != nil {
		return err
	}
	sc, ok := handle.(interface{ ShutdownChan() <-chan struct{} })
	if !ok {
		return errors.New("handle does not support ShutdownChan()")
	}
	<-sc.ShutdownChan()
	return nil
}

// GetStore implements SharedInformer.
func (s *sharedIndexInformer) GetStore() Store { return s.indexer }

// GetIndexer implements SharedIndexInformer.
func (s *sharedIndexInformer) GetIndexer() Indexer { return s.indexer }

// AddIndexers implements SharedIndexInformer (informer.md §1.5).
func (s *sharedIndexInformer) AddIndexers(indexers Indexers) error {
	s.startedLock.Lock()
	defer s.startedLock.Unlock()
	if s.stopped {
		return errors.New("indexer was not added because it has stopped already")
	}
	return s.indexer.AddIndexers(indexers)
}

// HasSynced implements SharedInformer.
func (s *sharedIndexInformer) HasSynced() bool { return s.synced.Load() }

// HasSyncedChecker implements SharedInformer.
func (s *sharedIndexInformer) HasSyncedChecker() DoneChecker { return informerChecker{s} }

// checkerName is the informer's DoneChecker name (informer.md §1.4).
func (s *sharedIndexInformer) checkerName() string {
	if s.direct != nil {
		// A Runner's sync is its queue's, as client-go's controller's is.
		q := "RealFIFO"
		if s.queueMode == QueueDeltaFIFO {
			q = "DeltaFIFO"
		}
		return fmt.Sprintf("%s %T", q, s.exampleObject)
	}
	return fmt.Sprintf("SharedIndexInformer %T", s.exampleObject)
}

// informerChecker is the informer's DoneChecker: Done is closed when it latches synced.
type informerChecker struct{ s *sharedIndexInformer }

func (c informerChecker) Name() string          { return c.s.checkerName() }
func (c informerChecker) Done() <-chan struct{} { return c.s.syncedCh }

// LastSyncResourceVersion implements SharedInformer.
func (s *sharedIndexInformer) LastSyncResourceVersion() string {
	s.reflectorLock.Lock()
	defer s.reflectorLock.Unlock()
	if s.reflector == nil {
		return ""
	}
	return s.reflector.LastSyncResourceVersion()
}

// SetWatchErrorHandler implements SharedInformer.
func (s *sharedIndexInformer) SetWatchErrorHandler(handler WatchErrorHandler) error {
	var h WatchErrorHandlerWithContext
	if handler != nil {
		h = func(_ context.Context, r *Reflector, err error) { handler(r, err) }
	}
	return s.beforeStart(func() { s.watchErrorHandler = h })
}

// SetWatchErrorHandlerWithContext implements SharedInformer.
func (s *sharedIndexInformer) SetWatchErrorHandlerWithContext(handler WatchErrorHandlerWithContext) error {
	return s.beforeStart(func() { s.watchErrorHandler = handler })
}

// SetTransform implements SharedInformer.
func (s *sharedIndexInformer) SetTransform(handler TransformFunc) error {
	return s.beforeStart(func() { s.transform = handler })
}

// beforeStart runs set under startedLock if the informer has not started, and otherwise returns
// client-go's "informer has already started" (informer.md §1.5).
func (s *sharedIndexInformer) beforeStart(set func()) error {
	s.startedLock.Lock()
	defer s.startedLock.Unlock()
	if s.started {
		return errAlreadyStarted
	}
	set()
	return nil
}

// IsStopped implements SharedInformer.
func (s *sharedIndexInformer) IsStopped() bool {
	s.startedLock.Lock()
	defer s.startedLock.Unlock()
	return s.stopped
}

// start_locked is what both drivers do at start (informer.md §1.6 step 2): freeze the resync
// check period, build the queue and the Reflector, and mark the informer started. The Reflector
// writes to the queue through a [reflectorQueue]; queueLock and wake are the goroutine driver's
// queue lock and process-loop wake-up, nil in the step driver; ctx is what the watch error
// handler receives. Must hold startedLock.
func (s *sharedIndexInformer) start_locked(ctx context.Context, queueLock sync.Locker, wake func()) {
	invariant.Check(!s.started && !s.stopped, "informer: start of a started or stopped informer")
	s.queue = s.newQueue()
	s.processBatch, s.processSingle = s.handleBatchDeltas, s.handleDeltas
	s.processKeyed = s.handleKeyed
	store := reflectorQueue{s: s, lock: queueLock, wake: wake}
	opts := ReflectorOptions{
		Name:         s.objectDescription,
		ExpectedType: s.exampleObject,
		ResyncPeriod: s.resyncCheckPeriod,
		Clock:        s.clock,
		Rand:         s.reflectorRand,
		// informer.md §7.3: decided when the Reflector is built, at start, as client-go does.
		UseWatchList: !s.disableWatchList && !watchListUnsupported(s.lw),
		Transform:    s.transform,
	}
	if s.direct == nil {
		opts.ShouldResync = s.shouldResync // a Runner resyncs at every tick (informer.md §1.7)
	}
	if h := s.watchErrorHandler; h != nil {
		opts.OnWatchError = func(err error) { h(ctx, s.reflector, err) }
	}
	if s.observer != nil {
		opts.OnEvent = func(e ReflectorEvent) { s.emit(StepEvent{Kind: StepReflector, Reflector: e}) }
	}
	r, err := NewReflector(store, opts)
	invariant.Check(err == nil, "informer: NewReflector: %v", err)
	s.reflectorLock.Lock()
	s.reflector = r
	s.reflectorLock.Unlock()
	s.started = true
}

// reflectorQueue is the queue as the Reflector sees it, in both drivers. Each write runs under
// lock (the goroutine driver's queue lock; nil in the step driver), then wakes the process loop
// (wake, may be nil) and latches the informer synced if the queue now says so: a first Replace
// with nothing to process syncs a DeltaFIFO or a non-atomic RealFIFO at once, with no pop
// (informer.md §5.1, §16), as client-go's synced channel closes inside Replace.
type reflectorQueue struct {
	s    *sharedIndexInformer
	lock sync.Locker
	wake func()
}

var _ BookmarkQueue = reflectorQueue{}

func (rq reflectorQueue) do(f func(q Queue) error) error {
	if rq.lock != nil {
		rq.lock.Lock()
		defer rq.lock.Unlock()
	}
	err := f(rq.s.queue)
	if rq.wake != nil {
		rq.wake()
	}
	rq.s.latchIfQueueSynced()
	return err
}

func (rq reflectorQueue) Add(obj any) error {
	return rq.do(func(q Queue) error { return q.Add(obj) })
}

func (rq reflectorQueue) Update(obj any) error {
	return rq.do(func(q Queue) error { return q.Update(obj) })
}

func (rq reflectorQueue) Delete(obj any) error {
	return rq.do(func(q Queue) error { return q.Delete(obj) })
}

func (rq reflectorQueue) Replace(list []any, rv string) error {
	return rq.do(func(q Queue) error { return q.Replace(list, rv) })
}

func (rq reflectorQueue) Resync() error {
	return rq.do(Queue.Resync)
}

// Bookmark forwards to a BookmarkQueue and ignores bookmarks otherwise (DeltaFIFO has no
// bookmarks, informer.md §5.3).
func (rq reflectorQueue) Bookmark(rv string) error {
	if _, ok := rq.s.queue.(BookmarkQueue); !ok {
		return nil
	}
	return rq.do(func(q Queue) error { return q.(BookmarkQueue).Bookmark(rv) })
}

// newQueue builds the queue of the configured mode (informer.md §1.6, §5).
func (s *sharedIndexInformer) newQueue() Queue {
	switch s.queueMode {
	case QueueRealFIFONonAtomic:
		return NewRealFIFO(RealFIFOOptions{
			// KeyFunction nil: MetaNamespaceKeyFunc, see the atomic queue below.
			KnownObjects: s.indexer,
			Transformer:  s.transform,
		})
	case QueueDeltaFIFO:
		return NewDeltaFIFOWithOptions(DeltaFIFOOptions{
			KeyFunction:           MetaNamespaceKeyFunc,
			KnownObjects:          s.indexer,
			EmitDeltaTypeReplaced: true,
			Transformer:           s.transform,
		})
	}
	return NewRealFIFO(RealFIFOOptions{
		// KeyFunction nil is MetaNamespaceKeyFunc, and lets the queue keep the keys it computes
		// (RealFIFO.itemKeys).
		Transformer:           s.transform,
		AtomicEvents:          true,
		EmitDeltaTypeBookmark: true,
	})
}

// shouldResync is the Reflector's ShouldResync (informer.md §2.4).
func (s *sharedIndexInformer) shouldResync() bool {
	s.procLock.Lock()
	due := s.processor.shouldResync(s.clock.Now())
	var ids []int
	if s.observer != nil {
		for _, l := range s.processor.listeners {
			if l.isSyncing {
				ids = append(ids, l.id)
			}
		}
	}
	s.procLock.Unlock()
	s.emit(StepEvent{Kind: StepResyncChecked, Handlers: ids})
	return due
}

// popOnce pops one item or one batch and handles it (informer.md §6.1), then latches the
// informer synced when the queue says its initial population has been processed (§1.4; a
// DeltaFIFO says so already while the last initial item is processed, see handleDeltas). The
// caller serialises queue access. The processing error is returned for the step driver's
// benefit; the process loop drops it, as client-go's does.
func (s *sharedIndexInformer) popOnce() error {
	return s.popWith(s.processBatch, s.processSingle, s.processKeyed)
}

// popWith is popOnce with the queue's process functions given: handleBatchDeltas, handleDeltas
// and handleKeyed, or the goroutine driver's wrappers around them, which release its queue lock
// while they run. A RealFIFO pops with popKeyed, which hands processKeyed the keys it kept (Pop
// or PopBatch as batchPop says); a DeltaFIFO with Pop. The caller passes funcs it built once: a
// method value built here would be allocated at every pop.
func (s *sharedIndexInformer) popWith(processBatch ProcessBatchFunc, processSingle PopProcessFunc, processKeyed keyedProcessFunc) error {
	var err error
	if f, ok := s.queue.(*RealFIFO); ok && !s.unkeyed {
		err = f.popKeyed(s.batchPop, processKeyed)
	} else if bq, ok := s.queue.(BatchQueue); ok && s.batchPop {
		err = bq.PopBatch(processBatch, processSingle)
	} else {
		_, err = s.queue.Pop(processSingle)
	}
	s.latchIfQueueSynced()
	return err
}

// latchIfQueueSynced latches the informer synced once the queue says its initial population has
// been processed (informer.md §1.4), and tells every listener's sync tracker (client-go's synced
// channel and per-listener sync watchers, §4.4). The caller serialises queue access.
func (s *sharedIndexInformer) latchIfQueueSynced() {
	if s.synced.Load() || !s.queue.HasSynced() || !s.synced.CompareAndSwap(false, true) {
		return
	}
	close(s.syncedCh)
	s.emit(StepEvent{Kind: StepSynced})
	s.procLock.Lock()
	ids := s.processor.upstreamSynced(nil)
	s.procLock.Unlock()
	for _, id := range ids {
		s.emit(StepEvent{Kind: StepHandlerSynced, Handler: id})
	}
}

// handleDeltas is the queue's PopProcessFunc (informer.md §6.2): under blockDeltas, update the
// cache and distribute, delta by delta. A DeltaFIFO has already counted the item as popped, so
// popping the last initial item latches the informer synced before it is processed (§5.2); a
// RealFIFO counts it only after processing returns, so the check here is then a no-op (§5.3).
func (s *sharedIndexInformer) handleDeltas(obj any, isInInitialList bool) error {
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	return s.handleDeltas_locked(obj, isInInitialList)
}

// handleDeltas_locked is handleDeltas with blockDeltas held.
func (s *sharedIndexInformer) handleDeltas_locked(obj any, isInInitialList bool) error {
	deltas, ok := obj.(Deltas)
	invariant.Check(ok, "informer: queue popped %T, want Deltas", obj)
	s.emitPoppedGroup(deltas, isInInitialList, true)
	s.latchIfQueueSynced()
	return processDeltas(s.handler(), s.cacheForProcessing(), deltas, isInInitialList, DeletionHandlingMetaNamespaceKeyFunc, s.shuffle)
}

// handleBatchDeltas is the queue's ProcessBatchFunc (informer.md §6.4).
func (s *sharedIndexInformer) handleBatchDeltas(deltas []Delta, isInInitialList bool) error {
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	return s.handleBatchDeltas_locked(deltas, isInInitialList)
}

// handleBatchDeltas_locked is handleBatchDeltas with blockDeltas held.
func (s *sharedIndexInformer) handleBatchDeltas_locked(deltas []Delta, isInInitialList bool) error {
	s.emitPopped(deltas, isInInitialList)
	return processDeltasInBatch(s.handler(), s.cacheForProcessing(), deltas, isInInitialList, DeletionHandlingMetaNamespaceKeyFunc)
}

// cacheForProcessing is the cache, wrapped to report its writes when someone observes.
func (s *sharedIndexInformer) cacheForProcessing() Store {
	if s.observer == nil {
		return s.indexer
	}
	return observedCache{Indexer: s.indexer, s: s}
}

// handler is what processDeltas notifies: a Runner's own handler, called synchronously inside
// the pop (informer.md §1.7), or the processor's distribution to the listeners.
func (s *sharedIndexInformer) handler() ResourceEventHandler {
	if s.direct != nil {
		return s.direct
	}
	return distributor{s}
}

// distributor is the ResourceEventHandler processDeltas calls: the informer's notification
// hooks (informer.md §6.5). It is a separate type so the informer does not export OnAdd.
type distributor struct{ s *sharedIndexInformer }

func (d distributor) OnAdd(obj any, isInInitialList bool) {
	d.s.distribute(notification{kind: NotificationAdd, newObj: obj, isInInitialList: isInInitialList}, false)
}

// OnUpdate classifies the update as a sync iff both objects have metadata and equal
// resourceVersions (informer.md §2.5, §6.5, §13 rule 3).
func (d distributor) OnUpdate(oldObj, newObj any) {
	d.s.distribute(notification{kind: NotificationUpdate, oldObj: oldObj, newObj: newObj}, isSyncUpdate(oldObj, newObj))
}

// isSyncUpdate is the sync classification of an update (informer.md §2.5, §6.5, §13 rule 3).
func isSyncUpdate(oldObj, newObj any) bool {
	if om, err := meta.Accessor(oldObj); err == nil {
		if nm, err := meta.Accessor(newObj); err == nil {
			return om.GetResourceVersion() == nm.GetResourceVersion()
		}
	}
	return false
}

func (d distributor) OnDelete(obj any) {
	d.s.distribute(notification{kind: NotificationDelete, oldObj: obj}, false)
}

func (s *sharedIndexInformer) distribute(n notification, isSync bool) {
	// The receivers' ids are only for the observer's trace; without one they are not collected,
	// which saves an allocation per notification (the observer is set before start and never
	// changes, so this is the same decision emitNotification makes).
	collect := s.observer != nil
	n = s.withKey(n)
	s.procLock.Lock()
	ids := s.processor.distribute(&n, isSync, collect)
	s.procLock.Unlock()
	s.emitNotification(StepDistributed, &n, isSync, ids)
}

// deliver hands the next notification of l to its handler (one unit of listener work,
// informer.md §4.4): take it under procLock, call the handler without any lock (a panic
// propagates to the caller), then, for an initial-list add, record its completion under
// procLock (nothing else has completion bookkeeping, so the lock is taken only then).
func (s *sharedIndexInformer) deliver(l *listener) {
	s.procLock.Lock()
	if l.pending() == 0 {
		s.procLock.Unlock()
		invariant.Check(false, "informer: deliver to h%d with nothing pending", l.id)
	}
	n := l.next()
	s.procLock.Unlock()
	if s.observer != nil { // a StepDelivered event reads ids[0] and keeps no slice
		s.emitNotification(StepDelivered, &n, false, l.self[:])
	}
	l.call(&n)
	if !n.initialAdd() {
		return
	}
	s.procLock.Lock()
	latched := l.finish(&n)
	s.procLock.Unlock()
	if latched {
		s.emit(StepEvent{Kind: StepHandlerSynced, Handler: l.id})
	}
}

// stop is the end of both drivers (informer.md §1.6 step 4, §14 T9): stopped, then every
// listener closed and its buffer dropped.
func (s *sharedIndexInformer) stop() {
	s.startedLock.Lock()
	s.stopped = true
	s.startedLock.Unlock()
	s.procLock.Lock()
	s.processor.stop()
	s.procLock.Unlock()
	s.emit(StepEvent{Kind: StepStopped})
}
