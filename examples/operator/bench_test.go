package operator_test

import (
	"testing"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/internal/benchrun"
	"github.com/informersim/informersim/internal/cputime"
)

// BenchmarkHarnessRun: one whole harness run per op of the controller-runtime operator, as its
// cmd/main.go runs it, under the mixed spec (every disruption of the specs at once, with stale
// replica routing), seeds 1, 2, ... in turn:
//
//	cd examples && go test -run='^$' -bench=HarnessRun -benchmem -benchtime=10x ./operator/
func BenchmarkHarnessRun(b *testing.B) {
	seed := uint64(0)
	b.ReportAllocs()
	start, startOK := cputime.Process()
	for b.Loop() {
		seed++
		// clientgo.Run needs a *testing.T (its synctest bubble): each run is a test of its own.
		ok := benchrun.Test(b, "OperatorRun", func(t *testing.T) {
			if _, err := clientgo.Run(t, runConfig(t, mixed, seed, correct, nil)); err != nil {
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
