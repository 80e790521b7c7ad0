package informer

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/wait"
	testingclock "k8s.io/utils/clock/testing"
)

// informer.md §7.1: the default sequence is 800ms·2^n jittered to [d, 2d): [0.8,1.6), [1.6,3.2),
// [3.2,6.4), [6.4,12.8), [12.8,25.6), [25.6,51.2), then [30,60) forever.
func TestBackoffDefaultSequence(t *testing.T) {
	clk := testingclock.NewFakeClock(reflEpoch)
	d := newBackoffDelay(defaultReflectorBackoff(), defaultBackoffReset, clk, rand.New(rand.NewPCG(7, 7)))
	base := []time.Duration{800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond,
		6400 * time.Millisecond, 12800 * time.Millisecond, 25600 * time.Millisecond}
	for range 10 {
		base = append(base, 30*time.Second)
	}
	for i, lo := range base {
		// Time stands still, so no reset can happen.
		if got := d.Next(); got < lo || got >= 2*lo {
			t.Errorf("delay %d: got %v, want in [%v, %v)", i, got, lo, 2*lo)
		}
	}
}

// informer.md §7.1 (v0.36+): the sequence restarts when more than 2 minutes have passed since the
// previous reset, however recently the last backoff happened.
func TestBackoffResetAfterTwoMinutesSinceLastReset(t *testing.T) {
	clk := testingclock.NewFakeClock(reflEpoch)
	d := newBackoffDelay(defaultReflectorBackoff(), defaultBackoffReset, clk, rand.New(rand.NewPCG(7, 7)))
	// Back off every 40s: 3 delays fit in the first 2 minutes (t=0, 40s, 80s), then at t=120s
	// exactly nothing resets (the rule is "more than"), and at t=160s the sequence restarts.
	var lows []time.Duration
	for range 6 {
		got := d.Next()
		lows = append(lows, reflBackoffFloor(got))
		clk.SetTime(clk.Now().Add(40 * time.Second))
	}
	want := []time.Duration{800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond,
		6400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond}
	if diff := cmp.Diff(want, lows); diff != "" {
		t.Errorf("delay floors (-want +got):\n%s", diff)
	}
}

// reflBackoffFloor maps a default-sequence delay to the base it was jittered from (each step's
// range [d, 2d) is disjoint from the next one's below the cap).
func reflBackoffFloor(got time.Duration) time.Duration {
	for d := 800 * time.Millisecond; ; d *= 2 {
		if got < 2*d {
			return d
		}
	}
}

// informer.md §12.3 TestNewReflectorWithCustomBackoff, §7.1: ReflectorOptions.Backoff replaces
// the parameters; without jitter the delays are exact; Factor 0 means a constant delay.
func TestBackoffCustom(t *testing.T) {
	clk := testingclock.NewFakeClock(reflEpoch)
	r := rand.New(rand.NewPCG(1, 1))
	d := newBackoffDelay(wait.Backoff{Duration: time.Second, Factor: 3, Steps: 10, Cap: 20 * time.Second},
		defaultBackoffReset, clk, r)
	var got []time.Duration
	for range 5 {
		got = append(got, d.Next())
	}
	want := []time.Duration{time.Second, 3 * time.Second, 9 * time.Second, 20 * time.Second, 20 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("delays (-want +got):\n%s", diff)
	}

	d = newBackoffDelay(wait.Backoff{Duration: 2 * time.Second}, defaultBackoffReset, clk, r)
	for i := range 3 {
		if got := d.Next(); got != 2*time.Second {
			t.Errorf("constant delay %d: got %v, want 2s", i, got)
		}
	}

	// Through the Reflector: the custom delay governs the wait after a failed pass.
	h := newReflHarness(t, func(o *ReflectorOptions) { o.Backoff = &wait.Backoff{Duration: 5 * time.Second} })
	h.r.Start()
	h.next(RequestList)
	h.r.ListDone(nil, reflErrNotReachable)
	if got := h.fireDeadline(); got != 5*time.Second {
		t.Errorf("Reflector backoff with custom parameters: got %v, want 5s", got)
	}
}

// reflErrNotReachable is a LIST error that is neither 410 nor "too large".
var reflErrNotReachable = reflConnRefused()
