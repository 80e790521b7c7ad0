package fakeapi

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves an adapter goroutine behind: the passive core starts none,
// and every ResultChan adapter must stop with its watch.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
