package clientgo

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing/synctest"
	"time"

	"github.com/informersim/informersim/clientgo/internal/introspect"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// ControllerActor is the actor under which the controller's calls into the world appear in the
// trace: its requests to the apiserver ("GET", "PUT", ...), their responses, and the informer
// calls that change the world (an informer's start, a handler's registration).
const ControllerActor = "controller"

// StreamController is the random stream the coupling draws from: the order in which calls made
// at the same instant by different goroutines of the controller are served, and the latency of
// each response.
const StreamController = "controller"

// errStopped is what a call gets once the run is over and the world no longer serves.
var errStopped = errors.New("clientgo: the world has stopped: the run is over")

// call is one thing a goroutine of the controller asks the world to do: serve a request, start
// an informer, register a handler. The driver runs fn inside a step of the sim, so that it
// happens at the simulated instant the controller asked, and is traced.
type call struct {
	kind string // the trace event's kind
	// key orders calls made at the same instant: calls pending together are sorted by it, then
	// shuffled with the "controller" stream, so their order is the seed's, not Go's scheduler's.
	key string
	fn  func()
	// latency, if positive, delays the caller's wake-up (the response's arrival) after fn ran.
	latency func() time.Duration
	err     error
	done    chan struct{}
	woken   bool // done is closed (driver only)
}

// bubble couples the goroutines of a controller, running in a testing/synctest bubble, to a
// world, driven by one goroutine of the same bubble (the driver). The rules that make a run
// replay from its seed:
//
//  1. The world takes a step only when every other goroutine of the bubble is durably blocked
//     (synctest.Wait before every step), so a controller goroutine never runs while the world
//     changes, and a step's effects (a handler's enqueue waking a worker) run to their next
//     blocking point before the next step.
//  2. Time: the bubble's clock and the sim's start at the same epoch. When the world has nothing
//     to do now, the driver sleeps in the bubble until the world's next deadline; a controller
//     timer due earlier fires first (the bubble advances to the earliest timer), and if it leads
//     to a call, the call wakes the driver at that instant, which becomes the sim's time.
//  3. Calls: the controller reaches the world only through calls (its clientset's transport, the
//     informer adapters). Each is a sim step at the instant it was made. Calls made at the same
//     instant (two workers, say) are collected once every goroutine is blocked, sorted by
//     content, and ordered by a draw of the "controller" stream; the report counts these
//     instants (Report.Diagnostics.ConcurrentCalls) and the pairs that were identical (Report.Diagnostics.Ties).
type bubble struct {
	w     *world.World
	s     *sim.Sim
	calls chan *call
	// closed is closed when the run is over: later calls fail with errStopped.
	closed   chan struct{}
	driverID uint64
	// driverBlocked is true while the driver is blocked waiting for the controller (in
	// synctest.Wait, or asleep until a call or a deadline). A call made then cannot be the
	// driver's own, which spares onDriver reading the caller's goroutine id from its stack
	// (runtime.Stack, about a tenth of a run when every call paid it).
	driverBlocked atomic.Bool
	// wakes counts the driver's returns from those waits, for the watchdog (watchdog.go).
	wakes atomic.Int64
	held  []*call // received while sleeping, served at the next turn
	// scheduled are the calls handed to the sim, kept until the run ends (shutdown answers
	// those never woken).
	scheduled []*call

	// Figures for the report.
	served          int
	inflight        int // calls scheduled whose callers are not awake yet
	concurrentCalls int
	maxConcurrent   int
	ties            int
	timeoutsRedrawn int
	// staticRequests counts the discovery, version and health requests answered at once on the
	// caller's goroutine (static.go).
	staticRequests atomic.Int64
	// resyncWakes counts Report.Diagnostics.ResyncWakes; slept is set when the driver's sleep let the
	// bubble's clock move on, so the next calls drained were made by a controller woken by a
	// timer of its own (the world did nothing in between).
	resyncWakes int
	slept       bool
	// seeded is set when the binary was built in the deterministic mode (package goseed): Go's
	// map order and the order of the controller's goroutines are then the seed's, and nothing is
	// counted as unordered.
	seeded bool
	// mode is what the deterministic mode gives the run (determinism.go: where client-go's
	// mutation detector reports), nil outside it; reportsReadAt is when the driver last read the
	// reports.
	mode          *seededRun
	reportsReadAt time.Duration
	// hz are the run's hazards (hazards.go): the client faults the world aimed at the
	// controller; onTurn, if set, runs before each turn of the driver (the controller's
	// restarts).
	hz     *hazards
	onTurn func()
	// checks are the user's checks while the controller runs (checks.go); rec counts the
	// controller's reconcile outcomes (reconciles.go).
	checks checks
	rec    *reconciles
	// hooks are the run's calls to admission webhooks (webhooks.go), nil without
	// Cluster.Webhooks.
	hooks *webhookCalls
	// watches are the controller's own watches and what the world served its informers
	// (stream.go); lending the objects the Env's informers lent it (readonly.go).
	watches
	lending

	mu      sync.Mutex
	failure error // the first failure of the coupling (a bad InformerFor), ends the run
}

