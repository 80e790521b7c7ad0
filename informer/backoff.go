package informer

import (
	"math"
	"math/rand/v2"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
)

// The Reflector's backoff parameters (informer.md §7.1): 800ms doubling to a 30s cap, each delay
// jittered to [d, 2d), the whole sequence reset when more than 2 minutes have passed since the
// previous reset.
const (
	defaultBackoffInit   = 800 * time.Millisecond
	defaultBackoffMax    = 30 * time.Second
	defaultBackoffFactor = 2.0
	defaultBackoffJitter = 1.0
	defaultBackoffReset  = 2 * time.Minute
)

// defaultReflectorBackoff returns the wait.Backoff client-go's reflector builds when
// ReflectorOptions.Backoff is nil (informer.md §7.1). Steps = ceil(30s/800ms) = 38, so the cap,
// not the step count, is what ends the growth.
func defaultReflectorBackoff() wait.Backoff {
	return wait.Backoff{
		Duration: defaultBackoffInit,
		Cap:      defaultBackoffMax,
		Steps:    int(math.Ceil(float64(defaultBackoffMax) / float64(defaultBackoffInit))),
		Factor:   defaultBackoffFactor,
		Jitter:   defaultBackoffJitter,
	}
}

// backoffDelay is the Reflector's one delay function, shared by the wait between ListAndWatch
// passes and the in-pass waits before a re-watch (informer.md §7.1: "one delay function is
// shared"). It reproduces wait.Backoff.DelayWithReset (apimachinery v0.37) step for step, with
// two differences that determinism needs: the jitter is drawn from the injected rand instead of
// apimachinery's global source, and time is read from the injected clock only.
//
// It is a plain value with no lock: the Reflector that owns it is driven by one caller at a time.
type backoffDelay struct {
	clock clock.PassiveClock
	rng   *rand.Rand

	initial wait.Backoff // the parameters a reset restores
	current wait.Backoff // Duration and Steps advance with each Next

	// resetInterval > 0 enables the reset; it is 0 when the parameters disable growth
	// (Factor <= 0), in which case every delay is Duration, jittered.
	resetInterval time.Duration
	lastReset     time.Time
}

// newBackoffDelay builds the delay function for b. As in DelayWithReset, a non-positive Factor
// turns the reset logic off: the sequence is then whatever the plain DelayFunc would give.
func newBackoffDelay(b wait.Backoff, resetInterval time.Duration, c clock.PassiveClock, r *rand.Rand) *backoffDelay {
	d := &backoffDelay{clock: c, rng: r, initial: b, current: b, lastReset: c.Now()}
	if b.Factor > 0 {
		d.resetInterval = resetInterval
	}
	return d
}

// Next returns the next delay to wait and advances the sequence.
func (d *backoffDelay) Next() time.Duration {
	if d.resetInterval > 0 {
		// informer.md §7.1 (v0.36+): reset when more than resetInterval has passed since the
		// previous reset, not since the previous backoff.
		now := d.clock.Now()
		if now.Sub(d.lastReset) > d.resetInterval {
			d.current = d.initial
			d.lastReset = now
		}
	}
	return d.step()
}

// step is wait.Backoff.Step with the injected rand: the current duration, jittered, is returned;
// the next duration is the current one times Factor, capped (reaching the cap ends the growth).
func (d *backoffDelay) step() time.Duration {
	b := &d.current
	if b.Steps < 1 {
		return d.jitter(b.Duration)
	}
	b.Steps--
	out := b.Duration
	if b.Factor != 0 {
		next := time.Duration(float64(b.Duration) * b.Factor)
		if b.Cap > 0 && next > b.Cap {
			next = b.Cap
			b.Steps = 0
		}
		b.Duration = next
	}
	return d.jitter(out)
}

// jitter returns duration + rand·Jitter·duration, i.e. [d, 2d) with the default Jitter 1.0.
func (d *backoffDelay) jitter(duration time.Duration) time.Duration {
	if d.current.Jitter <= 0 {
		return duration
	}
	return duration + time.Duration(d.rng.Float64()*d.current.Jitter*float64(duration))
}
