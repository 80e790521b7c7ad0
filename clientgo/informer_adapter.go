package clientgo

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/kube"
	"github.com/informersim/informersim/sim/world"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// typed converts the apiserver's unstructured objects to the Go type client-go's scheme has for
// gvk, as client-go's typed clients decode them: with an empty TypeMeta. The conversion is
// kube.FromUnstructured, which gives what apimachinery's converter gives from a plan made once
// per Go type. It is the informer's
// transform, so the cache (and every lister over it) holds typed objects. Already typed objects
// pass through unchanged (a transform must be idempotent, informer.md §1.5).
type typed struct {
	scheme *runtime.Scheme
	gvk    schema.GroupVersionKind
	// user is the transform the controller set with SetTransform, applied after the conversion.
	mu   sync.Mutex
	user cache.TransformFunc
	// lend, if set, records what the transform hands out, for the read-only check (readonly.go);
	// b, if set, is told when the controller's transform runs.
	lend func(obj any)
	b    *bubble
}

// readsOnly reports whether the conversion only reads the objects it is given, so that the
// world may lend the informer the apiserver's own objects (world.InformerSpec.TransformReadsOnly)
// instead of copying each for a conversion that drops the copy at once: when the Go type holds
// no interface value. The conversion (kube.FromUnstructured, as apimachinery's converter) builds
// every map, slice, pointer and struct of the typed object anew and copies every scalar, but
// stores what goes into an interface (a field of type any, a map[string]any) as the unstructured
// value itself, which would share it. What the
// controller's own transform does comes after, with the typed object.
func (t *typed) readsOnly() bool {
	obj, err := t.scheme.New(t.gvk)
	if err != nil {
		return false
	}
	return !holdsInterfaces(reflect.TypeOf(obj))
}

// holdsInterfaces reports whether a value of type t can hold an interface value, through its
// fields, pointers, slices, arrays and maps. The answer for a type never changes: it is kept
// for the process.
func holdsInterfaces(t reflect.Type) bool {
	if v, ok := interfaceHolders.Load(t); ok {
		return v.(bool)
	}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type) bool
	walk = func(t reflect.Type) bool {
		if seen[t] {
			return false // being walked already: what it holds is found there
		}
		seen[t] = true
		switch t.Kind() {
		case reflect.Interface:
			return true
		case reflect.Pointer, reflect.Slice, reflect.Array:
			return walk(t.Elem())
		case reflect.Map:
			return walk(t.Key()) || walk(t.Elem())
		case reflect.Struct:
			for i := range t.NumField() {
				if walk(t.Field(i).Type) {
					return true
				}
			}
		}
		return false
	}
	holds := walk(t)
	interfaceHolders.Store(t, holds)
	return holds
}

// interfaceHolders holds holdsInterfaces' answers by type.
var interfaceHolders sync.Map

func (t *typed) transform(obj any) (any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		out, err := t.scheme.New(t.gvk)
		if err != nil {
			return nil, fmt.Errorf("clientgo: %v", err)
		}
		if err := kube.FromUnstructured(u.UnstructuredContent(), out); err != nil {
			return nil, fmt.Errorf("clientgo: converting %s %s/%s to %T: %v", t.gvk.Kind, u.GetNamespace(), u.GetName(), out, err)
		}
		out.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
		obj = out
	}
	t.mu.Lock()
	user := t.user
	t.mu.Unlock()
	if user != nil {
		t.b.controllerCodeRuns()
		out, err := user(obj)
		if err == nil && t.lend != nil {
			t.lend(out)
		}
		return out, err
	}
	if t.lend != nil {
		t.lend(obj)
	}
	return obj, nil
}

// sharedIndexInformer is a client-go cache.SharedIndexInformer over an informer of the world:
// the world drives it step by step (its Reflector, queue and handlers are actors of the sim),
// and this adapter gives it client-go's types. Calls that change the world (Run, handler
// registration, SetTransform...) are calls of the bubble, made at the caller's simulated instant.
type sharedIndexInformer struct {
	b *bubble
	// env is the Env whose factory built it: once its life crashed, the informer refuses to
	// start and to take handlers.
	env     *Env
	name    string
	inf     informer.SharedIndexInformer
	host    *world.Informer
	typed   *typed
	indexer indexer

	// resource is the informer's resource ("deployments"), handlers the number of handlers
	// registered so far (the driver's): a handler's world name is resource#rank.
	resource string
	handlers int

	mu        sync.Mutex
	regs      map[*registration]bool
	reflector *cache.Reflector // handed to watch error handlers; never run
}

var _ cache.SharedIndexInformer = (*sharedIndexInformer)(nil)

// registration is client-go's handle for a handler registered on the world's informer.
type registration struct {
	inner informer.ResourceEventHandlerRegistration
	b     *bubble
}

