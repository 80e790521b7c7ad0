package worldtest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/onsi/gomega/types"

	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/oracle"
)

// DefaultBudget is HaveConverged's budget of simulated time when none is given.
const DefaultBudget = 10 * time.Minute

// traceWindow is how many trace events a failure message shows before the failure.
const traceWindow = 30

// HaveConverged succeeds for a *world.World that becomes Quiet within budget of simulated time
// (DefaultBudget when none is given) and whose every informer cache and handler view then equals
// the apiserver's state, with every check added with AddCheck passing
// (World.RunUntilConverged). Given an *oracle.Handle, it also requires every attached oracle to
// hold (Handle.RunUntilConverged). Like Eventually, it drives time forward, but simulated time:
// the spec takes microseconds and replays exactly. The failure message says why (the first
// diverging key, the violated oracle, the failed check, or why the world did not quiesce), then
// the seed and the replay command, once each, a panic's stack from the panicking call, and the
// trace before the failure. A usage error (world.ErrUsage: an informer the spec never started)
// is the matcher's error, which Gomega reports as such, not a failed run with a replay line.
func HaveConverged(budget ...time.Duration) types.GomegaMatcher {
	m := &convergedMatcher{budget: DefaultBudget}
	if len(budget) > 0 {
		m.budget = budget[0]
	}
	return m
}

type convergedMatcher struct {
	budget time.Duration
	w      *world.World
	h      *oracle.Handle // set when the actual was a handle
	err    error          // why the last Match failed
}

func (m *convergedMatcher) Match(actual any) (bool, error) {
	switch a := actual.(type) {
	case *world.World:
		if a == nil {
			return false, errors.New("worldtest: HaveConverged: nil *world.World")
		}
		m.w, m.h, m.err = a, nil, a.RunUntilConverged(m.budget)
	case *oracle.Handle:
		if a == nil {
			return false, errors.New("worldtest: HaveConverged: nil *oracle.Handle")
		}
		m.w, m.h, m.err = a.World(), a, a.RunUntilConverged(m.budget)
	default:
		return false, fmt.Errorf("worldtest: HaveConverged expects a *world.World or an *oracle.Handle, got %T", actual)
	}
	if errors.Is(m.err, world.ErrUsage) {
		// The spec's mistake (an informer it never started), not a failed run: no replay line.
		return false, fmt.Errorf("worldtest: HaveConverged: %w", m.err)
	}
	return m.err == nil, nil
}

func (m *convergedMatcher) FailureMessage(any) string {
	var verdicts []oracle.Verdict
	if m.h != nil {
		verdicts = m.h.Verdicts()
	}
	return fmt.Sprintf("Expected the world to converge to the apiserver's state within %v of simulated time, but:\n%s", m.budget,
		withTimeline(explain(m.w, m.err), m.w, m.err, verdicts))
}

func (m *convergedMatcher) NegatedFailureMessage(any) string {
	return fmt.Sprintf("Expected the world not to converge, but every cache and handler view equals the apiserver's state\n%s", runLines(m.w))
}

// SatisfyEveryOracle succeeds for an *oracle.Handle none of whose attached oracles has been
// violated; once the world is Quiet it also checks their liveness halves (Handle.Finish). It
// runs nothing. The failure message is the violation's report: the oracle, what it saw, the
// seed, the replay command and the trace before the violating event, then every verdict.
func SatisfyEveryOracle() types.GomegaMatcher { return &oraclesMatcher{} }

type oraclesMatcher struct {
	h   *oracle.Handle
	err error
}

func (m *oraclesMatcher) Match(actual any) (bool, error) {
	h, ok := actual.(*oracle.Handle)
	if !ok || h == nil {
		return false, fmt.Errorf("worldtest: SatisfyEveryOracle expects a non-nil *oracle.Handle, got %T", actual)
	}
	m.h, m.err = h, nil
	if v := h.Violation(); v != nil {
		m.err = v
	} else if h.World().Quiet() {
		m.err = h.Finish()
	}
	return m.err == nil, nil
}

func (m *oraclesMatcher) FailureMessage(any) string {
	var b strings.Builder
	b.WriteString("Expected every oracle to hold, but:\n")
	b.WriteString(withTimeline(explain(m.h.World(), m.err), m.h.World(), m.err, m.h.Verdicts()))
	b.WriteString("verdicts:\n")
	for _, v := range m.h.Verdicts() {
		b.WriteString("  " + v.String() + "\n")
	}
	return b.String()
}

func (m *oraclesMatcher) NegatedFailureMessage(any) string {
	return fmt.Sprintf("Expected an oracle to be violated, but all of %s hold\n%s", strings.Join(m.h.Names(), ", "), runLines(m.h.World()))
}

