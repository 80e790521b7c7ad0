package operator_test

import (
	"testing"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/examples/internal/replaytest"
)

// TestSeededReplay is the deterministic mode's promise for the operator's manager with
// controller-runtime's default priority queue: under crash-restarts, stale reads and conflicts
// (the restarts spec) each seed gives one hash at GOMAXPROCS 1 and 2 with nothing counted
// unordered, and the middle seed of the sweep replayed alone in a new process gives the hash it
// had there (INFORMERSIM_SEEDED_SEEDS seeds, 10 by default).
func TestSeededReplay(t *testing.T) {
	replaytest.Sweep(t, "INFORMERSIM_SEEDED_SEEDS", 10, "^TestSeededReplay$", func(t *testing.T, seed uint64) (*clientgo.Report, error) {
		return clientgo.Run(t, runConfig(t, restarts, seed, correct, nil))
	})
}
