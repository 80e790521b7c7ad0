package rest

import (
	"sync"

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

// encodingCache holds the item encodings of recent object versions. It is bounded: entries go
// in a current generation; when that is full it becomes the old one (the older dropped), and a
// hit in the old one moves the entry back to the current. So a version read or watched again
// and again stays, and the cache never holds more than twice its limit. Safe for concurrent
// use: watch loops, lists and writes run on their own goroutines.
type encodingCache struct {
	mu       sync.Mutex
	cur, old map[encKey][]byte
	limit    int
	// hits and misses count lookups, for tests and benchmarks.
	hits, misses uint64
}

// defaultEncodingCacheItems bounds a generation: a LIST of 10,000 pods is served from the
// cache the second time, and ten thousands of small items are a few megabytes.
const defaultEncodingCacheItems = 1 << 15

func newEncodingCache(limit int) *encodingCache {
	return &encodingCache{cur: map[encKey][]byte{}, old: map[encKey][]byte{}, limit: limit}
}

// get returns the cached item of k.
func (c *encodingCache) get(k encKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.cur[k]; ok {
		c.hits++
		return b, true
	}
	if b, ok := c.old[k]; ok {
		c.hits++
		delete(c.old, k)
		c.putLocked(k, b)
		return b, true
	}
	c.misses++
	return nil, false
}

// getAll returns the cached item of each keys[i] with use[i] set, nil where there is none, under
// one lock.
func (c *encodingCache) getAll(keys []encKey, use []bool) [][]byte {
	out := make([][]byte, len(keys))
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, k := range keys {
		if !use[i] {
			continue
		}
		if b, ok := c.cur[k]; ok {
			out[i] = b
		} else if b, ok := c.old[k]; ok {
			delete(c.old, k)
			c.putLocked(k, b)
			out[i] = b
		} else {
			c.misses++
			continue
		}
		c.hits++
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
		c.putLocked(keys[i], items[i])
	}
}

// put stores the item of k; b must not be changed afterwards.
func (c *encodingCache) put(k encKey, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(k, b)
}

func (c *encodingCache) putLocked(k encKey, b []byte) {
	if len(c.cur) >= c.limit {
		c.old, c.cur = c.cur, make(map[encKey][]byte, len(c.cur))
	}
	c.cur[k] = b
}

// stats returns the lookups that hit and missed so far.
func (c *encodingCache) stats() (hits, misses uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses
}
