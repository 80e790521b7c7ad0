package benchrun

import (
	"sync"
	"testing"
)

// BenchmarkTestReportsTheOutcome: a passing function is reported passed, a failing one failed,
// and each runs exactly once per call.
func BenchmarkTestReportsTheOutcome(b *testing.B) {
	for b.Loop() {
		runs := 0
		if !Test(b, "passes", func(t *testing.T) { runs++ }) {
			b.Fatal("a passing function was reported failed")
		}
		if Test(b, "fails", func(t *testing.T) { runs++; t.Fail() }) {
			b.Fatal("a failing function was reported passed")
		}
		if runs != 2 {
			b.Fatalf("%d runs for 2 calls", runs)
		}
	}
}

// TestBenchmarkRuns runs the benchmark above once, so that go test checks it without -bench.
func TestBenchmarkRuns(t *testing.T) {
	if r := testing.Benchmark(BenchmarkTestReportsTheOutcome); r.N == 0 {
		t.Fatal("the benchmark failed")
	}
}

// TestSweepRunsEachSeedOnce: a sweep hands out seeds 1..N, each to one run, reports seeds/s,
// and fails when a seed's run fails.
func TestSweepRunsEachSeedOnce(t *testing.T) {
	var mu sync.Mutex
	var seen map[uint64]int
	r := testing.Benchmark(func(b *testing.B) {
		mu.Lock()
		seen = map[uint64]int{}
		mu.Unlock()
		Sweep(b, "seed", func(t *testing.T, seed uint64) {
			mu.Lock()
			seen[seed]++
			mu.Unlock()
		})
	})
	if r.N == 0 {
		t.Fatal("the sweep failed")
	}
	if len(seen) != r.N {
		t.Fatalf("%d seeds seen for %d ops", len(seen), r.N)
	}
	for seed := uint64(1); seed <= uint64(r.N); seed++ {
		if seen[seed] != 1 {
			t.Errorf("seed %d ran %d times", seed, seen[seed])
		}
	}
	if r.Extra["seeds/s"] <= 0 {
		t.Errorf("no seeds/s reported: %v", r.Extra)
	}
	failing := testing.Benchmark(func(b *testing.B) {
		Sweep(b, "seed", func(t *testing.T, seed uint64) {
			if seed == 1 {
				t.Fail()
			}
		})
	})
	if failing.N != 0 {
		t.Errorf("a sweep with a failing seed passed (%d ops)", failing.N)
	}
}
