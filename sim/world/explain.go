package world

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/informersim/informersim/sim"
)

// Explain renders an error of this world's run (RunUntilConverged's, CheckConverged's, a
// step's) for a person, where the error itself is one line: for a Violation, its Report (the
// oracle, what it saw, the seed, the replay command, the history of the object concerned and the
// trace before the violating event); otherwise the error without the seed and replay command it
// carries, then each of those once, a panic's stack from the panicking call, and the end of the
// trace. worldtest's matchers print it when they fail; outside a spec, t.Fatal(w.Explain(err))
// does the same. A nil err renders "".
func (w *World) Explain(err error) string {
	if err == nil {
		return ""
	}
	var v *Violation
	if errors.As(err, &v) {
		return v.Report()
	}
	s := w.Sim()
	evs := s.Trace().Events()
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nseed: %d\nreplay: %s\n", withoutRunFacts(err.Error(), s.Seed(), s.Config().Repro), s.Seed(), s.Config().Repro)
	var re *sim.RunError
	if errors.As(err, &re) && len(re.Stack) > 0 {
		b.WriteString("stack of the panic, from the panicking call to the engine's step:\n")
		for _, line := range panicFrames(string(re.Stack)) {
			b.WriteString("  " + line + "\n")
		}
	}
	b.WriteString("trace before the failure:\n")
	for _, e := range evs[max(0, len(evs)-explainWindow):] {
		b.WriteString("  " + e.String() + "\n")
	}
	return b.String()
}

// panicFrames returns the lines of a sim.RunError's stack from the frame that panicked to the
// engine's step that ran it, the part that is the user's (all of it when those frames are not
// found): the recovery's own frames above and the test's below say nothing about the failure.
func panicFrames(stack string) []string {
	lines := strings.Split(strings.TrimRight(stack, "\n"), "\n")
	from, to := 0, len(lines)
	for i, l := range lines {
		if strings.HasPrefix(l, "panic(") && from == 0 {
			from = min(i+2, len(lines)) // the frame after panic's own (its function and file lines)
		}
		if strings.HasPrefix(l, "github.com/informersim/informersim/sim.(*Sim).run(") && from > 0 && i >= from {
			to = i
			break
		}
	}
	return lines[from:to]
}

// withoutRunFacts removes from msg the seed and replay command that the engine's and the
// world's errors append, in each of their forms, so that a failure message, which states them on
// lines of their own, says them once.
func withoutRunFacts(msg string, seed uint64, repro string) string {
	sd := strconv.FormatUint(seed, 10)
	for _, fact := range []string{
		" (seed " + sd + "; repro: " + repro + ")", // world: checks, Violation.Error
		" (seed " + sd + "; " + repro + ")",        // sim: step and time limits
		"; seed " + sd + "; " + repro,              // sim: RunUntil's budget
		"\nrepro: " + repro,                        // sim.RunError
	} {
		msg = strings.ReplaceAll(msg, fact, "")
	}
	return strings.ReplaceAll(msg, " (seed "+sd+", policy ", " (policy ") // sim.RunError
}

// explainWindow is how many trace events Explain shows before a failure that is not a
// Violation (a Violation shows its own Window).
const explainWindow = 30