// HaveObservedInOrder succeeds for a *world.Handler whose notifications for key, among those its
// DeliveryLog keeps (Take forgets them), are exactly notes, in this order, in informer.md §14's
// notation: "add(default/a@2,true)", "upd(default/a@2->3)", "upd(default/a@3->3)" (a sync),
// "del(default/a@4)", "del(tomb default/a@3)". No notes means the handler heard nothing of key.
//
// A note may leave out what a spec does not know in advance, and then matches any value of it:
// the resourceVersions ("add(default/a,true)", "upd(default/a)", "del(default/a)",
// "del(tomb default/a)") and an add's initial-list flag ("add(default/a@2)", "add(default/a)").
// What a note gives must match: "del(default/a)" is a delete of the object itself, never a
// tombstone, and "upd(default/a)" is any update, sync included. Every note must name key; a note
// that is not in this notation, or names another key, is an error, not a mismatch.
//
// The failure message lists what it observed, the first difference, the seed, the replay
// command, the history of key (every trace event about it: the apiserver's writes, each
// Reflector's, queue's and handler's) and the trace around the handler's call where the
// difference begins.
func HaveObservedInOrder(key string, notes ...string) types.GomegaMatcher {
	return &observedMatcher{key: key, want: notes}
}

type observedMatcher struct {
	key  string
	want []string
	h    *world.Handler
	got  []string // the key's notifications, in informer.md §14's notation
	diff int      // the index of the first difference; len(got) when got matches a prefix of want
}

// notePattern is a note of HaveObservedInOrder: a notification's kind and key, and the parts
// the note gives (an empty RV, or no initial flag, matches any).
type notePattern struct {
	kind       informer.NotificationKind
	key        string
	rv, oldRV  string
	tombstone  bool
	hasInitial bool
	initial    bool
}

// parseNote reads a note in informer.md §14's notation, its resourceVersions and initial-list
// flag optional (see HaveObservedInOrder).
func parseNote(note string) (notePattern, error) {
	var p notePattern
	bad := fmt.Errorf("note %q is not in informer.md §14's notation "+
		`("add(ns/name@rv,true)", "upd(ns/name@old->new)", "del(ns/name@rv)", "del(tomb ns/name@rv)", the @... and ,true parts optional)`, note)
	kind, body, ok := strings.Cut(note, "(")
	if !ok || !strings.HasSuffix(body, ")") {
		return p, bad
	}
	body = strings.TrimSuffix(body, ")")
	switch kind {
	case "add":
		p.kind = informer.NotificationAdd
		if k, flag, ok := strings.Cut(body, ","); ok {
			b, err := strconv.ParseBool(flag)
			if err != nil {
				return p, bad
			}
			body, p.hasInitial, p.initial = k, true, b
		}
		body, p.rv, _ = strings.Cut(body, "@")
	case "upd":
		p.kind = informer.NotificationUpdate
		var rvs string
		if body, rvs, ok = strings.Cut(body, "@"); ok {
			if p.oldRV, p.rv, ok = strings.Cut(rvs, "->"); !ok || p.oldRV == "" || p.rv == "" {
				return p, bad
			}
		}
	case "del":
		p.kind = informer.NotificationDelete
		body, p.tombstone = strings.CutPrefix(body, "tomb ")
		body, p.rv, _ = strings.Cut(body, "@")
	default:
		return p, bad
	}
	if body == "" || strings.ContainsAny(body+p.rv+p.oldRV, "@,() ") || (strings.Contains(note, "@") && p.rv == "") {
		return p, bad
	}
	p.key = body
	return p, nil
}

// matches says whether n is a notification the note describes.
func (p notePattern) matches(n world.Notification) bool {
	return n.Kind == p.kind && n.Key == p.key && n.Tombstone == p.tombstone &&
		(p.rv == "" || p.rv == n.ResourceVersion) && (p.oldRV == "" || p.oldRV == n.OldResourceVersion) &&
		(!p.hasInitial || p.initial == n.InInitialList)
}

func (m *observedMatcher) Match(actual any) (bool, error) {
	h, ok := actual.(*world.Handler)
	if !ok || h == nil {
		return false, fmt.Errorf("worldtest: HaveObservedInOrder expects a non-nil *world.Handler, got %T", actual)
	}
	if m.key == "" {
		return false, errors.New("worldtest: HaveObservedInOrder: empty key")
	}
	patterns := make([]notePattern, len(m.want))
	for i, note := range m.want {
		p, err := parseNote(note)
		if err != nil {
			return false, fmt.Errorf("worldtest: HaveObservedInOrder: %w", err)
		}
		if p.key != m.key {
			return false, fmt.Errorf("worldtest: HaveObservedInOrder: note %q is about %s, not %s", note, p.key, m.key)
		}
		patterns[i] = p
	}
	m.h, m.got, m.diff = h, nil, -1
	for _, n := range h.Deliveries().Notifications() {
		if n.Key != m.key {
			continue
		}
		if i := len(m.got); m.diff < 0 && (i >= len(patterns) || !patterns[i].matches(n)) {
			m.diff = i
		}
		m.got = append(m.got, n.String())
	}
	if m.diff < 0 {
		m.diff = len(m.got)
	}
	return len(m.got) == len(m.want) && m.diff == len(m.got), nil
}

