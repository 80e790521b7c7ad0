package clientgo

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/informersim/informersim/clientgo/internal/crhooks"
	"github.com/informersim/informersim/clientgo/internal/introspect"
	"github.com/informersim/informersim/sim"
)

// What envtest cannot see: how often the controller's reconciles of one object failed or asked
// to be requeued. A controller that returns an error for an object that will never change (a
// NotFound for a deleted object, returned instead of nil) converges in every other respect: its
// writes are right, the world becomes quiet, and its only symptom is a key retried forever with
// a growing backoff. The harness counts each key's outcomes, from two sources:
//
//   - controller-runtime: the reconciler's outcome as the controller logs it, through
//     controller-runtime's root logger (pkg/log.Log, which a manager uses unless
//     Options.Logger is set): "Reconciler error" with the error, "Reconcile done, requeueing"
//     (Result.Requeue or RequeueAfter) and "Reconcile successful", each with the controller's
//     name and the request's namespace and name. Package clientgo/controllerruntime installs
//     the logger that tells the harness (crhooks.Reconciled); the lines still reach the
//     logger the controller's main sets.
//   - client-go: the errors a workqueue controller hands utilruntime.HandleErrorWithContext
//     with the object's key under "objectReference", "key", "object", "objectName" or "item",
//     as sample-controller does before AddRateLimited. client-go's queue tells nobody of a
//     success (Forget), so a client-go key's failures count as in a row while they keep the
//     rhythm of the queue's per-item exponential backoff (each gap 1.2 to 3 times the one
//     before: backoffRhythm); a failure out of that rhythm (a success came between and the
//     backoff started again, or an event re-added the key early) starts a new streak, and so
//     does a write of the controller that succeeded on the key's own object (a status written:
//     the sync got past its failure). An error handed over without a key
//     (utilruntime.HandleError(err)) is not counted.
//
// A hot loop is a key whose last HotLoop.Failures outcomes or more were failures in a row when
// the run ended, after the faults stopped and the world converged and settled, and whose next
// retry, waited for (at most the default backoff's cap, 1000 s, after its last failure), failed
// again. A count alone does not tell: with the backoff doubling, a key
// failing on a cache stale for 40 s fails 12 times in a row, one failing forever 14 times in two
// minutes; what tells is that the second never stops. A client-go key, whose successes are not
// seen, also needs a failure after the faults stopped.
// It fails the run with the hot-loop oracle's violation (the key, the count,
// the last error, the seed and the replay line) unless HotLoop.Allow is set; it is in
// Report.Reconciles.HotLoops either way.

// crWorkerFrame is a frame of a controller-runtime controller's workers.
const crWorkerFrame = "sigs.k8s.io/controller-runtime/pkg/internal/controller.(*Controller["

// OracleHotLoop names the hot loop's violations.
const OracleHotLoop = "hot-loop"

// DefaultHotLoopFailures is HotLoop.Failures when zero: with client-go's and controller-runtime's
// default backoff (5 ms doubling), ten failures in a row take five seconds.
const DefaultHotLoopFailures = 10

// HotLoop configures the hot-loop check.
type HotLoop struct {
	// Failures is how many failures of one key in a row, unbroken when the run ends, make a hot
	// loop; zero means DefaultHotLoopFailures. It must not be negative.
	Failures int
	// Allow reports hot loops in Report.Reconciles without failing the run.
	Allow bool
}

// ReconcileReport is what the harness saw of the controller's reconciles.
type ReconcileReport struct {
	// Reconciles counts the outcomes seen (controller-runtime's successes, errors and requeues,
	// client-go's errors); Errors and Requeues those that failed and asked to be requeued.
	Reconciles, Errors, Requeues int
	// Keys are the keys that failed or were requeued at least once, by controller then key.
	Keys []KeyReconciles
	// HotLoops are the keys found in a hot loop (Checks.HotLoop), in the order found.
	HotLoops []KeyReconciles
	// Controllers are the controller-runtime controllers whose outcomes were seen.
	Controllers []string
	// Unobserved says why a controller-runtime controller ran whose outcomes the harness could
	// not see ("" when none): its manager logs to a logger of its own (Options.Logger).
	Unobserved string
}

