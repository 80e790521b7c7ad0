package clientgo_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/internal/goseed"
	"github.com/informersim/informersim/sim/world"
)

// replayNoteChildEnv makes TestReplayNoteChild run: it is the child of TestReplayNoteLines.
const replayNoteChildEnv = "INFORMERSIM_REPLAY_NOTE_CHILD"

// TestReplayNoteLines: outside the deterministic mode, a go test function whose runs were handed
// objects in a Go map's order says so once in its log, naming the resync wakes, and one that ran
// seeds other than the one INFORMERSIM_SEED asked for says that its replay line would not run
// the seed alone. The child test runs seeds 1 and 2 of a main whose informer starts with a
// watch-list (its initial objects come in a Go map's order), with INFORMERSIM_SEED=2.
func TestReplayNoteLines(t *testing.T) {
	if goseed.Active() {
		t.Skip("outside the deterministic mode only: in it the seed decides the order and nothing is counted")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestReplayNoteChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), replayNoteChildEnv+"=1", world.SeedEnv+"=2")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child failed: %v\n%s", err, out)
	}
	for _, want := range []string{
		"2 of 2 runs of TestReplayNoteChild were handed objects in an order no seed decides (Report.MapOrdered: ",
		" resync wakes, which an informer's resync period other than 0 makes",
		"INFORMERSIM_SEED=2 asks for one seed, but TestReplayNoteChild ran seeds [1] too",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the child's log lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(string(out), "asks for one seed"); n != 1 {
		t.Errorf("the seed line came %d times, want once:\n%s", n, out)
	}
}

func TestReplayNoteChild(t *testing.T) {
	if os.Getenv(replayNoteChildEnv) == "" {
		t.Skip("the child of TestReplayNoteLines")
	}
	for _, seed := range []uint64{1, 2} { // seeds of its own: not world.Seeds
		cfg := mirrorConfig(seed, 2, nil)
		cfg.Controller, cfg.WatchList = clientgo.Main(mirrorMain), true
		rep, err := clientgo.Run(t, cfg)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, rep.Failure)
		}
		if rep.MapOrdered() == 0 {
			t.Errorf("seed %d: the watch-list start was not counted", seed)
		}
	}
}
