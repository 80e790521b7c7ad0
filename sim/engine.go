package sim

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/informersim/informersim/internal/invariant"
)

// Actor is a participant of the simulation: an informer component, the apiserver's network, a
// workload. It never blocks or starts goroutines; it only says what it could do now.
type Actor interface {
	// Name identifies the actor in the trace. Names should be unique in a run.
	Name() string
	// Actions calls add once for each action the actor could run now, in a stable order. It
	// must not change any state: the scheduler may run none of them.
	Actions(add func(Action))
}

// Action is one unit of work an actor can do now.
type Action struct {
	// Name is stable within the actor across steps (e.g. "pop", "deliver/w3"): PolicyFIFO
	// uses it to tell how long the action has been enabled, and the trace prints it.
	Name string
	// Run does the work. It may emit narration, schedule timers, use the clock and the random
	// streams. A panic in Run ends the run with a *RunError.
	Run func()
}

// Sentinel errors of run control; the returned errors wrap them with the step, time and seed.
var (
	ErrMaxSteps   = errors.New("sim: step limit reached (Config.MaxSteps)")
	ErrMaxSimTime = errors.New("sim: simulated time limit reached (Config.MaxSimTime)")
	ErrBudget     = errors.New("sim: condition still false when the budget ran out")
	ErrIdle       = errors.New("sim: nothing enabled and no timer pending")
)

// RunError is a panic inside an action, turned into an error with everything needed to replay
// it. After a RunError the Sim is stopped: every later step returns the same error.
type RunError struct {
	Seed   uint64
	Policy Policy
	Step   int64
	Time   time.Duration // since Epoch
	Actor  string
	Action string
	Panic  any
	Stack  []byte
	Repro  string
}

func (e *RunError) Error() string {
	return fmt.Sprintf("sim: panic in step %d at %s, actor %s action %s (seed %d, policy %s): %v\nrepro: %s",
		e.Step, FormatSimTime(e.Time), e.Actor, e.Action, e.Seed, e.Policy, e.Panic, e.Repro)
}

// Unwrap returns the panic value if it is an error (an invariant.Violation, say).
func (e *RunError) Unwrap() error {
	err, _ := e.Panic.(error)
	return err
}

// enabledAction is one entry of the actions enabled at this step. It holds no pointer (the
// action itself stays with its actor, or in the due list): the list is rebuilt at every step,
// and copying plain words is cheaper for it and for the collector.
type enabledAction struct {
	actor int   // actor id (see actorID); for a timer, its owner's
	pos   int   // an actor's action: its index in the actor's offers; a due timer: -1-(its index in s.due)
	since int64 // PolicyFIFO: the step count when the action became enabled
}

// isTimer reports whether e is a due timer.
func (e enabledAction) isTimer() bool { return e.pos < 0 }

// actionName returns the name of enabled action e: the action's, or the timer's kind.
func (s *Sim) actionName(e enabledAction) string {
	if e.isTimer() {
		return s.due[-1-e.pos].kind
	}
	return s.actors[e.actor].offers[e.pos].Name
}

// knob is one line of the run header.
type knob struct{ name, value string }

