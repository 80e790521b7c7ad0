package oracle_test

import "testing"

// BenchmarkBusyWorld runs the busy world of TestOraclesHoldOnCorrectRuns (a 60-op workload with
// faults, resyncs and a late join) to convergence, without and with every oracle attached: the
// difference is what checking every step costs.
func BenchmarkBusyWorld(b *testing.B) {
	for _, attach := range []bool{false, true} {
		name := "without-oracles"
		if attach {
			name = "with-oracles"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				w, h, gen := busyWorld(b, uint64(i%16)+1, attach)
				if err := runBusy(b, w, h, gen); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
