package compare

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/internal/cputime"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
)

// End-to-end workload of BenchmarkEndToEnd: e2eObjects pods in namespace "default", updated in
// batches of e2eBatch (one update of each pod per batch), each batch waited for until every
// handler has been told of every update in it.
const (
	e2eObjects = 100
	e2eBatch   = 100
)

// e2eServerConfig is the fake apiserver of every case: no request or event records, and a
// history of at most e2eHistory writes. A real apiserver compacts its history every few minutes
// and keeps a bounded watch cache; without a bound, the fake would keep every version the
// benchmark writes (the goroutine hosts' real clock never reaches the compaction interval), and
// each write would also pay for the fresh memory its version takes.
func e2eServerConfig() fakeapi.Config {
	return fakeapi.Config{MaxRecords: -1, MaxLogEntries: e2eHistory}
}

// e2eHistory bounds the fake apiserver's history in BenchmarkEndToEnd: ample for watchers that
// keep up, as every host here does.
const e2eHistory = 4096

// e2eHandler counts updates and signals reached when its count hits want. Its method set is
// both client-go's cache.ResourceEventHandler and informer.ResourceEventHandler. The counters
// are atomic because the goroutine drivers call it from their own goroutines.
type e2eHandler struct {
	seen    atomic.Int64
	want    atomic.Int64
	reached chan struct{}
}

func newE2EHandler() *e2eHandler { return &e2eHandler{reached: make(chan struct{}, 1)} }

func (h *e2eHandler) OnAdd(any, bool) {}
func (h *e2eHandler) OnDelete(any)    {}
func (h *e2eHandler) OnUpdate(_, _ any) {
	if h.seen.Add(1) == h.want.Load() {
		select {
		case h.reached <- struct{}{}:
		default:
		}
	}
}

// e2eWriter issues the workload's updates through the fake apiserver's client API: each update
// sends the pod's last returned state with its "n" annotation set to a new value, so every
// update is a real change (a new revision and one MODIFIED event per watcher).
type e2eWriter struct {
	rc   *fakeapi.ResourceClient
	pods []*unstructured.Unstructured
	n    int
}

func newE2EWriter(tb testing.TB, srv *fakeapi.Server) *e2eWriter {
	w := &e2eWriter{rc: srv.Resource(podsGVR).Namespace("default")}
	for i := range e2eObjects {
		p, err := w.rc.Create(context.Background(), newPod("default", "p-"+strconv.Itoa(i)), metav1.CreateOptions{})
		if err != nil {
			tb.Fatal(err)
		}
		w.pods = append(w.pods, p)
	}
	return w
}

func (w *e2eWriter) update(tb testing.TB) {
	i := w.n % e2eObjects
	w.n++
	p := w.pods[i]
	p.SetAnnotations(map[string]string{"n": strconv.Itoa(w.n)})
	out, err := w.rc.Update(context.Background(), p, metav1.UpdateOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	w.pods[i] = out
}

// e2eRig is one implementation under test: it starts with the pods created and the informer
// synced; settle returns once every handler has been told of every update so far.
type e2eRig struct {
	writer *e2eWriter
	settle func(tb testing.TB)
	stop   func()
}

// BenchmarkEndToEnd measures events per second of wall time, and allocations per event, from a
// fake apiserver update to every handler's notification: the write, the watch, the informer
// (reflector, queue, cache) and 1, 4 or 16 handlers, for three hosts on the same fakeapi and the
// same workload:
//
//   - clientgo: client-go's SharedIndexInformer on fakeapi's ListerWatcher (its goroutines);
//   - goroutine: informersim's informer under its goroutine driver (SharedIndexInformer.Run);
//   - world: informersim's deterministic world (sim/world), one informer on the sim driver,
//     every handler wrapped in the world's Recorder (order and cache-before-notify oracles),
//     the network model between apiserver and informer, the trace off (sim.TraceNone).
//
// Method: 100 pods are created and the informer synced before the timer starts; then b.N
// updates go in batches of 100 (one per pod), and after each batch the benchmark waits until
// every handler has counted it (the goroutine hosts signal it; the world runs until Quiet). The
// apiserver (e2eServerConfig) keeps no request or event records and a bounded history, the
// same for all three; each case starts from a collected heap returned to the operating system,
// so that no case profits from memory an earlier one grew; both goroutine hosts use list+watch
// (the start-up is not timed). allocs/event counts the
// allocations of every goroutine (runtime.MemStats.Mallocs) divided by b.N; cpu-ns/event is the
// process's CPU time (every goroutine and the collector) per event, a figure that moves less
// than wall time with the load of a shared machine. `make bench` prints
// the ratios of the three (scripts/benchratio.go).
//
// A fourth case, writer/handlers=0, is the writer alone: the same updates on a fake apiserver
// that nobody watches. Every host pays it, so it bounds the ratios between hosts; subtracted
// from a host's figure it leaves what the host itself adds per event (the watch's dispatch and
// hand-off, the informer, the handlers), which scripts/benchratio.go reports next to the ratios.
func BenchmarkEndToEnd(b *testing.B) {
	b.Run("writer/handlers=0", func(b *testing.B) { benchEndToEnd(b, "writer", 0) })
	for _, impl := range []string{"clientgo", "goroutine", "world"} {
		for _, n := range []int{1, 4, 16} {
			b.Run(fmt.Sprintf("%s/handlers=%d", impl, n), func(b *testing.B) {
				benchEndToEnd(b, impl, n)
			})
		}
	}
}

func benchEndToEnd(b *testing.B, impl string, nHandlers int) {
	handlers := make([]*e2eHandler, nHandlers)
	for i := range handlers {
		handlers[i] = newE2EHandler()
	}
	var rig e2eRig
	switch impl {
	case "clientgo", "goroutine":
		rig = goroutineRig(b, impl, handlers)
	case "world":
		rig = worldRig(b, handlers)
	case "writer":
		srv, err := fakeapi.New(e2eServerConfig())
		if err != nil {
			b.Fatal(err)
		}
		rig = e2eRig{writer: newE2EWriter(b, srv), settle: func(testing.TB) {}, stop: func() {}}
	default:
		b.Fatalf("unknown implementation %q", impl)
	}
	defer rig.stop()

	// Every case starts from the same heap: collected, its free memory given back to the
	// operating system, as in a fresh process. Otherwise a case would run faster for coming
	// after one that grew the heap (the fake apiserver keeps every version it wrote, so each
	// case grows it by some KB per event, and fresh memory must be faulted in and cleared),
	// and the order of the cases would decide part of their ratios.
	debug.FreeOSMemory()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	b.ResetTimer()
	cpuStart, cpuOK := cputime.Process()
	for done := 0; done < b.N; {
		batch := min(e2eBatch, b.N-done)
		want := int64(done + batch)
		for _, h := range handlers {
			h.want.Store(want)
		}
		for range batch {
			rig.writer.update(b)
		}
		done += batch
		rig.settle(b)
		for _, h := range handlers {
			if got := h.seen.Load(); got != want {
				b.Fatalf("%s: a handler counted %d updates, want %d", impl, got, want)
			}
		}
	}
	b.StopTimer()
	if cpuEnd, ok := cputime.Process(); ok && cpuOK {
		b.ReportMetric(float64(cpuEnd-cpuStart)/float64(b.N), "cpu-ns/event")
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N), "allocs/event")
}

