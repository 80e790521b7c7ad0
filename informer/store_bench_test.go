package informer

import (
	"fmt"
	"runtime"
	"testing"
)

// Benchmarks of the informer's data structures. Run with
//
//	go test ./informer/ -run '^$' -bench 'BenchmarkStore|BenchmarkRealFIFO' -benchmem
//
// They measure; they assert nothing.

const dataBenchObjects = 100_000

func dataBenchObjs(n int) []any {
	objs := make([]any, n)
	for i := range objs {
		objs[i] = dataMeta(fmt.Sprintf("ns%d", i%100), fmt.Sprintf("obj-%d", i), fmt.Sprint(i+1))
	}
	return objs
}

func dataHeapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkStoreBytesPerObject reports the heap the cache itself spends per cached object (map
// entry, key string, namespace-index entry), at 100,000 objects, excluding the objects, which are
// allocated before the first measurement and kept alive after the second.
func BenchmarkStoreBytesPerObject(b *testing.B) {
	objs := dataBenchObjs(dataBenchObjects)
	var perObject float64
	for i := 0; i < b.N; i++ {
		before := dataHeapInUse()
		c := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
		for _, o := range objs {
			if err := c.Add(o); err != nil {
				b.Fatal(err)
			}
		}
		after := dataHeapInUse()
		perObject = float64(after-before) / dataBenchObjects
		runtime.KeepAlive(c)
	}
	runtime.KeepAlive(objs)
	b.ReportMetric(perObject, "B/object")
}

// BenchmarkStoreAdd measures Add of new keys into an indexer with the namespace index.
func BenchmarkStoreAdd(b *testing.B) {
	objs := dataBenchObjs(dataBenchObjects)
	c := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%dataBenchObjects == 0 {
			b.StopTimer()
			c = NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
			b.StartTimer()
		}
		_ = c.Add(objs[i%dataBenchObjects])
	}
}

// BenchmarkStoreUpdate measures Update of existing keys in a full (100,000-object) indexer.
func BenchmarkStoreUpdate(b *testing.B) {
	objs := dataBenchObjs(dataBenchObjects)
	c := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	for _, o := range objs {
		_ = c.Add(o)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = c.Update(objs[i%dataBenchObjects])
	}
}

// BenchmarkRealFIFOEnqueuePop measures one Update enqueue plus one Pop on the atomic RealFIFO.
func BenchmarkRealFIFOEnqueuePop(b *testing.B) {
	objs := dataBenchObjs(1000)
	f := NewRealFIFO(RealFIFOOptions{AtomicEvents: true})
	noop := func(any, bool) error { return nil }
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = f.Update(objs[i%len(objs)])
		_, _ = f.Pop(noop)
	}
}

// BenchmarkRealFIFOEnqueuePopBatch measures enqueuing 1000 updates and draining them with PopBatch.
// Each op is one 1000-item round.
func BenchmarkRealFIFOEnqueuePopBatch(b *testing.B) {
	objs := dataBenchObjs(1000)
	f := NewRealFIFO(RealFIFOOptions{AtomicEvents: true})
	noopBatch := func([]Delta, bool) error { return nil }
	noop := func(any, bool) error { return nil }
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, o := range objs {
			_ = f.Update(o)
		}
		for f.Len() > 0 {
			_ = f.PopBatch(noopBatch, noop)
		}
	}
}
