package informer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// This file is the SharedInformerFactory of informer.md §9, in the shape of client-go's dynamic
// informer factory (dynamicinformer): one informer per GroupVersionResource, over
// *unstructured.Unstructured objects, with the typed factory's options.

// Client is what a [SharedInformerFactory] lists and watches through: the ListerWatcher of one
// resource in one namespace ("" for all). The factory defines it (style rule 2) so that any
// apiserver client can back it with a one-line [ClientFunc]: the fake apiserver's
// Server.ListerWatcher, or client-go's dynamic client through a cache.ListWatch.
type Client interface {
	ListerWatcherFor(gvr schema.GroupVersionResource, namespace string) ListerWatcher
}

// ClientFunc adapts a function to [Client], for example
//
//	informer.ClientFunc(func(gvr schema.GroupVersionResource, ns string) informer.ListerWatcher {
//	    return srv.ListerWatcher(gvr, ns) // *fakeapi.Server
//	})
type ClientFunc func(gvr schema.GroupVersionResource, namespace string) ListerWatcher

// ListerWatcherFor implements Client.
func (f ClientFunc) ListerWatcherFor(gvr schema.GroupVersionResource, namespace string) ListerWatcher {
	return f(gvr, namespace)
}

// TweakListOptionsFunc edits the options of every LIST and WATCH a factory's informers send
// (selectors, for example), as client-go's does.
type TweakListOptionsFunc func(*metav1.ListOptions)

// GenericInformer is one resource's informer with a lister over its cache (client-go's
// informers.GenericInformer).
type GenericInformer interface {
	Informer() SharedIndexInformer
	Lister() GenericLister
}

// SyncResult is what WaitForCacheSyncWithContext returns (client-go's cache.SyncResult, keyed by
// resource instead of Go type).
type SyncResult struct {
	// Err is nil if every started informer synced, else why the wait stopped
	// (context.Cause of the context).
	Err error
	// Synced says, for each started informer, whether it had synced.
	Synced map[schema.GroupVersionResource]bool
}

// AsError is nil if every cache synced, else an error naming the resources that did not, in
// sorted order, and wrapping Err.
func (r SyncResult) AsError() error {
	if r.Err == nil {
		return nil
	}
	var unsynced []string
	for gvr, ok := range r.Synced {
		if !ok {
			unsynced = append(unsynced, gvr.String())
		}
	}
	slices.Sort(unsynced)
	return fmt.Errorf("failed to sync all caches: %s: %w", strings.Join(unsynced, ", "), r.Err)
}

// SharedInformerOption configures a [SharedInformerFactory].
type SharedInformerOption func(*factoryOptions) error

type factoryOptions struct {
	namespace      string
	tweak          TweakListOptionsFunc
	customResync   map[schema.GroupVersionResource]time.Duration
	transform      TransformFunc
	informerOpts   func(schema.GroupVersionResource, *SharedIndexInformerOptions)
	stepDriven     bool
	onStepInformer StepHost
}

// WithNamespace limits every informer of the factory to namespace (default: all namespaces).
func WithNamespace(namespace string) SharedInformerOption {
	return func(o *factoryOptions) error {
		o.namespace = namespace
		return nil
	}
}

// WithTweakListOptions edits the options of every LIST and WATCH request (informer.md §9).
func WithTweakListOptions(tweak TweakListOptionsFunc) SharedInformerOption {
	return func(o *factoryOptions) error {
		o.tweak = tweak
		return nil
	}
}

// WithCustomResyncConfig overrides the default resync period per resource. Later calls add to
// earlier ones. A negative period is an error.
func WithCustomResyncConfig(resync map[schema.GroupVersionResource]time.Duration) SharedInformerOption {
	return func(o *factoryOptions) error {
		for gvr, d := range resync {
			if d < 0 {
				return fmt.Errorf("informer: WithCustomResyncConfig: negative resync %v for %v", d, gvr)
			}
			if o.customResync == nil {
				o.customResync = map[schema.GroupVersionResource]time.Duration{}
			}
			o.customResync[gvr] = d
		}
		return nil
	}
}