// Sim is one deterministic run. It is not safe for concurrent use; nothing in it needs more than
// the one goroutine that calls Step.
type Sim struct {
	cfg Config

	streams map[string]*rand.Rand // looked up by name, never iterated
	sched   *rand.Rand

	now      time.Duration // simulated time since Epoch; the clock's only source
	nowTime  time.Time     // Epoch plus now, what Clock.Now returns: made once per instant, not at each call
	timers   timerHeap
	due      []*Timer // deadline reached, in (deadline, seq) order
	timerSeq uint64

	actors []actorSlot    // by actor id; a slot without an Actor is a timer owner's name
	ids    map[string]int // actor name to id, for timers and PCT; never iterated
	names  []string       // id to name
	// dirty has bit id set when collect must ask actor id for its actions: a polled actor
	// (always), or a cached one that is stale. The others offer what they offered last time.
	dirty []uint64
	// enabled is the list of the actions enabled at this step (collect): the due timers
	// (nTimers of them), then every actor's offers, in actor id order. It is kept from step to
	// step and only the dirty actors' runs are rewritten: at most steps few actors are dirty
	// (the one that ran and those its step woke), while a world that delivers a notification
	// to each of its handlers has every handler offering a delivery at every step.
	enabled []enabledAction
	nTimers int
	// spareActs is the array collect builds a changed list in; the old one becomes the spare.
	spareActs []enabledAction
	curActor  int
	curSlot   *actorSlot   // &s.actors[curActor] while it is asked (the slice may grow between steps)
	add       func(Action) // s.addAction bound once, so polling does not allocate

	fifo fifoState // PolicyFIFO bookkeeping
	pct  *pctState

	step  int64
	trace *Trace
	subs  []func(Event)
	ev    Event // scratch event for the step events
	// fieldBuf holds the fields of the event Emit is recording, reused from event to event.
	fieldBuf []Field

	faultsOn bool
	sites    map[string]*faultSite // looked up by name, never iterated

	knobs  []knob
	failed *RunError

	// checkCached makes collect ask cached actors that are not stale too, and fail the run if
	// their answer differs from the cached one (invariant.Thorough, set by the test binaries).
	checkCached bool
	scratch     []Action // checkCached: what a cached actor answers now

	hooks []stepHook // AfterEachStep
}

// actorSlot is one registered actor. offers holds what it offered when last asked: a polled
// actor is asked at every step; a cached actor (AddCachedActor) only when stale, its offers
// replayed at every collect until then.
type actorSlot struct {
	a      Actor
	cached bool
	stale  bool
	offers []Action
}

// stepHook is a host's function run at the end of every step.
type stepHook struct {
	name string
	fn   func()
}

// New returns a run for cfg at simulated time zero (Epoch), with no actors.
func New(cfg Config) (*Sim, error) {
	c, err := cfg.validated()
	if err != nil {
		return nil, err
	}
	s := &Sim{
		cfg:      c,
		streams:  make(map[string]*rand.Rand),
		ids:      make(map[string]int),
		trace:    newTrace(c.Trace, c.MaxTraceEvents),
		faultsOn: !c.DisableFaults,
		sites:    make(map[string]*faultSite),

		checkCached: invariant.Thorough(),
		nowTime:     epoch,
	}
	s.add = s.addAction
	for _, name := range standardStreams {
		s.Rand(name)
	}
	s.sched = s.Rand(StreamScheduling)
	if c.Policy == PolicyPCT {
		s.pct = newPCT(s)
	}
	s.SetKnob("seed", strconv.FormatUint(c.Seed, 10))
	s.SetKnob("policy", c.Policy.String())
	if c.Policy == PolicyPCT {
		s.SetKnob("pct.depth", strconv.Itoa(c.PCTDepth))
		s.SetKnob("pct.steps", strconv.Itoa(c.PCTSteps))
		var cp []string
		for _, k := range s.pct.change {
			cp = append(cp, strconv.FormatInt(k, 10))
		}
		s.SetKnob("pct.change_points", strings.Join(cp, ","))
	}
	s.SetKnob("faults", strconv.FormatBool(!c.DisableFaults))
	s.SetKnob("fault.site_probability", strconv.FormatFloat(c.FaultSiteProbability, 'g', -1, 64))
	s.SetKnob("fault.hit_probability", strconv.FormatFloat(c.FaultHitProbability, 'g', -1, 64))
	s.SetKnob("max_steps", strconv.FormatInt(c.MaxSteps, 10))
	s.SetKnob("max_sim_time", c.MaxSimTime.String())
	s.SetKnob("quiescence_window", c.QuiescenceWindow.String())
	s.SetKnob("trace", c.Trace.String())
	s.SetKnob("epoch", Epoch().Format(time.RFC3339))
	return s, nil
}

// Config returns the run's configuration with defaults filled in.
func (s *Sim) Config() Config { return s.cfg }

// Seed returns the run's seed.
func (s *Sim) Seed() uint64 { return s.cfg.Seed }

// StepCount returns the number of actions run so far.
func (s *Sim) StepCount() int64 { return s.step }

// Trace returns the run's trace.
func (s *Sim) Trace() *Trace { return s.trace }

