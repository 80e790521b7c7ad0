package fakeapi

import (
	"context"
	"fmt"
	"time"

	"github.com/informersim/informersim/internal/invariant"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// CloseReason says why a watch ended (fakeapi.md §4.6).
type CloseReason int

const (
	// CloseStopped: the client called Stop or cancelled its context.
	CloseStopped CloseReason = iota + 1
	// CloseDeadline: the server-side deadline passed (§4.6 row 1); a clean close.
	CloseDeadline
	// CloseExpired: the start RV was older than the cache's history; one ERROR 410 event.
	CloseExpired
	// CloseTooLarge: the cache did not reach the requested RV in time; one ERROR 504 event.
	CloseTooLarge
	// CloseReinit: the serving cache was reinitialised (apiserver restart); a clean close.
	CloseReinit
	// CloseSlowConsumer: the watch's buffer overflowed MaxWatchEvents; a clean close.
	CloseSlowConsumer
	// CloseFault: closed by [Faults.CloseWatch], cleanly or with an ERROR event.
	CloseFault
)

func (r CloseReason) String() string {
	switch r {
	case CloseStopped:
		return "Stopped"
	case CloseDeadline:
		return "Deadline"
	case CloseExpired:
		return "Expired"
	case CloseTooLarge:
		return "TooLarge"
	case CloseReinit:
		return "Reinit"
	case CloseSlowConsumer:
		return "SlowConsumer"
	case CloseFault:
		return "Fault"
	}
	return fmt.Sprintf("CloseReason(%d)", int(r))
}

// queued is an event waiting in a watch's buffer.
type queued struct {
	ev      watch.Event
	rev     uint64
	h       *keyHistory // the object's key; nil for bookmarks and errors
	initial bool        // a synthetic initial ADDED or the initial-events-end bookmark
	// own: the object was built for this event alone (a bookmark) and nothing else refers to
	// it, so it is handed out as it is instead of as a copy.
	own bool
	// private: the object was built for this watch alone but shares nested values with a stored
	// state (a selector-leaving DELETED, withOwnMeta).
	private bool
}

// Watcher is one open watch: a cursor over the event log of the replica that serves it, with a
// buffer of events ready for delivery. A driver pulls events with [Watcher.Next] (no goroutine,
// nothing happens until it asks); a concurrent consumer uses [Watcher.ResultChan] instead, which
// starts the one goroutine this package owns. Use one or the other, never both.
//
// Guarantees (fakeapi.md §4.3): after the initial events, revisions strictly increase; each change
// in scope after the start RV is delivered exactly once, in order, until the watch closes; a
// DELETED event carries the deletion revision; bookmarks carry an RV at least as large as every
// event before them. When the watch closes, undelivered events are discarded (as a closed HTTP
// stream loses them), except a terminal ERROR event, which is delivered last.
type Watcher struct {
	srv     *Server
	id      uint64
	replica int
	res     *resourceStore
	ns      string
	req     request

	// cursor: entries with rev <= cursor are never dispatched to this watch.
	cursor uint64
	// waiting: the initial snapshot is deferred until the cache reaches waitRV or waitUntil
	// passes (§4.1 row "N, true": waits <= ResourceVersionWait, else ERROR 504).
	waiting   bool
	waitRV    uint64
	waitUntil time.Time

	// queue[head:] are the events ready for delivery; popping advances head, and the queue
	// starts over at the front of its array once empty, so a steady stream does not allocate.
	queue []queued
	head  int
	live  int // non-initial events in queue, checked against MaxWatchEvents

	deadline          time.Time // zero: none
	nextBookmark      time.Time // zero: none
	finalBookmarkSent bool
	lastRV            uint64 // invariant: live event revisions strictly increase
	lastDelivered     queued // the last live object event taken, for DuplicateEvent (F-11)

	closed bool
	reason CloseReason

	// lendTo, when set (OpenWatchLent), names the consumer the watch lends its objects to
	// instead of handing out copies (lend.go).
	lendTo string

	pump *pump
	// onReady, if set (OnReady), is called by notify: whenever Ready may have turned true.
	onReady func()
}

// ID returns the watch's identifier, unique for the server's lifetime, starting at 1.
func (w *Watcher) ID() uint64 { return w.id }

// Replica returns the index of the replica serving the watch.
func (w *Watcher) Replica() int { return w.replica }

// Next pops the next ready event. It returns false when no event is ready now: either more may
// come later (Done is false) or the watch has ended (Done is true). The returned object is the
// caller's to keep.
func (w *Watcher) Next() (watch.Event, bool) {
	w.srv.lock()
	defer w.srv.mu.Unlock()
	invariant.Check(w.pump == nil, "fakeapi: Next called on watch %d after ResultChan", w.id)
	return w.next_locked()
}

func (w *Watcher) next_locked() (watch.Event, bool) {
	if w.head == len(w.queue) {
		return watch.Event{}, false
	}
	q := w.queue[w.head]
	w.queue[w.head] = queued{}
	w.head++
	if w.head == len(w.queue) {
		w.queue, w.head = w.queue[:0], 0
	}
	if !q.initial && q.ev.Type != watch.Error {
		w.live--
	}
	if !q.initial && (q.ev.Type == watch.Added || q.ev.Type == watch.Modified || q.ev.Type == watch.Deleted) {
		w.lastDelivered = q
	}
	ev := q.ev
	if u, ok := ev.Object.(*unstructured.Unstructured); ok && !q.own && q.h != nil {
		switch {
		case w.lendTo == "" || (!q.private && !w.srv.holdsLent_locked(q.h, q.rev, u)):
			ev.Object = copyObject(u)
		case ev.Type == watch.Deleted:
			// A DELETED event's object shares all but its top-level and metadata maps with the
			// state before it (withOwnMeta): lend that state too, so that a change made through
			// the shared maps is noticed when the server reads it. A selector-leaving DELETED
			// was built for this watch alone: only what it shares needs a record.
			if !q.private {
				w.srv.lend_locked(u, q.h, w.lendTo, false)
			}
			if prev, _ := q.h.atRev(q.rev - 1); prev != nil {
				w.srv.lend_locked(prev, q.h, w.lendTo, false)
			}
		default:
			w.srv.lend_locked(u, q.h, w.lendTo, false)
		}
	}
	w.srv.recordEvent_locked(w, q)
	return ev, true
}

// Pending returns the number of events ready for delivery.
func (w *Watcher) Pending() int {
	w.srv.mu.Lock()
	defer w.srv.mu.Unlock()
	return len(w.queue) - w.head
}

// Done reports whether the watch has ended and every event it will ever deliver was delivered.
func (w *Watcher) Done() bool {
	w.srv.mu.Lock()
	defer w.srv.mu.Unlock()
	return w.closed && len(w.queue) == w.head
}

// Ready reports whether Next has something to hand out, an event or the end: Pending() > 0 ||
// Done(), read under one lock (a driver asks it before every step it might take).
func (w *Watcher) Ready() bool {
	w.srv.mu.Lock() // a pure read: the epoch stays
	defer w.srv.mu.Unlock()
	return len(w.queue) > w.head || w.closed
}

// CloseReason returns why the watch ended, or 0 while it is open.
func (w *Watcher) CloseReason() CloseReason {
	w.srv.mu.Lock()
	defer w.srv.mu.Unlock()
	return w.reason
}

// Stop ends the watch from the client side. It is idempotent. If ResultChan was used, Stop waits
// for the adapter goroutine to exit; the result channel is then closed.
func (w *Watcher) Stop() {
	w.srv.lock()
	if !w.closed {
		w.close_locked(CloseStopped, nil)
	}
	p := w.pump
	w.srv.mu.Unlock()
	if p != nil {
		p.stopOnce.Do(func() { close(p.stop) })
		<-p.done
	}
}

// close_locked ends the watch: pending events are dropped and, for an error close, one ERROR
// event carrying err's Status is queued (fakeapi.md §4.6).
func (w *Watcher) close_locked(reason CloseReason, err error) {
	if w.closed {
		return
	}
	w.closed, w.reason = true, reason
	clear(w.queue)
	w.queue, w.head = w.queue[:0], 0
	w.live = 0
	if err != nil {
		w.queue = append(w.queue, queued{ev: watch.Event{Type: watch.Error, Object: statusOf(err)}})
	}
	delete(w.srv.watchers, w.id)
	w.srv.openStale = true
	w.srv.recordClose_locked(w, reason, err)
	w.notify()
}

func (w *Watcher) notify() {
	if w.onReady != nil {
		w.onReady()
	}
	if w.pump != nil {
		select {
		case w.pump.wake <- struct{}{}:
		default:
		}
	}
}

// enqueue_locked adds one event; a watch whose live backlog exceeds MaxWatchEvents is closed as
// a slow consumer (fakeapi.md §4.6 "consumer too slow", k/k#125123).
func (w *Watcher) enqueue_locked(q queued) {
	if w.closed {
		return
	}
	if !q.initial {
		if q.ev.Type != watch.Bookmark {
			if q.rev <= w.lastRV { // the check only when it fails: its arguments would allocate
				invariant.Check(false, "fakeapi: watch %d event revision went from %d to %d", w.id, w.lastRV, q.rev)
			}
		}
		w.lastRV = max(w.lastRV, q.rev)
		w.live++
		if w.live > w.srv.cfg.MaxWatchEvents {
			w.close_locked(CloseSlowConsumer, nil)
			return
		}
	}
	w.queue = append(w.queue, q)
	w.notify()
}

// dispatch_locked offers one log entry to the watch, applying the selector-transition table of
// fakeapi.md §4.4.
func (w *Watcher) dispatch_locked(e *entry) {
	if w.closed || w.waiting || e.rev <= w.cursor {
		return
	}
	w.cursor = e.rev
	if e.h.res != w.res {
		return
	}
	var typ watch.EventType
	var obj *unstructured.Unstructured
	switch e.typ {
	case watch.Added:
		if w.req.matches(w.res, w.ns, e.obj) {
			typ, obj = watch.Added, e.obj
		}
	case watch.Deleted:
		if w.req.matches(w.res, w.ns, e.obj) {
			typ, obj = watch.Deleted, e.obj
		}
	case watch.Modified:
		oldIn, newIn := w.req.matches(w.res, w.ns, e.prev), w.req.matches(w.res, w.ns, e.obj)
		switch {
		case oldIn && newIn:
			typ, obj = watch.Modified, e.obj
		case newIn:
			typ, obj = watch.Added, e.obj
		case oldIn:
			// Leaving the selector: the old content with the new revision (§4.4 row 3), sharing
			// all but its top-level and metadata maps with the stored prev (copy on write).
			obj = withOwnMeta(e.prev)
			setMeta(obj, "resourceVersion", FormatRV(e.rev))
			typ = watch.Deleted
		}
	}
	if obj == nil {
		return
	}
	w.enqueue_locked(queued{ev: watch.Event{Type: typ, Object: obj}, rev: e.rev, h: e.h, private: obj != e.obj})
}

// cacheAdvanced_locked runs after the serving cache moved: a waiting watch takes its snapshot
// once the cache reached the RV it waits for.
func (w *Watcher) cacheAdvanced_locked() {
	r := w.srv.replicas[w.replica]
	if w.waiting && r.cacheRV >= w.waitRV {
		w.waiting = false
		w.snapshot_locked(r.cacheRV)
	}
	if !w.waiting {
		w.cursor = max(w.cursor, r.cacheRV)
	}
}

// snapshot_locked queues the initial events at revision rev: one ADDED per matching object in
// key order, each with its own RV, then, with sendInitialEvents and allowWatchBookmarks, the
// bookmark annotated k8s.io/initial-events-end (fakeapi.md §4.2, MH-6).
func (w *Watcher) snapshot_locked(rev uint64) {
	for _, h := range w.res.sortedKeys() {
		obj, orev := h.atRev(rev)
		if obj == nil || !w.req.matches(w.res, w.ns, obj) {
			continue
		}
		w.queue = append(w.queue, queued{ev: watch.Event{Type: watch.Added, Object: obj}, rev: orev, h: h, initial: true})
	}
	if w.req.sendInitial && w.req.bookmarks && w.srv.quirk != WatchListOmitEndBookmark {
		bm := w.bookmarkObject(rev)
		switch w.srv.quirk {
		case WatchListOmitAnnotation:
		case WatchListEndBookmarkWithoutRV:
			bm.SetResourceVersion("")
			fallthrough
		default:
			bm.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
		}
		w.queue = append(w.queue, queued{ev: watch.Event{Type: watch.Bookmark, Object: bm}, rev: rev, initial: true, own: true})
	}
	w.cursor = rev
	w.lastRV = rev
	w.notify()
}

// bookmarkObject is an empty object of the watched kind carrying only the RV, so that clients
// checking the GVK of every event accept it (MH-7).
func (w *Watcher) bookmarkObject(rev uint64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(w.res.info.GVR.GroupVersion().String())
	u.SetKind(w.res.info.Kind)
	u.SetResourceVersion(FormatRV(rev))
	return u
}

// bookmark_locked queues an ordinary bookmark at the serving cache's revision, if the watch
// allows bookmarks and is past its initial wait (§4.5).
func (w *Watcher) bookmark_locked() {
	r := w.srv.replicas[w.replica]
	if w.closed || w.waiting || !w.req.bookmarks || r.cacheRV < w.cursor {
		return
	}
	w.enqueue_locked(queued{ev: watch.Event{Type: watch.Bookmark, Object: w.bookmarkObject(r.cacheRV)}, rev: r.cacheRV, own: true})
}

// OpenWatch opens a pull-based watch on gvr in namespace ns ("" for all namespaces), as WATCH
// with opts would (fakeapi.md §4.1). The watch is served by the replica the routing policy picks.
// Errors are those kube-apiserver returns before streaming: 400, 404, 422, 429, an injected
// failure, and, with Config.ExpiredWatchAsError, 410.
func (s *Server) OpenWatch(gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (*Watcher, error) {
	s.lock()
	defer s.mu.Unlock()
	return s.openWatch_locked(gvr, ns, opts, -1, "")
}

func (s *Server) openWatch_locked(gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions, pin int, client string) (*Watcher, error) {
	rq := s.rec.newRequest(VerbWatch, gvr, ns, "", opts, client)
	w, err := s.openWatchInner_locked(gvr, ns, opts, pin, &rq)
	if w != nil {
		rq.WatchID = w.id
	}
	s.finishRequest_locked(&rq, err)
	return w, err
}

func (s *Server) openWatchInner_locked(gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions, pin int, rq *RequestRecord) (*Watcher, error) {
	res, ns, req, err := s.readRequest_locked(VerbWatch, gvr, ns, opts)
	if err != nil {
		return nil, err
	}
	r := s.route_locked(pin)
	rq.Replica = r.index
	now := s.clk.Now()
	if !r.ready(now) {
		return nil, apierrors.NewTooManyRequests("storage is (re)initializing", 1)
	}
	s.nextWatchID++
	w := &Watcher{srv: s, id: s.nextWatchID, replica: r.index, res: res, ns: ns, req: req}
	if req.sendInitial {
		target := uint64(0) // RV "0": whatever the cache holds (§4.1 row 3)
		switch req.rvKind {
		case rvUnset:
			target = s.rev // a consistent read: the cache must reach the current revision
		case rvExact:
			target = req.rv
		}
		if r.cacheRV >= target {
			w.snapshot_locked(r.cacheRV)
		} else {
			w.waiting, w.waitRV, w.waitUntil = true, target, now.Add(s.cfg.ResourceVersionWait)
		}
	} else {
		switch req.rvKind {
		case rvUnset:
			w.cursor = s.rev
		case rvAny:
			w.cursor = r.cacheRV
		case rvExact:
			if req.rv < r.historyFrom {
				err := newExpired(req.rv, r.historyFrom)
				if s.cfg.ExpiredWatchAsError {
					return nil, err
				}
				s.addWatcher_locked(w)
				w.close_locked(CloseExpired, err)
				return w, nil
			}
			w.cursor = req.rv
		}
		w.lastRV = w.cursor
	}
	s.addWatcher_locked(w)
	// Replay the cache's history after the start RV (a watch from N sees every change > N).
	if !w.waiting && w.cursor < r.cacheRV {
		for i := s.logIndexAfter(w.cursor); i < s.log.len() && s.log.at(i).rev <= r.cacheRV; i++ {
			w.dispatch_locked(s.log.at(i))
		}
		w.cursor = max(w.cursor, r.cacheRV)
	}
	s.scheduleWatch_locked(w, &w.req, now)
	return w, nil
}

// scheduleWatch_locked sets the watch's deadline (policy F-12) and first bookmark time.
func (s *Server) scheduleWatch_locked(w *Watcher, req *request, now time.Time) {
	var timeout time.Duration
	switch s.cfg.WatchTimeout {
	case WatchTimeoutHonor:
		if req.timeout != nil && *req.timeout > 0 {
			timeout = time.Duration(*req.timeout) * time.Second
		} else {
			timeout = s.drawTimeout_locked()
		}
	case WatchTimeoutServer:
		timeout = s.drawTimeout_locked()
	}
	if timeout > 0 {
		w.deadline = now.Add(timeout)
	}
	if req.bookmarks && s.cfg.BookmarkInterval > 0 {
		w.nextBookmark = now.Add(s.cfg.BookmarkInterval)
	}
}

// drawTimeout_locked draws a deadline in [MinRequestTimeout, 2*MinRequestTimeout), whole seconds.
func (s *Server) drawTimeout_locked() time.Duration {
	secs := int64(s.cfg.MinRequestTimeout / time.Second)
	if secs <= 0 {
		return s.cfg.MinRequestTimeout
	}
	return time.Duration(secs+s.rnd.Int64N(secs)) * time.Second
}

// watchConcurrent opens a watch for a concurrent consumer: the returned watch.Interface is a [*Watcher]
// whose ResultChan is fed by the adapter goroutine, which stops when ctx is done or on Stop.
func (s *Server) watchConcurrent(ctx context.Context, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := s.OpenWatch(gvr, ns, opts)
	if err != nil {
		return nil, err
	}
	w.startPump(ctx)
	return w, nil
}
