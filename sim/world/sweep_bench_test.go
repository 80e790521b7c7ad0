package world

import (
	"sync/atomic"
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
// full: the trace is kept and hashed (sim.TraceFull, what world.New gives, so that a failure
// prints the steps before it); hash: the trace is hashed (sim.TraceHashOnly), as the determinism test and a sweep that
// compares runs need; nohash: sim.TraceNone, the cost of the simulation alone; norecords:
// nohash on an apiserver that keeps no request or event records (fakeapi.Config.MaxRecords -1),
// what a sweep that reads none may choose (TestRunsWithoutRecordsAreTheSameRuns: the same runs).
// hash-parallel and nohash-parallel: hash and nohash with one world per GOMAXPROCS goroutine
// (b.RunParallel), as a sweep may run its seeds (worlds share nothing: TestWorldsRunInParallel).
// cpu-ns/op is the process's CPU time per run, steadier than wall time on a shared machine.
func BenchmarkSweep(b *testing.B) {
	for _, c := range []struct {
		name     string
		level    sim.TraceLevel
		api      fakeapi.Config
		parallel bool
	}{
		{"full", sim.TraceFull, fakeapi.Config{}, false},
		{"hash", sim.TraceHashOnly, fakeapi.Config{}, false},
		{"nohash", sim.TraceNone, fakeapi.Config{}, false},
		{"norecords", sim.TraceNone, fakeapi.Config{MaxRecords: -1}, false},
		{"hash-parallel", sim.TraceHashOnly, fakeapi.Config{}, true},
		{"nohash-parallel", sim.TraceNone, fakeapi.Config{}, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var runs, steps atomic.Int64
			run := func() {
				i := runs.Add(1) - 1
				w, err := swarmWorldOn(1+uint64(i%1000), c.level, c.api)
				if err != nil {
					b.Errorf("seed %d: %v", 1+i%1000, err)
					return
				}
				steps.Add(w.Sim().StepCount())
			}
			cpuStart, cpuOK := cputime.Process()
			if c.parallel {
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						run()
					}
				})
			} else {
				for range b.N {
					run()
				}
			}
			if cpuEnd, ok := cputime.Process(); ok && cpuOK {
				b.ReportMetric(float64(cpuEnd-cpuStart)/float64(b.N), "cpu-ns/op")
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
			b.ReportMetric(float64(steps.Load())/float64(b.N), "steps/run")
		})
	}
}
