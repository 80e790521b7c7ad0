package kube

import (
	"sync"

	"github.com/informersim/informersim/internal/genmap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// managedObject is how track hands an object to apimachinery's field manager: the object itself
// with faster managedFields accessors. The field manager reads the managedFields of both objects
// of a write through metav1.Object's GetManagedFields and writes the new ones through
// SetManagedFields. Unstructured's own accessors convert every entry by reflection, with each
// fieldsV1 taken through a JSON round trip, and then deep-copy the whole list they set: 3-4% of
// a sample-controller harness run's CPU. These accessors give exactly what Unstructured's give
// (TestManagedObjectAccessorsAsUnstructured): entries read by FromUnstructured's plan, entries
// written by managedFieldsToUnstructured, and anything either cannot take (a malformed entry,
// which Unstructured's accessors report through utilruntime.HandleError) left to Unstructured's
// own accessors.
//
// Every other method is the embedded Unstructured's. The field manager sees the object as a
// *managedObject only where it uses accessors; it converts it to its typed form through
// sameVersion.ConvertToVersion, which hands it the *unstructured.Unstructured inside (its type
// converter takes only that type as unstructured content).
type managedObject struct {
	*unstructured.Unstructured
}

// GetManagedFields returns what (*unstructured.Unstructured).GetManagedFields returns.
func (o *managedObject) GetManagedFields() []metav1.ManagedFieldsEntry {
	md, isMap := o.Object["metadata"].(map[string]any)
	if !isMap {
		return o.Unstructured.GetManagedFields()
	}
	items, isList := md["managedFields"].([]any)
	if !isList {
		return o.Unstructured.GetManagedFields()
	}
	entries := make([]metav1.ManagedFieldsEntry, len(items))
	for i, item := range items {
		m, isMap := item.(map[string]any)
		if !isMap || FromUnstructured(m, &entries[i]) != nil {
			return o.Unstructured.GetManagedFields() // which reports the entry
		}
	}
	return entries
}

// SetManagedFields does what (*unstructured.Unstructured).SetManagedFields does.
func (o *managedObject) SetManagedFields(entries []metav1.ManagedFieldsEntry) {
	md, isMap := o.Object["metadata"].(map[string]any)
	if !isMap || entries == nil {
		o.Unstructured.SetManagedFields(entries)
		return
	}
	items, ok := managedFieldsToUnstructuredWith(entries, parseStoredFieldsV1)
	if !ok {
		o.Unstructured.SetManagedFields(entries)
		return
	}
	// Unstructured's setter deep-copies the list it built; items is already new.
	md["managedFields"] = items
}

// unwrapManaged returns the Unstructured of a managedObject, and any other object as it is.
func unwrapManaged(obj runtime.Object) runtime.Object {
	if m, ok := obj.(*managedObject); ok {
		return m.Unstructured
	}
	return obj
}

// storedFields keeps the fieldsV1 maps parseStoredFieldsV1 decoded, by their JSON. A sample
// controller's writes set the same fields again and again (every Deployment it creates, every
// status it writes), and decoding each fieldsV1 into its dozens of maps was a twentieth of a
// run's allocations.
var storedFields struct {
	mu sync.Mutex
	m  genmap.Map[string, map[string]any]
}

// parseStoredFieldsV1 is parseFieldsV1 for the managedFields track writes: its maps are shared
// by every object whose fieldsV1 has the same JSON, so they must never be changed. They are not:
// track's result is the object the REST front hands to the fake apiserver (rest.FieldTracker),
// which stores it, and a stored object is never changed (fakeapi's "Ownership of objects").
func parseStoredFieldsV1(data []byte) (map[string]any, bool) {
	key := string(data)
	storedFields.mu.Lock()
	m, ok := storedFields.m.Get(key)
	storedFields.mu.Unlock()
	if ok {
		return m, true
	}
	if m, ok = parseFieldsV1(data); !ok {
		return nil, false
	}
	storedFields.mu.Lock()
	storedFields.m.Put(key, m)
	storedFields.mu.Unlock()
	return m, true
}
