package controlplane

import (
	"context"
	"errors"
	"time"

	"k8s.io/utils/clock"
)

// maxStepsPerRound bounds the steps Run takes before it looks at its context again.
const maxStepsPerRound = 1000

// Run drives the components with a goroutine's loop on clk (the fake apiserver's clock, in
// `informersim serve` the real one) until ctx is done, then returns nil. It steps every pending
// component, then sleeps until the next timer, a change of the server's state, or poll at the
// latest. This is the only file of the package that blocks: the components themselves are
// step-driven, and a simulation drives them from its engine instead.
func Run(ctx context.Context, cp *ControlPlane, clk clock.WithTicker, poll time.Duration) error {
	if cp == nil || clk == nil {
		return errors.New("controlplane: Run needs a control plane and a clock")
	}
	if poll <= 0 {
		return errors.New("controlplane: Run needs a positive poll interval")
	}
	wake := make(chan struct{}, 1)
	cp.GC.srv.OnStateChange(func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	for {
		now := clk.Now()
		for i := 0; i < maxStepsPerRound; i++ {
			stepped := false
			for _, c := range cp.Components() {
				if c.Pending(now) {
					if _, err := c.Step(ctx, now); err != nil {
						return err
					}
					stepped = true
				}
			}
			if !stepped {
				break
			}
			now = clk.Now()
		}
		wait := poll
		for _, c := range cp.Components() {
			if c.Pending(now) {
				continue // stepped maxStepsPerRound times: look again after the poll
			}
			if at, ok := c.NextTimer(); ok {
				if d := at.Sub(now); d < wait {
					wait = max(d, time.Millisecond)
				}
			}
		}
		t := clk.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-wake:
		case <-t.C():
		}
		t.Stop()
	}
}
