package sim

import (
	"errors"
	"testing"
	"time"
)

// Goal: RunFor(d) runs what is due at exactly the end time (its doc: "up to and including"),
// and a run that ends stands at the end time.
func TestRunForRunsWhatIsDueAtTheEnd(t *testing.T) {
	s := mustNew(t, Config{Seed: 1})
	fired := 0
	s.AfterFunc(time.Second, "t", "at-one-second", func() { fired++ })
	// One armed during the run, by a timer half-way, for the end time too.
	s.AfterFunc(time.Second/2, "t", "half-way", func() { s.AfterFunc(time.Second/2, "t", "armed-for-the-end", func() { fired++ }) })
	if err := s.RunFor(time.Second); err != nil {
		t.Fatal(err)
	}
	if fired != 2 || s.Now() != time.Second {
		t.Errorf("after RunFor(1s): the timers due at 1s fired %d times, now %v; want twice, at 1s", fired, s.Now())
	}
}

// Goal: RunUntil never runs past Config.MaxSimTime, whatever its budget, and says the limit
// stopped it (ErrMaxSimTime), not the budget.
func TestRunUntilStopsAtMaxSimTime(t *testing.T) {
	s := mustNew(t, Config{Seed: 1, MaxSimTime: 10 * time.Second})
	s.Clock().NewTicker(time.Second)
	err := s.RunUntil(func() bool { return false }, time.Hour)
	if !errors.Is(err, ErrMaxSimTime) || errors.Is(err, ErrBudget) {
		t.Errorf("RunUntil with a budget past the limit = %v, want ErrMaxSimTime", err)
	}
	if s.Now() > 10*time.Second {
		t.Errorf("the run went to %v, past the 10s limit", s.Now())
	}
}
