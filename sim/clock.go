package sim

import (
	"container/heap"
	"time"

	"k8s.io/utils/clock"

	"github.com/informersim/informersim/internal/invariant"
)

// Epoch returns simulated time zero, the instant every run starts at (the epoch
// testing/synctest uses, 2000-01-01T00:00:00Z). Trace times are offsets from it. It is a
// function, not a variable, so no caller can move it.
func Epoch() time.Time { return epoch }

var epoch = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)

// Timer is one pending deadline of the engine: a clock timer or ticker, or a callback scheduled
// with Sim.AfterFunc. It implements clock.Timer. Timers are only used from the goroutine that
// drives the Sim.
type Timer struct {
	s        *Sim
	deadline time.Duration // since Epoch
	seq      uint64        // creation (or reset) order: breaks ties between equal deadlines
	index    int           // position in s.timers, or -1 when not in the heap
	due      bool          // in s.due: deadline reached, waiting for the policy to fire it
	dueStep  int64         // the step count when it became due (PolicyFIFO age)
	actor    string
	actorID  int
	kind     string
	period   time.Duration // > 0 for tickers: re-armed at deadline+period after each fire
	ch       chan time.Time
	fn       func()
}

// C returns the timer's channel: buffered 1 and sent to without blocking, so while a tick sits
// unread later ticks are dropped and a slow reader gets at most one pending tick, as with
// time.Ticker. Nil for timers that run a function.
func (t *Timer) C() <-chan time.Time { return t.ch }

// Stop removes the timer's deadline from the engine (also for tickers, unlike FakeClock) and
// reports whether it was pending.
func (t *Timer) Stop() bool {
	if t.index >= 0 {
		heap.Remove(&t.s.timers, t.index)
		return true
	}
	if t.due {
		t.s.removeDue(t)
		return true
	}
	return false
}

// Reset moves the timer's deadline to d from now and reports whether it was pending. A reset
// timer orders after every timer created before the reset, among equal deadlines.
func (t *Timer) Reset(d time.Duration) bool {
	was := t.Stop()
	t.s.arm(t, d)
	return was
}

// Armed reports whether the timer will still fire: its deadline is in the engine's heap or due
// now. A fired one-shot timer, and a stopped timer, is not armed.
func (t *Timer) Armed() bool { return t.index >= 0 || t.due }

// Deadline returns the simulated time (since Epoch) at which the timer fires next.
func (t *Timer) Deadline() time.Duration { return t.deadline }

// timerHeap orders pending timers by (deadline, seq): the earliest first, and among equal
// deadlines the one created first. container/heap keeps index current through Swap.
type timerHeap []*Timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].deadline != h[j].deadline {
		return h[i].deadline < h[j].deadline
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*Timer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}

// arm schedules a stopped timer d from now. A deadline that has already come is due at once:
// it joins the end of the due list, which stays sorted by (deadline, seq) because time never
// moves while the list is non-empty and seq grows.
func (s *Sim) arm(t *Timer, d time.Duration) {
	invariant.Check(t.index < 0 && !t.due, "sim: arming a timer that is still pending")
	s.timerSeq++
	t.seq = s.timerSeq
	t.deadline = s.now + max(d, 0)
	if d <= 0 {
		s.makeDue(t)
		return
	}
	heap.Push(&s.timers, t)
}

func (s *Sim) makeDue(t *Timer) {
	t.due = true
	t.dueStep = s.step
	s.due = append(s.due, t)
}

func (s *Sim) removeDue(t *Timer) {
	for i, u := range s.due {
		if u == t {
			s.due = append(s.due[:i], s.due[i+1:]...)
			break
		}
	}
	t.due = false
}

// advance moves the clock to the earliest pending deadline and makes every timer with that
// deadline due, in creation order. One deadline at a time: never FakeClock.Step over several.
func (s *Sim) advance() {
	if !(len(s.due) == 0) { // checked before the call: boxing the arguments would allocate every step
		invariant.Check(false, "sim: time advanced with %d timers due", len(s.due))
	}
	next := s.timers[0].deadline
	s.setNow(next)
	for len(s.timers) > 0 && s.timers[0].deadline == next {
		s.makeDue(heap.Pop(&s.timers).(*Timer))
	}
}

// setNow moves simulated time forward to d since Epoch.
func (s *Sim) setNow(d time.Duration) {
	if !(d >= s.now) { // checked before the call: boxing the arguments would allocate every step
		invariant.Check(false, "sim: time moved backwards from %v to %v", s.now, d)
	}
	if d == s.now {
		return
	}
	s.now = d
	s.nowTime = epoch.Add(d)
}

