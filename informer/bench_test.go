package informer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
)

// Benchmarks of the whole pipeline: a watch event fed to the Reflector → queue → process loop
// (cache update, distribution) → N handlers. They report events per second (b.ReportMetric),
// on both drivers, with 1, 4 and 16 handlers. Objects cycle over 1,000 keys.

const infBenchKeys = 1000

func infBenchEvents(n int) []watch.Event {
	evs := make([]watch.Event, n)
	for i := range n {
		evs[i] = watch.Event{Type: watch.Modified, Object: infObj(fmt.Sprintf("p%d", i%infBenchKeys), 1000+i)}
	}
	return evs
}

type infCountHandler struct{ n int }

func (h *infCountHandler) OnAdd(any, bool)   { h.n++ }
func (h *infCountHandler) OnUpdate(_, _ any) { h.n++ }
func (h *infCountHandler) OnDelete(any)      { h.n++ }

// BenchmarkPipelineStep: the step driver without an observer; BenchmarkPipelineStepObserved:
// with one that reads nothing, as a simulator's is (the informer then builds every step event).
func BenchmarkPipelineStep(b *testing.B)         { benchPipelineStep(b, false) }
func BenchmarkPipelineStepObserved(b *testing.B) { benchPipelineStep(b, true) }

func benchPipelineStep(b *testing.B, observed bool) {
	for _, handlers := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("handlers=%d", handlers), func(b *testing.B) {
			e := newInfStep(nil, SharedIndexInformerOptions{})
			e.st.SetObserver(nil)
			if observed {
				e.st.SetObserver(func(StepEvent) {})
			}
			var regs []ResourceEventHandlerRegistration
			for range handlers {
				reg, _ := e.inf.AddEventHandler(&infCountHandler{})
				regs = append(regs, reg)
			}
			e.st.Start()
			e.quiesce()
			r := e.st.Reflector()
			evs := infBenchEvents(b.N)
			b.ResetTimer()
			start := time.Now()
			for i := range b.N {
				r.WatchEvent(evs[i])
				for e.st.QueueLen() > 0 {
					_ = e.st.ProcessNext()
				}
				for _, reg := range regs {
					for e.st.Buffered(reg) > 0 {
						e.st.DeliverNext(reg)
					}
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
		})
	}
}

func BenchmarkPipelineRun(b *testing.B) {
	for _, handlers := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("handlers=%d", handlers), func(b *testing.B) {
			lw := newInfLW()
			lw.watchBuffer = b.N + 16
			e := newInfRunEnv(lw, SharedIndexInformerOptions{})
			done := make(chan struct{}, handlers)
			target := b.N
			for range handlers {
				n := 0
				e.inf.AddEventHandler(ResourceEventHandlerFuncs{UpdateFunc: func(_, _ any) {
					n++
					if n == target {
						done <- struct{}{}
					}
				}})
			}
			e.start()
			defer e.stop()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for lw.openWatchers() == 0 || !e.inf.HasSynced() {
				time.Sleep(time.Millisecond)
			}
			// Seed the cache so every event is an update.
			for i := range infBenchKeys {
				lw.inject(watch.Event{Type: watch.Added, Object: infObj(fmt.Sprintf("p%d", i), 1+i)})
			}
			for e.inf.GetStore().LastStoreSyncResourceVersion() != fmt.Sprint(infBenchKeys) {
				time.Sleep(time.Millisecond)
			}
			evs := infBenchEvents(b.N)
			b.ResetTimer()
			start := time.Now()
			for _, ev := range evs {
				lw.inject(ev)
			}
			for range handlers {
				select {
				case <-done:
				case <-ctx.Done():
					b.Fatal("timed out")
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
		})
	}
}

// BenchmarkSetUp measures what a simulator pays to set up one informer before its first step,
// as a seed sweep does for every run: build it (fake clock, seeded rand), put it under Steps with
// an observer, register handlers (a ResourceEventHandlerFuncs, as most controllers pass, and a
// handler type), and Start. handlers=3 is BenchmarkSweep's world (per informer, at most).
func BenchmarkSetUp(b *testing.B) {
	for _, handlers := range []int{1, 3} {
		b.Run(fmt.Sprintf("handlers=%d", handlers), func(b *testing.B) {
			lw := newInfLW()
			clk := clocktesting.NewFakeClock(infT0)
			b.ReportAllocs()
			for i := range b.N {
				inf := NewSharedIndexInformerWithOptions(lw, &metav1.PartialObjectMetadata{}, SharedIndexInformerOptions{
					Clock: clk, Rand: rand.New(rand.NewPCG(uint64(i), 1)),
				})
				st, _ := Steps(inf)
				st.SetObserver(func(StepEvent) {})
				for h := range handlers {
					var err error
					if h%2 == 0 {
						_, err = inf.AddEventHandler(ResourceEventHandlerFuncs{UpdateFunc: func(_, _ any) {}})
					} else {
						_, err = inf.AddEventHandler(&infCountHandler{})
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				st.Start()
			}
		})
	}
}
