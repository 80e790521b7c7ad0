package operator_test

import (
	"testing"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/examples/internal/replaytest"
)

// TestSeededReplay is the deterministic mode's promise for the operator's manager with
// controller-runtime's default priority queue under watch drops, 410s, compaction, stale replica
// routing and conflicts (the mixed spec): each seed gives one hash at GOMAXPROCS 1 and 2 with
// nothing counted unordered, and the middle seed of the sweep replayed alone in a new process
// gives the hash it had there (INFORMERSIM_SEEDED_SEEDS seeds, 10 by default).
func TestSeededReplay(t *testing.T) {
	replaytest.Sweep(t, "INFORMERSIM_SEEDED_SEEDS", 10, "^TestSeededReplay$", func(t *testing.T, seed uint64) (*clientgo.Report, error) {
		return clientgo.Run(t, runConfig(t, mixed, seed, correct, nil))
	})
}

// TestSeededRestarts is the same promise with crash-restarts of the manager (the restarts spec:
// the process crashes three times and starts afresh, its first LIST possibly served by a lagging
// replica): each seed gives one hash at GOMAXPROCS 1 and 2, every run is Seeded (so its replay is
// guaranteed; Sweep checks it), and the middle seed replayed alone in a new process gives the
// hash it had in the sweep.
func TestSeededRestarts(t *testing.T) {
	replaytest.Sweep(t, "INFORMERSIM_SEEDED_SEEDS", 10, "^TestSeededRestarts$", func(t *testing.T, seed uint64) (*clientgo.Report, error) {
		return clientgo.Run(t, runConfig(t, restarts, seed, correct, nil))
	})
}
