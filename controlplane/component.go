package controlplane

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/informersim/informersim/fakeapi"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Component is one step-driven controller.
type Component interface {
	// Name is the component's name in a trace ("garbage-collector", "namespace-controller",
	// "workload-status", "job-controller").
	Name() string
	// Pending reports whether Step has work at now.
	Pending(now time.Time) bool
	// NextTimer returns the earliest time at which Pending becomes true with no write to the
	// server in between, if there is one. While the component is Pending the time may have
	// passed: a driver asks it only when Pending is false (a timer due now would fire forever).
	NextTimer() (time.Time, bool)
	// Step does one unit of work at now: at most one write to the server. It reports what it
	// did in a short text ("" when it found nothing to do). An error of the server's (a
	// conflict, an injected failure) is not returned: it is counted in Stats and the work is
	// retried after a backoff, as kube-controller-manager's queues retry.
	Step(ctx context.Context, now time.Time) (string, error)
	// Stats returns the component's counters.
	Stats() Stats
	// SetDelay makes the component act only delay after it first sees a change (a slow
	// controller); 0 is prompt.
	SetDelay(delay time.Duration) error
	// SetStopped stops (true) or restarts the component: a stopped one is never Pending and
	// keeps no timers, as a crashed controller; restarted, it reads the server afresh.
	SetStopped(stopped bool)
	// Stopped reports whether the component is stopped.
	Stopped() bool
}

// Stats counts what a component did.
type Stats struct {
	// Scans counts the reads of the server's state (one list per served resource each).
	Scans int
	// Writes counts the writes that succeeded (deletes, updates, events).
	Writes int
	// Deletes counts the deletes among Writes that deleted or marked an object (the collector's
	// and the namespace controller's; a delete that found the object gone is not one).
	Deletes int
	// Errors counts the writes the server refused; each is retried.
	Errors int
	// LastError is the text of the last refused write, for a report.
	LastError string
}

// base is what every component shares: the revision it last found nothing to do at, the
// delay it waits after noticing a change, the backoff after an error, and the stopped switch.
type base struct {
	name  string
	srv   *fakeapi.Server
	stale bool // read the replicas' watch caches (resourceVersion "0") instead of storage
	// rebuild makes every read start from an empty view, as the components read before they
	// kept their views between steps (view.go): the same requests, everything derived anew. A
	// test's reference for the kept views; nothing else sets it.
	rebuild  bool
	quietRev uint64
	quiet    bool
	// dirty, when set, replaces the revision as what the component notices: a commit observer
	// of its own sets it for the writes it cares about (the Job controller: Jobs), so the
	// writes to everything else do not make it step. It is cleared when a scan begins.
	dirty   *atomic.Bool
	noticed time.Time // when a change was first seen; zero when none is waiting
	delay   time.Duration
	retryAt time.Time // after an error: no work before this
	backoff time.Duration
	stopped bool
	stats   Stats
	// readRev is the oldest revision a list of the current scan was served at: with stale
	// reads it may be behind the server's, and then the scan's "nothing to do" is not final.
	readRev uint64
	// resources is the server's table of resources, fixed when the server was made (read once:
	// Server.Config copies it at each call).
	resources []fakeapi.Resource
}

// stalePoll is how soon a component that read a lagging watch cache reads again.
const stalePoll = 100 * time.Millisecond

const (
	minBackoff = 5 * time.Millisecond
	maxBackoff = time.Second
)

func newBase(name string, srv *fakeapi.Server) (base, error) {
	if srv == nil {
		return base{}, fmt.Errorf("controlplane: %s: nil *fakeapi.Server", name)
	}
	return base{name: name, srv: srv, resources: srv.Config().Resources}, nil
}

func (b *base) Name() string  { return b.name }
func (b *base) Stats() Stats  { return b.stats }
func (b *base) Stopped() bool { return b.stopped }

