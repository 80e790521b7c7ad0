// Package v1alpha1 is the Foo lister, written by hand in lister-gen's shape.
package v1alpha1

import (
	samplev1alpha1 "github.com/informersim/informersim/examples/samplecontroller/apis/v1alpha1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/listers"
	"k8s.io/client-go/tools/cache"
)

// FooLister lists Foos from an informer's cache.
type FooLister interface {
	List(selector labels.Selector) (ret []*samplev1alpha1.Foo, err error)
	Foos(namespace string) FooNamespaceLister
}

// FooNamespaceLister lists and gets the Foos of one namespace.
type FooNamespaceLister interface {
	List(selector labels.Selector) (ret []*samplev1alpha1.Foo, err error)
	Get(name string) (*samplev1alpha1.Foo, error)
}

type fooLister struct {
	listers.ResourceIndexer[*samplev1alpha1.Foo]
}

// NewFooLister returns a lister over indexer.
func NewFooLister(indexer cache.Indexer) FooLister {
	return &fooLister{listers.New[*samplev1alpha1.Foo](indexer, samplev1alpha1.Resource("foo"))}
}

func (s *fooLister) Foos(namespace string) FooNamespaceLister {
	return fooNamespaceLister{listers.NewNamespaced[*samplev1alpha1.Foo](s.ResourceIndexer, namespace)}
}

type fooNamespaceLister struct {
	listers.ResourceIndexer[*samplev1alpha1.Foo]
}
