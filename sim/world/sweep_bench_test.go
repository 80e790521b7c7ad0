package world

import (
	"testing"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/internal/cputime"
	"github.com/informersim/informersim/sim"
)

// BenchmarkSweep measures seed-sweep throughput: whole runs per second of wall time of the
// world TestWorldDeterminism1000Seeds runs (swarmWorld: two informers, three handlers, a seeded
// workload of 40 ops with watch closes, 410s, compactions and injected failures, then a
// liveness phase without faults until the world converges, CheckConverged included). One
// iteration is one run, seed 1+i%1000, so the mix of seeds is the test's.
//
// hash: the trace is hashed (sim.TraceHashOnly), as the determinism test and a sweep that
// compares runs need; nohash: sim.TraceNone, the cost of the simulation alone; norecords:
// nohash on an apiserver that keeps no request or event records (fakeapi.Config.MaxRecords -1),
// what a sweep that reads none may choose (TestRunsWithoutRecordsAreTheSameRuns: the same runs).
// cpu-ns/op is the process's CPU time per run, steadier than wall time on a shared machine.
func BenchmarkSweep(b *testing.B) {
	for _, c := range []struct {
		name  string
		level sim.TraceLevel
		api   fakeapi.Config
	}{{"hash", sim.TraceHashOnly, fakeapi.Config{}}, {"nohash", sim.TraceNone, fakeapi.Config{}}, {"norecords", sim.TraceNone, fakeapi.Config{MaxRecords: -1}}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			steps := int64(0)
			cpuStart, cpuOK := cputime.Process()
			for i := 0; i < b.N; i++ {
				w, err := swarmWorldOn(1+uint64(i%1000), c.level, c.api)
				if err != nil {
					b.Fatalf("seed %d: %v", 1+i%1000, err)
				}
				steps += w.Sim().StepCount()
			}
			if cpuEnd, ok := cputime.Process(); ok && cpuOK {
				b.ReportMetric(float64(cpuEnd-cpuStart)/float64(b.N), "cpu-ns/op")
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
			b.ReportMetric(float64(steps)/float64(b.N), "steps/run")
		})
	}
}
