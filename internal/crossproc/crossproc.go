// Package crossproc checks that a run's trace hash does not depend on the process or on
// GOMAXPROCS: a test re-executes its own binary as a child with GOMAXPROCS=1 and =2, the child
// prints the hashes of seeds 1..n, and the parent compares them with its own. Tests of sim use it
// for the engine's toy world and for a whole world of fakeapi and informers.
package crossproc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// PrintHashes is the child half: when the environment variable env holds a count n, it prints
// one "HASH seed hash" line for each seed 1..n and returns true; otherwise it returns false and
// the caller should skip (it is not running as a child).
func PrintHashes(env string, hash func(seed uint64) string) bool {
	n, err := strconv.Atoi(os.Getenv(env))
	if err != nil {
		return false
	}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		fmt.Printf("HASH %d %s\n", seed, hash(seed))
	}
	return true
}

// Compare is the parent half: it hashes seeds 1..n here, runs the test named childTest (which
// must call PrintHashes with the same env) in a child process of this test binary for
// GOMAXPROCS=1 and =2, and reports every seed whose hash differs or is missing.
func Compare(t *testing.T, env, childTest string, n int, hash func(seed uint64) string) {
	t.Helper()
	want := map[uint64]string{}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		want[seed] = hash(seed)
	}
	for _, procs := range []string{"1", "2"} {
		cmd := exec.Command(os.Args[0], "-test.run=^"+childTest+"$", "-test.count=1")
		cmd.Env = append(os.Environ(), env+"="+strconv.Itoa(n), "GOMAXPROCS="+procs)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOMAXPROCS=%s child: %v\n%s", procs, err, out)
		}
		got := map[uint64]string{}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			var seed uint64
			var h string
			if _, err := fmt.Sscanf(sc.Text(), "HASH %d %s", &seed, &h); err == nil {
				got[seed] = h
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("GOMAXPROCS=%s child hashes differ (-this process +child):\n%s", procs, diff)
		}
	}
}
