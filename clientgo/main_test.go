package clientgo_test

import (
	"testing"

	"github.com/informersim/informersim/internal/invariant"
)

// TestMain runs the tests with the thorough checks of the simulation (invariant.Thorough: the
// engine verifies its cached actors at every step), benchmarks without.
func TestMain(m *testing.M) {
	invariant.ThoroughUnlessBenchmarking()
	m.Run()
}