// fire runs a due timer: sends to its channel without blocking, or calls its function, then
// re-arms a ticker one period after its deadline.
func (s *Sim) fire(t *Timer) {
	s.removeDue(t)
	if !(t.deadline == s.now) { // checked before the call: boxing the arguments would allocate every step
		invariant.Check(false, "sim: timer fired at %v, deadline %v", s.now, t.deadline)
	}
	at := t.deadline
	if t.period > 0 {
		s.timerSeq++
		t.seq = s.timerSeq
		t.deadline += t.period
		heap.Push(&s.timers, t)
	}
	if t.ch != nil {
		// Non-blocking send of the deadline (FakeClock sends the time it stepped to). One case
		// and a default: there is never a choice between ready cases.
		select {
		case t.ch <- epoch.Add(at):
		default:
		}
	}
	if t.fn != nil {
		t.fn()
	}
}

// AfterFunc schedules fn to run d from now as its own step, traced as (actor, kind). fn runs
// outside any lock and may use the clock, schedule more timers or stop this one. This is how
// network latency and other delayed work enter the simulation.
func (s *Sim) AfterFunc(d time.Duration, actor, kind string, fn func()) *Timer {
	invariant.Check(fn != nil, "sim: AfterFunc needs a function")
	t := &Timer{s: s, index: -1, actor: actor, actorID: s.actorID(actor), kind: kind, fn: fn}
	s.arm(t, d)
	return t
}

// PendingTimers returns how many deadlines the engine holds (armed in the heap or due now).
func (s *Sim) PendingTimers() int { return len(s.timers) + len(s.due) }

// NextDeadline returns the earliest pending deadline (since Epoch), and false if none.
func (s *Sim) NextDeadline() (time.Duration, bool) {
	if len(s.due) > 0 {
		return s.due[0].deadline, true
	}
	if len(s.timers) > 0 {
		return s.timers[0].deadline, true
	}
	return 0, false
}

// Clock is the simulated clock: a clock.WithTickerAndDelayedExecution whose timers are engine
// deadlines fired one step at a time. Timers made through a Clock appear in the trace under its
// actor name. Only the goroutine driving the Sim may use it.
type Clock struct {
	s     *Sim
	actor string
}

var _ clock.WithTickerAndDelayedExecution = (*Clock)(nil)

// Now returns the simulated time: Epoch plus the engine's time.
// The components of a world ask it at every step, some several times: it is made once per
// instant (Sim.setNow).
func (c *Clock) Now() time.Time { return c.s.nowTime }

// Since returns the simulated time elapsed since t.
func (c *Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// After returns a channel that receives the deadline time d from now.
func (c *Clock) After(d time.Duration) <-chan time.Time { return c.NewTimer(d).C() }

// NewTimer returns a timer whose channel receives the deadline time d from now.
func (c *Clock) NewTimer(d time.Duration) clock.Timer {
	t := c.s.newTimerCh(d, c.actor, "timer", 0)
	return t
}

// AfterFunc runs f d from now as an engine step, outside any lock (FakeClock would call it with
// its lock held). f may call the clock.
func (c *Clock) AfterFunc(d time.Duration, f func()) clock.Timer {
	return c.s.AfterFunc(d, c.actor, "afterfunc", f)
}

// Tick is NewTicker(d).C(); the ticker cannot be stopped.
func (c *Clock) Tick(d time.Duration) <-chan time.Time { return c.NewTicker(d).C() }

// NewTicker returns a ticker firing every d; d must be positive (as time.NewTicker requires).
// Its Stop removes its deadline from the engine.
func (c *Clock) NewTicker(d time.Duration) clock.Ticker {
	invariant.Check(d > 0, "sim: NewTicker needs a positive period, got %v", d)
	return ticker{c.s.newTimerCh(d, c.actor, "tick", d)}
}

// Sleep panics: the simulation runs on one goroutine, so sleeping would block the only thing
// that can move time. Schedule the rest of the work with AfterFunc, or wait for a timer's
// channel from an actor's Actions.
func (c *Clock) Sleep(d time.Duration) {
	invariant.Check(false, "sim: Clock.Sleep(%v) would block the only goroutine; use AfterFunc or a timer channel polled from Actions", d)
}

func (s *Sim) newTimerCh(d time.Duration, actor, kind string, period time.Duration) *Timer {
	t := &Timer{s: s, index: -1, actor: actor, actorID: s.actorID(actor), kind: kind,
		period: period, ch: make(chan time.Time, 1)}
	s.arm(t, d)
	return t
}

// ticker adapts a periodic Timer to clock.Ticker, whose Stop returns nothing.
type ticker struct{ t *Timer }

func (t ticker) C() <-chan time.Time { return t.t.ch }
func (t ticker) Stop()               { t.t.Stop() }

// Clock returns the simulated clock; its timers are traced under actor "clock".
func (s *Sim) Clock() *Clock { return &Clock{s: s, actor: "clock"} }

// ClockFor returns the simulated clock with its timers traced under actor, so a trace shows whose
// timer fired.
func (s *Sim) ClockFor(actor string) *Clock { return &Clock{s: s, actor: actor} }

// Owner returns the Sim whose engine the clock belongs to, so a host can check that a
// component runs on its simulation's time.
func (c *Clock) Owner() *Sim { return c.s }

// Now returns simulated time since Epoch.
func (s *Sim) Now() time.Duration { return s.now }
