package samplecontroller_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/examples/internal/replaytest"
	"github.com/informersim/informersim/examples/samplecontroller"
	"github.com/informersim/informersim/internal/fastpath"
	"github.com/informersim/informersim/sim/world"
)

// TestSeededReplay is the deterministic mode's promise for sample-controller wired by its own
// main.go (client-go's and the generated factories, a 30s resync) under every hazard: each seed
// gives one hash at GOMAXPROCS 1 and 2 with nothing counted unordered, and the middle seed of the
// sweep replayed alone in a new process gives the hash it had there
// (INFORMERSIM_SEEDED_SEEDS seeds, 10 by default).
func TestSeededReplay(t *testing.T) {
	replaytest.Sweep(t, "INFORMERSIM_SEEDED_SEEDS", 10, "^TestSeededReplay$", func(t *testing.T, seed uint64) (*clientgo.Report, error) {
		return clientgo.Run(t, hazardConfig(t, mainWiring, seed, samplecontroller.Bugs{}))
	})
}

// TestSeededListerMutationUnderMain plants the lister mutation in sample-controller wired by its
// main.go: in the deterministic mode, client-go's cache mutation detector finds the changed Foo
// and the run fails with the read-only-objects oracle's violation naming its type, where outside
// the mode the detector ends the whole test process. Every run of the sweep runs in this one
// process (INFORMERSIM_SEEDED_SEEDS seeds, 10 by default); at least 95 in 100 must be caught.
func TestSeededListerMutationUnderMain(t *testing.T) {
	seeds := envSeeds(t, "INFORMERSIM_SEEDED_SEEDS", 10)
	if !replaytest.Seeded() {
		t.Skipf("runs in the deterministic mode only: %s", clientgo.DeterminismCommand)
	}
	caught := 0
	var first error
	for _, seed := range seeds {
		_, err := clientgo.Run(t, mainConfig(t, specs[0], seed, samplecontroller.Bugs{MutateListerObject: true}, nil))
		var v *world.Violation
		switch {
		case err == nil:
		case errors.As(err, &v) && v.Oracle == world.OracleReadOnlyObjects && strings.Contains(v.Message, "*v1alpha1.Foo"):
			caught++
			if first == nil {
				first = err
			}
		default:
			t.Errorf("seed %d: the run failed, but not with the read-only-objects oracle naming the Foo: %v", seed, err)
		}
	}
	t.Logf("the lister mutation under main.go was caught on %d of %d seeds, every run in this process; first: %v", caught, len(seeds), first)
	if 100*caught < 95*len(seeds) {
		t.Fatalf("caught on only %d of %d seeds", caught, len(seeds))
	}
}

// TestSeededDetectorSnapshots holds the harness's answers to client-go's cache mutation detector
// (a snapshot of each object's memory in place of reflect.DeepEqual, in the deterministic mode)
// to DeepEqual's: for the correct controller and the planted lister mutation, seeds 1 to 3 run
// with the snapshots on and off give the same hash and the same failure, and the snapshots
// answered comparisons only when on.
func TestSeededDetectorSnapshots(t *testing.T) {
	if !replaytest.Seeded() {
		t.Skipf("runs in the deterministic mode only: %s", clientgo.DeterminismCommand)
	}
	run := func(t *testing.T, seed uint64, bugs samplecontroller.Bugs, snapshots bool) (*clientgo.Report, string) {
		defer fastpath.SetOut(fastpath.DetectorSnapshots, !snapshots)()
		rep, err := clientgo.Run(t, mainConfig(t, specs[0], seed, bugs, nil))
		failure := ""
		if err != nil {
			failure = err.Error()
		}
		if !rep.Diagnostics.ClientGoMutationDetector {
			t.Fatalf("seed %d: client-go's mutation detector was off in the mode", seed)
		}
		return rep, failure
	}
	for _, bugs := range []samplecontroller.Bugs{{}, {MutateListerObject: true}} {
		for seed := uint64(1); seed <= 3; seed++ {
			on, onFailure := run(t, seed, bugs, true)
			off, offFailure := run(t, seed, bugs, false)
			if on.Hash != off.Hash || onFailure != offFailure {
				t.Errorf("%+v seed %d: with the snapshots %x %q, without %x %q", bugs, seed, on.Hash, onFailure, off.Hash, offFailure)
			}
			if on.Diagnostics.DetectorSnapshotAnswers == 0 || off.Diagnostics.DetectorSnapshotAnswers != 0 {
				t.Errorf("%+v seed %d: the snapshots answered %d comparisons on and %d off; want some on, none off",
					bugs, seed, on.Diagnostics.DetectorSnapshotAnswers, off.Diagnostics.DetectorSnapshotAnswers)
			}
			if bugs.MutateListerObject && onFailure == "" {
				t.Errorf("seed %d: the planted lister mutation was not caught", seed)
			}
		}
	}
}
