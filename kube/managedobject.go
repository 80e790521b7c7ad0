package kube

import (
	"bytes"
	"reflect"
	"sync"
	"unsafe"

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

// storedFields keeps the fieldsV1 maps parseStoredFieldsV1 decoded, by their JSON and by
// their identity. A sample controller's writes set the same fields again and again (every
// Deployment it creates, every status it writes), and decoding each fieldsV1 made dozens of
// maps; reading one back into the Go type (FromUnstructured: the field manager's
// GetManagedFields, the harness's typed objects) encoded its JSON again. Both generations'
// entries hold their maps, so the address of a map names it for as long as it is kept.
var storedFields struct {
	mu     sync.Mutex
	byJSON genmap.Map[string, *storedFieldsV1]
	byMap  genmap.Map[unsafe.Pointer, *storedFieldsV1]
}

// storedFieldsV1 is a fieldsV1 parseStoredFieldsV1 decoded: m, never changed, and raw, the
// bytes appendFieldsV1 writes for it, made when first asked for.
type storedFieldsV1 struct {
	m   map[string]any
	raw []byte
}

// parseStoredFieldsV1 is parseFieldsV1 for the managedFields track writes: its maps are shared
// by every object whose fieldsV1 has the same JSON, so they must never be changed. They are not:
// track's result is the object the REST front hands to the fake apiserver (rest.FieldTracker),
// which stores it, and a stored object is never changed (fakeapi's "Ownership of objects").
func parseStoredFieldsV1(data []byte) (map[string]any, bool) {
	key := string(data)
	storedFields.mu.Lock()
	e, ok := storedFields.byJSON.Get(key)
	storedFields.mu.Unlock()
	if ok {
		return e.m, true
	}
	m, ok := parseFieldsV1(data)
	if !ok {
		return nil, false
	}
	e = &storedFieldsV1{m: m}
	storedFields.mu.Lock()
	storedFields.byJSON.Put(key, e)
	storedFields.byMap.Put(reflect.ValueOf(m).UnsafePointer(), e)
	storedFields.mu.Unlock()
	return m, true
}

// storedFieldsV1Raw returns a new copy of what appendFieldsV1 writes for src when src is a map
// parseStoredFieldsV1 made (and still keeps): made once per map, as the map never changes.
func storedFieldsV1Raw(src any) ([]byte, bool) {
	m, isMap := src.(map[string]any)
	if !isMap || m == nil {
		return nil, false
	}
	storedFields.mu.Lock()
	defer storedFields.mu.Unlock()
	e, ok := storedFields.byMap.Get(reflect.ValueOf(m).UnsafePointer())
	if !ok {
		return nil, false
	}
	if e.raw == nil {
		raw, ok := appendFieldsV1(nil, m, 0)
		if !ok {
			return nil, false
		}
		e.raw = raw
	}
	return bytes.Clone(e.raw), true
}
