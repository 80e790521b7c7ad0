package world

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any goroutine outlives the tests: the engine starts none.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