// KeyReconciles is one key's outcomes.
type KeyReconciles struct {
	// Controller is the controller-runtime controller's name, or "client-go" for a workqueue
	// controller's errors; Key is "namespace/name".
	Controller, Key string
	// Errors and Requeues count the key's failures and requeues (Result.Requeue, RequeueAfter).
	Errors, Requeues int
	// Streak is the failures in a row at the key's last outcome, LongestStreak the longest.
	Streak, LongestStreak int
	// LastError is the last failure's error.
	LastError string
	// LastFailure is when it failed (simulated time).
	LastFailure time.Duration

	failedAfterFaults bool
	lastGap           time.Duration // the last gap between failures in a row
}

// wrote takes a write of the controller that succeeded on the object of a client-go key for
// that key's success: the streak ends (driver only, inside the step that served it). A sync
// that gets as far as writing its own object (a status) has stopped failing on it.
func (r *reconciles) wrote(path string) {
	if r == nil {
		return
	}
	_, ns, name, ok := objectPath(path)
	if !ok || name == "" {
		return
	}
	key := name
	if ns != "" {
		key = ns + "/" + name
	}
	if k := r.keys[[2]string{clientGoController, key}]; k != nil {
		k.Streak, k.lastGap = 0, 0
	}
}

// clientGoController is KeyReconciles.Controller for a client-go workqueue controller's errors.
const clientGoController = "client-go"

// backoffRhythm reports whether a failure gap after a failure gap of prev is the next retry of
// client-go's per-item exponential backoff (workqueue.DefaultTypedControllerRateLimiter: 5 ms
// doubling to 1000 s): about twice the gap before (1.2 to 3 times, for the time the reconcile
// itself takes), or about the same once both are at the cap.
func backoffRhythm(prev, gap time.Duration) bool {
	if prev >= 900*time.Second {
		return gap >= prev*9/10 && gap <= prev*11/10+time.Second
	}
	return gap >= prev*6/5 && gap <= prev*3
}

func (k KeyReconciles) String() string {
	return fmt.Sprintf("%s %s: %d errors (%d in a row), %d requeues, last error: %s", k.Controller, k.Key, k.Errors, k.Streak, k.Requeues, k.LastError)
}

// String summarises the report: "12 reconciles, 3 errors, 0 requeues, no hot loop".
func (r *ReconcileReport) String() string {
	s := fmt.Sprintf("%d reconciles, %d errors, %d requeues", r.Reconciles, r.Errors, r.Requeues)
	switch len(r.HotLoops) {
	case 0:
		s += ", no hot loop"
	default:
		s += fmt.Sprintf(", hot loops: %v", r.HotLoops)
	}
	if r.Unobserved != "" {
		s += " (" + r.Unobserved + ")"
	}
	return s
}

// reconcileOutcome is one outcome as reported, waiting for the driver.
type reconcileOutcome struct {
	controller, key string
	kind            crhooks.Outcome
	err             string
	at              time.Duration
}

// reconciles gathers a run's outcomes: reported from the controller's goroutines, taken by the
// driver at each turn.
type reconciles struct {
	mu      sync.Mutex
	pending []reconcileOutcome
	started map[string]bool // controller-runtime controllers whose workers started

	// Driver only.
	s         *sim.Sim
	cfg       HotLoop
	keys      map[[2]string]*KeyReconciles
	count     ReconcileReport
	faultsEnd time.Duration // when the faults stopped; 0 while they go on
	// convergedAt is when the run had converged and settled, its candidates' retries waited for.
	convergedAt time.Duration
	flagged     map[[2]string]bool
}

func newReconciles(s *sim.Sim, cfg HotLoop) *reconciles {
	if cfg.Failures == 0 {
		cfg.Failures = DefaultHotLoopFailures
	}
	return &reconciles{s: s, cfg: cfg, started: map[string]bool{}, keys: map[[2]string]*KeyReconciles{}, flagged: map[[2]string]bool{}}
}

func (r *reconciles) add(o reconcileOutcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if o.kind == crhooks.Started {
		r.started[o.controller] = true
		return
	}
	r.pending = append(r.pending, o)
}

// The runs whose controllers may report, by their synctest bubble: a report is made on a
// goroutine of the controller, and the bubble it runs in names the run.
var (
	reconcileRunsMu sync.Mutex
	reconcileRuns   = map[string]*reconciles{}
)

// registerReconciles makes the calling goroutine's bubble (the driver's) report to r, until the
// returned function is called.
func registerReconciles(r *reconciles) func() {
	name := introspect.CurrentBubble()
	if name == "" {
		return func() {}
	}
	reconcileRunsMu.Lock()
	reconcileRuns[name] = r
	reconcileRunsMu.Unlock()
	return func() {
		reconcileRunsMu.Lock()
		delete(reconcileRuns, name)
		reconcileRunsMu.Unlock()
	}
}