func (b *base) SetDelay(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("controlplane: %s: negative delay %v", b.name, d)
	}
	b.delay = d
	return nil
}

func (b *base) SetStopped(stopped bool) {
	b.stopped = stopped
	b.quiet, b.noticed, b.retryAt, b.backoff = false, time.Time{}, time.Time{}, 0
}

// changed reports whether the server was written since the component last found nothing to do.
func (b *base) changed() bool {
	if b.dirty != nil {
		return !b.quiet || b.dirty.Load()
	}
	return !b.quiet || b.srv.Revision() != b.quietRev
}

// pending is Pending for the server's changes; a component adds its own timers.
func (b *base) pending(now time.Time) bool {
	if b.stopped || now.Before(b.retryAt) || !b.changed() {
		return false
	}
	return b.noticed.IsZero() || !now.Before(b.noticed.Add(b.delay))
}

// timer is NextTimer for the delay and the backoff.
func (b *base) timer() (time.Time, bool) {
	if b.stopped || !b.changed() {
		return time.Time{}, false
	}
	at := b.retryAt
	if b.delay > 0 && !b.noticed.IsZero() && b.noticed.Add(b.delay).After(at) {
		at = b.noticed.Add(b.delay)
	}
	return at, !at.IsZero()
}

// ready is called first by Step: it notes the change and says whether the delay has passed.
func (b *base) ready(now time.Time) bool {
	if b.stopped || now.Before(b.retryAt) {
		return false
	}
	if b.noticed.IsZero() {
		b.noticed = now
	}
	return !now.Before(b.noticed.Add(b.delay))
}

// idle says whether Step has nothing to do at now: the component is stopped or backing off, or a
// change still waits out its delay while no timer of the component's own (own) is due.
func (b *base) idle(now time.Time, own func() (time.Time, bool)) bool {
	if b.stopped || now.Before(b.retryAt) {
		return true
	}
	if b.changed() && !b.ready(now) {
		if at, ok := own(); !ok || now.Before(at) {
			return true
		}
	}
	return false
}

// beginScan starts a read of the server's state.
func (b *base) beginScan() {
	b.readRev = math.MaxUint64
	if b.dirty != nil {
		b.dirty.Store(false) // a commit from now on is seen by the next scan
	}
}

// done records a Step that found nothing to do at revision rev (the server's, before the scan).
// When a list was served from a watch cache behind rev, the component reads again after
// stalePoll instead: it has not seen rev yet, as an informer behind a lagging cache has not.
func (b *base) done(now time.Time, rev uint64) {
	if b.readRev < rev {
		b.noticed, b.retryAt = time.Time{}, now.Add(stalePoll)
		if b.dirty != nil {
			b.dirty.Store(true) // not seen yet: still a change
		}
		return
	}
	b.quiet, b.quietRev, b.noticed = true, rev, time.Time{}
}

// result records a write's outcome: an error backs off.
func (b *base) result(now time.Time, err error) {
	if err == nil {
		b.stats.Writes++
		b.backoff = 0
		return
	}
	b.stats.Errors++
	b.stats.LastError = err.Error()
	if b.backoff == 0 {
		b.backoff = minBackoff
	} else if b.backoff *= 2; b.backoff > maxBackoff {
		b.backoff = maxBackoff
	}
	b.retryAt = now.Add(b.backoff)
	// The work is not done: a component that was quiet before this write (it stepped on its
	// own timer, with no change on the server since) must step again after the backoff, not
	// wait for a write of someone else's.
	b.quiet = false
}

