package compare

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
)

// pipelineObjects is the size of the initial LIST in BenchmarkPipeline; watch events cycle over
// these names, so the cache size stays fixed while events flow.
const pipelineObjects = 1000

// chanLW is the benchmark's in-memory ListerWatcher. LIST answers a fixed set of objects at
// resourceVersion pipelineObjects; each WATCH returns a new chanWatch, handed to the benchmark
// through opened so that it can push events into it. It has the method sets of client-go's
// cache.ListerWatcher and cache.ListerWatcherWithContext and of informer.ListerWatcher, so the
// very same value feeds both informers.
type chanLW struct {
	list   *metav1.PartialObjectMetadataList
	opened chan *chanWatch
}

func newChanLW() *chanLW {
	list := &metav1.PartialObjectMetadataList{
		ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(pipelineObjects)},
	}
	for i := range pipelineObjects {
		list.Items = append(list.Items, metav1.PartialObjectMetadata{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:       fmt.Sprintf("ns-%d", i%10),
				Name:            fmt.Sprintf("obj-%d", i),
				ResourceVersion: strconv.Itoa(i + 1),
			},
		})
	}
	// Room for a few watches: the benchmark only ever takes the first one, and a reflector
	// that re-watched would otherwise block in WatchWithContext.
	return &chanLW{list: list, opened: make(chan *chanWatch, 8)}
}

func (lw *chanLW) List(opts metav1.ListOptions) (kruntime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

func (lw *chanLW) ListWithContext(context.Context, metav1.ListOptions) (kruntime.Object, error) {
	return lw.list, nil
}

func (lw *chanLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), opts)
}

func (lw *chanLW) WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error) {
	w := &chanWatch{ch: make(chan watch.Event), stop: make(chan struct{})}
	select {
	case lw.opened <- w:
	default:
	}
	return w, nil
}

// IsWatchListSemanticsUnSupported makes client-go use classic list+watch, the only start-up our
// informer implements, so both do the same work.
func (lw *chanLW) IsWatchListSemanticsUnSupported() bool { return true }

// chanWatch is a watch.Interface over an unbuffered channel, as a decoded HTTP stream is. Its
// channel is never closed: the consumer ends it with Stop, and the producer selects on stop.
type chanWatch struct {
	ch       chan watch.Event
	stop     chan struct{}
	stopOnce sync.Once
}

func (w *chanWatch) ResultChan() <-chan watch.Event { return w.ch }
func (w *chanWatch) Stop()                          { w.stopOnce.Do(func() { close(w.stop) }) }

// countingHandler counts updates and closes done when it has seen target of them. Its method
// set is both client-go's cache.ResourceEventHandler and informer.ResourceEventHandler. Each
// handler is called from one goroutine at a time; the counter is atomic only because the
// benchmark goroutine may read it.
type countingHandler struct {
	target  int64
	updates atomic.Int64
	done    chan struct{}
}

func (h *countingHandler) OnAdd(any, bool) {}
func (h *countingHandler) OnDelete(any)    {}
func (h *countingHandler) OnUpdate(_, _ any) {
	if h.updates.Add(1) == h.target {
		close(h.done)
	}
}

// startPipeline builds the informer named impl over lw with handlers registered before start,
// runs it with the goroutine driver and waits for its initial sync. The returned function stops
// it and waits for Run to return.
func startPipeline(tb testing.TB, impl string, lw *chanLW, handlers []*countingHandler) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var synced func() bool
	switch impl {
	case "clientgo":
		inf := cache.NewSharedIndexInformer(lw, &metav1.PartialObjectMetadata{}, 0,
			cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		for _, h := range handlers {
			if _, err := inf.AddEventHandler(h); err != nil {
				tb.Fatal(err)
			}
		}
		go func() { defer close(done); inf.RunWithContext(ctx) }()
		synced = inf.HasSynced
	case "ours":
		inf := informer.NewSharedIndexInformerWithOptions(lw, &metav1.PartialObjectMetadata{},
			informer.SharedIndexInformerOptions{
				Indexers: informer.Indexers{informer.NamespaceIndex: informer.MetaNamespaceIndexFunc},
			})
		for _, h := range handlers {
			if _, err := inf.AddEventHandler(h); err != nil {
				tb.Fatal(err)
			}
		}
		go func() { defer close(done); inf.Run(ctx) }()
		synced = inf.HasSynced
	default:
		tb.Fatalf("unknown implementation %q", impl)
	}
	for deadline := time.Now().Add(10 * time.Second); !synced(); {
		if time.Now().After(deadline) {
			tb.Fatalf("%s: informer did not sync within 10s", impl)
		}
		time.Sleep(time.Millisecond)
	}
	return func() { cancel(); <-done }
}

// BenchmarkPipeline measures events per second through the whole informer pipeline: watch
// event → reflector → queue → process loop (cache update) → N handlers, under the goroutine
// driver, for client-go's informer and ours, fed by the same kind of in-memory ListerWatcher.
//
// Method: after the initial LIST of pipelineObjects objects has synced (untimed), the benchmark
// pushes b.N MODIFIED events with increasing resourceVersions into the open watch, cycling over
// the listed names, and stops the timer when every handler has counted b.N updates. Objects are
// built by the producer while the pipeline runs; that cost is the same for both sides.
func BenchmarkPipeline(b *testing.B) {
	for _, impl := range []string{"clientgo", "ours"} {
		for _, n := range []int{1, 4, 16} {
			b.Run(fmt.Sprintf("%s/handlers=%d", impl, n), func(b *testing.B) {
				benchPipeline(b, impl, n)
			})
		}
	}
}

