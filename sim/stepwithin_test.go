package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// stepOnce is what StepWithin stands for: RunUntil with a condition that holds once a step ran.
func stepOnce(s *Sim, budget time.Duration) (bool, error) {
	before := s.StepCount()
	err := s.RunUntil(func() bool { return s.StepCount() > before }, budget)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrBudget), errors.Is(err, ErrIdle):
		return false, nil
	}
	return false, err
}

// timerWorld is a sim whose timers, drawn from seed, arm more timers when they fire, some past
// MaxSimTime, and whose ticker stops; built twice from one seed, the two are the same run.
func timerWorld(t *testing.T, seed uint64) *Sim {
	s := mustNew(t, Config{Seed: seed, MaxSimTime: 20 * time.Second, MaxSteps: 400})
	r := rand.New(rand.NewPCG(seed, 1))
	var arm func(depth int)
	arm = func(depth int) {
		d := time.Duration(r.IntN(4000)) * time.Millisecond
		s.AfterFunc(d, "timers", fmt.Sprintf("t%d", depth), func() {
			if depth < 6 {
				for range r.IntN(3) {
					arm(depth + 1)
				}
			}
		})
	}
	for range 1 + r.IntN(4) {
		arm(0)
	}
	return s
}

// TestStepWithinIsRunUntilOfOneStep drives two sims of one seed, one by StepWithin, the other by
// RunUntil with a one-step condition, with the same budgets (zero, short, long, past the
// limit): at every call both report the same, and stand at the same time, step and trace.
func TestStepWithinIsRunUntilOfOneStep(t *testing.T) {
	outcomes := map[string]int{}
	for seed := range uint64(200) {
		a, b := timerWorld(t, seed), timerWorld(t, seed)
		r := rand.New(rand.NewPCG(seed, 2))
		for call := 0; ; call++ {
			budget := []time.Duration{0, time.Duration(r.IntN(500)) * time.Millisecond, time.Duration(r.IntN(8)) * time.Second, 30 * time.Second}[r.IntN(4)]
			ranA, errA := a.StepWithin(budget)
			ranB, errB := stepOnce(b, budget)
			if ranA != ranB || fmt.Sprint(errA) != fmt.Sprint(errB) || a.Now() != b.Now() || a.StepCount() != b.StepCount() || a.Trace().Hash() != b.Trace().Hash() {
				t.Fatalf("seed %d call %d, budget %v: StepWithin = %v, %v at %v step %d; RunUntil of one step = %v, %v at %v step %d",
					seed, call, budget, ranA, errA, a.Now(), a.StepCount(), ranB, errB, b.Now(), b.StepCount())
			}
			switch {
			case errA != nil:
				outcomes[fmt.Sprint(errors.Is(errA, ErrMaxSimTime), errors.Is(errA, ErrMaxSteps))]++
			case ranA:
				outcomes["ran"]++
			case a.PendingTimers() == 0:
				outcomes["idle"]++
			default:
				outcomes["budget"]++
			}
			if errA != nil || (!ranA && a.PendingTimers() == 0) {
				break
			}
		}
	}
	// Every way a call can end was taken (the limits: "true false" is MaxSimTime).
	for _, k := range []string{"ran", "idle", "budget", "true false"} {
		if outcomes[k] == 0 {
			t.Errorf("no call ended %q: %v", k, outcomes)
		}
	}
	if _, err := mustNew(t, Config{}).StepWithin(-time.Second); err == nil {
		t.Error("StepWithin(-1s): no error")
	}
}

// TestStepWithinNothingDueAllocatesNothing: a call that finds nothing due makes no error.
func TestStepWithinNothingDueAllocatesNothing(t *testing.T) {
	s := mustNew(t, Config{})
	s.AfterFunc(time.Hour, "timers", "late", func() {})
	if n := testing.AllocsPerRun(100, func() {
		if ran, err := s.StepWithin(time.Millisecond); ran || err != nil {
			t.Fatalf("StepWithin = %v, %v", ran, err)
		}
	}); n != 0 {
		t.Errorf("%v allocations a call, want 0", n)
	}
}