// SetKnob records a setting derived from the seed (object count, resync period...) in the run
// header. Knobs print in the order first set; setting a knob again replaces its value in place.
func (s *Sim) SetKnob(name, value string) {
	for i := range s.knobs {
		if s.knobs[i].name == name {
			s.knobs[i].value = value
			return
		}
	}
	s.knobs = append(s.knobs, knob{name, value})
}

// Header returns the run header: one "name=value" line per knob, the engine's first (seed,
// policy, limits), then the caller's, in the order they were set.
func (s *Sim) Header() string {
	var b strings.Builder
	for _, k := range s.knobs {
		b.WriteString(k.name)
		b.WriteByte('=')
		b.WriteString(k.value)
		b.WriteByte('\n')
	}
	return b.String()
}

// AddActor registers a; actors are polled in registration order at every step. Actors may be
// added while running (from an action), and take part from the next step. A nil actor, or a
// name another actor has, is an error and adds nothing.
func (s *Sim) AddActor(a Actor) error {
	if a == nil {
		return errors.New("sim: AddActor: nil actor")
	}
	if id, ok := s.ids[a.Name()]; ok && id < len(s.actors) && s.actors[id].a != nil {
		return fmt.Errorf("sim: AddActor: two actors named %q", a.Name())
	}
	s.addActor(a, false)
	return nil
}

// AddCachedActor registers a like AddActor, except that the engine does not ask a for its
// actions at every step: it asks when a is added, after every step run under a's name (one of
// its actions, or a timer traced under its name), and after every Wake of the returned Waker;
// at the other steps it offers again what a offered when last asked (the same actions, in the
// same order, in a's place among the actors). The enabled actions of every step are exactly
// those of AddActor, provided a's host calls Wake whenever anything a's Actions reads may have
// changed outside a's own steps. The point: a world with many actors that are idle most of the
// time (one per handler) pays for the ones that changed, not for all of them, at every step.
// Test binaries check the promise (invariant.Thorough): they ask every cached actor at every
// step and fail the run at the first answer that differs from the cached one.
func (s *Sim) AddCachedActor(a Actor) Waker {
	id := s.addActor(a, true)
	return Waker{s: s, id: id}
}

func (s *Sim) addActor(a Actor, cached bool) int {
	invariant.Check(a != nil, "sim: AddActor(nil)")
	id := s.actorID(a.Name())
	for len(s.actors) <= id {
		s.actors = append(s.actors, actorSlot{})
	}
	invariant.Check(s.actors[id].a == nil, "sim: two actors named %q", a.Name())
	s.actors[id] = actorSlot{a: a, cached: cached, stale: true}
	for len(s.dirty) <= id/64 {
		s.dirty = append(s.dirty, 0)
	}
	s.dirty[id/64] |= 1 << (id % 64)
	return id
}

// markStale makes collect ask the cached actor id again.
func (s *Sim) markStale(id int) {
	s.actors[id].stale = true
	s.dirty[id/64] |= 1 << (id % 64)
}

// Waker marks a cached actor (AddCachedActor) stale: the engine asks it for its actions again at
// the next step. The zero Waker does nothing.
type Waker struct {
	s  *Sim
	id int
}

// Wake says the actor's actions may have changed. It is cheap (one store): call it at every
// change that may matter, never fewer.
func (w Waker) Wake() {
	if w.s != nil {
		w.s.markStale(w.id)
	}
}

// actorID interns an actor name (of an Actor or of a timer's owner) as a small integer.
func (s *Sim) actorID(name string) int {
	if id, ok := s.ids[name]; ok {
		return id
	}
	id := len(s.names)
	s.ids[name] = id
	s.names = append(s.names, name)
	return id
}

// Subscribe registers fn to see every event as it is recorded (oracles check safety properties
// this way). fn runs inside the step that produced the event.
func (s *Sim) Subscribe(fn func(Event)) { s.subs = append(s.subs, fn) }

// Narrated reports whether narration reaches anyone: the trace hashes or keeps events (any level
// but TraceNone) or a subscriber sees them. When it does not, an actor may emit an event bare,
// without building its fields: the trace still counts it (Trace.Len), and nobody can tell the
// difference. Hot paths use this to skip formatting in runs that only measure or explore.
func (s *Sim) Narrated() bool { return s.trace.level != TraceNone || len(s.subs) > 0 }

