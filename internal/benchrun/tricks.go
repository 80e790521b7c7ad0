package benchrun

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/informersim/informersim/internal/cputime"
	"github.com/informersim/informersim/internal/fastpath"
)

// Tricks measures what each speed trick (internal/fastpath) buys in work, end to end, as one
// sub-benchmark per trick, named by it, and one named control that takes nothing out (the noise
// of the measure). Each op of a sub-benchmark times work once with every trick in and once with
// its trick taken out (fastpath.SetOut), the two in alternating order; a timing is the process's
// CPU time for work and then a collection of its garbage, from a heap collected before it. It
// reports the median over the ops of CPU out / CPU in ("out/in").
//
// The two timings of a pair are taken a few milliseconds apart, so a machine whose speed drifts
// over seconds (a shared one) moves both: the ratios hold where separate runs of a benchmark
// vary by a third. work should do the same work each time (the same seeds), and fail b itself.
// A trick that work never reaches shows a ratio near the control's. -bench 'Tricks/NAME' picks
// tricks.
func Tricks(b *testing.B, tricks []fastpath.Trick, work func()) {
	b.Helper()
	if work == nil {
		b.Fatal("benchrun.Tricks: nil work")
	}
	if !fastpath.On {
		b.Skip("a plain build (-tags plain) has no trick to take out")
	}
	if _, ok := cputime.Process(); !ok {
		b.Skip("the platform reports no process CPU time")
	}
	b.Run("control", func(b *testing.B) { trickPairs(b, nil, work) })
	for _, t := range tricks {
		b.Run(t.String(), func(b *testing.B) { trickPairs(b, &t, work) })
	}
}

// trickPairs is one sub-benchmark of Tricks: t taken out, or nothing for the control.
func trickPairs(b *testing.B, t *fastpath.Trick, work func()) {
	timed := func(out bool) time.Duration {
		if out && t != nil {
			defer fastpath.SetOut(*t, true)()
		}
		runtime.GC()
		start, _ := cputime.Process()
		work()
		runtime.GC()
		end, _ := cputime.Process()
		return end - start
	}
	var ratios []float64
	op := 0
	for b.Loop() {
		var in, out time.Duration
		if op%2 == 0 {
			in, out = timed(false), timed(true)
		} else {
			out, in = timed(true), timed(false)
		}
		if in > 0 {
			ratios = append(ratios, float64(out)/float64(in))
		}
		op++
	}
	if len(ratios) == 0 {
		b.Fatal("no timing above zero: work is too short for the platform's CPU clock")
	}
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "out/in")
}

// HarnessTricks are the tricks a client-go harness run reaches: every one but
// detector-snapshots, which only the deterministic mode does (docs/determinism.md measures it).
func HarnessTricks() []fastpath.Trick {
	var ts []fastpath.Trick
	for _, t := range fastpath.Tricks() {
		if t != fastpath.DetectorSnapshots {
			ts = append(ts, t)
		}
	}
	return ts
}
