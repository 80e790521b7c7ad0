package worldtest_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/informersim/informersim/internal/invariant"
	"github.com/informersim/informersim/sim/world/worldtest"
)

// TestMain runs the tests with the thorough checks (invariant.Thorough: the engine verifies its
// cached actors at every step), benchmarks without. The failing runs' timelines go to a
// directory of their own (INFORMERSIM_ARTIFACTS), removed at the end unless the caller set it.
func TestMain(m *testing.M) {
	invariant.ThoroughUnlessBenchmarking()
	if os.Getenv(worldtest.ArtifactsEnv) != "" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "worldtest-artifacts-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	_ = os.Setenv(worldtest.ArtifactsEnv, dir)
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
