package introspect

import (
	"runtime"
	"sync"
)

// A CallerCheck tells whether the function that called a given function (the callee) is a
// given one (the caller), both named as the runtime names them ("reflect.DeepEqual",
// "k8s.io/client-go/tools/cache.(*defaultCacheMutationDetector).CompareObjects"). It reads the
// return addresses on the stack, and the names of their functions only the first time it meets
// an address, so a check costs about a walk of three frames. Inlined calls are seen as calls.
type CallerCheck struct {
	callee, caller string
	mu             sync.Mutex
	seen           map[[callerDepth]uintptr]bool
}

// callerDepth is how many return addresses a check reads: the callee must be among them, with
// its caller (wrappers, such as a method value's, may come between the function calling Is and
// the callee).
const callerDepth = 6

// NewCallerCheck returns the check that callee was called by caller.
func NewCallerCheck(callee, caller string) *CallerCheck {
	return &CallerCheck{callee: callee, caller: caller, seen: map[[callerDepth]uintptr]bool{}}
}

// Is reports whether the callee, the first time it is found on the stack from skip frames above
// the function calling Is (0: that function), was called by the caller. It reports false when the
// callee is not within a few frames of there.
func (c *CallerCheck) Is(skip int) bool {
	var pcs [callerDepth]uintptr
	// 2: runtime.Callers and Is itself.
	if runtime.Callers(skip+2, pcs[:]) == 0 {
		return false
	}
	c.mu.Lock()
	is, known := c.seen[pcs]
	c.mu.Unlock()
	if known {
		return is
	}
	is = c.named(pcs[:])
	c.mu.Lock()
	c.seen[pcs] = is
	c.mu.Unlock()
	return is
}

// named reads the functions at pcs, inlined ones included: the first frame of the callee, and
// the next frame that is not the callee's, which must be the caller's.
func (c *CallerCheck) named(pcs []uintptr) bool {
	frames := runtime.CallersFrames(pcs)
	inCallee := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == c.callee:
			inCallee = true
		case inCallee:
			return f.Function == c.caller
		}
		if !more {
			return false
		}
	}
}
