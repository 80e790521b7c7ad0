package informer

import (
	"context"
	"math/rand/v2"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/informersim/informersim/internal/invariant"
)

// InformerOptions configures a [Runner], the non-shared informer of informer.md §1.7. The first
// six fields are client-go's; the rest are this package's, as in [SharedIndexInformerOptions].
type InformerOptions struct {
	// ListerWatcher lists and watches the resource. Required.
	ListerWatcher ListerWatcher
	// ObjectType is an example of the listed type (the Reflector's expected type).
	ObjectType runtime.Object
	// Handler is called synchronously by the process loop for every change. Required.
	Handler ResourceEventHandler
	// ResyncPeriod is the resync period; at every tick the handler gets OnUpdate(o, o) for every
	// cached object. 0 means never.
	ResyncPeriod time.Duration
	// Indexers are the store's indexers; the returned Store is then an [Indexer] too (it always
	// is here).
	Indexers Indexers
	// Transform, if set, rewrites objects before they are queued (informer.md §1.5).
	Transform TransformFunc

	// Clock drives the Reflector's timers; default clock.RealClock{}.
	Clock clock.WithTicker
	// Rand seeds the Reflector's draws; default: a fixed seed.
	Rand *rand.Rand
	// QueueMode selects the queue; 0 means QueueRealFIFO.
	QueueMode QueueMode
	// DisableBatchPop makes the process loop pop one item at a time.
	DisableBatchPop bool
	// DisableWatchList: see [SharedIndexInformerOptions].
	DisableWatchList bool
}

// Runner is client-go's non-shared informer, the Controller that NewInformerWithOptions returns
// (informer.md §1.7): a Reflector, a queue and a process loop that applies each popped delta to
// its store and calls its one handler synchronously, inside the pop. It has no processor and no
// listeners, so there is no per-handler resync filter (every Sync delta and SyncAll item yields
// OnUpdate) and no ShouldResync (the queue resyncs at every tick). A panic in the handler
// propagates out of Run. The type is not called Controller because this project keeps that word
// for user code (style rule 19), and informer.Informer would stutter.
type Runner struct {
	s *sharedIndexInformer
}

// NewInformerWithOptions returns the store a Runner keeps up to date and the Runner, not yet
// started (informer.md §1.7). A nil ListerWatcher or Handler, an invalid QueueMode or a negative
// ResyncPeriod is a programming error and panics.
func NewInformerWithOptions(options InformerOptions) (Store, *Runner) {
	invariant.Check(options.ListerWatcher != nil, "informer: NewInformerWithOptions without a ListerWatcher")
	invariant.Check(options.Handler != nil, "informer: NewInformerWithOptions without a Handler")
	inf := NewSharedIndexInformerWithOptions(options.ListerWatcher, options.ObjectType, SharedIndexInformerOptions{
		ResyncPeriod:     options.ResyncPeriod,
		Indexers:         options.Indexers,
		Clock:            options.Clock,
		Rand:             options.Rand,
		QueueMode:        options.QueueMode,
		DisableBatchPop:  options.DisableBatchPop,
		DisableWatchList: options.DisableWatchList,
	})
	s := inf.(*sharedIndexInformer)
	s.direct = options.Handler
	s.transform = options.Transform
	return s.indexer, &Runner{s: s}
}

// Run lists, watches and processes until ctx is done, calling the handler on this goroutine; it
// returns when ctx is done and its other goroutine has returned, or panics with the handler's
// panic (informer.md §1.7, client-go TestPanicPropagated). Run on a Runner that ran before, or
// is driven by Steps, does nothing or panics as SharedInformer.Run does.
func (r *Runner) Run(ctx context.Context) { r.s.Run(ctx) }

// HasSynced reports whether the queue's initial population has been processed (informer.md §1.4).
func (r *Runner) HasSynced() bool { return r.s.HasSynced() }

// HasSyncedChecker is HasSynced as a [DoneChecker] named after the queue ("RealFIFO <type>").
func (r *Runner) HasSyncedChecker() DoneChecker { return r.s.HasSyncedChecker() }

// LastSyncResourceVersion is the Reflector's last synced resourceVersion; "" before start.
func (r *Runner) LastSyncResourceVersion() string { return r.s.LastSyncResourceVersion() }

// Steps returns the deterministic driver of the Runner, as [Steps] does for a shared informer.
// The handler is called inside ProcessNext, so there are no listeners and DeliverNext has
// nothing to do; a handler panic propagates out of ProcessNext.
func (r *Runner) Steps() (*Stepper, error) { return Steps(r.s) }
