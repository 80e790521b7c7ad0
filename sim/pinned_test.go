package sim_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/informersim/informersim/internal/pinned"
	"github.com/informersim/informersim/sim"
)

// Goal: the engine's schedules do not move when its code changes for speed. Method: the toy
// world's trace hashes for seeds 1..100 under every policy equal the ones pinned in
// testdata/pinned-hashes.txt (see internal/pinned for rewriting it after a change of behavior).
func TestPinnedHashes(t *testing.T) {
	var names []string
	for _, p := range []sim.Policy{sim.PolicyRandom, sim.PolicyFIFO, sim.PolicyPCT} {
		for _, seed := range pinned.Seeds(100) {
			names = append(names, p.String()+"/"+seed)
		}
	}
	pinned.Check(t, "testdata/pinned-hashes.txt", names, func(name string) string {
		policyName, seedText, _ := strings.Cut(name, "/")
		seed, _ := strconv.ParseUint(seedText, 10, 64)
		for _, p := range []sim.Policy{sim.PolicyRandom, sim.PolicyFIFO, sim.PolicyPCT} {
			if p.String() == policyName {
				return mustHash(t, seed, p)
			}
		}
		t.Fatalf("unknown policy %q", policyName)
		return ""
	})
}
