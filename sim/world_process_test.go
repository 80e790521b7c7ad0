package sim

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

const worldHashesEnv = "INFORMERSIM_PRINT_WORLD_HASHES"

// worldHash runs the determinism world for seed and returns its trace hash.
func worldHash(t *testing.T, seed uint64) string {
	t.Helper()
	w, err := swarmWorld(seed, TraceHashOnly)
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	return w.Sim().Trace().Hash()
}

// TestPrintWorldHashes is the child half of TestWorldAcrossProcesses: with the environment
// variable set to N it prints "WORLD seed hash" for seeds 1..N.
func TestPrintWorldHashes(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv(worldHashesEnv))
	if err != nil {
		t.Skip("child process of TestWorldAcrossProcesses only")
	}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		fmt.Printf("WORLD %d %s\n", seed, worldHash(t, seed))
	}
}

// Goal: a whole world (fakeapi, two informers, three handlers, writes, watch closes,
// compactions, failed requests) hashes the same in another process and with any GOMAXPROCS, so
// nothing process-specific (map seeds, scheduling of the runtime, addresses) reaches the trace.
// Method: re-execute this test binary with GOMAXPROCS=1 and =2 to print the hashes of seeds
// 1..100, and compare them with this process's.
func TestWorldAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	const n = 100
	want := map[uint64]string{}
	for seed := uint64(1); seed <= n; seed++ {
		want[seed] = worldHash(t, seed)
	}
	for _, procs := range []string{"1", "2"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPrintWorldHashes$", "-test.count=1")
		cmd.Env = append(os.Environ(), worldHashesEnv+"="+strconv.Itoa(n), "GOMAXPROCS="+procs)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOMAXPROCS=%s child: %v\n%s", procs, err, out)
		}
		got := map[uint64]string{}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			var seed uint64
			var h string
			if _, err := fmt.Sscanf(sc.Text(), "WORLD %d %s", &seed, &h); err == nil {
				got[seed] = h
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("GOMAXPROCS=%s child hashes differ (-this process +child):\n%s", procs, diff)
		}
	}
}
