package introspect

import (
	"runtime"
	"sync"
)

// A CallerCheck tells whether a return address (a program counter in the function that made a
// call, as runtime.Callers gives them) lies in a given function, named as the runtime names it
// ("k8s.io/client-go/tools/cache.(*defaultCacheMutationDetector).CompareObjects"). It reads the
// function's name only the first time it meets an address, so a check costs a map lookup. Where
// the call was inlined, the function is the innermost one at the address.
type CallerCheck struct {
	function string
	seen     sync.Map // uintptr: bool
}

// NewCallerCheck returns the check that a return address lies in function.
func NewCallerCheck(function string) *CallerCheck {
	return &CallerCheck{function: function}
}

// In reports whether the return address pc lies in the function.
func (c *CallerCheck) In(pc uintptr) bool {
	if is, ok := c.seen.Load(pc); ok {
		return is.(bool)
	}
	f, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	is := f.Function == c.function
	c.seen.Store(pc, is)
	return is
}