func newBubble(w *world.World) *bubble {
	b := &bubble{
		w:        w,
		s:        w.Sim(),
		calls:    make(chan *call),
		closed:   make(chan struct{}),
		driverID: introspect.GoroutineID(),
	}
	b.watches.b, b.lending.b, b.checks.b = b, b, b
	return b
}

// watches are the watches the world serves the informers a controller built itself, and what
// it served them: the keys each informer holds and when it last listed (stream.go).
type watches struct {
	b *bubble
	// The controller's own watches (stream.go): open streams in the order they were opened, the
	// last stream's number, and the report's count by kind.
	open       []openStream
	nextStream int
	streams    streamStats
	// unorderedBatches counts what client-go hands the handlers in a Go map's order
	// (Report.Diagnostics.UnorderedBatches): watch-list starts of two objects or more, relists that find
	// two objects or more gone. views are the keys each informer of the controller holds, as
	// far as the world served them (stream.go).
	unorderedBatches int
	views            map[string]map[string]bool
	// frames: whether a goroutine of the controller ran these frames, once looked for
	// (priorityqueue.go).
	frames map[string]bool
	// listedAt is, for each informer's view, when the response to its last LIST arrived;
	// viewGVR its resource.
	listedAt map[string]time.Duration
	viewGVR  map[string]schema.GroupVersionResource
}

// lending is the read-only check's state: the typed objects the Env's informers lent the
// controller, and when the controller's code can have run since they were last compared
// (readonly.go).
type lending struct {
	b *bubble
	// lent are the typed objects the Env's informers handed out, with their copies, in the
	// order they were handed out (readonly.go); lentIndex has them by identity.
	lent      []lentObject
	lentIndex map[any]bool
	// When the controller's code can run, for the read-only check (readonly.go). woken is set
	// when the driver wakes a goroutine of the controller (a response, a watch event, a call
	// taken, a sleep letting its timers fire, a restart, a synced checker a step closed): it runs
	// until the next synctest.Wait returns, which turns woken into lentUnchecked. codeRan is set
	// when the controller's code runs inside a step, on the driver (a handler, its transform, an
	// index function). checkLent runs after a step only if lentUnchecked or codeRan: at any
	// other step nothing of the controller ran since the last comparison, so nothing it was lent
	// can have changed. When it runs, it first waits for what the step woke to block again
	// (turn), so that it never reads memory a goroutine of the controller is writing.
	woken, codeRan atomic.Bool
	lentUnchecked  bool
	// synced are the synced checkers handed to the controller, not done yet (readonly.go).
	syncedMu sync.Mutex
	synced   []cache.DoneChecker
}

// fail records the first failure of the coupling; the driver ends the run with it.
func (b *bubble) fail(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failure == nil {
		b.failure = err
	}
}

func (b *bubble) failed() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.failure
}

// onDriver reports whether the caller is the driver goroutine: a handler the world calls inside a
// step, calling back into an informer or the clientset. Its call then runs at once, inside that
// step (the driver cannot wait for itself).
func (b *bubble) onDriver() bool {
	if b.driverBlocked.Load() {
		// The driver sets this only around its own blocking waits, and reads its own write: a
		// caller that sees it set is another goroutine.
		return false
	}
	return introspect.GoroutineID() == b.driverID
}

