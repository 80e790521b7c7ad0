package invariant

import (
	"errors"
	"testing"
)

func TestCheckPassesWhenTrue(t *testing.T) {
	Check(true, "never shown %d", 1)
}

func TestCheckPanicsWithViolation(t *testing.T) {
	defer func() {
		r := recover()
		err, ok := r.(error)
		if !ok {
			t.Fatalf("recovered %v (%T), want a Violation", r, r)
		}
		var v Violation
		if !errors.As(err, &v) {
			t.Fatalf("recovered %T, want Violation", err)
		}
		if got, want := err.Error(), "invariant violated: rv went from 5 to 3"; got != want {
			t.Fatalf("message %q, want %q", got, want)
		}
	}()
	Check(false, "rv went from %d to %d", 5, 3)
}