func (r *registration) HasSynced() bool { return r.inner.HasSynced() }
func (r *registration) HasSyncedChecker() cache.DoneChecker {
	return r.b.watchSynced(r.inner.HasSyncedChecker())
}

// deadRegistration is what a handler's registration gets once the controller's life crashed (a
// restart hazard) or the run is over: the handler never runs (its informer is stopped, or the
// world serves no more) and never syncs. It is no error, so a constructor registering its
// handlers goes on to return its controller, whose Run sees its context cancelled and ends the
// goroutines it started (a workqueue's), as a process would by exiting: a constructor failing
// there would leave them running in the bubble, which could then never end.
type deadRegistration struct{ never chan struct{} }

func (d deadRegistration) HasSynced() bool                     { return false }
func (d deadRegistration) HasSyncedChecker() cache.DoneChecker { return d }
func (d deadRegistration) Name() string {
	return "a handler of a controller that crashed or was stopped"
}
func (d deadRegistration) Done() <-chan struct{} { return d.never }

// handler gives a client-go handler client-go's tombstone type: informersim's informer hands its
// own DeletedFinalStateUnknown, which cache.DeletionHandlingMetaNamespaceKeyFunc and every
// controller's type switch would not recognise.
// It marks that the controller's code runs (bubble.controllerCodeRuns), for the read-only check.
type handler struct {
	h cache.ResourceEventHandler
	b *bubble
}

func (h handler) OnAdd(obj any, isInInitialList bool) {
	h.b.controllerCodeRuns()
	h.h.OnAdd(obj, isInInitialList)
}
func (h handler) OnUpdate(oldObj, newObj any) {
	h.b.controllerCodeRuns()
	h.h.OnUpdate(oldObj, newObj)
}
func (h handler) OnDelete(obj any) {
	h.b.controllerCodeRuns()
	switch t := obj.(type) {
	case informer.DeletedFinalStateUnknown:
		obj = cache.DeletedFinalStateUnknown{Key: t.Key, Obj: t.Obj}
	case *informer.DeletedFinalStateUnknown:
		obj = cache.DeletedFinalStateUnknown{Key: t.Key, Obj: t.Obj}
	}
	h.h.OnDelete(obj)
}

func (a *sharedIndexInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return a.AddEventHandlerWithOptions(h, cache.HandlerOptions{})
}

func (a *sharedIndexInformer) AddEventHandlerWithResyncPeriod(h cache.ResourceEventHandler, resyncPeriod time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return a.AddEventHandlerWithOptions(h, cache.HandlerOptions{ResyncPeriod: &resyncPeriod})
}

func (a *sharedIndexInformer) AddEventHandlerWithOptions(h cache.ResourceEventHandler, o cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	if h == nil {
		return nil, fmt.Errorf("clientgo: informer %s: nil event handler", a.name)
	}
	var reg informer.ResourceEventHandlerRegistration
	var err error
	dead := false
	if cerr := a.b.do("add-handler", "add-handler "+a.name, nil, func() {
		if a.env.crashed() {
			dead = true // the informer died with its process: nothing may run a handler
			return
		}
		// The handler is named after its informer's resource and its rank on the informer
		// ("deployments#1"), in the trace and in every failure, rather than the world's h1.
		a.handlers++
		if a.host != nil && a.resource != "" {
			if nerr := a.host.NameNextHandler(fmt.Sprintf("%s#%d", a.resource, a.handlers), world.HandlerOptions{}); nerr != nil {
				err = nerr
				return
			}
		}
		reg, err = a.inf.AddEventHandlerWithOptions(handler{h: h, b: a.b}, informer.HandlerOptions{ResyncPeriod: o.ResyncPeriod})
	}); cerr != nil {
		if errors.Is(cerr, errStopped) {
			return deadRegistration{never: make(chan struct{})}, nil
		}
		return nil, cerr
	}
	if dead {
		return deadRegistration{never: make(chan struct{})}, nil
	}
	if err != nil {
		return nil, err
	}
	r := &registration{inner: reg, b: a.b}
	a.mu.Lock()
	a.regs[r] = true
	a.mu.Unlock()
	return r, nil
}

func (a *sharedIndexInformer) RemoveEventHandler(handle cache.ResourceEventHandlerRegistration) error {
	r, ok := handle.(*registration)
	if !ok {
		return nil // an unknown handle is a no-op, as in client-go
	}
	a.mu.Lock()
	known := a.regs[r]
	delete(a.regs, r)
	a.mu.Unlock()
	if !known {
		return nil
	}
	var err error
	if cerr := a.b.do("remove-handler", "remove-handler "+a.name, nil, func() { err = a.inf.RemoveEventHandler(r.inner) }); cerr != nil {
		return cerr
	}
	return err
}

func (a *sharedIndexInformer) GetStore() cache.Store           { return a.indexer }
func (a *sharedIndexInformer) GetIndexer() cache.Indexer       { return a.indexer }
func (a *sharedIndexInformer) GetController() cache.Controller { return controller{a} }

