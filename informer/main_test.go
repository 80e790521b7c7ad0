package informer

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: the step driver starts
// none, and the goroutine driver must stop every one it starts (style rule 28, informer.md
// §12.1 TestShutdown).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
