package rest

import (
	"reflect"
	"sync"

	"github.com/informersim/informersim/internal/genmap"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Shared encodings (docs/performance-rest.md).
//
// kube-apiserver's watch cache wraps each event's object in a caching object that remembers its
// serialization per encoder, so an event going to a thousand watchers is encoded once. The front
// goes one step further: it encodes each version of an object once per encoding and shares the
// bytes between every response that carries that version, whoever asked for it: the answer to
// the write that made it, each watcher's event, GETs and the items of LISTs. An encoding of an
// object alone (an item) is what a LIST holds of it in JSON and, in protobuf, the Go type's
// marshalling inside the envelope; bodies, lists and watch events are assembled around items
// (ItemCodec), byte for byte what encoding the whole would give.
//
// What makes sharing safe is that fakeapi never changes a version once committed: every write
// gets a new resourceVersion (a revision of the whole server, never reused, fakeapi.md §2), and
// every read hands out the committed content of some version. So an item is keyed by the
// object's kind, namespace, name, uid and resourceVersion, and the encoding. Objects that are not
// a committed version (the answer of a dry-run write, which carries the live object's
// resourceVersion with content that was never stored, or an object without a
// resourceVersion) are encoded every time and never cached.

// encKey names one encoding of one committed version of an object.
type encKey struct {
	encoding                                   string // a codec's media type; "" for JSON
	apiVersion, kind, namespace, name, uid, rv string
}

// versionKey returns the key of u's version in encoding, and false when u is not known to be a
// committed version (no name or no resourceVersion).
func versionKey(encoding string, u *unstructured.Unstructured) (encKey, bool) {
	md, _ := u.Object["metadata"].(map[string]any)
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	k := encKey{
		encoding:   encoding,
		apiVersion: str(u.Object, "apiVersion"), kind: str(u.Object, "kind"),
		namespace: str(md, "namespace"), name: str(md, "name"), uid: str(md, "uid"), rv: str(md, "resourceVersion"),
	}
	return k, k.name != "" && k.rv != ""
}

// contentKey names one encoding of the content of a lent object (a LIST's item, a watch
// event's object): fakeapi lends the map it stores for a committed version, the same map for as
// long as it holds that version, so the map's address names the version without reading it. A
// LIST of 10,000 objects otherwise reads seven fields from each object's maps, scattered over
// the heap, and hashes them, to find items it already holds: most of the front's own part of
// that LIST.
type contentKey struct {
	content  uintptr
	encoding string
}

// contentItem is the item of a lent content. content keeps the map alive while the entry is
// held, so its address cannot name another map meanwhile; and a committed version's content
// never changes (fakeapi checks what it lends), so the item stays its encoding.
type contentItem struct {
	content map[string]any
	item    []byte
}

func keyOfContent(encoding string, u *unstructured.Unstructured) contentKey {
	return contentKey{content: reflect.ValueOf(u.Object).Pointer(), encoding: encoding}
}

// encodingCache holds the item encodings of recent object versions, by version (encKey) and,
// for lent objects, also by content (contentKey). Each is bounded (internal/genmap). Safe for
// concurrent use: watch loops, lists and writes run on their own goroutines.
type encodingCache struct {
	mu        sync.Mutex
	byVersion genmap.Map[encKey, []byte]
	byContent genmap.Map[contentKey, contentItem]
	// hits and misses count lookups, for tests and benchmarks.
	hits, misses uint64
}

// defaultEncodingCacheItems bounds a generation: a LIST of 10,000 pods is served from the
// cache the second time, and ten thousands of small items are a few megabytes. The entries by
// content also keep their maps, most of which fakeapi holds anyway (its history of versions,
// until a compaction).
const defaultEncodingCacheItems = 1 << 15

func newEncodingCache(limit int) *encodingCache {
	return &encodingCache{byVersion: genmap.Map[encKey, []byte]{Limit: limit}, byContent: genmap.Map[contentKey, contentItem]{Limit: limit}}
}

// get returns the cached item of k.
func (c *encodingCache) get(k encKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.byVersion.Get(k)
	c.count(ok)
	return b, ok
}

func (c *encodingCache) count(hit bool) {
	if hit {
		c.hits++
	} else {
		c.misses++
	}
}

// getAll returns the cached item of each keys[i] with use[i] set, nil where there is none, under
// one lock.
func (c *encodingCache) getAll(keys []encKey, use []bool) [][]byte {
	out := make([][]byte, len(keys))
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, k := range keys {
		if use[i] {
			b, ok := c.byVersion.Get(k)
			c.count(ok)
			out[i] = b
		}
	}
	return out
}

// putAll stores items[i] under keys[i] for each i of which, under one lock.
func (c *encodingCache) putAll(keys []encKey, items [][]byte, which []int) {
	if len(which) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, i := range which {
		c.byVersion.Put(keys[i], items[i])
	}
}

// put stores the item of k; b must not be changed afterwards.
func (c *encodingCache) put(k encKey, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byVersion.Put(k, b)
}

// getLent fills items[i] with the item of objs[i], lent objects, found by content, and returns
// the indexes of those it does not hold, under one lock.
func (c *encodingCache) getLent(encoding string, objs []unstructured.Unstructured, items [][]byte) (missed []int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range objs {
		e, ok := c.byContent.Get(keyOfContent(encoding, &objs[i]))
		c.count(ok)
		if !ok {
			missed = append(missed, i)
			continue
		}
		items[i] = e.item
	}
	return missed
}

// getContent returns the item of lent u's content.
func (c *encodingCache) getContent(encoding string, u *unstructured.Unstructured) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byContent.Get(keyOfContent(encoding, u))
	c.count(ok)
	return e.item, ok
}

// putContent stores b as the item of lent u's content.
func (c *encodingCache) putContent(encoding string, u *unstructured.Unstructured, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byContent.Put(keyOfContent(encoding, u), contentItem{content: u.Object, item: b})
}

// putLent stores items[i] as the item of lent objs[i]'s content for each i of which, under one
// lock.
func (c *encodingCache) putLent(encoding string, objs []unstructured.Unstructured, items [][]byte, which []int) {
	if len(which) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, i := range which {
		c.byContent.Put(keyOfContent(encoding, &objs[i]), contentItem{content: objs[i].Object, item: items[i]})
	}
}

// stats returns the lookups that hit and missed so far.
func (c *encodingCache) stats() (hits, misses uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses
}
