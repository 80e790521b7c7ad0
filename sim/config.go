package sim

import (
	"fmt"
	"strconv"
	"time"
)

// Defaults for the zero fields of [Config]. Each is documented on its field.
const (
	DefaultMaxSteps             = 10_000_000
	DefaultMaxSimTime           = 30 * 24 * time.Hour
	DefaultQuiescenceWindow     = time.Minute
	DefaultPCTDepth             = 3
	DefaultPCTSteps             = 10_000
	DefaultFaultSiteProbability = 0.25
	DefaultFaultHitProbability  = 0.25
	DefaultMaxTraceEvents       = 100_000
)

// Config is everything a run depends on besides the actors. [New] validates a copy and fills the
// zero fields with the defaults above; the caller's struct is never changed.
type Config struct {
	// Seed determines every random draw of the run. Zero is a valid seed.
	Seed uint64

	// Policy picks which enabled action runs at each step. Zero means PolicyRandom.
	Policy Policy

	// PCTDepth is the bug depth d of PolicyPCT: the run gets d-1 priority change points.
	// Zero means DefaultPCTDepth (3).
	PCTDepth int

	// PCTSteps is the step budget k over which PolicyPCT spreads its change points; set it to
	// the expected length of a run. Zero means DefaultPCTSteps (10,000).
	PCTSteps int

	// MaxSteps bounds the actions one Sim may run; reaching it returns ErrMaxSteps.
	// Zero means DefaultMaxSteps (10,000,000).
	MaxSteps int64

	// MaxSimTime bounds simulated time since the epoch; a run that would move the clock past it
	// returns ErrMaxSimTime. Zero means DefaultMaxSimTime (30 days).
	MaxSimTime time.Duration

	// QuiescenceWindow is how far ahead RunUntilQuiescent looks: the run is quiescent when no
	// action is enabled and no timer is due within this window. Zero means
	// DefaultQuiescenceWindow (1 minute).
	QuiescenceWindow time.Duration

	// DisableFaults turns every fault point off for the whole run (Fault always returns false
	// and records nothing). SetFaultsEnabled switches them at run time.
	DisableFaults bool

	// FaultSiteProbability is the chance that a fault site is active in this run.
	// Zero means DefaultFaultSiteProbability (0.25); use DisableFaults for none.
	FaultSiteProbability float64

	// FaultHitProbability is the chance that an active site fires on each hit.
	// Zero means DefaultFaultHitProbability (0.25).
	FaultHitProbability float64

	// Trace selects what the trace keeps. Zero means TraceFull.
	Trace TraceLevel

	// MaxTraceEvents bounds the events kept in memory with TraceFull; the oldest are dropped
	// first (the hash still covers every event). Zero means DefaultMaxTraceEvents (100,000).
	MaxTraceEvents int

	// Repro is the one-line command that replays this run, printed with every run error. Empty
	// means a generic hint naming the seed and policy.
	Repro string
}

// validated returns a copy of c with defaults filled in, or an error naming the bad field.
func (c Config) validated() (Config, error) {
	if c.Policy == 0 {
		c.Policy = PolicyRandom
	}
	if c.Policy < PolicyRandom || c.Policy > PolicyPCT {
		return c, fmt.Errorf("sim: invalid Config.Policy %d", int(c.Policy))
	}
	type intField struct {
		name string
		p    *int
		def  int
	}
	for _, f := range []intField{
		{"PCTDepth", &c.PCTDepth, DefaultPCTDepth},
		{"PCTSteps", &c.PCTSteps, DefaultPCTSteps},
		{"MaxTraceEvents", &c.MaxTraceEvents, DefaultMaxTraceEvents},
	} {
		if *f.p < 0 {
			return c, fmt.Errorf("sim: Config.%s is %d, want >= 0", f.name, *f.p)
		}
		if *f.p == 0 {
			*f.p = f.def
		}
	}
	if c.MaxSteps < 0 {
		return c, fmt.Errorf("sim: Config.MaxSteps is %d, want >= 0", c.MaxSteps)
	}
	if c.MaxSteps == 0 {
		c.MaxSteps = DefaultMaxSteps
	}
	for _, f := range []struct {
		name string
		p    *time.Duration
		def  time.Duration
	}{
		{"MaxSimTime", &c.MaxSimTime, DefaultMaxSimTime},
		{"QuiescenceWindow", &c.QuiescenceWindow, DefaultQuiescenceWindow},
	} {
		if *f.p < 0 {
			return c, fmt.Errorf("sim: Config.%s is %v, want >= 0", f.name, *f.p)
		}
		if *f.p == 0 {
			*f.p = f.def
		}
	}
	for _, f := range []struct {
		name string
		p    *float64
		def  float64
	}{
		{"FaultSiteProbability", &c.FaultSiteProbability, DefaultFaultSiteProbability},
		{"FaultHitProbability", &c.FaultHitProbability, DefaultFaultHitProbability},
	} {
		if !(*f.p >= 0 && *f.p <= 1) { // also rejects NaN
			return c, fmt.Errorf("sim: Config.%s is %v, want a probability in [0, 1]", f.name, *f.p)
		}
		if *f.p == 0 {
			*f.p = f.def
		}
	}
	if c.Trace == 0 {
		c.Trace = TraceFull
	}
	if c.Trace < TraceFull || c.Trace > TraceNone {
		return c, fmt.Errorf("sim: invalid Config.Trace %d", int(c.Trace))
	}
	if c.Repro == "" {
		c.Repro = "rerun with sim.Config{Seed: " + strconv.FormatUint(c.Seed, 10) +
			", Policy: sim." + c.Policy.GoName() + "}"
	}
	return c, nil
}

// TraceLevel selects how much of the trace a run keeps.
type TraceLevel int

const (
	// TraceFull hashes every event and keeps the last MaxTraceEvents of them.
	TraceFull TraceLevel = iota + 1
	// TraceHashOnly hashes every event and keeps none: long runs in constant memory.
	TraceHashOnly
	// TraceNone neither hashes nor keeps events; subscribers still see them. For benchmarks
	// that measure the scheduler alone.
	TraceNone
)

func (l TraceLevel) String() string {
	switch l {
	case TraceFull:
		return "full"
	case TraceHashOnly:
		return "hash-only"
	case TraceNone:
		return "none"
	}
	return "TraceLevel(" + strconv.Itoa(int(l)) + ")"
}