// goroutineRig hosts client-go's informer or ours, each with its own goroutines, on a fakeapi
// that reads the real clock.
func goroutineRig(b *testing.B, impl string, handlers []*e2eHandler) e2eRig {
	srv, err := fakeapi.New(e2eServerConfig())
	if err != nil {
		b.Fatal(err)
	}
	writer := newE2EWriter(b, srv)
	lw := srv.ListerWatcher(podsGVR, "default")
	lw.WatchListUnsupported = true
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var synced func() bool
	switch impl {
	case "clientgo":
		inf := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0,
			cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		for _, h := range handlers {
			if _, err := inf.AddEventHandler(h); err != nil {
				b.Fatal(err)
			}
		}
		go func() { defer close(done); inf.RunWithContext(ctx) }()
		synced = inf.HasSynced
	default:
		inf := informer.NewSharedIndexInformerWithOptions(lw, &unstructured.Unstructured{},
			informer.SharedIndexInformerOptions{
				Indexers: informer.Indexers{informer.NamespaceIndex: informer.MetaNamespaceIndexFunc},
			})
		for _, h := range handlers {
			if _, err := inf.AddEventHandler(h); err != nil {
				b.Fatal(err)
			}
		}
		go func() { defer close(done); inf.Run(ctx) }()
		synced = inf.HasSynced
	}
	for deadline := time.Now().Add(10 * time.Second); !synced(); {
		if time.Now().After(deadline) {
			cancel()
			b.Fatalf("%s: informer did not sync within 10s", impl)
		}
		time.Sleep(time.Millisecond)
	}
	settle := func(tb testing.TB) {
		timeout := time.NewTimer(30 * time.Second)
		defer timeout.Stop()
		for _, h := range handlers {
			select {
			case <-h.reached:
			case <-timeout.C:
				tb.Fatalf("%s: handlers did not see the batch within 30s (a handler counted %d, want %d)", impl, h.seen.Load(), h.want.Load())
			}
		}
	}
	return e2eRig{writer: writer, settle: settle, stop: func() { cancel(); <-done }}
}

// worldRig hosts one informer in a deterministic world (seed 1, trace off), as
// BenchmarkWorldPipeline in sim/world does, with the benchmark's own handlers.
func worldRig(b *testing.B, handlers []*e2eHandler) e2eRig {
	w, err := world.NewFromConfig(sim.Config{Seed: 1, Trace: sim.TraceNone, MaxSteps: 1 << 40},
		e2eServerConfig(), world.Config{MaxRecordedNotifications: 1})
	if err != nil {
		b.Fatal(err)
	}
	writer := newE2EWriter(b, w.Server())
	w.Settle()
	n, err := w.AddInformer("inf1", world.InformerSpec{Resource: podsGVR, Namespace: "default"})
	if err != nil {
		b.Fatal(err)
	}
	for i, h := range handlers {
		if _, err := w.AddHandler(n, "h"+strconv.Itoa(i+1), h, world.HandlerOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	if err := n.Start(); err != nil {
		b.Fatal(err)
	}
	settle := func(tb testing.TB) {
		w.Settle() // the writes were made outside a step
		if err := w.Sim().RunUntil(w.Quiet, 24*time.Hour); err != nil {
			tb.Fatal(err)
		}
		for _, h := range handlers {
			select {
			case <-h.reached:
			default:
				tb.Fatalf("world: quiet, but a handler counted %d updates, want %d", h.seen.Load(), h.want.Load())
			}
		}
	}
	if err := w.Sim().RunUntil(w.Quiet, time.Hour); err != nil { // the initial sync
		b.Fatal(err)
	}
	stop := func() {
		if err := w.CheckConverged(); err != nil {
			b.Error(err)
		}
	}
	return e2eRig{writer: writer, settle: settle, stop: stop}
}