// do runs fn in the world as a traced step at the caller's instant and returns when it has run
// (and, with latency, when its response has arrived).
func (b *bubble) do(kind, key string, latency func() time.Duration, fn func()) error {
	if b.onDriver() {
		select {
		case <-b.closed:
			return errStopped
		default:
		}
		b.s.Emit(ControllerActor, kind, sim.F("key", key), sim.F("from", "handler"))
		fn()
		return nil
	}
	if err := b.hooks.callFromHandler(key); err != nil {
		b.fail(err)
		return err
	}
	c := &call{kind: kind, key: key, fn: fn, latency: latency, done: make(chan struct{})}
	select {
	case b.calls <- c:
	case <-b.closed:
		return errStopped
	}
	<-c.done
	return c.err
}

// bubbleNow is the bubble's time as the sim measures it: since the epoch both share.
func bubbleNow() time.Duration { return time.Since(sim.Epoch()) }

// drain takes every call whose goroutine is blocked sending it (after synctest.Wait, all are).
func (b *bubble) drain() []*call {
	pending := b.held
	b.held = nil
	defer func() {
		if len(pending) > 0 {
			b.controllerWoken() // each caller goes on, to wait for its response
		}
	}()
	for {
		select {
		case c := <-b.calls:
			pending = append(pending, c)
		default:
			return pending
		}
	}
}

// schedule turns the calls made at this instant into sim timers due now, in the seed's order.
func (b *bubble) schedule(pending []*call, now time.Duration) {
	if len(pending) == 0 {
		return
	}
	slices.SortStableFunc(pending, func(x, y *call) int { return cmp.Compare(x.key, y.key) })
	if len(pending) > 1 {
		b.concurrentCalls++
		b.maxConcurrent = max(b.maxConcurrent, len(pending))
		for i := 1; i < len(pending); i++ {
			if pending[i].key == pending[i-1].key {
				b.ties++
			}
		}
		r := b.s.Rand(StreamController)
		r.Shuffle(len(pending), func(i, j int) { pending[i], pending[j] = pending[j], pending[i] })
	}
	delay := now - b.s.Now()
	b.inflight += len(pending)
	b.scheduled = append(b.scheduled, pending...)
	for _, c := range pending {
		b.s.AfterFunc(delay, ControllerActor, c.kind, func() { b.serve(c) })
	}
}

// serve runs a call inside its step, then wakes its caller, at once or after its latency.
func (b *bubble) serve(c *call) {
	b.served++
	c.fn()
	b.w.Settle()
	wake := func() {
		b.controllerWoken()
		b.inflight--
		c.woken = true
		close(c.done)
	}
	if c.latency == nil {
		wake()
		return
	}
	if d := c.latency(); d > 0 {
		b.s.AfterFunc(d, ControllerActor, "response", wake)
		return
	}
	wake()
}

// turn is one round of the driver: wait until every controller goroutine is blocked, schedule
// the calls they are blocked in, then take at most one step of the sim due by the bubble's now.
// It reports whether a step ran.
func (b *bubble) turn() (bool, error) {
	b.driverBlocked.Store(true)
	synctest.Wait()
	b.driverBlocked.Store(false)
	b.wakes.Add(1)
	if b.woken.Swap(false) {
		b.lentUnchecked = true // what woke before this wait ran to its blocking point
	}
	if err := b.failed(); err != nil {
		return false, err
	}
	now := bubbleNow()
	b.takeDetectorReports(now)
	b.rec.take()
	pending := b.drain()
	if b.slept {
		b.slept = false
		if len(pending) > 0 && !b.seeded && b.resyncDue(now) {
			b.resyncWakes++
		}
	}
	b.schedule(pending, now)
	b.pumpStreams()
	// At most one step: most turns find nothing due by now, and StepWithin says so without
	// an error to build (RunUntil's ErrBudget and ErrIdle were one allocation a turn).
	stepped, err := b.s.StepWithin(max(now-b.s.Now(), 0))
	switch {
	case err != nil:
		return false, err
	case stepped:
		b.pollSynced()
		if ranInStep := b.codeRan.Swap(false); b.lentUnchecked || ranInStep {
			if b.woken.Swap(false) {
				// The step woke goroutines of the controller (a handler's enqueue wakes a worker,
				// a response its caller): they run now, beside the driver. The comparison waits
				// until they are blocked again, so that it sees all they changed, whatever their
				// pace: compared at once, a change they made was seen after this step or after
				// the next one, as the race went.
				b.quiesce()
			}
			b.lentUnchecked = false
			b.checkLent()
		}
		b.checks.checkStep()
		return true, b.failed()
	default: // nothing was due by now
		return false, b.failed()
	}
}

