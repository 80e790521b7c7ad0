package world

import (
	"errors"
	"fmt"
	"strings"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/internal/invariant"
	"github.com/informersim/informersim/sim"
)

// The names of the oracles (design.md "Oracles"). The world checks these four itself: the
// DeliveryLog of every registration checks per-object order and cache-before-notify on each
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
	// Key is the object the violation is about ("ns/name", "name" when cluster-scoped), ""
	// when it is about no one object. History is every kept trace event about it, oldest first,
	// up to the violating event (at most MaxHistory, the latest; HistoryDropped says how many
	// earlier ones were left out): the object's story through the apiserver, each informer's
	// Reflector, queue and cache, and each handler, where Window shows only the last events of
	// every component.
	Key            string
	History        []sim.Event
	HistoryDropped int
}

// MaxHistory is how many events of the object's history a Violation keeps.
const MaxHistory = 60

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

// Format prints the violation's Error line for %v and %s, and its Report (the seed, the replay
// command, the object's history and the trace before the violating event) for %+v, so that
// t.Fatalf("%+v", err) shows the story of the failure.
func (v *Violation) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('+') {
		fmt.Fprint(f, v.Report())
		return
	}
	fmt.Fprint(f, v.Error())
}

// GomegaString is how Gomega shows a Violation after its Error line, when an assertion such as
// Expect(w.RunUntilConverged(d)).To(Succeed()) fails with one: the trace before the violating
// event, which is marked with ">", instead of a dump of the fields the Error line already says.
func (v *Violation) GomegaString() string {
	var b strings.Builder
	if v.Key != "" {
		fmt.Fprintf(&b, "history of %s (every event about it, oldest first", v.Key)
		if v.HistoryDropped > 0 {
			fmt.Fprintf(&b, "; %d earlier events left out", v.HistoryDropped)
		}
		b.WriteString("):\n")
		if len(v.History) == 0 {
			b.WriteString("  (no event about it in the kept trace)\n")
		}
		for _, e := range v.History {
			b.WriteString("  " + e.String() + "\n")
		}
		if EventObject(v.Event) == v.Key {
			b.WriteString("> " + v.Event.String() + "\n")
		}
	}
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
	v := &Violation{Oracle: oracle, Message: message, Event: e, Window: evs[max(0, len(evs)-window):], Seed: s.Seed(), Repro: s.Config().Repro}
	if key := EventObject(e); key != "" {
		v.about(evs, key)
	}
	return v
}

// about makes the violation about the object key: it keeps the object's history from evs,
// the kept trace before the violating event.
func (v *Violation) about(evs []sim.Event, key string) *Violation {
	h := ObjectHistory(evs, key)
	v.Key, v.HistoryDropped = key, max(0, len(h)-MaxHistory)
	v.History = h[v.HistoryDropped:]
	return v
}

// ObjectHistory returns the events of evs about the object key ("ns/name", or "name" for a
// cluster-scoped object), in order: the apiserver's writes of it (obj=<resource>/<key>), each
// Reflector's watch events, each queue's pops, cache writes and buffered notifications
// (obj=<key>@<rv>, tomb(<key>@<rv>)), and each handler's calls. Events about many objects at
// once (a LIST, a ReplacedAll pop) are not in it: they name no object.
func ObjectHistory(evs []sim.Event, key string) []sim.Event {
	var out []sim.Event
	for _, e := range evs {
		if EventObject(e) == key {
			out = append(out, e)
		}
	}
	return out
}

// EventObject returns the key ("ns/name" or "name") of the object event e is about, read from
// its obj= or key= field in any of the narration's forms, or "" when it names none.
func EventObject(e sim.Event) string {
	for _, f := range e.Fields {
		if f.Key != "obj" && f.Key != "key" {
			continue
		}
		v := f.Value
		if in, ok := strings.CutPrefix(v, "tomb("); ok {
			v = strings.TrimSuffix(in, ")")
		}
		if i := strings.LastIndexByte(v, '@'); i >= 0 {
			v = v[:i]
		}
		if e.Actor == "apiserver" && (e.Kind == "ADDED" || e.Kind == "MODIFIED" || e.Kind == "DELETED") {
			// A write: "<resource>/<ns>/<name>" or "<resource>/<name>"; drop the resource.
			_, v, _ = strings.Cut(v, "/")
		}
		return v
	}
	return ""
}

func sameEvent(a, b sim.Event) bool {
	return a.Step == b.Step && a.Time == b.Time && a.Actor == b.Actor && a.Kind == b.Kind && len(a.Fields) == len(b.Fields)
}

// violate panics with the Violation of oracle at the last trace event (the narration of what is
// being checked), which ends the run with a *sim.RunError.
func (w *World) violate(oracle, format string, args ...any) {
	panic(NewViolation(w.s, oracle, fmt.Sprintf(format, args...), w.lastEvent(), DefaultViolationWindow))
}

// violationAbout is NewViolation about the object key (its history in the report), at event e.
func (w *World) violationAbout(oracle, message, key string, e sim.Event) *Violation {
	v := NewViolation(w.s, oracle, message, e, DefaultViolationWindow)
	if key != "" && v.Key == "" {
		evs := w.s.Trace().Events()
		if n := len(evs); n > 0 && sameEvent(evs[n-1], e) {
			evs = evs[:n-1]
		}
		v.about(evs, key)
	}
	return v
}

// mutatedKey is the key of the object a read-only violation (a *fakeapi.MutationError) is
// about, "" for another error.
func mutatedKey(err error) string {
	var me *fakeapi.MutationError
	if !errors.As(err, &me) {
		return ""
	}
	if me.Namespace == "" {
		return me.Name
	}
	return me.Namespace + "/" + me.Name
}

// lastEvent is the last event of the trace, or a placeholder naming the step and time when the
// trace keeps none.
func (w *World) lastEvent() sim.Event {
	if evs := w.s.Trace().Events(); len(evs) > 0 {
		return evs[len(evs)-1]
	}
	return sim.Event{Step: w.s.StepCount(), Time: w.s.Now(), Actor: "world", Kind: "check"}
}
