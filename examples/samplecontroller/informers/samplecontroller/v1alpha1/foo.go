// Package v1alpha1 is the Foo informer, written by hand in informer-gen's shape.
package v1alpha1

import (
	"context"
	"time"

	samplev1alpha1 "github.com/informersim/informersim/examples/samplecontroller/apis/v1alpha1"
	"github.com/informersim/informersim/examples/samplecontroller/clientset"
	"github.com/informersim/informersim/examples/samplecontroller/informers/internalinterfaces"
	listers "github.com/informersim/informersim/examples/samplecontroller/listers/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// Interface gives the informers of the version.
type Interface interface {
	Foos() FooInformer
}

// New returns the version's informers over factory f.
func New(f internalinterfaces.SharedInformerFactory, namespace string, tweak internalinterfaces.TweakListOptionsFunc) Interface {
	return &version{factory: f, namespace: namespace, tweak: tweak}
}

type version struct {
	factory   internalinterfaces.SharedInformerFactory
	namespace string
	tweak     internalinterfaces.TweakListOptionsFunc
}

func (v *version) Foos() FooInformer {
	return &fooInformer{factory: v.factory, namespace: v.namespace, tweak: v.tweak}
}

// FooInformer gives the shared Foo informer and its lister.
type FooInformer interface {
	Informer() cache.SharedIndexInformer
	Lister() listers.FooLister
}

type fooInformer struct {
	factory   internalinterfaces.SharedInformerFactory
	namespace string
	tweak     internalinterfaces.TweakListOptionsFunc
}

// NewFilteredFooInformer builds a Foo informer on client-go's cache package.
func NewFilteredFooInformer(client clientset.Interface, namespace string, resync time.Duration, indexers cache.Indexers, tweak internalinterfaces.TweakListOptionsFunc) cache.SharedIndexInformer {
	// As client-gen's informers since v0.35: a client that says it cannot serve a watch-list
	// (client-go's fakes) is listed and watched the old way.
	return cache.NewSharedIndexInformer(
		cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
				if tweak != nil {
					tweak(&opts)
				}
				return client.SamplecontrollerV1alpha1().Foos(namespace).List(ctx, opts)
			},
			WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
				if tweak != nil {
					tweak(&opts)
				}
				return client.SamplecontrollerV1alpha1().Foos(namespace).Watch(ctx, opts)
			},
		}, client),
		&samplev1alpha1.Foo{}, resync, indexers,
	)
}

func (f *fooInformer) defaultInformer(client clientset.Interface, resync time.Duration) cache.SharedIndexInformer {
	return NewFilteredFooInformer(client, f.namespace, resync, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, f.tweak)
}

func (f *fooInformer) Informer() cache.SharedIndexInformer {
	return f.factory.InformerFor(&samplev1alpha1.Foo{}, f.defaultInformer)
}

func (f *fooInformer) Lister() listers.FooLister {
	return listers.NewFooLister(f.Informer().GetIndexer())
}
