package operator_test

import (
	"runtime"
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

// TestSeededRestarts measures what the mode does not yet promise: with crash-restarts of the
// manager (the restarts spec), most seeds replay, and every run says its replay is not
// guaranteed (Report.ReplayGuaranteed), so that none is trusted silently
// (INFORMERSIM_SEEDED_SEEDS seeds, 10 by default; at least 70 in 100 must replay).
func TestSeededRestarts(t *testing.T) {
	if !replaytest.Seeded() {
		t.Skipf("runs in the deterministic mode only: %s", clientgo.DeterminismCommand)
	}
	seeds := seeds(t, envInt(t, "INFORMERSIM_SEEDED_SEEDS", 10))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	equal := 0
	for _, seed := range seeds {
		var hashes [2]string
		for i := range hashes {
			runtime.GOMAXPROCS(i + 1)
			rep, err := clientgo.Run(t, runConfig(t, restarts, seed, correct, nil))
			if err != nil {
				t.Fatalf("seed %d: %v\n%s", seed, err, rep.Failure)
			}
			if rep.ReplayGuaranteed() || !rep.Seeded || rep.MapOrdered() > 0 {
				t.Fatalf("seed %d: a restarted manager's run says its replay is guaranteed (%v), Seeded %v, %d orders counted", seed, rep.ReplayGuaranteed(), rep.Seeded, rep.MapOrdered())
			}
			hashes[i] = rep.Hash
		}
		if hashes[0] == hashes[1] {
			equal++
		}
	}
	t.Logf("crash-restarts of the manager in the deterministic mode: %d of %d seeds gave one hash on 2 runs", equal, len(seeds))
	if 100*equal < 70*len(seeds) {
		t.Fatalf("only %d of %d seeds replayed", equal, len(seeds))
	}
}