// sleep blocks the driver in the bubble until until (since the epoch) or until a controller
// goroutine makes a call, whichever comes first. Controller timers due earlier fire meanwhile.
func (b *bubble) sleep(until time.Duration) {
	d := until - bubbleNow()
	if d <= 0 {
		return
	}
	b.controllerWoken() // the controller's timers due before until fire while the driver sleeps
	t := time.NewTimer(d)
	defer t.Stop()
	before := bubbleNow()
	b.driverBlocked.Store(true)
	select {
	case <-t.C:
	case c := <-b.calls:
		b.held = append(b.held, c)
	}
	b.driverBlocked.Store(false)
	b.wakes.Add(1)
	if bubbleNow() > before {
		b.slept = true
	}
}

// resyncDue reports whether now could be a resync of an informer the controller built itself
// that holds two objects or more (as far as the world served them): a reflector's resync timer
// starts when its LIST's response arrives and fires every resync period, a whole number of
// milliseconds in practice; a workqueue's retry or a backoff falls on such an instant only by
// chance (the responses they follow arrive after latencies drawn to the nanosecond).
func (b *bubble) resyncDue(now time.Duration) bool {
	for view, at := range b.listedAt {
		d := now - at
		if d > 0 && d%time.Millisecond == 0 && len(b.views[view]) >= 2 {
			return true
		}
	}
	return false
}

// runUntil drives the world and the controller until cond holds (checked when every goroutine
// is blocked and nothing is due now) or the bubble's time reaches end.
func (b *bubble) runUntil(cond func() bool, end time.Duration) error {
	for {
		if b.onTurn != nil {
			b.onTurn()
		}
		stepped, err := b.turn()
		if err != nil {
			return err
		}
		if stepped {
			continue
		}
		if cond != nil && len(b.held) == 0 && b.inflight == 0 && cond() {
			return nil
		}
		now := bubbleNow()
		if now >= end {
			return errBudget
		}
		target := end
		if d, ok := b.s.NextDeadline(); ok && d < target {
			target = d
		}
		b.sleep(target)
	}
}

var errBudget = errors.New("budget")

// shutdown refuses every later call and waits until every life of the controller returned, letting the controller's goroutines
// (and their timers) run to their end.
func (b *bubble) shutdown(lives []*incarnation) {
	close(b.closed)
	b.endStreams()
	// Calls scheduled but not served or not answered when the run ended (a check stopped it at
	// a step): their callers get errStopped.
	for _, c := range b.scheduled {
		if !c.woken {
			c.woken = true
			c.err = errStopped
			close(c.done)
		}
	}
	b.scheduled = nil
	for _, c := range b.drain() {
		c.err = errStopped
		close(c.done)
	}
	for _, inc := range lives {
		for done := false; !done; {
			select {
			case <-inc.done:
				done = true
			case c := <-b.calls:
				c.err = errStopped
				close(c.done)
			}
		}
	}
}

// transport is the controller's http.RoundTripper: each request is a call, served by the REST
// front of the world's apiserver inside a step, the response coming back after a latency.
type transport struct {
	b       *bubble
	host    string // Host's host: requests elsewhere fail the run
	handler http.Handler
	latency func(*http.Request) time.Duration
	// crashed is set when the controller using this transport crashed (Hazards.Restarts): its
	// requests fail from then on, as a dead process's would.
	crashed atomic.Bool
}

