package invariant

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind (style rule 28).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
