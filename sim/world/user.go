package world

import (
	"errors"
	"fmt"
	"time"

	"github.com/informersim/informersim/sim"
)

// The user's work inside the world: actors, timers, quiet conditions and checks. A controller's
// worker is a user actor (it offers "work" while its queue has items); its retries are user
// timers; "my controller has nothing in flight" is a quiet condition; "the controller's derived
// state matches the apiserver" is a check. All of them count: the world is not Quiet while a
// user actor offers an action, a user timer is armed or a quiet condition is false, and
// CheckConverged reports a failing check like a built-in oracle.

type namedCond struct {
	name string
	cond func() bool
}

type namedCheck struct {
	name  string
	check func() error
}

// Deadlines is a component of the user's with deadlines of its own on the world's clock, such
// as a step-driven delaying or rate-limited workqueue (informer/workqueue: NextDeadline and
// FireDue) or a controller's resync ticker. The world keeps one engine timer armed at Next,
// re-armed after every step, and calls Fire when it comes, as a traced step (Actor, Kind).
type Deadlines struct {
	// Actor and Kind name the timer's steps in the trace, e.g. "ctrl/queue", "fire-due".
	Actor, Kind string
	// Next returns the component's earliest deadline on the world's clock, false for none. It
	// must not change state.
	Next func() (time.Time, bool)
	// Fire does what is due at the clock's Now.
	Fire func()
	// Periodic says the deadline recurs for ever (a ticker): it does not hold Quiet. By
	// default the world is not Quiet while a deadline is pending (a retry still to come).
	Periodic bool
}

type userDeadlines struct {
	d     Deadlines
	timer *deadlineTimer
}

// AddActor adds a user actor to the world's engine. Its actions are steps like any other
// (traced under its name, picked by the policy), and the world is not Quiet while it offers
// one. Its name must be new in the world (informer and handler actors included); Actions must
// not change state (the scheduler may run none of them). Its actions may do anything a test
// can: write through Server(), Apply, After, register handlers; the world settles after each.
// (An actor added to the engine directly, with Sim().AddActor, is stepped and settled too, but
// does not hold Quiet.)
func (w *World) AddActor(a sim.Actor) error {
	if a == nil {
		return errors.New("world: AddActor: nil actor")
	}
	name := a.Name()
	if !validActorName(name) {
		return fmt.Errorf("world: AddActor: invalid name %q (non-empty, no spaces, '=' or '\"')", name)
	}
	if err := w.claim(name); err != nil {
		return fmt.Errorf("world: AddActor: %w", err)
	}
	w.userActors = append(w.userActors, a)
	w.s.AddActor(a)
	return nil
}

// validActorName allows '/' (user actors may group themselves, "ctrl/worker-1").
func validActorName(name string) bool {
	return name != "" && validName(stripSlashes(name))
}

func stripSlashes(s string) string {
	b := []byte(s)
	for i := range b {
		if b[i] == '/' {
			b[i] = '_'
		}
	}
	return string(b)
}

// offers reports whether a has an action to offer now.
func offers(a sim.Actor) bool {
	any := false
	a.Actions(func(sim.Action) { any = true })
	return any
}

// After schedules fn as a traced step (actor, kind) d from now, after which the world settles:
// a user timer. The world is not Quiet while it is armed (stop it with the returned timer's
// Stop). Use it to act on the world mid-run (register a late handler, stop an informer, write,
// retry a controller's work). A negative d, an empty actor or kind, or a nil fn is an error.
func (w *World) After(d time.Duration, actor, kind string, fn func()) (*sim.Timer, error) {
	switch {
	case d < 0:
		return nil, fmt.Errorf("world: After: negative delay %v", d)
	case actor == "" || kind == "":
		return nil, fmt.Errorf("world: After: empty actor %q or kind %q", actor, kind)
	case fn == nil:
		return nil, fmt.Errorf("world: After: %w", errNilFunc)
	}
	t := w.after(d, actor, kind, fn)
	// Forget fired and stopped timers as new ones come, so the list stays short.
	live := w.userTimers[:0]
	for _, u := range w.userTimers {
		if u.Armed() {
			live = append(live, u)
		}
	}
	w.userTimers = append(live, t)
	return t, nil
}

// AddQuietCondition adds a condition the world must meet to be Quiet, e.g. "my controller's
// queue is empty and nothing is in flight". cond must not change state. An empty name or a nil
// cond is an error.
func (w *World) AddQuietCondition(name string, cond func() bool) error {
	switch {
	case name == "":
		return errors.New("world: AddQuietCondition: empty name")
	case cond == nil:
		return fmt.Errorf("world: AddQuietCondition %q: nil condition", name)
	}
	w.quietConds = append(w.quietConds, namedCond{name, cond})
	return nil
}

// AddCheck adds a named convergence check, run by CheckConverged (and so RunUntilConverged)
// after the built-in oracles, in the order added: e.g. "the controller's derived state equals
// what the apiserver says it should be". A non-nil error fails convergence, reported as
// `world: check "<name>" failed: <err> (seed N; repro: ...)`. check should read the apiserver
// with Server().Snapshot, which changes nothing. An empty name, a name already used, or a nil
// check is an error.
func (w *World) AddCheck(name string, check func() error) error {
	switch {
	case name == "":
		return errors.New("world: AddCheck: empty name")
	case check == nil:
		return fmt.Errorf("world: AddCheck %q: nil check", name)
	}
	for _, c := range w.checks {
		if c.name == name {
			return fmt.Errorf("world: AddCheck: a check named %q exists", name)
		}
	}
	w.checks = append(w.checks, namedCheck{name, check})
	return nil
}

// AddDeadlines hosts a component's deadlines (see Deadlines). Empty names or nil funcs are an
// error. Components changed from outside a step (a test adding to a queue between runs) are
// re-armed by Settle.
func (w *World) AddDeadlines(d Deadlines) error {
	switch {
	case d.Actor == "" || d.Kind == "":
		return fmt.Errorf("world: AddDeadlines: empty actor %q or kind %q", d.Actor, d.Kind)
	case d.Next == nil || d.Fire == nil:
		return fmt.Errorf("world: AddDeadlines %s: %w", d.Actor, errNilFunc)
	}
	u := &userDeadlines{d: d}
	u.timer = &deadlineTimer{s: w.s, actor: d.Actor, kind: d.Kind, fire: d.Fire}
	w.deadlines = append(w.deadlines, u)
	return w.settleOutside()
}

func (w *World) userQuiet() bool {
	for _, u := range w.userActors {
		if offers(u) {
			return false
		}
	}
	for _, t := range w.userTimers {
		if t.Armed() {
			return false
		}
	}
	for _, u := range w.deadlines {
		if u.timer.armed && !u.d.Periodic {
			return false
		}
	}
	for _, c := range w.quietConds {
		if !c.cond() {
			return false
		}
	}
	return true
}