// WithTransform sets the transform of every informer the factory creates (informer.md §1.5).
func WithTransform(transform TransformFunc) SharedInformerOption {
	return func(o *factoryOptions) error {
		o.transform = transform
		return nil
	}
}

// WithInformerOptions lets the caller edit the options of each informer before it is built:
// Clock, Rand, QueueMode, WatchListMode... The factory has set ResyncPeriod, Indexers (the
// namespace index) and ObjectDescription (the resource) already.
func WithInformerOptions(edit func(gvr schema.GroupVersionResource, opts *SharedIndexInformerOptions)) SharedInformerOption {
	return func(o *factoryOptions) error {
		o.informerOpts = edit
		return nil
	}
}

// FactoryInformer describes an informer a step-driven factory has just created, for the driver
// that will step it (see [WithStepDriver]).
type FactoryInformer struct {
	GVR       schema.GroupVersionResource
	Namespace string
	Informer  SharedIndexInformer
	// Stepper is the informer's step API; Start has not been called.
	Stepper *Stepper
	// ListerWatcher is what the client returned, before the tweak: a driver that performs the
	// Reflector's requests itself must apply Tweak to their options.
	ListerWatcher ListerWatcher
	// Tweak is the factory's TweakListOptionsFunc, nil if none.
	Tweak TweakListOptionsFunc
}

// StepHost adopts an informer a step-driven factory has just created (see [WithStepDriver]).
// It returns the function the factory's Start calls to start that informer (nil: the factory
// calls Stepper.Start itself), or an error, which ForResource returns, forgetting the informer.
// It runs under the factory's lock: it must not call back into the factory.
type StepHost func(FactoryInformer) (start func() error, err error)

// WithStepDriver builds the factory for a deterministic driver: every informer it creates is put
// under the step driver at once ([Steps]) and handed to host, inside ForResource, so that the
// driver can set its observer and create the actors that step it. Start then starts each
// not-yet-started informer through the function host returned (or Stepper.Start), in creation
// order and without goroutines; WaitForCacheSync reports HasSynced without waiting; Shutdown has
// nothing to wait for (the driver stops the Steppers).
func WithStepDriver(host StepHost) SharedInformerOption {
	return func(o *factoryOptions) error {
		if host == nil {
			return errors.New("informer: WithStepDriver: nil host")
		}
		o.stepDriven = true
		o.onStepInformer = host
		return nil
	}
}

// SharedInformerFactory hands out one shared informer per resource and starts them together
// (informer.md §9). Its method names are client-go's.
type SharedInformerFactory interface {
	// ForResource returns the informer of gvr, creating it on the first call; every later call
	// returns the same one. gvr needs a Version and a Resource.
	ForResource(gvr schema.GroupVersionResource) (GenericInformer, error)
	// Start starts every informer created so far and not yet started, each on its own
	// goroutine running until stopCh closes. It is idempotent, and does nothing after Shutdown.
	Start(stopCh <-chan struct{})
	// StartWithContext is Start until ctx is done.
	StartWithContext(ctx context.Context)
	// WaitForCacheSync waits until every started informer has synced or stopCh closes, and
	// reports each one's HasSynced.
	WaitForCacheSync(stopCh <-chan struct{}) map[schema.GroupVersionResource]bool
	// WaitForCacheSyncWithContext is WaitForCacheSync until ctx is done, without polling.
	WaitForCacheSyncWithContext(ctx context.Context) SyncResult
	// Shutdown makes later Starts no-ops and waits until every informer goroutine Start
	// started has returned. It does not stop them: cancel their context (or close stopCh)
	// first. It may be called more than once.
	Shutdown()
}

// NewSharedInformerFactory returns a factory whose informers resync every defaultResync
// (0: never) and list and watch all namespaces.
func NewSharedInformerFactory(client Client, defaultResync time.Duration) (SharedInformerFactory, error) {
	return NewSharedInformerFactoryWithOptions(client, defaultResync)
}

// NewFilteredSharedInformerFactory is NewSharedInformerFactoryWithOptions with WithNamespace and
// WithTweakListOptions.
func NewFilteredSharedInformerFactory(client Client, defaultResync time.Duration, namespace string, tweak TweakListOptionsFunc) (SharedInformerFactory, error) {
	return NewSharedInformerFactoryWithOptions(client, defaultResync, WithNamespace(namespace), WithTweakListOptions(tweak))
}

