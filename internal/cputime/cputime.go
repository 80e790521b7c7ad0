// Package cputime reads the CPU time the process has used, for benchmarks that report CPU per
// operation next to wall time: on a machine shared with other work, wall time per operation
// moves with the load, while the process's own CPU time moves far less.
//
// Usage:
//
//	start, ok := cputime.Process()
//	... the timed loop ...
//	if end, ok2 := cputime.Process(); ok && ok2 {
//		b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
//	}
package cputime