// Emit records a narration event for actor, stamped with the current step and time. Actions call
// it to say what they did; the fields are copied if kept, and each subscriber gets its own copy.
func (s *Sim) Emit(actor, kind string, fields ...Field) {
	if s.trace.level == TraceNone && len(s.subs) == 0 {
		s.trace.total++ // what record does at TraceNone: the event is counted, nobody reads it
		return
	}
	// fields never escapes (the trace reads a copy in a reused buffer; subscribers get a fresh
	// copy), so a caller's variadic list stays on its stack: narrating allocates nothing unless
	// someone subscribes.
	s.fieldBuf = append(s.fieldBuf[:0], fields...)
	e := Event{Step: s.step, Time: s.now, Actor: actor, Kind: kind, Fields: s.fieldBuf}
	s.trace.record(&e)
	if len(s.subs) == 0 {
		return
	}
	e.Fields = nil
	if len(fields) > 0 {
		e.Fields = append([]Field(nil), fields...)
	}
	for _, fn := range s.subs {
		fn(e)
	}
}

func (s *Sim) record(e *Event) {
	s.trace.record(e)
	for _, fn := range s.subs {
		fn(*e)
	}
}

func (s *Sim) addAction(a Action) {
	s.curSlot.offers = append(s.curSlot.offers, a)
}

// collect fills s.enabled with the actions enabled now: due timers first, in (deadline, seq)
// order, then each actor's actions in registration order (a cached actor's as last asked,
// unless it is stale).
//
// An actor's entries say nothing but its id and the position of each of its offers, so those
// of an actor that is not asked (a cached actor that is not stale offers what it offered last
// time) are the ones the last collect left: only the dirty actors (see Sim.dirty) are asked, in
// id order, and each one's run of entries is found by walking the list once. While every run
// keeps its length (the usual step of a world: a handler with notifications left offers its
// one delivery again) the list stays as it is; from the first run whose length changed, the
// rest of the list is built in the spare array as the walk goes on (the runs between the asked
// actors copied as they are), so a step costs one pass however many runs changed. The dirty
// word is read again after each actor: one that wakes a later actor while asked (it should
// not, but a lookup may resolve another's state) has it asked in this same pass, as polling
// every actor would. Test binaries check the list against every actor's slot (checkCollected).
func (s *Sim) collect() {
	nd := len(s.due)
	if nd != s.nTimers {
		s.resizeTimers(nd)
	}
	for i, t := range s.due {
		s.enabled[i] = enabledAction{actor: t.actorID, pos: -1 - i, since: t.dueStep}
	}
	old := s.enabled
	var next []enabledAction // the new list, once a run's length changed (building)
	building := false
	at := nd // old[at:] are the entries the walk has not passed
	for wi := range s.dirty {
		base := wi * 64
		for rest := s.dirty[wi]; rest != 0; {
			b := bits.TrailingZeros64(rest)
			id := base + b
			sl := &s.actors[id]
			if sl.cached {
				s.askCached(id, sl)
			} else {
				s.ask(id, sl, sl.offers[:0])
			}
			// id's run, as the last collect left it: n entries at to, where an actor with its
			// id would be. Dirty actors come in id order, so it lies at or after at.
			to := at
			for to < len(old) && old[to].actor < id {
				to++
			}
			n := 0
			for to+n < len(old) && old[to+n].actor == id {
				n++
			}
			switch {
			case building:
				next = append(next, old[at:to]...) // the clean actors since the last asked one
			case n != len(sl.offers):
				building = true
				next = append(s.spareActs[:0], old[:to]...)
			}
			if building {
				for i := range sl.offers {
					next = append(next, enabledAction{actor: id, pos: i})
				}
			}
			at = to + n
			rest = s.dirty[wi] &^ (1<<(b+1) - 1) // b == 63: the shift wraps to all ones
		}
	}
	if building {
		next = append(next, old[at:]...)
		s.enabled, s.spareActs = next, old[:0]
	}
	if s.checkCached {
		s.checkCollected(nd)
	}
	if s.cfg.Policy == PolicyFIFO {
		s.fifo.age(s, s.enabled[nd:], nd, s.step)
	}
}

