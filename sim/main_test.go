package sim

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/informersim/informersim/internal/invariant"
)

// TestMain fails the package if any goroutine outlives the tests: the engine starts none. Tests
// run with the thorough checks (invariant.Thorough), benchmarks without.
func TestMain(m *testing.M) {
	invariant.ThoroughUnlessBenchmarking()
	goleak.VerifyTestMain(m)
}
