//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Process returns the user plus system CPU time of the whole process (every goroutine, the
// garbage collector included), and whether the platform reports it.
func Process() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