// resizeTimers makes room for nd due timers at the front of s.enabled (or drops the extra
// ones), moving the actors' entries; the caller writes the timers' entries.
func (s *Sim) resizeTimers(nd int) {
	old := len(s.enabled)
	if nd > s.nTimers {
		s.enabled = slices.Grow(s.enabled, nd-s.nTimers)[:old+nd-s.nTimers]
	}
	copy(s.enabled[nd:], s.enabled[s.nTimers:old])
	s.enabled = s.enabled[:old+nd-s.nTimers]
	s.nTimers = nd
}

// ask asks actor id (slot sl) for its actions, which addAction appends to into, and leaves
// them in sl.offers.
func (s *Sim) ask(id int, sl *actorSlot, into []Action) {
	sl.offers = into
	s.curActor, s.curSlot = id, sl
	sl.a.Actions(s.add)
}

// askCached asks the stale cached actor id (slot sl) for its actions, which become its cache.
func (s *Sim) askCached(id int, sl *actorSlot) {
	s.ask(id, sl, sl.offers[:0])
	sl.stale = false
	s.dirty[id/64] &^= 1 << (id % 64) // clean until woken, or until it runs
}

// checkCollected is collect's thorough check (invariant.Thorough): every cached actor that was
// not asked is asked anyway and must answer what its cache holds (checkCachedOffers), and the
// actors' part of the enabled list, s.enabled[nd:], must be what asking every actor in id
// order would have made: each actor's offers, in order.
func (s *Sim) checkCollected(nd int) {
	k := nd
	for id := range s.actors {
		sl := &s.actors[id]
		if sl.a == nil {
			continue
		}
		if sl.cached && !sl.stale {
			s.checkCachedOffers(id)
		}
		for i := range sl.offers {
			if k >= len(s.enabled) || s.enabled[k].actor != id || s.enabled[k].pos != i {
				invariant.Check(false, "sim: the enabled list lacks offer %d of actor %s at entry %d", i, s.names[id], k)
			}
			k++
		}
	}
	if k != len(s.enabled) {
		invariant.Check(false, "sim: the enabled list has %d entries past the actors' offers", len(s.enabled)-k)
	}
}

// checkCachedOffers asks the cached actor id for its actions and panics if they are not the ones
// cached: its host missed a Wake, and the run would differ from one that polls every actor.
func (s *Sim) checkCachedOffers(id int) {
	sl := &s.actors[id]
	cached := sl.offers
	s.ask(id, sl, s.scratch[:0])
	now := sl.offers
	s.scratch, sl.offers = now, cached
	same := len(now) == len(cached)
	for i := 0; same && i < len(now); i++ {
		same = now[i].Name == cached[i].Name
	}
	if !same {
		names := func(acts []Action) []string {
			out := []string{}
			for _, a := range acts {
				out = append(out, a.Name)
			}
			return out
		}
		invariant.Check(false, "sim: cached actor %s offers %v, but its cache holds %v: its host missed a Waker.Wake",
			s.names[id], names(now), names(cached))
	}
}

// pick returns the index in s.enabled of the action the policy runs.
func (s *Sim) pick() int {
	switch s.cfg.Policy {
	case PolicyFIFO:
		best := 0
		for i := 1; i < len(s.enabled); i++ {
			if s.enabled[i].since < s.enabled[best].since {
				best = i
			}
		}
		return best
	case PolicyPCT:
		return s.pct.pick(s)
	default:
		if len(s.enabled) == 1 {
			return 0
		}
		return s.sched.IntN(len(s.enabled))
	}
}

// Step runs one action. If nothing is enabled now, it first moves the clock to the earliest
// deadline (making those timers enabled). It returns false, and no error, when nothing is
// enabled and no timer is pending: the run can make no more progress on its own.
func (s *Sim) Step() (bool, error) {
	ran, err := s.stepUntil(s.cfg.MaxSimTime)
	if err == nil && !ran && len(s.timers) > 0 {
		// Nothing is enabled and the earliest deadline lies past the time limit.
		return false, s.limitErr(ErrMaxSimTime)
	}
	return ran, err
}