func benchPipeline(b *testing.B, impl string, nHandlers int) {
	lw := newChanLW()
	handlers := make([]*countingHandler, nHandlers)
	for i := range handlers {
		handlers[i] = &countingHandler{target: int64(b.N), done: make(chan struct{})}
	}
	stop := startPipeline(b, impl, lw, handlers)
	defer stop()
	var w *chanWatch
	select {
	case w = <-lw.opened:
	case <-time.After(10 * time.Second):
		b.Fatalf("%s: no watch opened within 10s", impl)
	}

	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		item := lw.list.Items[i%pipelineObjects]
		obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Namespace:       item.Namespace,
			Name:            item.Name,
			ResourceVersion: strconv.Itoa(pipelineObjects + 1 + i),
		}}
		select {
		case w.ch <- watch.Event{Type: watch.Modified, Object: obj}:
		case <-w.stop:
			b.Fatalf("%s: watch stopped after %d events", impl, i)
		}
	}
	for _, h := range handlers {
		<-h.done
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// cacheMemoryObjects is the number of objects cached in BenchmarkCacheMemory.
const cacheMemoryObjects = 100_000

// BenchmarkCacheMemory measures the heap bytes the cache (an Indexer keyed by
// DeletionHandlingMetaNamespaceKeyFunc, with the namespace index) costs per cached object, at
// cacheMemoryObjects objects, for client-go's and ours.
//
// Objects are EXCLUDED: they are built once before the heap baseline and shared by every
// iteration, so B/obj is what the cache itself adds (keys, the items map, the index sets).
// Method: GC, read HeapAlloc, add every object to a new Indexer, GC, read HeapAlloc again, keep
// the Indexer alive past the second reading.
func BenchmarkCacheMemory(b *testing.B) {
	objs := make([]*metav1.PartialObjectMetadata, cacheMemoryObjects)
	for i := range objs {
		objs[i] = &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Namespace:       fmt.Sprintf("ns-%d", i%100),
			Name:            fmt.Sprintf("obj-%d", i),
			ResourceVersion: strconv.Itoa(i + 1),
		}}
	}
	type adder interface{ Add(obj any) error }
	impls := []struct {
		name string
		new  func() adder
	}{
		{"clientgo", func() adder {
			return cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc,
				cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		}},
		{"ours", func() adder {
			return informer.NewIndexer(informer.DeletionHandlingMetaNamespaceKeyFunc,
				informer.Indexers{informer.NamespaceIndex: informer.MetaNamespaceIndexFunc})
		}},
	}
	for _, impl := range impls {
		b.Run(impl.name, func(b *testing.B) {
			b.ReportAllocs()
			var total float64
			var before, after runtime.MemStats
			for range b.N {
				b.StopTimer()
				runtime.GC()
				runtime.ReadMemStats(&before)
				b.StartTimer()
				idx := impl.new()
				for _, o := range objs {
					if err := idx.Add(o); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				runtime.GC()
				runtime.ReadMemStats(&after)
				runtime.KeepAlive(idx)
				total += float64(after.HeapAlloc) - float64(before.HeapAlloc)
				b.StartTimer()
			}
			b.ReportMetric(total/float64(b.N)/cacheMemoryObjects, "B/obj")
		})
	}
	runtime.KeepAlive(objs)
}

// fakeListObjects is the number of pods BenchmarkFakeAPIvsFakeClientset lists.
const fakeListObjects = 10_000

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// newPod returns an unstructured pod without a node, so a delete removes it at once.
func newPod(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(map[string]string{"app": "bench"})
	return u
}

// BenchmarkFakeAPIvsFakeClientset measures one LIST of fakeListObjects pods (all namespaces)
// through the dynamic client interface: fakeapi (behind clientgo.Dynamic) against
// client-go's dynamic fake client (an object tracker). Both deep-copy what they return.
func BenchmarkFakeAPIvsFakeClientset(b *testing.B) {
	ctx := context.Background()
	srv, err := fakeapi.New(fakeapi.Config{})
	if err != nil {
		b.Fatal(err)
	}
	var objs []kruntime.Object
	for i := range fakeListObjects {
		p := newPod(fmt.Sprintf("ns-%d", i%10), fmt.Sprintf("pod-%d", i))
		if _, err := srv.Resource(podsGVR).Namespace(p.GetNamespace()).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		objs = append(objs, p)
	}
	fake := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(kruntime.NewScheme(),
		map[schema.GroupVersionResource]string{podsGVR: "PodList"}, objs...)
	clients := []struct {
		name   string
		client dynamic.Interface
	}{
		{"clientgo", fake},
		{"fakeapi", clientgo.Dynamic(srv)},
	}
	for _, c := range clients {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				list, err := c.client.Resource(podsGVR).List(ctx, metav1.ListOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if len(list.Items) != fakeListObjects {
					b.Fatalf("listed %d pods, want %d", len(list.Items), fakeListObjects)
				}
			}
		})
	}
}
