package sim_test

import (
	"fmt"
	"time"

	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/simtest"
)

// A run for seed 1: two producers and a consumer race over a buffer while a timer pushes too.
// The trace is the same on every machine, every time.
func ExampleNew() {
	s, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		panic(err)
	}
	simtest.NewToy(s, simtest.ToyConfig{
		Producers: 2, Consumers: 1, Timers: 1, ItemsPerProducer: 2, FiresPerTimer: 1, Narrate: true,
	})
	if err := s.RunUntilQuiescent(); err != nil {
		panic(err)
	}
	fmt.Print(s.Trace())
	// Output:
	// 1        +0.000s  producer/0   push
	//      1        +0.000s  producer/0   pushed        item=1374 len=1
	//      2        +0.000s  producer/0   push
	//      2        +0.000s  producer/0   pushed        item=2491 len=2
	//      3        +0.000s  consumer/0   pop
	//      3        +0.000s  fault        activate      site=toy/requeue active=false
	//      3        +0.000s  consumer/0   popped        item=1374 len=1
	//      4        +0.000s  producer/1   push
	//      4        +0.000s  producer/1   pushed        item=1617 len=2
	//      5        +0.000s  consumer/0   pop
	//      5        +0.000s  consumer/0   popped        item=2491 len=1
	//      6        +0.000s  producer/1   push
	//      6        +0.000s  producer/1   pushed        item=2872 len=2
	//      7        +0.000s  consumer/0   pop
	//      7        +0.000s  consumer/0   popped        item=1617 len=1
	//      8        +0.000s  consumer/0   pop
	//      8        +0.000s  consumer/0   popped        item=2872 len=0
	//      9  +0.003911242s  timer/0      fire
	//      9  +0.003911242s  timer/0      pushed        item=-3 len=1
	//     10  +0.003911242s  consumer/0   pop
	//     10  +0.003911242s  consumer/0   popped        item=-3 len=0
}

// RunUntil replaces polling with real time: it steps the simulation until the condition holds,
// or says why it stopped.
func ExampleSim_RunUntil() {
	s, _ := sim.New(sim.Config{Seed: 1})
	ready := false
	s.AfterFunc(90*time.Second, "cache", "synced", func() { ready = true })

	err := s.RunUntil(func() bool { return ready }, time.Minute)
	fmt.Println(err)
	err = s.RunUntil(func() bool { return ready }, time.Minute)
	fmt.Println(err, sim.FormatSimTime(s.Now()))
	// Output:
	// sim: condition still false when the budget ran out: budget 1m0s from +0.000s, stopped at sim time +60.000s after 0 steps (0 in this call); seed 1; rerun with sim.Config{Seed: 1, Policy: sim.PolicyRandom}
	// <nil> +90.000s
}

// StepWithin takes one step at a time, each within a budget of simulated time: a host that
// interleaves the simulation with work of its own (clientgo's driver) asks for the steps due by
// its own clock.
func ExampleSim_StepWithin() {
	s, _ := sim.New(sim.Config{Seed: 1})
	s.AfterFunc(2*time.Second, "cache", "synced", func() {})
	for range 3 {
		ran, err := s.StepWithin(time.Second)
		fmt.Println(ran, err, sim.FormatSimTime(s.Now()))
	}
	// Output:
	// false <nil> +1.000s
	// true <nil> +2.000s
	// false <nil> +2.000s
}

// Actions of an actor and timers on the simulated clock interleave step by step.
func ExampleClock() {
	s, _ := sim.New(sim.Config{Seed: 1, Policy: sim.PolicyFIFO})
	c := s.ClockFor("resync")
	tk := c.NewTicker(30 * time.Second)
	s.AfterFunc(75*time.Second, "test", "stop", tk.Stop)
	_ = s.RunUntilQuiescent()
	fmt.Print(s.Trace())
	// Output:
	//      1       +30.000s  resync       tick
	//      2       +60.000s  resync       tick
	//      3       +75.000s  test         stop
}

// A trace narrated: a line for each thing the actors said, without the scheduler's steps.
func ExampleTrace_Narrate() {
	s, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		panic(err)
	}
	simtest.NewToy(s, simtest.ToyConfig{Producers: 1, Consumers: 1, Timers: -1, ItemsPerProducer: 2, Narrate: true})
	if err := s.RunUntilQuiescent(); err != nil {
		panic(err)
	}
	fmt.Print(s.Trace().Narrate())
	// Output:
	// +0.000s producer/0: pushed item=1374 len=1
	// +0.000s producer/0: pushed item=2491 len=2
	// +0.000s fault: activate site=toy/requeue active=false
	// +0.000s consumer/0: popped item=1374 len=1
	// +0.000s consumer/0: popped item=2491 len=0
}