func (s *Sim) limitErr(sentinel error) error {
	return fmt.Errorf("%w: %d steps, sim time %s (seed %d; %s)", sentinel, s.step, FormatSimTime(s.now), s.cfg.Seed, s.cfg.Repro)
}

// run executes s.enabled[i] as step s.step+1, turning a panic into a *RunError.
func (s *Sim) run(i int) (err error) {
	a := s.enabled[i]
	name := s.actionName(a)
	var timer *Timer
	var run func()
	if a.isTimer() {
		timer = s.due[-1-a.pos]
	} else {
		run = s.actors[a.actor].offers[a.pos].Run
	}
	s.step++
	actor := s.names[a.actor]
	defer func() {
		if p := recover(); p != nil {
			s.failed = &RunError{Seed: s.cfg.Seed, Policy: s.cfg.Policy, Step: s.step, Time: s.now,
				Actor: actor, Action: name, Panic: p, Stack: debug.Stack(), Repro: s.cfg.Repro}
			err = s.failed
		}
	}()
	if s.cfg.Policy == PolicyFIFO && timer == nil {
		// The action goes to the back of the queue: enabled again as of this step, so an
		// action that stays enabled cannot starve the others.
		s.fifo.ran(i, s.step)
	}
	if s.Narrated() {
		s.ev = Event{Step: s.step, Time: s.now, Actor: actor, Kind: name}
		s.record(&s.ev)
	} else {
		// What record does when nobody reads the trace: the step is counted. Not building the
		// event spares its pointer writes (write barriers while the collector runs).
		s.trace.total++
	}
	if a.actor < len(s.actors) && s.actors[a.actor].cached {
		// A step run under a cached actor's name changes what it offers, as a rule.
		s.markStale(a.actor)
	}
	if timer != nil {
		s.fire(timer)
	} else {
		run()
	}
	for _, h := range s.hooks {
		h.fn()
	}
	return nil
}

// AfterEachStep registers fn to run at the end of every step, after its action or timer, as
// part of the step (its events carry the step's number; a panic in it fails the run like one in
// the action). A host uses it to restore its own invariants whatever ran: the world re-arms
// its components' deadlines there. Hooks run in registration order. name identifies the host;
// an empty name, a nil fn or a name already registered is an error, so one Sim hosts one
// component of each name.
func (s *Sim) AfterEachStep(name string, fn func()) error {
	switch {
	case name == "":
		return errors.New("sim: AfterEachStep: empty name")
	case fn == nil:
		return fmt.Errorf("sim: AfterEachStep %q: nil func", name)
	}
	for _, h := range s.hooks {
		if h.name == name {
			return fmt.Errorf("sim: AfterEachStep: a hook named %q is registered", name)
		}
	}
	s.hooks = append(s.hooks, stepHook{name, fn})
	return nil
}

// RunFor runs until d of simulated time has passed: every action enabled up to and including
// the end time runs, then the clock is set to the end time. A negative d is an error.
func (s *Sim) RunFor(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("sim: RunFor(%v): negative duration", d)
	}
	end := s.now + d
	if end > s.cfg.MaxSimTime {
		return s.limitErr(ErrMaxSimTime)
	}
	for {
		if _, err := s.stepUntil(end); err != nil {
			return err
		}
		if s.idleBefore(end) {
			s.setNow(end)
			return nil
		}
	}
}

// idleBefore reports whether nothing is enabled now and no deadline comes by end; collect must
// have run.
func (s *Sim) idleBefore(end time.Duration) bool {
	return len(s.enabled) == 0 && (len(s.timers) == 0 || s.timers[0].deadline > end)
}

// stepUntil runs one action if one is enabled now or becomes enabled by end (advancing the
// clock); otherwise it runs nothing and leaves s.enabled empty.
func (s *Sim) stepUntil(end time.Duration) (bool, error) {
	if s.failed != nil {
		return false, s.failed
	}
	if s.step >= s.cfg.MaxSteps {
		return false, s.limitErr(ErrMaxSteps)
	}
	s.collect()
	if len(s.enabled) == 0 {
		if len(s.timers) == 0 || s.timers[0].deadline > end {
			return false, nil
		}
		s.advance()
		s.collect()
	}
	return true, s.run(s.pick())
}

