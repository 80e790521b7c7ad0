package clientgo

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim/world"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/informers/admissionregistration"
	"k8s.io/client-go/informers/apiserverinternal"
	"k8s.io/client-go/informers/apps"
	"k8s.io/client-go/informers/autoscaling"
	"k8s.io/client-go/informers/batch"
	"k8s.io/client-go/informers/certificates"
	"k8s.io/client-go/informers/coordination"
	"k8s.io/client-go/informers/core"
	"k8s.io/client-go/informers/discovery"
	"k8s.io/client-go/informers/events"
	"k8s.io/client-go/informers/extensions"
	"k8s.io/client-go/informers/flowcontrol"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/informers/lifecycle"
	"k8s.io/client-go/informers/networking"
	"k8s.io/client-go/informers/node"
	"k8s.io/client-go/informers/policy"
	"k8s.io/client-go/informers/rbac"
	"k8s.io/client-go/informers/resource"
	"k8s.io/client-go/informers/scheduling"
	"k8s.io/client-go/informers/storage"
	"k8s.io/client-go/informers/storagemigration"
	"k8s.io/client-go/tools/cache"
)

// FactoryOptions are a factory's namespace, list options and default resync period, as client-go's
// informers.NewSharedInformerFactoryWithOptions takes them.
type FactoryOptions struct {
	// Namespace restricts every informer of the factory to one namespace; "" means all.
	Namespace string
	// TweakListOptions may set a label or field selector on every informer's LIST and WATCH
	// (the only fields the world's informers honour).
	TweakListOptions func(*metav1.ListOptions)
	// ResyncPeriod is the informers' default resync period; 0 means none.
	ResyncPeriod time.Duration
}

// Informers is the core of a shared informer factory over the world: one client-go
// cache.SharedIndexInformer per object type (an adapter over an informer of the world, whose
// cache holds the type's Go objects), started by Start, synced by WaitForCacheSync. Factory and
// the client-go factory (Env.KubeInformers) are built on it; a generated factory of a custom
// resource is too (see Factory).
type Informers struct {
	b    *bubble
	opts FactoryOptions
	env  *Env

	mu        sync.Mutex
	informers map[reflect.Type]*sharedIndexInformer
	order     []reflect.Type // creation order, for Start
	started   map[reflect.Type]bool
	wg        sync.WaitGroup
	// running counts the goroutines of Start not returned yet: a crashed life is over when
	// none is left (incarnation.gone).
	running  atomic.Int32
	shutdown bool
}

