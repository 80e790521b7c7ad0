package samplecontroller_test

import (
	"testing"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/examples/samplecontroller"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/internal/benchrun"
	"github.com/informersim/informersim/internal/cputime"
	"github.com/informersim/informersim/sim/world"
)

// BenchmarkHarnessRun: one whole harness run per op of the sample controller, unchanged, with
// two workers, under TestDeterminism's workload (20 Foo writes and deletions with watch drops,
// 410s, a compaction and a status conflict), seeds 1, 2, ... in turn. It is the figure a seed
// sweep of this controller multiplies:
//
//	cd examples && go test -run='^$' -bench=HarnessRun -benchmem -benchtime=20x ./samplecontroller/
func BenchmarkHarnessRun(b *testing.B) {
	benchmarkHarnessRun(b, false)
}

// BenchmarkHarnessRunNoControlPlane is BenchmarkHarnessRun without the simulated control plane
// (Cluster.ControlPlane.Off: no workload status, garbage collector or namespace controller): seed
// 1 is 310 steps and 36 controller calls, the run a harness without a control plane makes, so
// harnesses with and without one can be compared instruction for instruction
// (docs/performance-rest.md, "Current figures").
//
//	cd examples && go test -run='^$' -bench=HarnessRunNoControlPlane -benchmem -benchtime=20x ./samplecontroller/
func BenchmarkHarnessRunNoControlPlane(b *testing.B) {
	benchmarkHarnessRun(b, true)
}

func benchmarkHarnessRun(b *testing.B, noControlPlane bool) {
	s := benchSpec()
	seed := uint64(0)
	b.ReportAllocs()
	start, startOK := cputime.Process()
	for b.Loop() {
		seed++
		// clientgo.Run needs a *testing.T (its synctest bubble): each run is a test of its own.
		ok := benchrun.Test(b, "SampleControllerRun", func(t *testing.T) {
			cfg := runConfig(t, s, seed, 2, samplecontroller.Bugs{}, nil)
			cfg.Cluster.ControlPlane.Off = noControlPlane
			if _, err := clientgo.Run(t, cfg); err != nil {
				t.Fatal(err)
			}
		})
		if !ok {
			b.Fatalf("seed %d failed", seed)
		}
	}
	if end, ok := cputime.Process(); ok && startOK {
		b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkTricks: what each speed trick (internal/fastpath) buys in BenchmarkHarnessRun's runs
// (seeds 1 and 2, each op), as CPU with the trick taken out over CPU with every trick in, each
// pair of timings a few milliseconds apart (benchrun.Tricks); docs/performance.md quotes it:
//
//	cd examples && go test -run='^$' -bench=Tricks -benchtime=100x ./samplecontroller/
func BenchmarkTricks(b *testing.B) {
	s := benchSpec()
	benchrun.Tricks(b, benchrun.HarnessTricks(), func() {
		for seed := uint64(1); seed <= 2; seed++ {
			ok := benchrun.Test(b, "SampleControllerRun", func(t *testing.T) {
				if _, err := clientgo.Run(t, runConfig(t, s, seed, 2, samplecontroller.Bugs{}, nil)); err != nil {
					t.Fatal(err)
				}
			})
			if !ok {
				b.Fatalf("seed %d failed", seed)
			}
		}
	})
}

// benchSpec is the benchmarks' workload: TestDeterminism's.
func benchSpec() spec {
	return spec{name: "bench", workload: workload{n: 20, disruptions: [][]world.Op{
		{{Kind: world.OpCloseWatches}}, {{Kind: world.OpCloseWatches, Code: 410}}, {{Kind: world.OpCloseWatches}, noise, {Kind: world.OpCompact}},
		{{Kind: world.OpFailNext, Verb: fakeapi.VerbUpdateStatus, Code: 409}},
	}}}
}

// BenchmarkHarnessSweep: seeds per second of a sweep of the sample controller wired exactly as
// its main.go (client-go's and the generated factories over the REST front), BenchmarkHarnessRun's
// workload, with as many runs at once as GOMAXPROCS, as a t.Parallel sweep runs them. The test
// binary does not link controller-runtime, so the harness never stops the process to read every
// goroutine's stack (clientgo's linked.go). What a second core buys: run the binary with
// GOMAXPROCS=1, then 2, in the environment (not -cpu: see internal/benchrun):
//
//	cd examples && go test -c -o /tmp/sc.test ./samplecontroller/ && for p in 1 2 1 2; do
//		GOMAXPROCS=$p /tmp/sc.test -test.run='^$' -test.bench=HarnessSweep -test.benchtime=200x; done
func BenchmarkHarnessSweep(b *testing.B) {
	s := benchSpec()
	benchrun.Sweep(b, "SampleControllerSweep", func(t *testing.T, seed uint64) {
		if _, err := clientgo.Run(t, mainConfig(t, s, seed, samplecontroller.Bugs{}, nil)); err != nil {
			t.Fatal(err)
		}
	})
}

// BenchmarkHarnessSweepOneTest is BenchmarkHarnessSweep as a user's sweep makes it: every run in
// one go test function. It is the benchmark of the deterministic mode's cost (docs/determinism.md):
// built in the mode and without it, at GOMAXPROCS=1 (a run in the mode has one processor), the
// two cpu-ns/op give the ratio.
//
//	cd examples/samplecontroller && go test -c -o plain.test . && env $(informersim determinism) go test -c -o seeded.test .
//	GOMAXPROCS=1 ./plain.test -test.run='^$' -test.bench=HarnessSweepOneTest -test.benchtime=100x
//	GOMAXPROCS=1 ./seeded.test -test.run='^$' -test.bench=HarnessSweepOneTest -test.benchtime=100x
func BenchmarkHarnessSweepOneTest(b *testing.B) {
	s := benchSpec()
	b.ReportAllocs()
	start, startOK := cputime.Process()
	ok := benchrun.Test(b, "SampleControllerSweepOneTest", func(t *testing.T) {
		for seed := uint64(1); seed <= uint64(b.N); seed++ {
			if _, err := clientgo.Run(t, mainConfig(t, s, seed, samplecontroller.Bugs{}, nil)); err != nil {
				t.Fatal(err)
			}
		}
	})
	if !ok {
		b.Fatal("the sweep failed")
	}
	if end, endOK := cputime.Process(); startOK && endOK {
		b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
	}
}
