package invariant

import (
	"flag"
	"fmt"
	"sync/atomic"
)

// Violation is the value [Check] panics with, so a recovering caller (the simulator, which turns
// panics into failed runs) can tell a broken invariant from any other panic.
type Violation struct {
	Message string
}

func (v Violation) Error() string { return "invariant violated: " + v.Message }

// Check panics with a [Violation] built from format and args when cond is false.
func Check(cond bool, format string, args ...any) {
	if !cond {
		panic(Violation{Message: fmt.Sprintf(format, args...)})
	}
}

// thorough turns on checks too slow for every run: the engine then asks every cached actor for
// its actions at every step and compares them with the cached ones (sim.Sim.AddCachedActor).
var thorough atomic.Bool

// SetThorough turns the thorough checks on or off for Sims created from now on. The test
// binaries of the simulation's packages turn them on in TestMain, unless they run benchmarks
// (which measure the runs users get). Checks never change what a run does: a run that passes
// them is the same run without them.
func SetThorough(on bool) { thorough.Store(on) }

// Thorough reports whether the thorough checks are on (see SetThorough).
func Thorough() bool { return thorough.Load() }

// ThoroughUnlessBenchmarking is for a test binary's TestMain: it parses the flags and turns the
// thorough checks on, unless the binary was asked to run benchmarks (-test.bench), whose figures
// must be those of ordinary runs.
func ThoroughUnlessBenchmarking() {
	if !flag.Parsed() {
		flag.Parse()
	}
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		return
	}
	SetThorough(true)
}
