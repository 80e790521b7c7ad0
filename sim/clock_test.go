package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/informersim/informersim/internal/invariant"
)

func mustNew(t testing.TB, cfg Config) *Sim {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v) = %v", cfg, err)
	}
	return s
}

type fired struct {
	deadline time.Duration
	id       int
}

// Goal: timers fire in (deadline, creation) order however the run is stepped. Method: create 300
// timers with random deadlines drawn from a small range (so many tie), then run the same set
// three ways (single steps, RunFor in uneven chunks, RunUntilQuiescent) and compare each firing
// order with the sorted order.
func TestTimersFireInDeadlineOrder(t *testing.T) {
	setup := func() (*Sim, *[]fired, []fired) {
		s := mustNew(t, Config{Seed: 7})
		r := rand.New(rand.NewPCG(1, 2))
		var got []fired
		var want []fired
		for i := range 300 {
			d := time.Duration(r.IntN(50)) * time.Millisecond // includes 0: due at once
			want = append(want, fired{d, i})
			s.AfterFunc(d, "t", "fire", func() { got = append(got, fired{s.Now(), i}) })
		}
		slices.SortStableFunc(want, func(a, b fired) int { return int(a.deadline - b.deadline) })
		return s, &got, want
	}
	// FIFO fires due timers in deadline order too; random picks among due timers, so the
	// order-by-deadline claim is about the instants at which timers fire, checked below.
	runs := map[string]func(*Sim) error{
		"steps": func(s *Sim) error {
			for {
				ok, err := s.Step()
				if err != nil || !ok {
					return err
				}
			}
		},
		"runfor": func(s *Sim) error {
			for range 40 {
				if err := s.RunFor(1700 * time.Microsecond); err != nil {
					return err
				}
			}
			return nil
		},
		"quiescent": func(s *Sim) error { return s.RunUntilQuiescent() },
	}
	for _, name := range []string{"steps", "runfor", "quiescent"} {
		s, got, want := setup()
		s.cfg.Policy = PolicyFIFO
		if err := runs[name](s); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(want, *got, cmp.AllowUnexported(fired{})); diff != "" {
			t.Errorf("%s: firing order (-want +got):\n%s", name, diff)
		}
	}
	// With the random policy timers due at the same instant may fire in any order, but never
	// before an earlier deadline.
	s, got, _ := setup()
	if err := s.RunUntilQuiescent(); err != nil {
		t.Fatal(err)
	}
	if !slices.IsSortedFunc(*got, func(a, b fired) int { return int(a.deadline - b.deadline) }) {
		t.Errorf("random policy fired out of deadline order: %v", *got)
	}
}

// Goal: show FakeClock trap (a) and that the engine avoids it. FakeClock.Step fires every due
// waiter in registration order and sends the new time; the engine fires in deadline order and
// each timer's channel receives its own deadline.
func TestFakeClockTrapStepOrder(t *testing.T) {
	fc := clocktesting.NewFakeClock(Epoch())
	var upstream []string
	fc.AfterFunc(2*time.Second, func() { upstream = append(upstream, "late") })
	fc.AfterFunc(1*time.Second, func() { upstream = append(upstream, "early") })
	ch := fc.After(1 * time.Second)
	fc.Step(3 * time.Second)
	if diff := cmp.Diff([]string{"late", "early"}, upstream); diff != "" {
		t.Fatalf("FakeClock no longer fires in registration order; update doc.go (-want +got):\n%s", diff)
	}
	if got := (<-ch).Sub(Epoch()); got != 3*time.Second {
		t.Fatalf("FakeClock sent %v, documented as the stepped-to time 3s", got)
	}

	s := mustNew(t, Config{Seed: 1})
	c := s.Clock()
	var ours []string
	c.AfterFunc(2*time.Second, func() { ours = append(ours, "late") })
	c.AfterFunc(1*time.Second, func() { ours = append(ours, "early") })
	tc := c.After(1 * time.Second)
	if err := s.RunFor(3 * time.Second); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"early", "late"}, ours); diff != "" {
		t.Errorf("engine firing order (-want +got):\n%s", diff)
	}
	if got := (<-tc).Sub(Epoch()); got != time.Second {
		t.Errorf("timer channel got %v, want its deadline 1s", got)
	}
}