func (m *observedMatcher) FailureMessage(any) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Expected %s to have observed, for %s, in order:\n%s", m.h.Actor(), m.key, list(m.want))
	fmt.Fprintf(&b, "but it observed:\n%s", list(m.got))
	i := m.diff
	var diff string
	switch {
	case i < len(m.got) && i < len(m.want):
		diff = fmt.Sprintf("first difference at #%d: observed %s, expected %s", i+1, m.got[i], m.want[i])
	case i < len(m.want):
		diff = fmt.Sprintf("first difference at #%d: expected %s, observed nothing more", i+1, m.want[i])
	default:
		diff = fmt.Sprintf("first difference at #%d: observed %s, expected nothing more", i+1, m.got[i])
	}
	b.WriteString(diff + "\n")
	w := m.h.World()
	evs := w.Sim().Trace().Events()
	// The timeline marks the handler's call where the difference begins, as the event of a
	// violation named after the matcher (none when the handler was told nothing more).
	failure := &world.Violation{Oracle: "HaveObservedInOrder", Message: fmt.Sprintf("%s, for %s: %s", m.h.Actor(), m.key, diff),
		Seed: w.Sim().Seed(), Repro: w.Sim().Config().Repro, Key: m.key}
	if at := callIndex(evs, m.h.Actor(), m.key, i); at >= 0 {
		failure.Event = evs[at]
	}
	b.WriteString(withTimeline(runLines(w), w, failure, nil))
	fmt.Fprintf(&b, "history of %s (every event about it, oldest first):\n", m.key)
	history := world.ObjectHistory(evs, m.key)
	if len(history) == 0 {
		b.WriteString("  (no event about it in the kept trace)\n")
	}
	if drop := len(history) - world.MaxHistory; drop > 0 {
		fmt.Fprintf(&b, "  (%d earlier events left out)\n", drop)
		history = history[drop:]
	}
	for _, e := range history {
		b.WriteString("  " + e.String() + "\n")
	}
	b.WriteString("trace around the difference:\n")
	b.WriteString(around(evs, m.h.Actor(), m.key, i))
	return b.String()
}

func (m *observedMatcher) NegatedFailureMessage(any) string {
	return fmt.Sprintf("Expected %s not to have observed, for %s, in order:\n%sbut it did\n%s", m.h.Actor(), m.key, list(m.want), runLines(m.h.World()))
}

// explain renders a run's error for a person (world.World.Explain).
func explain(w *world.World, err error) string { return w.Explain(err) }

// runLines names the run's seed and replay command.
func runLines(w *world.World) string {
	s := w.Sim()
	return fmt.Sprintf("seed: %d\nreplay: %s\n", s.Seed(), s.Config().Repro)
}

func list(notes []string) string {
	if len(notes) == 0 {
		return "    (nothing)\n"
	}
	var b strings.Builder
	for _, n := range notes {
		b.WriteString("    " + n + "\n")
	}
	return b.String()
}

// around renders the trace before (and a little after) the nth call of actor about key, marked
// with ">"; the end of the trace when there is no such call.
func around(evs []sim.Event, actor, key string, nth int) string {
	at := callIndex(evs, actor, key, nth)
	from, to := max(0, len(evs)-traceWindow), len(evs)
	if at >= 0 {
		from, to = max(0, at-traceWindow), min(len(evs), at+4)
	}
	var b strings.Builder
	for i := from; i < to; i++ {
		mark := "  "
		if i == at {
			mark = "> "
		}
		b.WriteString(mark + evs[i].String() + "\n")
	}
	return b.String()
}

// callIndex returns the index in evs of the nth call of actor about key, -1 if there is none.
func callIndex(evs []sim.Event, actor, key string, nth int) int {
	seen := 0
	for i, e := range evs {
		if e.Actor != actor || (e.Kind != "OnAdd" && e.Kind != "OnUpdate" && e.Kind != "OnDelete") || !hasField(e, "obj", key) {
			continue
		}
		if seen == nth {
			return i
		}
		seen++
	}
	return -1
}

func hasField(e sim.Event, key, value string) bool {
	for _, f := range e.Fields {
		if f.Key == key && f.Value == value {
			return true
		}
	}
	return false
}
