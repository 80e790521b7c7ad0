package cputime

import (
	"runtime"
	"testing"
)

// TestProcessAdvancesWithWork checks that CPU time is reported and grows while the process
// computes (unix only; elsewhere it must say it has no figure).
func TestProcessAdvancesWithWork(t *testing.T) {
	start, ok := Process()
	if runtime.GOOS == "windows" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" || runtime.GOOS == "plan9" {
		if ok {
			t.Fatalf("Process() reported %v on %s", start, runtime.GOOS)
		}
		return
	}
	if !ok {
		t.Fatal("Process() reported no CPU time")
	}
	x := uint64(1)
	for end := start; end <= start; end, _ = Process() {
		for i := 0; i < 1e6; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	if x == 0 {
		t.Log(x)
	}
}