// noteReconciled is crhooks.Reconciled: an outcome reported by a goroutine of some run.
func noteReconciled(controller, namespace, name string, kind crhooks.Outcome, err error) {
	reconcileRunsMu.Lock()
	n := len(reconcileRuns)
	reconcileRunsMu.Unlock()
	if n == 0 {
		return // no run: a manager outside the harness (and no stack to read)
	}
	bubble := introspect.CurrentBubble()
	reconcileRunsMu.Lock()
	r := reconcileRuns[bubble]
	reconcileRunsMu.Unlock()
	if r == nil {
		return
	}
	o := reconcileOutcome{controller: controller, key: name, kind: kind, at: bubbleNow()}
	if namespace != "" {
		o.key = namespace + "/" + name
	}
	if err != nil {
		o.err = err.Error()
	}
	r.add(o)
}

// keyNames are the names under which a workqueue controller hands utilruntime.HandleError the
// key of the object it failed to sync.
var keyNames = []string{"objectReference", "key", "object", "objectName", "item"}

// noteHandledError counts an error a controller handed utilruntime.HandleErrorWithContext with
// its object's key (see keyNames); others are not a reconcile's.
func noteHandledError(err error, kv []any) {
	if err == nil {
		return
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if k, ok := kv[i].(string); ok && slices.Contains(keyNames, k) {
			noteReconciled(clientGoController, "", fmt.Sprint(kv[i+1]), crhooks.Failed, err)
			return
		}
	}
}

// take turns the outcomes reported since the last turn into counts, in an order of their
// content (controller, key, outcome, error, time) so that goroutines reporting at one instant in
// either order count and trace alike (driver only, at each turn).
func (r *reconciles) take() {
	if r == nil {
		return
	}
	s := r.s
	r.mu.Lock()
	pending := r.pending
	r.pending = nil
	r.mu.Unlock()
	slices.SortStableFunc(pending, func(a, b reconcileOutcome) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.controller, b.controller), cmp.Compare(a.key, b.key),
			cmp.Compare(a.kind, b.kind), cmp.Compare(a.err, b.err))
	})
	for _, o := range pending {

		id := [2]string{o.controller, o.key}
		k := r.keys[id]
		if k == nil {
			k = &KeyReconciles{Controller: o.controller, Key: o.key}
			r.keys[id] = k
		}
		r.count.Reconciles++
		switch o.kind {
		case crhooks.Succeeded:
			k.Streak = 0
		case crhooks.Requeued:
			k.Requeues++
			r.count.Requeues++
			k.Streak = 0
		case crhooks.Failed:
			k.Errors++
			r.count.Errors++
			if k.Streak > 0 {
				gap := o.at - k.LastFailure
				if o.controller == clientGoController && k.lastGap > 0 && !backoffRhythm(k.lastGap, gap) {
					// No success is seen: the failures are in a row while they keep the
					// queue's backoff rhythm; one out of it (a success came between, or an
					// event re-added the key early) starts a new streak.
					k.Streak, gap = 0, 0
				}
				k.lastGap = gap
			} else {
				k.lastGap = 0
			}
			k.Streak++
			k.LongestStreak = max(k.LongestStreak, k.Streak)
			k.LastError, k.LastFailure = o.err, o.at
			// Traced when the driver takes it (the trace's time), with the instant it failed.
			s.Emit(ControllerActor, "reconcile-error", sim.F("controller", o.controller), sim.F("key", o.key),
				sim.F("in-a-row", strconv.Itoa(k.Streak)), sim.F("failed-at", sim.FormatSimTime(o.at)), sim.F("error", o.err))
			if r.faultsEnd > 0 && o.at >= r.faultsEnd {
				k.failedAfterFaults = true
			}
		}
	}
}

// flag records k as a hot loop.
func (r *reconciles) flag(id [2]string, k *KeyReconciles) KeyReconciles {
	r.flagged[id] = true
	r.count.HotLoops = append(r.count.HotLoops, *k)
	return *k
}

// maxRetryWait is how long after its last failure a candidate's next retry is waited for: the
// cap of client-go's and controller-runtime's default per-item backoff (1000 s), and a second.
const maxRetryWait = 1001 * time.Second