// Run starts the world's informer (the world then drives it) and blocks until stopCh is closed.
func (a *sharedIndexInformer) Run(stopCh <-chan struct{}) {
	if a.host == nil {
		<-stopCh // broken: the run has already failed
		return
	}
	err := a.b.do("start", "start "+a.name, nil, func() {
		if a.env.crashed() {
			return // its process crashed: the world stopped the informer for good
		}
		if !a.host.Started() {
			if err := a.host.Start(); err != nil {
				a.b.fail(fmt.Errorf("clientgo: starting informer %s: %w", a.name, err))
			}
		}
	})
	if err != nil {
		return
	}
	<-stopCh
}

func (a *sharedIndexInformer) RunWithContext(ctx context.Context) { a.Run(ctx.Done()) }

func (a *sharedIndexInformer) HasSynced() bool { return a.inf.HasSynced() }
func (a *sharedIndexInformer) HasSyncedChecker() cache.DoneChecker {
	return a.b.watchSynced(a.inf.HasSyncedChecker())
}
func (a *sharedIndexInformer) LastSyncResourceVersion() string {
	return a.inf.LastSyncResourceVersion()
}
func (a *sharedIndexInformer) IsStopped() bool { return a.inf.IsStopped() }

// cacheReflector is the *cache.Reflector handed to a client-go watch error handler: informersim's
// Reflector is not client-go's, so the handler gets a named stand-in that is never run.
func (a *sharedIndexInformer) cacheReflector() *cache.Reflector {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.reflector == nil {
		a.reflector = cache.NewReflectorWithOptions(&cache.ListWatch{}, &unstructured.Unstructured{},
			cache.NewStore(cache.MetaNamespaceKeyFunc), cache.ReflectorOptions{Name: a.name})
	}
	return a.reflector
}

func (a *sharedIndexInformer) SetWatchErrorHandler(h cache.WatchErrorHandler) error {
	if h == nil {
		return fmt.Errorf("clientgo: informer %s: nil watch error handler", a.name)
	}
	return a.inf.SetWatchErrorHandler(func(_ *informer.Reflector, err error) {
		a.b.controllerCodeRuns()
		h(a.cacheReflector(), err)
	})
}

func (a *sharedIndexInformer) SetWatchErrorHandlerWithContext(h cache.WatchErrorHandlerWithContext) error {
	if h == nil {
		return fmt.Errorf("clientgo: informer %s: nil watch error handler", a.name)
	}
	return a.inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, _ *informer.Reflector, err error) {
		a.b.controllerCodeRuns()
		h(ctx, a.cacheReflector(), err)
	})
}

// SetTransform installs the controller's transform after the conversion to the typed object; as
// in client-go, only before the informer starts.
func (a *sharedIndexInformer) SetTransform(f cache.TransformFunc) error {
	if a.host == nil || a.host.Started() {
		return fmt.Errorf("clientgo: informer %s has already started", a.name)
	}
	a.typed.mu.Lock()
	a.typed.user = f
	a.typed.mu.Unlock()
	return nil
}

func (a *sharedIndexInformer) AddIndexers(ix cache.Indexers) error {
	return a.inf.AddIndexers(toIndexers(a.b, ix))
}

// controller is what GetController returns: like client-go's for a shared informer, it runs
// nothing itself (the informer runs through Run) and reports the informer's state.
type controller struct{ a *sharedIndexInformer }

func (c controller) RunWithContext(context.Context)      {}
func (c controller) Run(<-chan struct{})                 {}
func (c controller) HasSynced() bool                     { return c.a.HasSynced() }
func (c controller) HasSyncedChecker() cache.DoneChecker { return c.a.HasSyncedChecker() }
func (c controller) LastSyncResourceVersion() string     { return c.a.LastSyncResourceVersion() }

// indexer is client-go's cache.Indexer over the world informer's Indexer: the same methods, with
// client-go's index function types. Generated listers read it.
type indexer struct {
	informer.Indexer
	b *bubble
}

var _ cache.Indexer = indexer{}

func (i indexer) GetIndexers() cache.Indexers {
	out := cache.Indexers{}
	for name, f := range i.Indexer.GetIndexers() {
		out[name] = cache.IndexFunc(f)
	}
	return out
}

func (i indexer) AddIndexers(ix cache.Indexers) error {
	return i.Indexer.AddIndexers(toIndexers(i.b, ix))
}

// toIndexers gives the world's informer the controller's index functions, marking when they run
// (the controller's code, inside a step) for the read-only check.
func toIndexers(b *bubble, ix cache.Indexers) informer.Indexers {
	out := informer.Indexers{}
	for name, f := range ix {
		out[name] = func(obj any) ([]string, error) {
			b.controllerCodeRuns()
			return f(obj)
		}
	}
	return out
}
