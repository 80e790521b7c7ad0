package invariant

import "fmt"

// Violation is the value [Check] panics with, so a recovering caller (the simulator, which turns
// panics into failed runs) can tell a broken invariant from any other panic.
type Violation struct {
	Message string
}

func (v Violation) Error() string { return "invariant violated: " + v.Message }

// Check panics with a [Violation] built from format and args when cond is false.
func Check(cond bool, format string, args ...any) {
	if !cond {
		panic(Violation{Message: fmt.Sprintf(format, args...)})
	}
}
