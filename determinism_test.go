package informersim_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/simtest"
)

// The determinism specs run the engine's racing toy world twice per seed and compare trace
// hashes: a fixed set of seeds, plus seeds derived from GinkgoRandomSeed() so every suite run
// tries new ones and records them (seed and hash) in the report.
var _ = Describe("determinism", func() {
	hashOf := func(seed uint64, p sim.Policy) string {
		h, err := simtest.Hash(seed, p)
		Expect(err).NotTo(HaveOccurred(), "seed %d policy %v", seed, p)
		return h
	}

	for _, p := range []sim.Policy{sim.PolicyRandom, sim.PolicyFIFO, sim.PolicyPCT} {
		It(fmt.Sprintf("replays seeds 1..50 byte for byte under %v", p), func() {
			for seed := uint64(1); seed <= 50; seed++ {
				Expect(hashOf(seed, p)).To(Equal(hashOf(seed, p)), "seed %d", seed)
			}
		})
	}

	It("replays seeds drawn from the Ginkgo random seed", func() {
		base := uint64(GinkgoRandomSeed())
		for i := range uint64(10) {
			seed := base*1000 + i
			h := hashOf(seed, sim.PolicyRandom)
			Expect(hashOf(seed, sim.PolicyRandom)).To(Equal(h), "seed %d", seed)
			AddReportEntry(fmt.Sprintf("seed %d", seed), h)
		}
	})

	It("explores: different seeds give different traces", func() {
		distinct := map[string]bool{}
		for seed := uint64(1); seed <= 100; seed++ {
			distinct[hashOf(seed, sim.PolicyRandom)] = true
		}
		Expect(len(distinct)).To(BeNumerically(">=", 95))
	})
})
