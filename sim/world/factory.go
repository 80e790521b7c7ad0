package world

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/internal/invariant"
)

// FactoryOptions configures a SharedInformerFactory whose informers are the world's (NewFactory).
type FactoryOptions struct {
	// Prefix names the factory's informers "<Prefix>-<resource>" ("<Prefix>-<resource>.<group>"
	// for a resource of a named group). It must be a valid name; "" means "factory".
	Prefix string
	// DefaultResync is the factory's default resync period; CustomResync overrides it per
	// resource (informer.WithCustomResyncConfig).
	DefaultResync time.Duration
	CustomResync  map[schema.GroupVersionResource]time.Duration
	// Namespace, LabelSelector, FieldSelector, Transform, Equal and WatchList apply to every
	// informer the factory creates, as the InformerSpec fields of the same names.
	Namespace     string
	LabelSelector string
	FieldSelector string
	Transform     informer.TransformFunc
	Equal         func(cached, apiserver any) bool
	WatchList     bool
	// Informer edits each informer's options before it is built (queue mode, indexers), as
	// informer.WithInformerOptions does; the world then sets Clock and Rand.
	Informer func(gvr schema.GroupVersionResource, o *informer.SharedIndexInformerOptions)
}

// NewFactory returns a step-driven informer.SharedInformerFactory (informer.md §9) whose every
// informer is an informer of the world: ForResource builds it over a Source of the world
// (NewSource) and hosts it (HostInformer), so its registrations, made on it directly as a
// controller does, are discovered; the factory's Start starts the informers created so far,
// which the world notices at its next settle (RunUntilConverged settles first). ForResource
// refuses, with the world's reason, a resource the apiserver does not serve, a name already in
// use, or a world already holding MaxInformers informers.
func (w *World) NewFactory(o FactoryOptions) (informer.SharedInformerFactory, error) {
	if o.Prefix == "" {
		o.Prefix = "factory"
	}
	if !validName(o.Prefix) {
		return nil, fmt.Errorf("world: NewFactory: invalid Prefix %q (no '/', '=', '\"' or spaces)", o.Prefix)
	}
	f := &worldFactory{w: w, o: o}
	opts := []informer.SharedInformerOption{
		informer.WithNamespace(o.Namespace),
		informer.WithInformerOptions(func(gvr schema.GroupVersionResource, io *informer.SharedIndexInformerOptions) {
			if o.Informer != nil {
				o.Informer(gvr, io)
			}
			*io = f.pending.Options(*io)
		}),
		informer.WithStepDriver(func(fi informer.FactoryInformer) (func() error, error) {
			n, err := w.HostInformer(f.pending, fi.Informer)
			if err != nil {
				return nil, err
			}
			f.hosted = n
			return n.Start, nil // the factory's Start starts it through the world (narrated)
		}),
	}
	if o.CustomResync != nil {
		opts = append(opts, informer.WithCustomResyncConfig(o.CustomResync))
	}
	if o.Transform != nil {
		opts = append(opts, informer.WithTransform(o.Transform))
	}
	client := informer.ClientFunc(func(schema.GroupVersionResource, string) informer.ListerWatcher {
		return f.pending.ListerWatcher()
	})
	fac, err := informer.NewSharedInformerFactoryWithOptions(client, o.DefaultResync, opts...)
	if err != nil {
		return nil, fmt.Errorf("world: NewFactory: %w", err)
	}
	f.SharedInformerFactory = fac
	f.byGVR = map[schema.GroupVersionResource]*Informer{}
	return f, nil
}

// worldFactory checks each new resource with the world before the factory builds its informer,
// so that a refusal carries the world's reason and nothing half-built is left behind.
type worldFactory struct {
	informer.SharedInformerFactory
	w       *World
	o       FactoryOptions
	pending *Source                                   // the source of the informer ForResource is building
	hosted  *Informer                                 // set by the step driver callback
	byGVR   map[schema.GroupVersionResource]*Informer // never iterated
}

func (f *worldFactory) ForResource(gvr schema.GroupVersionResource) (informer.GenericInformer, error) {
	if _, ok := f.byGVR[gvr]; ok || gvr.Version == "" || gvr.Resource == "" {
		return f.SharedInformerFactory.ForResource(gvr) // the same informer, or the factory's own error
	}
	w := f.w
	name := f.o.Prefix + "-" + gvr.Resource
	if gvr.Group != "" {
		name += "." + gvr.Group
	}
	if w.liveInformers() >= w.cfg.MaxInformers {
		return nil, fmt.Errorf("world: factory ForResource %v: the world already has MaxInformers=%d informers not stopped", gvr, w.cfg.MaxInformers)
	}
	for _, a := range []string{"/reflector", "/watch", "/net", "/queue"} {
		if w.actors[name+a] {
			return nil, fmt.Errorf("world: factory ForResource %v: actor name %q is already in use", gvr, name+a)
		}
	}
	src, err := w.NewSource(name, InformerSpec{Resource: gvr, Namespace: f.o.Namespace, LabelSelector: f.o.LabelSelector,
		FieldSelector: f.o.FieldSelector, Transform: f.o.Transform, Equal: f.o.Equal, WatchList: f.o.WatchList})
	if err != nil {
		return nil, fmt.Errorf("world: factory ForResource %v: %w", gvr, err)
	}
	f.pending, f.hosted = src, nil
	gi, err := f.SharedInformerFactory.ForResource(gvr)
	f.pending = nil
	if err != nil {
		return nil, fmt.Errorf("world: factory ForResource %v: %w", gvr, err)
	}
	invariant.Check(f.hosted != nil, "world: factory ForResource %v: the informer was built without the step driver", gvr)
	f.byGVR[gvr] = f.hosted
	return gi, nil
}