// Goal: trap (b). FakeClock runs AfterFunc callbacks with its lock held, so a callback that
// calls the clock deadlocks. The engine runs callbacks as steps; this callback reads the clock,
// schedules a timer, stops another and resets itself, and all of it works.
func TestAfterFuncMayCallClock(t *testing.T) {
	s := mustNew(t, Config{Seed: 1})
	c := s.Clock()
	var log []string
	other := c.NewTimer(5 * time.Second)
	var self interface{ Reset(time.Duration) bool }
	n := 0
	self = c.AfterFunc(time.Second, func() {
		n++
		log = append(log, "at "+FormatSimTime(c.Since(Epoch())))
		if n == 1 {
			if !other.Stop() {
				t.Errorf("Stop of a pending timer = false, want true")
			}
			c.AfterFunc(500*time.Millisecond, func() { log = append(log, "child at "+FormatSimTime(s.Now())) })
			self.Reset(2 * time.Second)
		}
	})
	if err := s.RunUntilQuiescent(); err != nil {
		t.Fatal(err)
	}
	want := []string{"at +1.000s", "child at +1.500s", "at +3.000s"}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("callback log (-want +got):\n%s", diff)
	}
	if len(other.C()) != 0 {
		t.Errorf("stopped timer delivered a value")
	}
}

// Goal: trap (c). fakeTicker.Stop is a no-op (the waiter stays); the engine's ticker Stop removes
// its deadline, so a stopped ticker neither fires nor keeps the run from going quiescent.
func TestTickerStopRemovesDeadline(t *testing.T) {
	fc := clocktesting.NewFakeClock(Epoch())
	ft := fc.NewTicker(time.Second)
	ft.Stop()
	if got := fc.Waiters(); got != 1 {
		t.Fatalf("FakeClock waiters after ticker Stop = %d, documented as 1 (Stop is a no-op)", got)
	}

	s := mustNew(t, Config{Seed: 1})
	tk := s.Clock().NewTicker(time.Second)
	if got := s.PendingTimers(); got != 1 {
		t.Fatalf("Pending() = %d after NewTicker, want 1", got)
	}
	tk.Stop()
	if got := s.PendingTimers(); got != 0 {
		t.Errorf("Pending() = %d after ticker Stop, want 0", got)
	}
	if err := s.RunFor(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if got := len(tk.C()); got != 0 {
		t.Errorf("stopped ticker has %d ticks, want 0", got)
	}
}

// Goal: a ticker nobody reads keeps at most one pending tick (the first), like time.Ticker.
func TestTickerDropsMissedTicks(t *testing.T) {
	s := mustNew(t, Config{Seed: 1})
	tk := s.Clock().NewTicker(time.Second)
	if err := s.RunFor(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if got := len(tk.C()); got != 1 {
		t.Fatalf("pending ticks = %d, want 1", got)
	}
	if got := (<-tk.C()).Sub(Epoch()); got != time.Second {
		t.Errorf("pending tick = %v, want the first one at 1s", got)
	}
	if got, want := s.StepCount(), int64(5); got != want {
		t.Errorf("steps = %d, want %d (one per tick, delivered or dropped)", got, want)
	}
}

// Goal: Sleep would block the only goroutine, so it panics with the rule; inside an action the
// panic becomes a RunError.
func TestSleepPanics(t *testing.T) {
	s := mustNew(t, Config{Seed: 3})
	func() {
		defer func() {
			v, ok := recover().(invariant.Violation)
			if !ok || !strings.Contains(v.Message, "would block the only goroutine") {
				t.Errorf("Sleep outside a run panicked with %v, want an invariant.Violation naming the rule", v)
			}
		}()
		s.Clock().Sleep(time.Second)
	}()
	s.AfterFunc(time.Second, "sleeper", "nap", func() { s.Clock().Sleep(time.Second) })
	err := s.RunFor(2 * time.Second)
	var re *RunError
	if !errors.As(err, &re) {
		t.Fatalf("RunFor = %v, want a *RunError", err)
	}
	var v invariant.Violation
	if !errors.As(err, &v) {
		t.Errorf("RunError does not unwrap to the invariant.Violation: %v", err)
	}
}

// TestClockNowIsEpochPlusNow: the time the clock keeps per instant is the engine's, at every
// step and after every way the engine moves its clock (a due timer, RunFor, RunUntil's budget).
func TestClockNowIsEpochPlusNow(t *testing.T) {
	s := timerWorld(t, 5)
	c := s.Clock()
	check := func(when string) {
		t.Helper()
		if got, want := c.Now(), Epoch().Add(s.Now()); !got.Equal(want) || got != want {
			t.Fatalf("%s: Clock.Now() = %v, want Epoch()+%v = %v", when, got, s.Now(), want)
		}
	}
	check("at the start")
	for i := 0; ; i++ {
		ran, err := s.StepWithin(700 * time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("after call %d", i))
		if !ran && s.PendingTimers() == 0 {
			break
		}
	}
	if err := s.RunFor(1500 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	check("after RunFor")
	_ = s.RunUntil(func() bool { return false }, 2*time.Second)
	check("after RunUntil's budget")
}
