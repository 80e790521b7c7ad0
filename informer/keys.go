package informer

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// This file holds the key functions of informer.md §8.1. A key is "namespace/name", or just
// "name" for cluster-scoped objects; the cache, both queues and the listers agree on it.

// ObjectName names an object: its namespace ("" for cluster-scoped objects) and name.
type ObjectName struct {
	Namespace string
	Name      string
}

// String returns the key form of n: "namespace/name", or "name" when the namespace is empty
// (informer.md §8.1).
func (n ObjectName) String() string {
	if n.Namespace == "" {
		return n.Name
	}
	return n.Namespace + "/" + n.Name
}

// ParseObjectName parses a key produced by [ObjectName.String] or [MetaNamespaceKeyFunc].
func ParseObjectName(key string) (ObjectName, error) {
	namespace, name, err := SplitMetaNamespaceKey(key)
	return ObjectName{Namespace: namespace, Name: name}, err
}

// ObjectToName returns the name of an object that has Kubernetes object metadata. Any other
// object gives the error "object has no meta: ..." (informer.md §8.1).
func ObjectToName(obj any) (ObjectName, error) {
	ns, name, err := namespaceAndName(obj)
	if err != nil {
		return ObjectName{}, fmt.Errorf("object has no meta: %v", err)
	}
	return ObjectName{Namespace: ns, Name: name}, nil
}

// namespaceAndName returns the namespace and name of an object with metadata, and
// meta.Accessor's error for any other. An unstructured object, the simulator's, is read with one
// lookup of its metadata map for both (unstructuredName): every watch event's object is keyed at
// least twice on its way to the cache (at enqueue and at the pop's check).
func namespaceAndName(obj any) (namespace, name string, err error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if u == nil {
			return "", "", errors.New("nil *unstructured.Unstructured")
		}
		namespace, name = unstructuredName(u)
		return namespace, name, nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", "", err
	}
	return m.GetNamespace(), m.GetName(), nil
}

// unstructuredName returns what u.GetNamespace() and u.GetName() return, looking the metadata
// map up once for both instead of once for each. As with the getters, a field that is absent or
// not a string, in metadata that is absent or not a map, reads as "".
func unstructuredName(u *unstructured.Unstructured) (namespace, name string) {
	md, _ := u.Object["metadata"].(map[string]any)
	namespace, _ = md["namespace"].(string)
	name, _ = md["name"].(string)
	return namespace, name
}

// isKey reports whether key is the key of the object named ns/name (ObjectName.String), without
// building it.
func isKey(key, ns, name string) bool {
	if ns == "" {
		return key == name
	}
	return len(key) == len(ns)+1+len(name) && key[:len(ns)] == ns && key[len(ns)] == '/' && key[len(ns)+1:] == name
}

// DeletionHandlingObjectToName is [ObjectToName] that also accepts a tombstone, whose name is
// parsed from its key (informer.md §8.1, client-go TestDeletionHandlingObjectToName).
func DeletionHandlingObjectToName(obj any) (ObjectName, error) {
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return ParseObjectName(d.Key)
	}
	return ObjectToName(obj)
}

// MetaNamespaceKeyFunc is the default key function: an [ExplicitKey] is its own key; an object
// with metadata has the key "namespace/name" or "name"; anything else is an error
// (informer.md §8.1). The error is plain: callers that store objects wrap it in a [KeyError].
func MetaNamespaceKeyFunc(obj any) (string, error) {
	if key, ok := obj.(ExplicitKey); ok {
		return string(key), nil
	}
	n, err := ObjectToName(obj)
	if err != nil {
		return "", err
	}
	return n.String(), nil
}

// DeletionHandlingMetaNamespaceKeyFunc is [MetaNamespaceKeyFunc] that also accepts a
// [DeletedFinalStateUnknown], whose key is its Key field. The informer's cache uses it, so that a
// tombstone popped from the queue deletes the object it stands for (informer.md §1.1, §8.1).
func DeletionHandlingMetaNamespaceKeyFunc(obj any) (string, error) {
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return d.Key, nil
	}
	return MetaNamespaceKeyFunc(obj)
}

// SplitMetaNamespaceKey splits a key into namespace and name: one part is a cluster-scoped name,
// two parts are namespace and name, anything else is the error `unexpected key format: "<key>"`.
// The empty key gives ("", "", nil) (informer.md §8.1).
func SplitMetaNamespaceKey(key string) (namespace, name string, err error) {
	parts := strings.Split(key, "/")
	switch len(parts) {
	case 1:
		return "", parts[0], nil
	case 2:
		return parts[0], parts[1], nil
	}
	return "", "", fmt.Errorf("unexpected key format: %q", key)
}
