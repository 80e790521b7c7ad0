package benchrun

import (
	"flag"
	"sync/atomic"
	"testing"

	"github.com/informersim/informersim/internal/cputime"
)

// Test runs f as a test named name and reports whether it passed. It fails b at once when the
// binary was given -test.cpu or -test.count (see the package documentation).
func Test(b *testing.B, name string, f func(t *testing.T)) bool {
	b.Helper()
	for _, fl := range []string{"test.cpu", "test.count"} {
		if v := flag.Lookup(fl); v != nil && v.Value.String() != v.DefValue {
			b.Fatalf("-%s=%s: each op runs a test, which testing.RunTests would repeat for every value; run the binary once per setting (GOMAXPROCS in the environment)", fl, v.Value)
		}
	}
	if f == nil {
		b.Fatal("benchrun.Test: nil function")
	}
	return testing.RunTests(func(string, string) (bool, error) { return true, nil },
		[]testing.InternalTest{{Name: name, F: f}})
}

// Sweep runs a seed sweep as a benchmark: each op runs f with the next seed (1, 2, ...) as a test
// of its own (Test), as many at once as GOMAXPROCS, as a sweep of t.Parallel subtests runs them.
// It reports seeds/s and, where the platform gives it, the process's CPU time per seed
// (cpu-ns/op). What a second core buys is seen by running the test binary with GOMAXPROCS=1,
// then 2, in the environment.
func Sweep(b *testing.B, name string, f func(t *testing.T, seed uint64)) {
	b.Helper()
	if f == nil {
		b.Fatal("benchrun.Sweep: nil function")
	}
	var next atomic.Uint64
	var failed atomic.Int64
	b.SetParallelism(1)
	b.ReportAllocs()
	start, startOK := cputime.Process()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			seed := next.Add(1)
			if !Test(b, name, func(t *testing.T) { f(t, seed) }) {
				failed.Add(1)
			}
		}
	})
	if failed.Load() > 0 {
		b.Fatalf("%d of %d seeds failed", failed.Load(), b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "seeds/s")
	if end, ok := cputime.Process(); ok && startOK {
		b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
	}
}