// RunUntilQuiescent runs until nothing is enabled and no timer is due within
// Config.QuiescenceWindow. A ticker with a shorter period keeps the run busy until a limit.
func (s *Sim) RunUntilQuiescent() error {
	for {
		end := min(s.now+s.cfg.QuiescenceWindow, s.cfg.MaxSimTime)
		ran, err := s.stepUntil(end)
		if err != nil {
			return err
		}
		if !ran {
			if len(s.timers) > 0 && s.timers[0].deadline <= s.now+s.cfg.QuiescenceWindow {
				return s.limitErr(ErrMaxSimTime) // due within the window but past the limit
			}
			return nil
		}
	}
}

// RunUntil runs until cond returns true, checking it before every step, for at most budget of
// simulated time; when the budget runs out the clock stands at its end. It replaces polling with real time (Gomega's Eventually): the error says why
// it stopped (ErrBudget, ErrIdle or a limit) with the sim time, step count and seed. A nil cond
// or a negative budget is an error.
func (s *Sim) RunUntil(cond func() bool, budget time.Duration) error {
	switch {
	case cond == nil:
		return errors.New("sim: RunUntil: nil condition")
	case budget < 0:
		return fmt.Errorf("sim: RunUntil: negative budget %v", budget)
	}
	start, startStep := s.now, s.step
	end := min(s.now+budget, s.cfg.MaxSimTime)
	for !cond() {
		ran, err := s.stepUntil(end)
		if err != nil {
			return err
		}
		if ran {
			continue
		}
		return s.stopped(s.stopWhy(start, budget, end), budget, start, startStep)
	}
	return nil
}

// StepWithin runs one step if one is enabled now or becomes enabled within budget of simulated
// time, and reports whether it ran: what RunUntil does with a condition that holds once a step
// has run, without making the error that says why nothing ran. A host that steps one at a time
// and finds nothing due at most of its calls (clientgo's driver) made one error at each.
// When nothing ran and a timer is pending, the clock stands at the budget's end, as after
// RunUntil's ErrBudget; when no timer is pending at all (RunUntil's ErrIdle) it stays where it
// was; both are (false, nil). A budget whose end lies past Config.MaxSimTime, with nothing due
// by that limit, is RunUntil's ErrMaxSimTime error; a failed step or a step limit is its error
// too. A negative budget is an error.
func (s *Sim) StepWithin(budget time.Duration) (bool, error) {
	if budget < 0 {
		return false, fmt.Errorf("sim: StepWithin: negative budget %v", budget)
	}
	start, startStep := s.now, s.step
	end := min(s.now+budget, s.cfg.MaxSimTime)
	ran, err := s.stepUntil(end)
	if ran || err != nil {
		return ran, err
	}
	if why := s.stopWhy(start, budget, end); why == ErrMaxSimTime {
		return false, s.stopped(why, budget, start, startStep)
	}
	return false, nil
}

// stopWhy is why a run from start with budget stops when nothing is due by end (its budget's
// end, or Config.MaxSimTime if earlier): ErrIdle when no timer is pending, ErrMaxSimTime when
// the limit cut the budget short, else ErrBudget, and the clock moves to end (the budget
// passed, as with RunFor, so a retry continues from there).
func (s *Sim) stopWhy(start, budget, end time.Duration) error {
	switch {
	case len(s.timers) == 0:
		return ErrIdle
	case end < start+budget:
		return ErrMaxSimTime
	}
	s.setNow(end)
	return ErrBudget
}

// stopped is the error of a run stopped for why, started at start and step startStep: why
// (ErrBudget, ErrIdle, ErrMaxSimTime, for errors.Is) with where the run stopped.
func (s *Sim) stopped(why error, budget, start time.Duration, startStep int64) error {
	return fmt.Errorf("%w: budget %v from %s, stopped at sim time %s after %d steps (%d in this call); seed %d; %s",
		why, budget, FormatSimTime(start), FormatSimTime(s.now), s.step, s.step-startStep, s.cfg.Seed, s.cfg.Repro)
}
