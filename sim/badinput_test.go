package sim

import (
	"strings"
	"testing"
	"time"
)

// Goal: the engine's run calls refuse bad arguments with an error that names them, instead of
// panicking, and a refused call changes nothing (the clock and the step count stand still).
func TestRunCallsRefuseBadInput(t *testing.T) {
	s := mustNew(t, Config{Seed: 1})
	s.AddActor(always("a", func() {}))
	for _, c := range []struct {
		call string
		err  error
		want string
	}{
		{"RunFor(-1)", s.RunFor(-1), "sim: RunFor(-1ns): negative duration"},
		{"RunUntil(nil, 1s)", s.RunUntil(nil, time.Second), "sim: RunUntil: nil condition"},
		{"RunUntil(cond, -1s)", s.RunUntil(func() bool { return true }, -time.Second), "sim: RunUntil: negative budget -1s"},
		{"AfterEachStep(\"\", fn)", s.AfterEachStep("", func() {}), "sim: AfterEachStep: empty name"},
		{"AfterEachStep(\"h\", nil)", s.AfterEachStep("h", nil), `sim: AfterEachStep "h": nil func`},
		{"AddActor(nil)", s.AddActor(nil), "sim: AddActor: nil actor"},
		{"AddActor(a second \"a\")", s.AddActor(always("a", func() {})), `sim: AddActor: two actors named "a"`},
	} {
		if c.err == nil || !strings.HasPrefix(c.err.Error(), c.want) {
			t.Errorf("%s = %v, want an error starting %q", c.call, c.err, c.want)
		}
	}
	if s.Now() != 0 || s.StepCount() != 0 {
		t.Errorf("refused calls moved the run: now %v, %d steps", s.Now(), s.StepCount())
	}
}
