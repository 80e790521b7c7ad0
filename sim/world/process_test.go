package world

import (
	"github.com/informersim/informersim/sim"
	"testing"

	"github.com/informersim/informersim/internal/crossproc"
)

const worldHashesEnv = "INFORMERSIM_PRINT_WORLD_HASHES"

// worldHash returns a function giving the trace hash of the determinism world for a seed.
func worldHash(t *testing.T) func(seed uint64) string {
	return func(seed uint64) string {
		w, err := swarmWorld(seed, sim.TraceHashOnly)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		return w.Sim().Trace().Hash()
	}
}

// TestPrintWorldHashes is the child half of TestWorldAcrossProcesses.
func TestPrintWorldHashes(t *testing.T) {
	if !crossproc.PrintHashes(worldHashesEnv, worldHash(t)) {
		t.Skip("child process of TestWorldAcrossProcesses only")
	}
}

// Goal: a whole world (fakeapi, two informers, three handlers, writes, watch closes,
// compactions, failed requests) hashes the same in another process and with any GOMAXPROCS, so
// nothing process-specific (map seeds, the runtime's scheduling, addresses) reaches the trace.
// Method: re-execute this test binary with GOMAXPROCS=1 and =2 to print the hashes of seeds
// 1..100, and compare them with this process's.
func TestWorldAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	crossproc.Compare(t, worldHashesEnv, "TestPrintWorldHashes", 100, worldHash(t))
}
