package sim_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/simtest"
)

// BenchmarkStep measures scheduler steps per second with 16 racing toy actors (8 producers, 8
// consumers, unlimited items), under each trace level: "hash" is the default cost of a
// replayable run, "none" the scheduler alone.
func BenchmarkStep(b *testing.B) {
	for _, tc := range []struct {
		name  string
		level sim.TraceLevel
	}{{"hash", sim.TraceHashOnly}, {"none", sim.TraceNone}} {
		for _, p := range []sim.Policy{sim.PolicyRandom, sim.PolicyFIFO, sim.PolicyPCT} {
			b.Run(tc.name+"/"+p.String(), func(b *testing.B) {
				s, err := sim.New(sim.Config{Seed: 1, Policy: p, Trace: tc.level, DisableFaults: true, MaxSteps: 1 << 62})
				if err != nil {
					b.Fatal(err)
				}
				simtest.NewToy(s, simtest.ToyConfig{Producers: 8, Consumers: 8, Timers: -1, MaxBufferItems: 64, ItemsPerProducer: -1})
				benchSteps(b, s)
			})
		}
	}
}

// BenchmarkTimeCompression runs 24 hours of simulated time with a 1 s ticker (read by an actor)
// and 100 timers re-arming with random delays up to 1 minute, and reports simulated seconds per
// wall second.
func BenchmarkTimeCompression(b *testing.B) {
	const simulated = 24 * time.Hour
	steps := int64(0)
	for range b.N {
		s, err := sim.New(sim.Config{Seed: 1, Trace: sim.TraceHashOnly, DisableFaults: true})
		if err != nil {
			b.Fatal(err)
		}
		simtest.NewToy(s, simtest.ToyConfig{Producers: 1, Consumers: 1, Timers: 100, FiresPerTimer: -1,
			MaxTimerDelay: time.Minute, MaxBufferItems: 64, TickerPeriod: time.Second, Ticks: 1 << 30})
		if err := s.RunFor(simulated); err != nil {
			b.Fatal(err)
		}
		steps += s.StepCount()
	}
	b.ReportMetric(simulated.Seconds()*float64(b.N)/b.Elapsed().Seconds(), "simsec/s")
	b.ReportMetric(float64(steps)/float64(b.N), "steps/run")
}

// BenchmarkStepCached is BenchmarkStep's toy (trace off) with its producers and consumers added
// as cached actors (simtest.ToyConfig.Cached). The toy wakes all 16 at every change of its
// buffer, that is at nearly every step, so this is the worst case of caching: its bookkeeping
// with none of its savings (compare BenchmarkStep/none; a world's idle handlers are the best
// case, see compare's BenchmarkEndToEnd).
func BenchmarkStepCached(b *testing.B) {
	for _, p := range []sim.Policy{sim.PolicyRandom, sim.PolicyFIFO, sim.PolicyPCT} {
		b.Run(p.String(), func(b *testing.B) {
			s, err := sim.New(sim.Config{Seed: 1, Policy: p, Trace: sim.TraceNone, DisableFaults: true, MaxSteps: 1 << 62})
			if err != nil {
				b.Fatal(err)
			}
			simtest.NewToy(s, simtest.ToyConfig{Producers: 8, Consumers: 8, Timers: -1, MaxBufferItems: 64, ItemsPerProducer: -1, Cached: true})
			benchSteps(b, s)
		})
	}
}

// benchSteps takes b.N steps of s and reports steps per second of wall time.
func benchSteps(b *testing.B, s *sim.Sim) {
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := s.Step(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}

// BenchmarkStepCachedIdle is the best case of caching, the one a world's handlers make while a
// notification is delivered to each: 16 cached actors that always offer one action, whose runs
// change nothing any other actor reads, so no actor is woken but the one that ran (the engine
// re-asks it after its step). A step then asks one actor and replays the others' offers.
func BenchmarkStepCachedIdle(b *testing.B) {
	for _, p := range []sim.Policy{sim.PolicyRandom, sim.PolicyFIFO, sim.PolicyPCT} {
		b.Run(p.String(), func(b *testing.B) {
			s, err := sim.New(sim.Config{Seed: 1, Policy: p, Trace: sim.TraceNone, DisableFaults: true, MaxSteps: 1 << 62})
			if err != nil {
				b.Fatal(err)
			}
			for i := range 16 {
				a := &spinner{name: "spin" + strconv.Itoa(i)}
				a.run = func() { a.turns++ }
				s.AddCachedActor(a)
			}
			benchSteps(b, s)
		})
	}
}

// spinner always offers "spin", which counts its turns.
type spinner struct {
	name  string
	turns int
	run   func() // made once: a method value would allocate at every Actions
}

func (a *spinner) Name() string                 { return a.name }
func (a *spinner) Actions(add func(sim.Action)) { add(sim.Action{Name: "spin", Run: a.run}) }
