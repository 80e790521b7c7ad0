package informer

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// This file holds the listers of informer.md §8.4: label-selected reads of an informer's cache.
// Results come in the cache's order, which for our cache is sorted by key.

// AppendFunc receives each object a list selects.
type AppendFunc func(any)

// ListAll calls appendFn for every object of store that selector matches: labels.Nothing()
// selects nothing, an empty selector everything (without reading metadata), otherwise the
// object's labels decide; an object without metadata is then an error (informer.md §8.4;
// client-go TestListAll).
func ListAll(store Store, selector labels.Selector, appendFn AppendFunc) error {
	if labels.MatchesNothing(selector) {
		return nil
	}
	return appendMatching(store.List(), selector, appendFn)
}

// ListAllByNamespace is ListAll restricted to one namespace; namespace "" means all. It reads the
// NamespaceIndex when the indexer has it and otherwise scans the whole cache (informer.md §8.4).
func ListAllByNamespace(indexer Indexer, namespace string, selector labels.Selector, appendFn AppendFunc) error {
	if labels.MatchesNothing(selector) {
		return nil
	}
	if namespace == metav1.NamespaceAll {
		return ListAll(indexer, selector, appendFn)
	}
	items, err := indexer.Index(NamespaceIndex, &metav1.ObjectMeta{Namespace: namespace})
	if err != nil {
		// No namespace index: scan everything, as client-go does.
		for _, obj := range indexer.List() {
			m, err := meta.Accessor(obj)
			if err != nil {
				return err
			}
			if m.GetNamespace() == namespace && selector.Matches(labels.Set(m.GetLabels())) {
				appendFn(obj)
			}
		}
		return nil
	}
	return appendMatching(items, selector, appendFn)
}

func appendMatching(objs []any, selector labels.Selector, appendFn AppendFunc) error {
	all := selector.Empty()
	for _, obj := range objs {
		if all {
			appendFn(obj)
			continue
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return err
		}
		if selector.Matches(labels.Set(m.GetLabels())) {
			appendFn(obj)
		}
	}
	return nil
}

// GenericLister reads an informer's cache of one resource, across namespaces.
type GenericLister interface {
	// List returns the objects whose labels selector matches.
	List(selector labels.Selector) ([]runtime.Object, error)
	// Get returns the object with key name (cluster-scoped objects), or a NotFound API error.
	Get(name string) (runtime.Object, error)
	// ByNamespace returns a lister restricted to one namespace.
	ByNamespace(namespace string) GenericNamespaceLister
}

// GenericNamespaceLister reads an informer's cache of one resource within one namespace.
type GenericNamespaceLister interface {
	// List returns the namespace's objects whose labels selector matches.
	List(selector labels.Selector) ([]runtime.Object, error)
	// Get returns the object named name in the namespace, or a NotFound API error.
	Get(name string) (runtime.Object, error)
}

// NewGenericLister returns a lister over indexer; resource names the resource in NotFound errors
// (informer.md §8.4).
func NewGenericLister(indexer Indexer, resource schema.GroupResource) GenericLister {
	return &genericLister{indexer: indexer, resource: resource}
}

type genericLister struct {
	indexer  Indexer
	resource schema.GroupResource
}

func (l *genericLister) List(selector labels.Selector) ([]runtime.Object, error) {
	return collectObjects(func(fn AppendFunc) error { return ListAll(l.indexer, selector, fn) })
}

func (l *genericLister) Get(name string) (runtime.Object, error) {
	return getObject(l.indexer, l.resource, name, name)
}

func (l *genericLister) ByNamespace(namespace string) GenericNamespaceLister {
	return &genericNamespaceLister{indexer: l.indexer, resource: l.resource, namespace: namespace}
}

type genericNamespaceLister struct {
	indexer   Indexer
	resource  schema.GroupResource
	namespace string
}

func (l *genericNamespaceLister) List(selector labels.Selector) ([]runtime.Object, error) {
	return collectObjects(func(fn AppendFunc) error { return ListAllByNamespace(l.indexer, l.namespace, selector, fn) })
}

func (l *genericNamespaceLister) Get(name string) (runtime.Object, error) {
	return getObject(l.indexer, l.resource, ObjectName{Namespace: l.namespace, Name: name}.String(), name)
}

// collectObjects runs list and gathers what it appends as runtime.Objects. A cached value that is
// not a runtime.Object is an error here (client-go's type assertion would panic).
func collectObjects(list func(AppendFunc) error) ([]runtime.Object, error) {
	var out []runtime.Object
	var bad error
	err := list(func(obj any) {
		ro, ok := obj.(runtime.Object)
		if !ok {
			if bad == nil {
				bad = fmt.Errorf("informer: lister: cached %T is not a runtime.Object", obj)
			}
			return
		}
		out = append(out, ro)
	})
	if err != nil {
		return out, err
	}
	return out, bad
}

func getObject(indexer Indexer, resource schema.GroupResource, key, name string) (runtime.Object, error) {
	obj, exists, err := indexer.GetByKey(key)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, apierrors.NewNotFound(resource, name)
	}
	ro, ok := obj.(runtime.Object)
	if !ok {
		return nil, fmt.Errorf("informer: lister: cached %T is not a runtime.Object", obj)
	}
	return ro, nil
}
