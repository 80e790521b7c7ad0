// Package simtest holds toy worlds for testing the sim engine and for demos: small actors that
// really race (producers and consumers sharing a bounded buffer, timers that re-arm with random
// delays, a ticker read from its channel), so different seeds and policies give different
// interleavings and the same seed gives the same trace.
//
// # Contract
//
// A Toy registers its actors with a *sim.Sim and does everything through it: the "workload"
// stream for values, the "jitter" stream for timer delays, fault points for requeues, the
// engine's AfterFunc and clock for time. It keeps a checksum of what the consumers saw, which
// depends on the interleaving.
//
// # Usage
//
//	s, _ := sim.New(sim.Config{Seed: 1})
//	toy := simtest.NewToy(s, simtest.ToyConfig{Narrate: true})
//	err := s.RunUntilQuiescent()
//	fmt.Print(s.Trace())
package simtest
