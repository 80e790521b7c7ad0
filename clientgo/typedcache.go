package clientgo

import (
	"reflect"
	"sync"
	"time"

	"github.com/informersim/informersim/internal/genmap"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Converted versions. The Env's informers convert every object the apiserver hands them to its
// Go type, and a run hands them the same committed version again and again: a relist after a
// dropped watch or a 410 lists every object the cache already holds, a restarted controller's
// new informers list them anew, two informers of one resource each get every event. fakeapi
// never changes a committed version (every write gets a new resourceVersion, a revision of the
// whole server that is never reused; docs/performance-rest.md "Shared encodings"), so the
// conversion of a version is the same each time, and the run keeps it: keyed by the Go type's
// group, version and kind and the object's namespace, name, uid and resourceVersion.
//
// What is kept is a pristine copy, which is never handed out: each informer is handed a new deep
// copy of it (its own object, as client-go's informers decode a new object for each event and
// relist, and as a transform the controller set must get), which costs a fraction of a
// conversion. The copy kept is the one the read-only check keeps of the object first handed out
// (readonly.go lend), and that check compares each later copy handed out with it: a controller
// that changes an object it was handed changes its own copy, never the one kept.
//
// The kept copies are only ever copied by the type's DeepCopyObject, as the read-only check and
// client-go's own cache mutation detector rely on: for each Go type, the first copy the cache
// hands out is checked once per process to equal what it was copied from and to share no memory
// with it (a hand-written DeepCopy that skipped a field or shared a map would otherwise hand a
// controller's changes on as pristine); a type that fails is converted every time.

// convertedVersions holds a run's kept conversions, at most keptConversions in each of two
// generations (internal/genmap). hits and misses count lookups.
type convertedVersions struct {
	mu           sync.Mutex
	kept         genmap.Map[versionKey, runtime.Object]
	hits, misses int
}

// keptConversions bounds a generation of convertedVersions: the zero genmap.Map's.
const keptConversions = genmap.DefaultLimit

// versionKey names a committed version of an object and the Go type it was converted to.
type versionKey struct {
	gvk                      schema.GroupVersionKind
	namespace, name, uid, rv string
}

// keyOf is u's version key for gvk; ok is false for an object without a uid or a
// resourceVersion, which is not a committed version and is converted each time.
func keyOf(gvk schema.GroupVersionKind, u *unstructured.Unstructured) (k versionKey, ok bool) {
	md, isMap := u.Object["metadata"].(map[string]any)
	if !isMap {
		return k, false
	}
	uid, _ := md["uid"].(string)
	rv, _ := md["resourceVersion"].(string)
	if uid == "" || rv == "" {
		return k, false
	}
	name, _ := md["name"].(string)
	ns, _ := md["namespace"].(string)
	return versionKey{gvk: gvk, namespace: ns, name: name, uid: uid, rv: rv}, true
}

// copyOf is a new deep copy of the kept conversion of k and the kept copy itself, or nil when
// none is kept (or its type's DeepCopyObject cannot be trusted).
func (c *convertedVersions) copyOf(k versionKey) (handed, kept runtime.Object) {
	c.mu.Lock()
	kept, ok := c.kept.Get(k)
	if !ok {
		c.misses++
		c.mu.Unlock()
		return nil, nil
	}
	c.hits++
	c.mu.Unlock()
	handed = kept.DeepCopyObject()
	if !copiesFaithfully(kept, handed) {
		c.mu.Lock()
		c.kept.Delete(k)
		c.mu.Unlock()
		return nil, nil
	}
	return handed, kept
}

// keep keeps obj, which must never change, as the conversion of k.
func (c *convertedVersions) keep(k versionKey, obj runtime.Object) {
	if obj == nil || copyTrust.has(reflect.TypeOf(obj)) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kept.Put(k, obj)
}

// counts reports the lookups that found a kept conversion and those that did not.
func (c *convertedVersions) counts() (hits, misses int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses
}

// typeTrust records, per Go type, whether its DeepCopyObject was found faithful (copiesFaithfully).
type typeTrust struct {
	mu   sync.Mutex
	seen map[reflect.Type]bool // true: faithful
}

var copyTrust typeTrust // the process's

func (t *typeTrust) has(typ reflect.Type) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	faithful, seen := t.seen[typ]
	return seen && !faithful
}

// copiesFaithfully reports whether copy, made by kept's DeepCopyObject, equals kept and shares no
// memory with it; each Go type is checked on its first copy in the process, then trusted or not.
func copiesFaithfully(kept, copy runtime.Object) bool {
	typ := reflect.TypeOf(kept)
	copyTrust.mu.Lock()
	faithful, seen := copyTrust.seen[typ]
	copyTrust.mu.Unlock()
	if seen {
		return faithful
	}
	faithful = copy != nil && reflect.TypeOf(copy) == typ && reflect.DeepEqual(kept, copy) &&
		!sharesMemory(reflect.ValueOf(kept), reflect.ValueOf(copy), 0)
	copyTrust.mu.Lock()
	if copyTrust.seen == nil {
		copyTrust.seen = map[reflect.Type]bool{}
	}
	copyTrust.seen[typ] = faithful
	copyTrust.mu.Unlock()
	return faithful
}

// sharesMemory reports whether a and b, of one type, reach the same pointed-to value, map or
// slice array (strings, which cannot be changed, may be shared). Past a depth it says they do.
func sharesMemory(a, b reflect.Value, depth int) bool {
	if depth > 64 {
		return true
	}
	switch t := a.Type(); {
	case t == reflect.TypeFor[*time.Location](), t.PkgPath() == "unique":
		return false // never changed once made: a time's zone, an interned value (FieldsV1's)
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return false
		}
		return a.UnsafePointer() == b.UnsafePointer() || sharesMemory(a.Elem(), b.Elem(), depth+1)
	case reflect.Interface:
		if a.IsNil() || b.IsNil() || a.Elem().Type() != b.Elem().Type() {
			return false
		}
		return sharesMemory(a.Elem(), b.Elem(), depth+1)
	case reflect.Map:
		if a.IsNil() || b.IsNil() {
			return false
		}
		if a.UnsafePointer() == b.UnsafePointer() {
			return true
		}
		it := a.MapRange()
		for it.Next() {
			if bv := b.MapIndex(it.Key()); bv.IsValid() && sharesMemory(it.Value(), bv, depth+1) {
				return true
			}
		}
		return false
	case reflect.Slice:
		if a.Cap() == 0 || b.Cap() == 0 {
			return false
		}
		if a.UnsafePointer() == b.UnsafePointer() {
			return true
		}
		fallthrough
	case reflect.Array:
		for i := range min(a.Len(), b.Len()) {
			if sharesMemory(a.Index(i), b.Index(i), depth+1) {
				return true
			}
		}
		return false
	case reflect.Struct:
		for i := range a.NumField() {
			if sharesMemory(a.Field(i), b.Field(i), depth+1) {
				return true
			}
		}
	}
	return false
}