// list reads one resource, all namespaces or ns, in key order. The items are lent, not copied
// (fakeapi.ListerWatcher.ListLent, docs/fakeapi.md §10.5): the server's committed objects
// themselves, which a component only reads. Every write of a component starts from the live
// object the server's Mutate hands it, or builds a new one, and what it reads with
// unstructured's Nested helpers that return maps or slices is a copy (NestedSlice, NestedMap),
// or read without being kept (NestedFieldNoCopy in statusEqual); the server's lending check
// (Server.Lending().Check) would name the component if one changed an item.
func (b *base) list(gvr schema.GroupVersionResource, ns string) ([]unstructured.Unstructured, error) {
	opts := metav1.ListOptions{}
	if b.stale {
		opts.ResourceVersion = "0"
	}
	lw := b.srv.ListerWatcher(gvr, ns)
	lw.Name = b.name
	l, err := lw.ListLent(opts)
	if err != nil {
		return nil, err
	}
	if rv, err := strconv.ParseUint(l.GetResourceVersion(), 10, 64); err == nil {
		b.readAt(rv)
	}
	return l.Items, nil
}

// readAt notes that a list of the current scan was served at revision rev.
func (b *base) readAt(rev uint64) { b.readRev = min(b.readRev, rev) }

// Config configures [New].
type Config struct {
	// Rand draws the workload status latencies; nil means a fixed seed.
	Rand *rand.Rand
	// Workload configures the workload status stand-in.
	Workload WorkloadConfig
	// Jobs configures the Job controller stand-in (its pods' durations and failures).
	Jobs JobConfig
	// StaleReads makes every component read the replicas' watch caches (a list at
	// resourceVersion "0", routed by the server's policy) instead of storage, as
	// kube-controller-manager's informers do: with a lagging replica they act on old state.
	StaleReads bool
}

// ControlPlane is the four components over one server, in a fixed order.
type ControlPlane struct {
	GC        *GarbageCollector
	Namespace *NamespaceController
	Workload  *WorkloadStatus
	Jobs      *JobController
}

// New returns the garbage collector, the namespace controller, the workload status stand-in and
// the Job controller stand-in for srv. The workload latencies and the Jobs' pods draw from
// cfg.Rand.
func New(srv *fakeapi.Server, cfg Config) (*ControlPlane, error) {
	gc, err := NewGarbageCollector(srv)
	if err != nil {
		return nil, err
	}
	nc, err := NewNamespaceController(srv)
	if err != nil {
		return nil, err
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.New(rand.NewPCG(24, 24))
	}
	ws, err := NewWorkloadStatus(srv, cfg.Rand, cfg.Workload)
	if err != nil {
		return nil, err
	}
	jc, err := NewJobController(srv, cfg.Rand, cfg.Jobs)
	if err != nil {
		return nil, err
	}
	gc.stale, nc.stale, ws.stale, jc.stale = cfg.StaleReads, cfg.StaleReads, cfg.StaleReads, cfg.StaleReads
	return &ControlPlane{GC: gc, Namespace: nc, Workload: ws, Jobs: jc}, nil
}

// Components returns the components in the order a driver steps them.
func (cp *ControlPlane) Components() []Component {
	return []Component{cp.GC, cp.Namespace, cp.Workload, cp.Jobs}
}

// ErrNotSettled is returned by Settle when the components still have work after its budget.
var ErrNotSettled = errors.New("controlplane: components still have work")

// Settle steps every pending component at now until none is pending, at most budget steps: a
// test's way to run the control plane to a fixed point at one instant (timers due later are
// not waited for).
func (cp *ControlPlane) Settle(ctx context.Context, now time.Time, budget int) error {
	for i := 0; i < budget; i++ {
		stepped := false
		for _, c := range cp.Components() {
			if c.Pending(now) {
				if _, err := c.Step(ctx, now); err != nil {
					return err
				}
				stepped = true
				break
			}
		}
		if !stepped {
			return nil
		}
	}
	return fmt.Errorf("%w after %d steps", ErrNotSettled, budget)
}

// notFound is apierrors.IsNotFound without its allocation for a nil error (it takes the address
// of a variable for errors.As whatever the error): a scan asks it of every list's outcome.
func notFound(err error) bool { return err != nil && apierrors.IsNotFound(err) }
