package clientgo

import "time"

// SetStuckAfter sets how long the watchdog waits before it declares a run stuck, and returns
// the previous value.
func SetStuckAfter(d time.Duration) time.Duration {
	old := stuckAfter
	stuckAfter = d
	return old
}

// SetCheckByDeepEqual makes the read-only check compare every lent object by reflect.DeepEqual
// alone (the check's definition) when on, and returns the previous setting.
func SetCheckByDeepEqual(on bool) bool {
	return checkByDeepEqual.Swap(on)
}
