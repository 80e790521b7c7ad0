package clientgo

import "time"

// SetStuckAfter sets how long the watchdog waits before it declares a run stuck, and returns
// the previous value.
func SetStuckAfter(d time.Duration) time.Duration {
	old := stuckAfter
	stuckAfter = d
	return old
}
