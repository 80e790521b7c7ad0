// Package replaytest checks the deterministic mode's promise on an example's controller: every
// run replays from its seed, whatever GOMAXPROCS and whatever runs came before it in the process.
//
// Sweep runs each seed twice, at GOMAXPROCS 1 then 2, and fails on a seed whose two trace hashes
// differ, whose Report counted an order no seed decides, or whose run was not made in the mode;
// then it replays the middle seed of the sweep alone, in a new process of the test binary
// (INFORMERSIM_SEED), and fails unless that run's hash is the one it had in the sweep. Outside
// the mode the test is skipped with the command that runs it (the mode is a build of the test
// binary, not a setting a test can turn on).
package replaytest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/internal/goseed"
	"github.com/informersim/informersim/sim/world"
)

// childEnv marks the child process of Sweep: it runs the one seed INFORMERSIM_SEED names and
// prints its hash.
const childEnv = "INFORMERSIM_REPLAY_CHILD"

// Run is one run of the controller under test for seed.
type Run func(t *testing.T, seed uint64) (*clientgo.Report, error)

// Sweep sweeps seeds 1..n (n from the environment variable sizeEnv when set) with run, as the
// package doc says. test is the -run pattern that reaches the calling test in a child process.
func Sweep(t *testing.T, sizeEnv string, n int, test string, run Run) {
	t.Helper()
	if !goseed.Active() {
		t.Skipf("runs in the deterministic mode only: %s", clientgo.DeterminismCommand)
	}
	if v := os.Getenv(sizeEnv); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", sizeEnv, v)
		}
	}
	seeds, err := world.Seeds(1, uint64(n))
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv(childEnv) != "" {
		for _, seed := range seeds {
			rep, err := run(t, seed)
			if err != nil {
				t.Fatalf("seed %d: %v\n%s", seed, err, rep.Failure)
			}
			fmt.Printf("REPLAY-HASH %d %s\n", seed, rep.Hash)
		}
		return
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	start := time.Now()
	middle := seeds[(len(seeds)-1)/2]
	var middleHash string
	for _, seed := range seeds {
		var hashes [2]string
		for i, procs := range []int{1, 2} {
			runtime.GOMAXPROCS(procs)
			rep, err := run(t, seed)
			if err != nil {
				t.Fatalf("seed %d at GOMAXPROCS %d: %v\n%s", seed, procs, err, rep.Failure)
			}
			if !rep.ReplayGuaranteed() || rep.MapOrdered() > 0 {
				t.Fatalf("seed %d at GOMAXPROCS %d: Seeded %v, %d orders no seed decides counted, %d ranges over maps ordered by addresses %v",
					seed, procs, rep.Seeded, rep.MapOrdered(), rep.Diagnostics.AddressKeyedRanges, rep.Diagnostics.AddressKeyedMaps)
			}
			hashes[i] = rep.Hash
		}
		if hashes[0] != hashes[1] {
			t.Errorf("seed %d: trace hashes differ at GOMAXPROCS 1 and 2: %.16s %.16s", seed, hashes[0], hashes[1])
		}
		if seed == middle {
			middleHash = hashes[0]
		}
	}
	t.Logf("%d seeds x 2 runs (GOMAXPROCS 1, 2) in the deterministic mode: %v wall time", len(seeds), time.Since(start).Round(time.Millisecond))
	got := replayAlone(t, test, middle)
	if got != middleHash {
		t.Errorf("seed %d replayed alone in a new process: hash %.16s, as run %d of the sweep: %.16s", middle, got, (len(seeds)+1)/2, middleHash)
	}
}

// replayAlone runs the test again in a child process for seed alone and returns its hash.
func replayAlone(t *testing.T, test string, seed uint64) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run="+test, "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1", world.SeedEnv+"="+strconv.FormatUint(seed, 10))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("replaying seed %d alone: %v\n%s", seed, err, out)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "REPLAY-HASH "); ok {
			if s, h, ok := strings.Cut(rest, " "); ok && s == strconv.FormatUint(seed, 10) {
				return h
			}
		}
	}
	t.Fatalf("replaying seed %d alone: no hash printed:\n%s", seed, out)
	return ""
}

// Seeded reports whether the test binary was built in the deterministic mode.
func Seeded() bool { return goseed.Active() }
