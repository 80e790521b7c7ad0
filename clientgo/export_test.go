package clientgo

import (
	"time"

	"github.com/informersim/informersim/internal/fastpath"
)

// SetStuckAfter sets how long the watchdog waits before it declares a run stuck, and returns
// the previous value.
func SetStuckAfter(d time.Duration) time.Duration {
	old := stuckAfter
	stuckAfter = d
	return old
}

// SetCheckByDeepEqual makes the read-only check compare every lent object by reflect.DeepEqual
// alone (the check's definition, without the snapshots) when on, and returns what undoes it.
func SetCheckByDeepEqual(on bool) (restore func()) {
	return fastpath.SetOut(fastpath.ReadOnlySnapshots, on)
}