// NewSharedInformerFactoryWithOptions returns a factory configured by options. A nil client, a
// negative resync or an invalid option is an error.
func NewSharedInformerFactoryWithOptions(client Client, defaultResync time.Duration, options ...SharedInformerOption) (SharedInformerFactory, error) {
	if client == nil {
		return nil, errors.New("informer: NewSharedInformerFactory: nil client")
	}
	if defaultResync < 0 {
		return nil, fmt.Errorf("informer: NewSharedInformerFactory: negative resync %v", defaultResync)
	}
	f := &sharedInformerFactory{
		client:        client,
		defaultResync: defaultResync,
		informers:     map[schema.GroupVersionResource]*genericInformer{},
		started:       map[schema.GroupVersionResource]bool{},
	}
	for i, opt := range options {
		if opt == nil {
			return nil, fmt.Errorf("informer: NewSharedInformerFactory: option %d is nil", i)
		}
		if err := opt(&f.opts); err != nil {
			return nil, err
		}
	}
	return f, nil
}

type sharedInformerFactory struct {
	client        Client
	defaultResync time.Duration
	opts          factoryOptions

	lock         sync.Mutex
	informers    map[schema.GroupVersionResource]*genericInformer
	order        []schema.GroupVersionResource // creation order: Start starts in it
	started      map[schema.GroupVersionResource]bool
	shuttingDown bool
	wg           sync.WaitGroup
}

// ForResource implements SharedInformerFactory.
func (f *sharedInformerFactory) ForResource(gvr schema.GroupVersionResource) (GenericInformer, error) {
	if gvr.Version == "" || gvr.Resource == "" {
		return nil, fmt.Errorf("informer: ForResource: %q needs a version and a resource", gvr.String())
	}
	f.lock.Lock()
	defer f.lock.Unlock()
	if gi, ok := f.informers[gvr]; ok {
		return gi, nil
	}
	src := f.client.ListerWatcherFor(gvr, f.opts.namespace)
	if src == nil {
		return nil, fmt.Errorf("informer: ForResource: the client has no ListerWatcher for %v", gvr)
	}
	lw := src
	if f.opts.tweak != nil {
		lw = tweakedListerWatcher{inner: src, tweak: f.opts.tweak}
	}
	resync := f.defaultResync
	if d, ok := f.opts.customResync[gvr]; ok {
		resync = d
	}
	o := SharedIndexInformerOptions{
		ResyncPeriod:      resync,
		Indexers:          Indexers{NamespaceIndex: MetaNamespaceIndexFunc},
		ObjectDescription: gvr.String(),
	}
	if f.opts.informerOpts != nil {
		f.opts.informerOpts(gvr, &o)
	}
	if o.ResyncPeriod < 0 {
		return nil, fmt.Errorf("informer: ForResource %v: negative ResyncPeriod %v", gvr, o.ResyncPeriod)
	}
	if o.QueueMode < 0 || o.QueueMode > QueueDeltaFIFO {
		return nil, fmt.Errorf("informer: ForResource %v: invalid QueueMode %d", gvr, int(o.QueueMode))
	}
	inf := NewSharedIndexInformerWithOptions(lw, &unstructured.Unstructured{}, o)
	if f.opts.transform != nil {
		_ = inf.SetTransform(f.opts.transform) // cannot fail before start; client-go ignores it too
	}
	gi := &genericInformer{informer: inf, lister: NewGenericLister(inf.GetIndexer(), gvr.GroupResource())}
	if f.opts.stepDriven {
		st, err := Steps(inf)
		if err != nil {
			return nil, fmt.Errorf("informer: ForResource %v: %w", gvr, err)
		}
		start, err := f.opts.onStepInformer(FactoryInformer{
			GVR: gvr, Namespace: f.opts.namespace, Informer: inf, Stepper: st,
			ListerWatcher: src, Tweak: f.opts.tweak,
		})
		if err != nil {
			return nil, fmt.Errorf("informer: ForResource %v: %w", gvr, err)
		}
		if start == nil {
			start = func() error { st.Start(); return nil }
		}
		gi.start = start
	}
	f.informers[gvr] = gi
	f.order = append(f.order, gvr)
	return gi, nil
}