// errCrashed is what a crashed controller's requests get.
var errCrashed = errors.New("clientgo: connection refused: this controller crashed (a restart hazard) and its connections are gone")

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.crashed.Load() {
		return nil, errCrashed
	}
	if req.URL.Host != t.host {
		// The controller built a configuration of its own pointing elsewhere: a request the
		// world cannot serve nor order.
		err := fmt.Errorf("clientgo: %s %s: a request to %q, not the world's apiserver (%s): it would leave the simulation, and the run could not be deterministic; build clients from the rest.Config the harness gives", req.Method, req.URL, req.URL.Host, Host)
		t.b.fail(err)
		return nil, err
	}
	var body []byte
	if req.Body != nil {
		var err error
		body, err = readBody(req.Body, req.ContentLength)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
	}
	// The front never changes a request (fakerest.Transport says so too), so a shallow copy is
	// enough: Clone copied the header and URL of every request.
	ctx, hooked := t.b.hooks.writeContext(req) // hooked: what admission webhooks took
	inner := req.WithContext(ctx)
	inner.Body = io.NopCloser(bytes.NewReader(body))
	uri := req.URL.RequestURI()
	inner.RequestURI = uri
	inner.RemoteAddr = "127.0.0.1:0"
	if inner.Host == "" {
		inner.Host = req.URL.Host
	}
	if isStatic(req) {
		return t.serveStatic(req, inner), nil
	}
	if w := queryValue(req.URL.RawQuery, "watch"); req.Method == http.MethodGet && (w == "true" || w == "1") {
		return t.serveWatch(req, inner)
	}
	var resp *http.Response
	request := req.Method + " " + uri // the call's key starts with it, and its trace events name it
	key := request + " " + req.Header.Get("Accept") + " " + string(body)
	var latency func() time.Duration
	listed := "" // the view a LIST refreshed
	if t.latency != nil {
		latency = func() time.Duration {
			d := t.latency(req) + t.b.hz.slowBy(req.Method+" "+req.URL.Path) + hooked.get()
			if listed != "" {
				t.b.listedAt[listed] += max(d, 0)
			}
			return d
		}
	}
	err := t.b.do(req.Method, key, latency, func() {
		if isUpdate(req.Method) {
			if gvr, _, name, ok := objectPath(req.URL.Path); ok && name != "" {
				if _, armed := t.b.hz.take(HazardConflict, sim.F("request", req.Method+" "+req.URL.Path)); armed {
					resp = conflict(req, gvr, name)
					t.b.s.Emit(ControllerActor, "response", sim.F("request", request), sim.F("code", strconv.Itoa(resp.StatusCode)))
					return
				}
			}
		}
		if isCacheList(req) {
			t.b.hz.staleRead(sim.F("request", request))
		}
		var wr *Write
		if isWrite(req.Method) && t.b.checks.onWrite != nil {
			if gvr, ns, name, ok := objectPath(req.URL.Path); ok {
				wr = &Write{Method: req.Method, Path: req.URL.Path, Body: body, Resource: gvr, Namespace: ns, Name: name,
					Before: current(t.b.w.Server(), gvr, ns, name)}
			}
		}
		rec := newRecorder()
		t.handler.ServeHTTP(rec, inner)
		resp = rec.Result()
		if isWrite(req.Method) && resp.StatusCode < 300 {
			t.b.rec.wrote(req.URL.Path) // a client-go key's success, as far as it shows (reconciles.go)
		}
		if wr != nil {
			wr.Code = resp.StatusCode
			if wr.Name == "" && req.Method == http.MethodPost && resp.StatusCode < 300 {
				if key, err := createdName(rec.body, resp.Header.Get("Content-Type")); err == nil {
					wr.Name = key
				}
			}
			wr.After = current(t.b.w.Server(), wr.Resource, wr.Namespace, wr.Name)
			t.b.checks.checkWrite(*wr)
		}
		if req.Method == http.MethodGet && resp.StatusCode == http.StatusOK {
			listed = t.b.noteList(req, rec.body, resp.Header.Get("Content-Type"))
		}
		t.b.s.Emit(ControllerActor, "response", sim.F("request", request), sim.F("code", strconv.Itoa(resp.StatusCode)))
	})
	if err != nil {
		return nil, err
	}
	resp.Request = req
	return resp, nil
}

// readBody reads a request's body whole, as io.ReadAll does, into one slice of the body's size
// when the request says it (client-go sets ContentLength on every body it sends), instead of
// ReadAll's 512 bytes grown by doubling.
func readBody(r io.Reader, size int64) ([]byte, error) {
	if size <= 0 || size > 1<<30 {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, size+1) // one byte more: the read that finds the end needs no growth
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) { // longer than it said: grow as ReadAll does
			b = append(b, 0)[:len(b)]
		}
	}
}
