package world

import (
	"fmt"
	"strings"

	"github.com/informersim/informersim/internal/invariant"
	"github.com/informersim/informersim/sim"
)

// The names of the oracles (design.md "Oracles"). The world checks these four itself: the
// Recorder of every registration checks per-object order and cache-before-notify on each
// delivery, CheckConverged is eventual consistency, and every step ends with the apiserver's
// verdict on read-only objects. Package world/oracle names the others
// and checks them over the trace and the apiserver's record.
const (
	OraclePerObjectOrder      = "per-object-order"
	OracleCacheBeforeNotify   = "cache-before-notify"
	OracleEventualConsistency = "eventual-consistency"
	// OracleReadOnlyObjects: nothing changes an object an informer of the world received. The
	// apiserver lends those informers its own objects (fakeapi.md §10.5), which they share with
	// their caches and handlers as client-go's do. The apiserver notices a change when a write
	// acts on the object (or the object leaves its history), and the world fails the run at the
	// end of that step, or in CheckConverged, which checks every lent object. It is client-go's
	// rule that objects from an informer are read-only, which client-go checks only with its
	// cache mutation detector switched on.
	OracleReadOnlyObjects = "read-only-objects"
)

// DefaultViolationWindow is how many trace events before the violating one a Violation keeps.
const DefaultViolationWindow = 40

// Violation is a named oracle's verdict that a run went wrong: which oracle, what it saw, the
// first violating event with the trace before it, and how to replay the run. The world's own
// oracles panic with it inside the step that violates them, so the engine ends the run with a
// *sim.RunError that unwraps to it (errors.As(err, &v) finds it); CheckConverged returns it.
// Package world/oracle reports its oracles with the same type.
type Violation struct {
	// Oracle is the oracle's name, e.g. OraclePerObjectOrder.
	Oracle string
	// Message says what was violated, in the oracle's words.
	Message string
	// Event is the first violating event: the trace event the oracle was reading when it
	// found the violation (for a convergence check, the moment of the check).
	Event sim.Event
	// Window holds the trace events before Event, oldest first (at most
	// DefaultViolationWindow; none when the run keeps no trace).
	Window []sim.Event
	// Seed is the run's seed, Repro the one command that replays it (sim.Config.Repro).
	Seed  uint64
	Repro string
}

// Error is one line: the oracle, the message, the event, the seed and the repro command.
func (v *Violation) Error() string {
	return fmt.Sprintf("world: oracle %s violated: %s (at %s) (seed %d; repro: %s)",
		v.Oracle, v.Message, strings.Join(strings.Fields(v.Event.String()), " "), v.Seed, v.Repro)
}

// Unwrap returns the violation as an invariant.Violation, the value the world's assertions
// panicked with before oracles had names, so callers that look for one still find it.
func (v *Violation) Unwrap() error { return invariant.Violation{Message: v.Oracle + ": " + v.Message} }

// Report renders the violation for a person: the verdict, the seed and replay command, then the
// trace around the violating event (marked with ">").
func (v *Violation) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "oracle %s violated: %s\nseed: %d\nreplay: %s\n%s\n", v.Oracle, v.Message, v.Seed, v.Repro, v.GomegaString())
	return b.String()
}

// GomegaString is how Gomega shows a Violation after its Error line, when an assertion such as
// Expect(w.RunUntilConverged(d)).To(Succeed()) fails with one: the trace before the violating
// event, which is marked with ">", instead of a dump of the fields the Error line already says.
func (v *Violation) GomegaString() string {
	var b strings.Builder
	b.WriteString("trace before the violation:\n")
	for _, e := range v.Window {
		b.WriteString("  " + e.String() + "\n")
	}
	b.WriteString("> " + v.Event.String())
	return b.String()
}

// NewViolation builds the Violation of oracle on s at event e, with the trace before e (up to
// window events of s's kept trace, ending just before e if e is the last one kept) and s's seed
// and repro command. Oracles outside the world use it to report in the same form.
func NewViolation(s *sim.Sim, oracle, message string, e sim.Event, window int) *Violation {
	evs := s.Trace().Events()
	if n := len(evs); n > 0 && sameEvent(evs[n-1], e) {
		evs = evs[:n-1]
	}
	if window < 0 {
		window = 0
	}
	evs = evs[max(0, len(evs)-window):]
	return &Violation{Oracle: oracle, Message: message, Event: e, Window: evs, Seed: s.Seed(), Repro: s.Config().Repro}
}

func sameEvent(a, b sim.Event) bool {
	return a.Step == b.Step && a.Time == b.Time && a.Actor == b.Actor && a.Kind == b.Kind && len(a.Fields) == len(b.Fields)
}

// violate panics with the Violation of oracle at the last trace event (the narration of what is
// being checked), which ends the run with a *sim.RunError.
func (w *World) violate(oracle, format string, args ...any) {
	panic(NewViolation(w.s, oracle, fmt.Sprintf(format, args...), w.lastEvent(), DefaultViolationWindow))
}

// lastEvent is the last event of the trace, or a placeholder naming the step and time when the
// trace keeps none.
func (w *World) lastEvent() sim.Event {
	if evs := w.s.Trace().Events(); len(evs) > 0 {
		return evs[len(evs)-1]
	}
	return sim.Event{Step: w.s.StepCount(), Time: w.s.Now(), Actor: "world", Kind: "check"}
}