// candidates are the keys in key order whose last HotLoop.Failures outcomes or more were
// failures in a row (a client-go key also with a failure after the faults stopped), each with
// the errors counted so far, and the instant by which each has had its next retry.
func (r *reconciles) candidates() (ids [][2]string, errs []int, retried time.Duration) {
	for _, id := range slices.SortedFunc(maps.Keys(r.keys), func(a, b [2]string) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) }) {
		k := r.keys[id]
		if k.Streak < r.cfg.Failures || (k.Controller == clientGoController && !k.failedAfterFaults) {
			continue
		}
		ids, errs = append(ids, id), append(errs, k.Errors)
		retried = max(retried, k.LastFailure+maxRetryWait)
	}
	return ids, errs, retried
}

// endReconciles looks, at the end of a run that passed its checks, for the keys whose streak of
// failures is that long and unbroken, runs on until each has had its next outcome (at most the
// default backoff's cap after its last failure: a client-go key's success is not seen, and its
// silence until then is taken for one), and returns the hot loop's violation for those whose
// retry failed again, unless allowed. A streak that long can end at its next retry (a cache
// stale for a while after the faults), where a hot loop's never does.
func endReconciles(b *bubble, exited func() bool) error {
	b.rec.take()
	ids, errs, retried := b.rec.candidates()
	if len(ids) == 0 {
		return nil
	}
	b.rec.convergedAt = bubbleNow()
	resolved := func() bool {
		if exited() {
			return true
		}
		b.rec.take()
		for i, id := range ids {
			if k := b.rec.keys[id]; k.Errors == errs[i] && k.Streak > 0 {
				return false // no outcome yet
			}
		}
		return true
	}
	if err := b.runUntil(resolved, retried); err != nil && !errors.Is(err, errBudget) {
		return err
	}
	b.rec.take()
	var hot []KeyReconciles
	for i, id := range ids {
		if k := b.rec.keys[id]; k.Streak >= b.rec.cfg.Failures && k.Errors > errs[i] {
			hot = append(hot, b.rec.flag(id, k))
		}
	}
	hotLoops(b, hot)
	return b.failed()
}

// hotLoops traces the hot loops found and fails the run with the first unless they are allowed.
func hotLoops(b *bubble, hot []KeyReconciles) {
	for _, k := range hot {
		b.s.Emit(ControllerActor, OracleHotLoop, sim.F("controller", k.Controller), sim.F("key", k.Key),
			sim.F("in-a-row", strconv.Itoa(k.Streak)), sim.F("error", k.LastError))
		if b.rec.cfg.Allow {
			continue
		}
		msg := fmt.Sprintf("clientgo: hot loop: the controller's reconcile of %s (%s) failed %d times in a row, the last at %s, still failing after the run converged at %s (the faults stopped at %s): a key retried forever (Checks.HotLoop.Failures is %d; Checks.HotLoop.Allow reports it without failing); last error: %s",
			k.Key, k.Controller, k.Streak, sim.FormatSimTime(k.LastFailure), sim.FormatSimTime(b.rec.convergedAt), sim.FormatSimTime(b.rec.faultsEnd), b.rec.cfg.Failures, k.LastError)
		b.fail(b.violation(OracleHotLoop, msg))
		return
	}
}

// faultsStopped records when the faults stopped (driver only).
func (r *reconciles) faultsStopped() {
	if r != nil {
		r.faultsEnd = max(bubbleNow(), 1)
	}
}

// report is the run's ReconcileReport; crRan says a controller-runtime controller ran.
func (r *reconciles) report(crRan bool) *ReconcileReport {
	out := r.count
	out.HotLoops = slices.Clone(r.count.HotLoops)
	for _, k := range r.keys {
		if k.Errors > 0 || k.Requeues > 0 {
			out.Keys = append(out.Keys, *k)
		}
	}
	slices.SortFunc(out.Keys, func(a, b KeyReconciles) int {
		return cmp.Or(cmp.Compare(a.Controller, b.Controller), cmp.Compare(a.Key, b.Key))
	})
	r.mu.Lock()
	for c := range r.started {
		out.Controllers = append(out.Controllers, c)
	}
	r.mu.Unlock()
	slices.Sort(out.Controllers)
	if crRan && len(out.Controllers) == 0 {
		out.Unobserved = "controller-runtime's reconciles not seen: its manager logs to a logger of its own (Options.Logger), or clientgo/controllerruntime is not imported"
	}
	return &out
}
