package benchrun

import (
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
