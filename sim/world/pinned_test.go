package world

import (
	"strconv"
	"testing"

	"github.com/informersim/informersim/internal/pinned"
	"github.com/informersim/informersim/sim"
)

// Goal: whole-world schedules do not move when the world, the informer or the fake apiserver
// change for speed. Method: the determinism world's trace hashes (two informers in seeded
// list+watch or watch-list mode, three handlers, writes, watch closes, 410s, compactions,
// failed requests) for seeds 1..200 equal the ones pinned in testdata/pinned-hashes.txt (see
// internal/pinned for rewriting it after a change of behavior).
func TestPinnedHashes(t *testing.T) {
	pinned.Check(t, "testdata/pinned-hashes.txt", pinned.Seeds(200), func(name string) string {
		seed, _ := strconv.ParseUint(name, 10, 64)
		w, err := swarmWorld(seed, sim.TraceHashOnly)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		return w.Sim().Trace().Hash()
	})
}
