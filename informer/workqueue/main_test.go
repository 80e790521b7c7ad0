package workqueue

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind: every delaying queue's waiting
// goroutine must exit at ShutDown (style rule 28).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
