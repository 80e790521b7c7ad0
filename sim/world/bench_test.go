package world

import (
	"github.com/informersim/informersim/sim"
	"strconv"
	"testing"
	"time"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
)

// BenchmarkWorldPipeline measures watch events per second of wall time through the whole
// simulated pipeline on the sim driver: an apiserver write, its watch event pulled and carried
// over the network, the Reflector, the queue's pop and cache update, and one delivery to each of
// 1, 4 or 16 handlers (each wrapped in a DeliveryLog checking the order oracle). Writes go in
// batches of 100 over 100 objects, and the world runs until Quiet after each batch. Trace
// hashing is off (sim.TraceNone) and the apiserver's record is disabled, so the figure is the
// pipeline's own cost.
func BenchmarkWorldPipeline(b *testing.B) {
	for _, handlers := range []int{1, 4, 16} {
		b.Run("handlers="+strconv.Itoa(handlers), func(b *testing.B) {
			w, err := NewFromConfig(sim.Config{Seed: 1, Trace: sim.TraceNone, MaxSteps: 1 << 40},
				fakeapi.Config{MaxRecords: -1}, Config{MaxRecordedNotifications: 1})
			if err != nil {
				b.Fatal(err)
			}
			const objects = 100
			for i := range objects {
				if err := w.Apply(Op{Kind: OpCreate, Name: "p" + strconv.Itoa(i)}); err != nil {
					b.Fatal(err)
				}
			}
			n, err := w.AddInformer("inf1", InformerSpec{Resource: pods, Namespace: "default", Informer: informer.SharedIndexInformerOptions{}})
			if err != nil {
				b.Fatal(err)
			}
			for i := range handlers {
				if _, err := w.AddHandler(n, "h"+strconv.Itoa(i+1), nil, HandlerOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			if err := n.Start(); err != nil {
				b.Fatal(err)
			}
			if err := w.Sim().RunUntil(w.Quiet, time.Hour); err != nil {
				b.Fatal(err)
			}
			quiesce := func() {
				if err := w.Sim().RunUntil(w.Quiet, 24*time.Hour); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := w.Apply(Op{Kind: OpUpdate, Name: "p" + strconv.Itoa(i%objects)}); err != nil {
					b.Fatal(err)
				}
				if i%objects == objects-1 {
					quiesce()
				}
			}
			quiesce()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(b.N*handlers)/b.Elapsed().Seconds(), "notifications/s")
			if err := w.CheckConverged(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