// For returns the factory's informer of obj's type (one per type), creating it in the world the
// first time. obj's type must be in the run's scheme and its resource served by the apiserver; if
// not, the run fails with that error (client-go's InformerFor cannot return one) and the informer
// returned never syncs.
func (f *Informers) For(obj runtime.Object) cache.SharedIndexInformer {
	typ := reflect.TypeOf(obj)
	f.mu.Lock()
	if inf, ok := f.informers[typ]; ok {
		f.mu.Unlock()
		return inf
	}
	f.mu.Unlock()
	var inf *sharedIndexInformer
	var err error
	if cerr := f.b.do("informer-for", "informer-for "+fmt.Sprintf("%T", obj), nil, func() {
		if f.env.crashed() {
			err = errCrashed // a dead process builds nothing in the world
			return
		}
		if inf, err = f.build(obj); err != nil {
			f.b.fail(err) // the run ends with it
		}
	}); cerr != nil {
		err = cerr // the run is over
	}
	if err != nil {
		inf = f.broken(obj, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if prev, ok := f.informers[typ]; ok {
		return prev
	}
	f.informers[typ] = inf
	f.order = append(f.order, typ)
	return inf
}

// build makes the world's informer for obj's type; it runs on the driver, inside a step.
func (f *Informers) build(obj runtime.Object) (*sharedIndexInformer, error) {
	if obj == nil {
		return nil, fmt.Errorf("clientgo: InformerFor: nil object")
	}
	gvks, _, err := f.env.scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return nil, fmt.Errorf("clientgo: InformerFor %T: the type is not in the run's scheme (Constructor.Scheme): %v", obj, err)
	}
	gvk := gvks[0]
	res, ok := f.env.resourceFor(gvk)
	if !ok {
		return nil, fmt.Errorf("clientgo: InformerFor %T: the apiserver serves no resource of kind %s (add it to Cluster.API.Resources)", obj, gvk)
	}
	ns := f.opts.Namespace
	if !res.Namespaced {
		ns = ""
	}
	var lo metav1.ListOptions
	if f.opts.TweakListOptions != nil {
		f.opts.TweakListOptions(&lo)
	}
	name := f.env.informerName(res.GVR, ns)
	t := &typed{scheme: f.env.scheme, gvk: gvk, b: f.b, lend: func(obj any) { f.b.lend(name, obj) }}
	src, err := f.b.w.NewSource(name, world.InformerSpec{
		Resource: res.GVR, Namespace: ns, LabelSelector: lo.LabelSelector, FieldSelector: lo.FieldSelector,
		Transform: t.transform, TransformReadsOnly: t.readsOnly(),
	})
	if err != nil {
		return nil, fmt.Errorf("clientgo: InformerFor %T: %w", obj, err)
	}
	inf := informer.NewSharedIndexInformerWithOptions(src.ListerWatcher(), src.ExampleObject(), src.Options(informer.SharedIndexInformerOptions{
		ResyncPeriod: f.opts.ResyncPeriod,
		Indexers:     informer.Indexers{cache.NamespaceIndex: informer.MetaNamespaceIndexFunc},
	}))
	if err := inf.SetTransform(t.transform); err != nil {
		return nil, fmt.Errorf("clientgo: InformerFor %T: %w", obj, err)
	}
	host, err := f.b.w.HostInformer(src, inf)
	if err != nil {
		return nil, fmt.Errorf("clientgo: InformerFor %T: %w", obj, err)
	}
	host.OnListRequest(func(o metav1.ListOptions) { f.b.hz.staleList(name, o) })
	return &sharedIndexInformer{b: f.b, env: f.env, name: name, resource: res.GVR.Resource, inf: inf, host: host, typed: t, indexer: indexer{Indexer: inf.GetIndexer(), b: f.b}, regs: map[*registration]bool{}}, nil
}

// broken is the informer For returns after a failure: a standalone informer that is never
// started, so nothing waits on it forever without the run's error being reported.
func (f *Informers) broken(obj runtime.Object, err error) *sharedIndexInformer {
	inf := informer.NewSharedIndexInformer(nil, obj, 0, informer.Indexers{})
	return &sharedIndexInformer{b: f.b, env: f.env, name: fmt.Sprintf("broken %T", obj), inf: inf, typed: &typed{scheme: f.env.scheme}, indexer: indexer{Indexer: inf.GetIndexer(), b: f.b}, regs: map[*registration]bool{}, host: nil}
}

// Start starts every informer created so far and not yet started, each in a goroutine (as
// client-go's factory does); Run then asks the world to start it.
func (f *Informers) Start(stopCh <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shutdown {
		return
	}
	for _, typ := range f.order {
		if f.started[typ] {
			continue
		}
		inf := f.informers[typ]
		if inf.host == nil {
			continue // broken: the run has already failed
		}
		f.started[typ] = true
		f.wg.Add(1)
		f.running.Add(1)
		go func() {
			defer f.wg.Done()
			defer f.running.Add(-1)
			inf.Run(stopCh)
		}()
	}
}

// drop stops the factory's informers in the world, in the order they were built, and makes later
// Starts do nothing: its life crashed (Env.drop).
func (f *Informers) drop() {
	f.mu.Lock()
	f.shutdown = true
	infs := make([]*sharedIndexInformer, 0, len(f.order))
	for _, typ := range f.order {
		infs = append(infs, f.informers[typ])
	}
	f.mu.Unlock()
	for _, inf := range infs {
		if inf.host != nil {
			inf.host.Stop()
		}
	}
}

// StartWithContext is Start with ctx.Done().
func (f *Informers) StartWithContext(ctx context.Context) { f.Start(ctx.Done()) }

// Shutdown waits for the goroutines of Start to end (their stop channel must be closed) and makes
// later Starts do nothing.
func (f *Informers) Shutdown() {
	f.mu.Lock()
	f.shutdown = true
	f.mu.Unlock()
	f.wg.Wait()
}

func (f *Informers) startedInformers() map[reflect.Type]*sharedIndexInformer {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[reflect.Type]*sharedIndexInformer{}
	for typ, inf := range f.informers {
		if f.started[typ] {
			out[typ] = inf
		}
	}
	return out
}

// WaitForCacheSync waits, polling as client-go's factory does, until every started informer
// has synced or stopCh is closed.
func (f *Informers) WaitForCacheSync(stopCh <-chan struct{}) map[reflect.Type]bool {
	res := map[reflect.Type]bool{}
	for typ, inf := range f.startedInformers() {
		res[typ] = cache.WaitForCacheSync(stopCh, inf.HasSynced)
	}
	return res
}

// WaitForCacheSyncWithContext waits without polling until every started informer has synced
// or ctx is done.
func (f *Informers) WaitForCacheSyncWithContext(ctx context.Context) cache.SyncResult {
	infs := f.startedInformers()
	var checkers []cache.DoneChecker
	for _, inf := range infs {
		checkers = append(checkers, inf.HasSyncedChecker())
	}
	cache.WaitFor(ctx, "", checkers...)
	res := cache.SyncResult{Synced: map[reflect.Type]bool{}}
	failed := false
	for typ, inf := range infs {
		res.Synced[typ] = inf.HasSynced()
		failed = failed || !res.Synced[typ]
	}
	if failed {
		res.Err = context.Cause(ctx)
	}
	return res
}

// Factory is the shape of every generated shared informer factory's internal interface
// (InformerFor(obj, newFunc) and Start) for a generated package whose NewInformerFunc type is F:
// with F = that package's internalinterfaces.NewInformerFunc, *Factory[F] is its
// internalinterfaces.SharedInformerFactory, so its group accessors (e.g. samplecontroller.New(f,
// namespace, tweak)) hand out informers of the world. newFunc is ignored: the world builds the
// informer.
type Factory[F any] struct {
	*Informers
}

// InformerFor returns the informer of obj's type; see Informers.For.
func (f Factory[F]) InformerFor(obj runtime.Object, _ F) cache.SharedIndexInformer {
	return f.Informers.For(obj)
}

// InformerName is the name informers report metrics under; the world's informers report none.
func (f Factory[F]) InformerName() *cache.InformerName { return nil }

// Namespace and TweakListOptions are the factory's, for group accessors.
func (f Factory[F]) Namespace() string { return f.opts.Namespace }

// TweakListOptions returns the factory's list option tweak (nil if none).
func (f Factory[F]) TweakListOptions() func(*metav1.ListOptions) { return f.opts.TweakListOptions }

// kubeFactory is client-go's informers.SharedInformerFactory over the world.
type kubeFactory struct {
	Factory[internalinterfaces.NewInformerFunc]
}

var _ informers.SharedInformerFactory = kubeFactory{}

func (f kubeFactory) tweak() internalinterfaces.TweakListOptionsFunc {
	if f.opts.TweakListOptions == nil {
		return nil
	}
	return internalinterfaces.TweakListOptionsFunc(f.opts.TweakListOptions)
}

// ForResource returns a generic informer of resource, whose lister is cache.NewGenericLister's.
func (f kubeFactory) ForResource(gvr schema.GroupVersionResource) (informers.GenericInformer, error) {
	res, ok := f.env.resource(gvr)
	if !ok {
		return nil, fmt.Errorf("clientgo: ForResource: the apiserver does not serve %s", gvr)
	}
	obj, err := f.env.scheme.New(gvr.GroupVersion().WithKind(res.Kind))
	if err != nil {
		return nil, fmt.Errorf("clientgo: ForResource %s: %v", gvr, err)
	}
	inf := f.For(obj)
	return genericInformer{inf: inf, lister: cache.NewGenericLister(inf.GetIndexer(), gvr.GroupResource())}, nil
}

type genericInformer struct {
	inf    cache.SharedIndexInformer
	lister cache.GenericLister
}

func (g genericInformer) Informer() cache.SharedIndexInformer { return g.inf }
func (g genericInformer) Lister() cache.GenericLister         { return g.lister }

func (f kubeFactory) Admissionregistration() admissionregistration.Interface {
	return admissionregistration.New(f, f.opts.Namespace, f.tweak())
}
func (f kubeFactory) Internal() apiserverinternal.Interface {
	return apiserverinternal.New(f, f.opts.Namespace, f.tweak())
}
func (f kubeFactory) Apps() apps.Interface { return apps.New(f, f.opts.Namespace, f.tweak()) }
func (f kubeFactory) Autoscaling() autoscaling.Interface {
	return autoscaling.New(f, f.opts.Namespace, f.tweak())
}
func (f kubeFactory) Batch() batch.Interface { return batch.New(f, f.opts.Namespace, f.tweak()) }
func (f kubeFactory) Certificates() certificates.Interface {
	return certificates.New(f, f.opts.Namespace, f.tweak())
}
func (f kubeFactory) Coordination() coordination.Interface {
	return coordination.New(f, f.opts.Namespace, f.tweak())
}
func (f kubeFactory) Core() core.Interface { return core.New(f, f.opts.Namespace, f.tweak()) }
func (f kubeFactory) Discovery() discovery.Interface {
	return discovery.New(f, f.opts.Namespace, f.tweak())
}
func (f kubeFactory) Events() events.Interface { return events.New(f, f.opts.Namespace, f.tweak()) }
func (f kubeFactory) Extensions() extensions.Interface {
	return extensions.New(f, f.opts.Namespace, f.tweak())
}
func (f kubeFactory) Flowcontrol() flowcontrol.Interface {
	return flowcontrol.New(f, f.opts.Namespace, f.tweak())
}
func (f kubeFactory) Lifecycle() lifecycle.Interface {
	return lifecycle.New(f, f.opts.Namespace, f.tweak())
}
func (f kubeFactory) Networking() networking.Interface {
	return networking.New(f, f.opts.Namespace, f.tweak())
}
func (f kubeFactory) Node() node.Interface     { return node.New(f, f.opts.Namespace, f.tweak()) }
func (f kubeFactory) Policy() policy.Interface { return policy.New(f, f.opts.Namespace, f.tweak()) }
func (f kubeFactory) Rbac() rbac.Interface     { return rbac.New(f, f.opts.Namespace, f.tweak()) }
func (f kubeFactory) Resource() resource.Interface {
	return resource.New(f, f.opts.Namespace, f.tweak())
}
func (f kubeFactory) Scheduling() scheduling.Interface {
	return scheduling.New(f, f.opts.Namespace, f.tweak())
}
func (f kubeFactory) Storage() storage.Interface {
	return storage.New(f, f.opts.Namespace, f.tweak())
}
func (f kubeFactory) Storagemigration() storagemigration.Interface {
	return storagemigration.New(f, f.opts.Namespace, f.tweak())
}

// served lists the apiserver's resources: the built-in table with Config.Resources over it.
func served(cfg fakeapi.Config) []fakeapi.Resource {
	out := slices.Clone(cfg.Resources)
	for _, r := range fakeapi.BuiltinResources() {
		if !slices.ContainsFunc(out, func(x fakeapi.Resource) bool { return x.GVR == r.GVR }) {
			out = append(out, r)
		}
	}
	return out
}

func informerNameFor(gvr schema.GroupVersionResource, ns string) string {
	name := gvr.Resource
	if gvr.Group != "" {
		name += "." + gvr.Group
	}
	if ns != "" {
		name += "@" + ns
	}
	return strings.ReplaceAll(name, "/", "-")
}
