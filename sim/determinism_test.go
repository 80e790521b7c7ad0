package sim_test

import (
	"strings"
	"testing"

	"github.com/informersim/informersim/internal/crossproc"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/simtest"
)

func mustHash(t testing.TB, seed uint64, p sim.Policy) string {
	t.Helper()
	h, err := simtest.Hash(seed, p)
	if err != nil {
		t.Fatalf("seed %d policy %v: %v", seed, p, err)
	}
	return h
}

// Goal: the same seed gives the same trace. Method: run the racing toy world for seeds 1..1000,
// twice each, under every policy for the first 100, and compare hashes.
func TestSameSeedSameTrace(t *testing.T) {
	mismatches := 0
	for seed := uint64(1); seed <= 1000; seed++ {
		policies := []sim.Policy{sim.PolicyRandom}
		if seed <= 100 {
			policies = append(policies, sim.PolicyFIFO, sim.PolicyPCT)
		}
		for _, p := range policies {
			if a, b := mustHash(t, seed, p), mustHash(t, seed, p); a != b {
				mismatches++
				t.Errorf("seed %d policy %v: hashes %s and %s differ", seed, p, a, b)
			}
		}
	}
	t.Logf("1000 seeds run twice: %d mismatches", mismatches)
}

// Goal: different seeds explore different interleavings. Method: count distinct hashes over 100
// seeds for each policy.
func TestSeedsExplore(t *testing.T) {
	for _, tc := range []struct {
		p   sim.Policy
		min int
	}{{sim.PolicyRandom, 95}, {sim.PolicyPCT, 90}} {
		distinct := map[string]bool{}
		for seed := uint64(1); seed <= 100; seed++ {
			distinct[mustHash(t, seed, tc.p)] = true
		}
		t.Logf("policy %v: %d distinct traces out of 100 seeds", tc.p, len(distinct))
		if len(distinct) < tc.min {
			t.Errorf("policy %v: %d distinct traces out of 100 seeds, want >= %d", tc.p, len(distinct), tc.min)
		}
	}
}

// Goal: FIFO is stable: in a world that draws nothing else (no timers, no faults), every seed
// schedules alike, while
// random and pct do not.
func TestFIFOIsStable(t *testing.T) {
	world := simtest.ToyConfig{Producers: 3, Consumers: 2, Timers: -1, ItemsPerProducer: 10, Narrate: true}
	schedule := func(seed uint64, p sim.Policy) string {
		s, _, err := simtest.Run(sim.Config{Seed: seed, Policy: p, DisableFaults: true}, world)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, e := range s.Trace().Events() {
			if e.Kind == "push" || e.Kind == "pop" {
				b.WriteString(e.Actor + " ")
			}
		}
		return b.String()
	}
	for _, p := range []sim.Policy{sim.PolicyFIFO, sim.PolicyRandom, sim.PolicyPCT} {
		distinct := map[string]bool{}
		for seed := uint64(1); seed <= 20; seed++ {
			distinct[schedule(seed, p)] = true
		}
		if p == sim.PolicyFIFO && len(distinct) != 1 {
			t.Errorf("fifo gave %d schedules over 20 seeds, want 1", len(distinct))
		}
		if p != sim.PolicyFIFO && len(distinct) < 2 {
			t.Errorf("%v gave %d schedules over 20 seeds, want several", p, len(distinct))
		}
	}
}

const hashesEnv = "INFORMERSIM_PRINT_HASHES"

func toyHash(t *testing.T) func(seed uint64) string {
	return func(seed uint64) string { return mustHash(t, seed, sim.PolicyRandom) }
}

// TestPrintHashes is the child half of TestAcrossProcesses.
func TestPrintHashes(t *testing.T) {
	if !crossproc.PrintHashes(hashesEnv, toyHash(t)) {
		t.Skip("child process of TestAcrossProcesses only")
	}
}

// Goal: hashes do not depend on the process or GOMAXPROCS. Method: re-execute this test binary
// twice (GOMAXPROCS=1 and 2) to print the hashes of seeds 1..200, and compare with this process.
func TestAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	crossproc.Compare(t, hashesEnv, "TestPrintHashes", 200, toyHash(t))
}
