package benchrun

import (
	"sync"
	"testing"
	"time"

	"github.com/informersim/informersim/internal/cputime"
	"github.com/informersim/informersim/internal/fastpath"
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

// Goal: Tricks's sub-benchmarks report each trick's cost as out/in of the same work: a work that spins three
// times as long with shared-encodings taken out shows about 3, and the control about 1.
func TestTricksMeasuresEachTrickOut(t *testing.T) {
	if !fastpath.On {
		t.Skip("a plain build has no trick to take out")
	}
	spin := func(d time.Duration) {
		start, _ := cputime.Process()
		for now := start; now-start < d; now, _ = cputime.Process() {
		}
	}
	work := func() {
		if fastpath.Use(fastpath.SharedEncodings) {
			spin(20 * time.Millisecond)
		} else {
			spin(60 * time.Millisecond)
		}
	}
	ratio := func(tr *fastpath.Trick) float64 {
		res := testing.Benchmark(func(b *testing.B) { trickPairs(b, tr, work) })
		return res.Extra["out/in"]
	}
	encodings := fastpath.SharedEncodings
	if got := ratio(&encodings); got < 2.4 || got > 3.3 { // a collection after each timing adds to both
		t.Errorf("shared-encodings out/in = %.3f, want about 3", got)
	}
	if got := ratio(nil); got < 0.8 || got > 1.25 {
		t.Errorf("control out/in = %.3f, want about 1", got)
	}
}