// Start implements SharedInformerFactory.
func (f *sharedInformerFactory) Start(stopCh <-chan struct{}) {
	if f.opts.stepDriven {
		f.startSteppers()
		return
	}
	ctx, _ := contextOf(stopCh) // cancelled when stopCh closes
	f.startGoroutines(ctx)
}

// StartWithContext implements SharedInformerFactory.
func (f *sharedInformerFactory) StartWithContext(ctx context.Context) {
	if f.opts.stepDriven {
		f.startSteppers()
		return
	}
	f.startGoroutines(ctx)
}

// startSteppers is Start for a step-driven factory: each new informer's start function, in
// creation order. An informer whose start fails (its driver refused) stays unstarted, so a
// later Start tries it again.
func (f *sharedInformerFactory) startSteppers() {
	f.lock.Lock()
	defer f.lock.Unlock()
	if f.shuttingDown {
		return
	}
	for _, gvr := range f.order {
		if !f.started[gvr] && f.informers[gvr].start() == nil {
			f.started[gvr] = true
		}
	}
}

// WaitForCacheSync implements SharedInformerFactory.
func (f *sharedInformerFactory) WaitForCacheSync(stopCh <-chan struct{}) map[schema.GroupVersionResource]bool {
	if f.opts.stepDriven {
		return f.WaitForCacheSyncWithContext(context.Background()).Synced
	}
	ctx, cancel := contextOf(stopCh)
	defer cancel()
	return f.WaitForCacheSyncWithContext(ctx).Synced
}

// WaitForCacheSyncWithContext implements SharedInformerFactory.
func (f *sharedInformerFactory) WaitForCacheSyncWithContext(ctx context.Context) SyncResult {
	f.lock.Lock()
	started := map[schema.GroupVersionResource]SharedIndexInformer{}
	for gvr, gi := range f.informers {
		if f.started[gvr] {
			started[gvr] = gi.informer
		}
	}
	stepDriven := f.opts.stepDriven
	f.lock.Unlock()
	if !stepDriven {
		checkers := make([]DoneChecker, 0, len(started))
		for _, inf := range started {
			checkers = append(checkers, inf.HasSyncedChecker())
		}
		WaitFor(ctx, "", checkers...)
	}
	res := SyncResult{Synced: make(map[schema.GroupVersionResource]bool, len(started))}
	failed := false
	for gvr, inf := range started {
		ok := inf.HasSynced()
		res.Synced[gvr] = ok
		failed = failed || !ok
	}
	if failed {
		res.Err = context.Cause(ctx)
		if res.Err == nil {
			res.Err = errors.New("informer: not synced yet (step-driven factory)")
		}
	}
	return res
}

// Shutdown implements SharedInformerFactory.
func (f *sharedInformerFactory) Shutdown() {
	defer f.wg.Wait()
	f.lock.Lock()
	defer f.lock.Unlock()
	f.shuttingDown = true
}

type genericInformer struct {
	informer SharedIndexInformer
	lister   GenericLister
	start    func() error // step-driven factory only: what Start calls
}

func (g *genericInformer) Informer() SharedIndexInformer { return g.informer }
func (g *genericInformer) Lister() GenericLister         { return g.lister }

// tweakedListerWatcher applies the factory's tweak to a copy of every request's options, and
// keeps the inner ListerWatcher's answer to the watch-list probe (client-go's
// ToListWatcherWithWatchListSemantics), so a client that cannot serve watch-list is still
// recognised behind the tweak.
type tweakedListerWatcher struct {
	inner ListerWatcher
	tweak TweakListOptionsFunc
}

func (t tweakedListerWatcher) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	t.tweak(&options)
	return t.inner.ListWithContext(ctx, options)
}

func (t tweakedListerWatcher) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	t.tweak(&options)
	return t.inner.WatchWithContext(ctx, options)
}

func (t tweakedListerWatcher) IsWatchListSemanticsUnSupported() bool {
	return watchListUnsupported(t.inner)
}
