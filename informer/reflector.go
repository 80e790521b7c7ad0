package informer

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/informersim/informersim/internal/invariant"
)

// Watch timeout bounds (informer.md §7.1): each watch asks the server to end the stream after a
// random duration in [min, 2·min]; min is 5 minutes unless ReflectorOptions raises it.
const (
	defaultMinWatchTimeout = 5 * time.Minute

	// veryShortWatch is the duration under which a stream that delivered no event is an error
	// (informer.md §7.6, client-go's VeryShortWatchError).
	veryShortWatch = time.Second

	// defaultPageSize is the page size client-go's pager uses (informer.md §7.4).
	defaultPageSize = 500

	defaultExpectedTypeName = "<unspecified>"
)

// ReflectorStore is what a [Reflector] writes to: every [Queue] satisfies it. If the store also
// implements [BookmarkQueue], the Reflector tells it about each watch bookmark (informer.md §7.6).
type ReflectorStore interface {
	Add(obj any) error
	Update(obj any) error
	Delete(obj any) error
	Replace(list []any, resourceVersion string) error
	Resync() error
}

// ReflectorOptions configures a [Reflector]. NewReflector validates a copy; the caller's value is
// never changed.
type ReflectorOptions struct {
	// Name identifies the Reflector in events and errors.
	Name string

	// ExpectedType is the Go type the watch should deliver. Events carrying another Go type (or,
	// when ExpectedType is an *unstructured.Unstructured with a GroupVersionKind set, another
	// GVK) are skipped and do not advance the resourceVersion (informer.md §1.1, §7.6).
	// Nil disables the check.
	ExpectedType runtime.Object

	// ResyncPeriod is the period of the resync timer; 0 means no timer (informer.md §2.3).
	ResyncPeriod time.Duration

	// ShouldResync, called at each resync tick, gates the call to the store's Resync; nil means
	// always resync (informer.md §2.3, §2.4).
	ShouldResync func() bool

	// Clock is required. The Reflector only reads it: it never creates timers, it reports its
	// deadlines through NextDeadline and the driver calls Tick when one is due.
	Clock clock.PassiveClock

	// Rand is required: it draws each watch's timeout (informer.md §7.1) and the backoff jitter.
	Rand *rand.Rand

	// MinWatchTimeout raises the minimum watch timeout; it is honored only if greater than the
	// default 5 minutes, and the maximum is then twice it (informer.md §7.1).
	MinWatchTimeout time.Duration

	// Backoff overrides the backoff parameters (informer.md §7.1: 800ms, factor 2.0, jitter 1.0,
	// cap 30s). The reset interval is always 2 minutes; a Factor <= 0 disables the reset. Nil
	// means the defaults.
	Backoff *wait.Backoff

	// OnWatchError is called with each error a ListAndWatch pass returns: a failed LIST
	// (wrapped "failed to list <type>: …") or a watch that could not be opened for a reason other
	// than 429 or connection refused (informer.md §7.2). Most stream failures end a pass without
	// an error and never reach it. Nil means the default, which only counts the errors.
	// (The informer's WatchErrorHandler, set with SetWatchErrorHandler, is wired here.)
	OnWatchError func(err error)

	// PageSize overrides the LIST page size (client-go's WatchListPageSize). 0 means client-go's
	// choice: 500, or no paging for a relist at a specific resourceVersion (informer.md §7.4).
	PageSize int64

	// UseWatchList makes every ListAndWatch pass start with the streaming watch-list request
	// (informer.md §7.5) and fall back to LIST only if it fails. The Reflector never sees the
	// ListerWatcher, so it cannot probe it: the informer sets this with client-go v0.37's
	// default semantics (on, unless the ListerWatcher's IsWatchListSemanticsUnSupported()
	// returns true, or the informer's DisableWatchList is set). Zero (false) is classic
	// list+watch, as before.
	UseWatchList bool

	// Transform is the queue's transform, applied to objects in the watch-list's temporary
	// store (informer.md §1.5: in watch-list mode initial objects are transformed twice). Nil
	// means none.
	Transform TransformFunc

	// OnEvent, if set, is called synchronously with each decision the Reflector makes (a relist, a
	// re-watch, a backoff, a skipped event…), so a driver can narrate a run. It must not call back
	// into the Reflector.
	OnEvent func(ReflectorEvent)
}

// RequestVerb is the kind of a [Request].
type RequestVerb int

// The request verbs.
const (
	RequestList RequestVerb = iota + 1
	RequestWatch
)

func (v RequestVerb) String() string {
	switch v {
	case RequestList:
		return "List"
	case RequestWatch:
		return "Watch"
	}
	return fmt.Sprintf("RequestVerb(%d)", int(v))
}

// Request is what a [Reflector] asks its driver to send to the apiserver.
type Request struct {
	Verb    RequestVerb
	Options metav1.ListOptions
}

func (q Request) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s rv=%q", q.Verb, q.Options.ResourceVersion)
	if q.Options.Limit != 0 {
		fmt.Fprintf(&b, " limit=%d", q.Options.Limit)
	}
	if q.Options.Continue != "" {
		fmt.Fprintf(&b, " continue=%q", q.Options.Continue)
	}
	if q.Options.ResourceVersionMatch != "" {
		fmt.Fprintf(&b, " match=%s", q.Options.ResourceVersionMatch)
	}
	if q.Options.SendInitialEvents != nil && *q.Options.SendInitialEvents {
		b.WriteString(" sendInitialEvents")
	}
	if q.Options.AllowWatchBookmarks {
		b.WriteString(" bookmarks")
	}
	if q.Options.TimeoutSeconds != nil {
		fmt.Fprintf(&b, " timeout=%ds", *q.Options.TimeoutSeconds)
	}
	return b.String()
}

// ReflectorEventKind names one decision of the Reflector, for traces.
type ReflectorEventKind int

// The event kinds.
const (
	// EventListed: a LIST succeeded and the store was replaced at ResourceVersion.
	EventListed ReflectorEventKind = iota + 1
	// EventListPage: a LIST page came back with a continue token; the next page is requested.
	EventListPage
	// EventRelistUnavailable: a LIST answered 410 or "too large resource version"; the
	// resourceVersion is marked unavailable and a LIST at "" follows at once (informer.md §7.4).
	EventRelistUnavailable
	// EventWatchOpened: a watch stream is open from ResourceVersion.
	EventWatchOpened
	// EventWatchClosed: the server closed the stream cleanly; a re-watch from ResourceVersion
	// follows at once, without a LIST (informer.md §7.7).
	EventWatchClosed
	// EventWatchRetry: 429 or connection refused; the watch is retried from ResourceVersion after
	// Delay, without a LIST (informer.md §7.7).
	EventWatchRetry
	// EventPassEnded: a ListAndWatch pass ended (Err says why, nil for none); the next pass, a
	// relist, starts after Delay (informer.md §7.2).
	EventPassEnded
	// EventSkipped: a watch event of an unexpected type or that could not be understood was
	// skipped (informer.md §7.6).
	EventSkipped
	// EventStoreError: the store refused a watch event's object; the error is only reported.
	EventStoreError
	// EventResync: the resync timer fired and the store's Resync was called (informer.md §2.3).
	EventResync
	// EventResyncSkipped: the resync timer fired but ShouldResync said no.
	EventResyncSkipped
	// EventWatchListSynced: the watch-list stream delivered the bookmark annotated
	// k8s.io/initial-events-end; the store was replaced by Items objects at ResourceVersion,
	// the resync timer started, and the same stream goes on as the watch (informer.md §7.5).
	EventWatchListSynced
	// EventWatchListRetry: the watch-list attempt failed in a way client-go retries (429 or
	// connection refused after Delay; 410 or too large at once, at rv ""; a stream closed
	// before the end bookmark at once); a new watch-list request follows.
	EventWatchListRetry
	// EventWatchListFallback: the watch-list attempt failed with Err; the pass falls back to a
	// LIST (informer.md §7.3).
	EventWatchListFallback
)

func (k ReflectorEventKind) String() string {
	switch k {
	case EventListed:
		return "Listed"
	case EventListPage:
		return "ListPage"
	case EventRelistUnavailable:
		return "RelistUnavailable"
	case EventWatchOpened:
		return "WatchOpened"
	case EventWatchClosed:
		return "WatchClosed"
	case EventWatchRetry:
		return "WatchRetry"
	case EventPassEnded:
		return "PassEnded"
	case EventSkipped:
		return "Skipped"
	case EventStoreError:
		return "StoreError"
	case EventResync:
		return "Resync"
	case EventResyncSkipped:
		return "ResyncSkipped"
	case EventWatchListSynced:
		return "WatchListSynced"
	case EventWatchListRetry:
		return "WatchListRetry"
	case EventWatchListFallback:
		return "WatchListFallback"
	}
	return fmt.Sprintf("ReflectorEventKind(%d)", int(k))
}

// ReflectorEvent is one decision of the Reflector, reported through ReflectorOptions.OnEvent.
type ReflectorEvent struct {
	Kind ReflectorEventKind
	// ResourceVersion is the RV the decision is about: the list RV, the RV a watch starts or
	// resumes from.
	ResourceVersion string
	// Delay is the backoff before the next request, for EventWatchRetry and EventPassEnded.
	Delay time.Duration
	// Items is the number of objects listed, for EventListed and EventListPage.
	Items int
	// Err is the error behind the decision, if any.
	Err error
}

// String renders the event as one line of narration, e.g.
// "watch closed; re-watch at rv=7" or "pass ended (…); relist after backoff 1.2s".
func (e ReflectorEvent) String() string {
	switch e.Kind {
	case EventListed:
		return fmt.Sprintf("listed %d items at rv=%s", e.Items, e.ResourceVersion)
	case EventListPage:
		return fmt.Sprintf("list page of %d items; next page", e.Items)
	case EventRelistUnavailable:
		return fmt.Sprintf("list failed (%v); relist at rv=\"\"", e.Err)
	case EventWatchOpened:
		return fmt.Sprintf("watch opened at rv=%s", e.ResourceVersion)
	case EventWatchClosed:
		return fmt.Sprintf("watch closed; re-watch at rv=%s", e.ResourceVersion)
	case EventWatchRetry:
		return fmt.Sprintf("watch failed (%v); re-watch at rv=%s after backoff %v", e.Err, e.ResourceVersion, e.Delay)
	case EventPassEnded:
		if e.Err == nil {
			return fmt.Sprintf("pass ended; relist after backoff %v", e.Delay)
		}
		return fmt.Sprintf("pass ended (%v); relist after backoff %v", e.Err, e.Delay)
	case EventSkipped:
		return fmt.Sprintf("event skipped (%v)", e.Err)
	case EventStoreError:
		return fmt.Sprintf("store error (%v)", e.Err)
	case EventResync:
		return "resync"
	case EventResyncSkipped:
		return "resync skipped (no handler due)"
	case EventWatchListSynced:
		return fmt.Sprintf("watch-list synced %d items at rv=%s; watching on", e.Items, e.ResourceVersion)
	case EventWatchListRetry:
		if e.Err == nil {
			return fmt.Sprintf("watch-list stream ended before its end bookmark; watch-list again at rv=%s", e.ResourceVersion)
		}
		return fmt.Sprintf("watch-list failed (%v); watch-list again at rv=%s after backoff %v", e.Err, e.ResourceVersion, e.Delay)
	case EventWatchListFallback:
		return fmt.Sprintf("watch-list failed (%v); fall back to list", e.Err)
	}
	return e.Kind.String()
}

// VeryShortWatchError ends a stream the server closed within a second without delivering any
// event (informer.md §7.6). The message is client-go's.
type VeryShortWatchError struct {
	Name string
}

func (e *VeryShortWatchError) Error() string {
	return fmt.Sprintf("very short watch: %s: Unexpected watch close - "+
		"watch lasted less than a second and no items received", e.Name)
}

// phase is where the Reflector is in its ListAndWatch cycle.
type phase int

const (
	phaseIdle         phase = iota + 1 // not started
	phaseList                          // a LIST (or its next page) is to be issued
	phaseListing                       // a LIST is in flight
	phaseWatch                         // a WATCH is to be issued
	phaseWatchOpening                  // a WATCH is in flight
	phaseWatching                      // a stream is open
	phaseBackoff                       // waiting until backoffUntil, then backoffThen
	phaseStopped                       // Stop was called
)

// Reflector is client-go's Reflector (informer.md §7, classic list+watch) as a sans-IO state
// machine: it never performs a request, starts a goroutine or reads a timer. A driver asks it
// which request to issue, performs it, and feeds the outcome back:
//
//	r.Start()
//	loop:
//	  if r.HasRequest() {                 // no side effects; poll it as often as needed
//	      req, _ := r.NextRequest()       // marks it in flight (and draws a WATCH's timeout)
//	      LIST:  r.ListDone(list, err)
//	      WATCH: r.WatchOpened(err); then, while r.Watching(), feed each event with
//	             r.WatchEvent (stop the watcher when it returns true) or r.WatchClosed()
//	  }
//	  at r.NextDeadline(): r.Tick()
//	  after Tick and WatchOpened: if a watcher is open but !r.Watching(), stop it
//	r.Stop()
//
// The cycle it runs is client-go's: LIST at "0" (or the last RV), Replace the store, WATCH from
// the list RV, re-watch at once after a clean close, back off and re-watch after 429 or
// connection refused, end the pass on any other failure and relist after one backoff delay
// (informer.md §7.2–§7.7, §13 rule 10). The resync timer runs from each successful LIST until the
// pass ends (informer.md §2.3).
//
// A Reflector holds no mutex: the driver must serialise all calls (the goroutine driver holds its
// own lock; the simulator is single-threaded). Misuse, such as feeding an outcome for a request
// that is not in flight, panics with an invariant.Violation.
type Reflector struct {
	store     ReflectorStore
	bookmarks BookmarkQueue // the store, when it takes bookmarks; else nil

	name            string
	typeDescription string
	expectedType    reflect.Type
	expectedGVK     *schema.GroupVersionKind
	// expectedAPIVer is expectedGVK's group/version as an apiVersion string, "" without
	// expectedGVK: hasExpectedGVK compares it with an unstructured object's apiVersion.
	expectedAPIVer  string
	resyncPeriod    time.Duration
	shouldResync    func() bool
	clock           clock.PassiveClock
	rng             *rand.Rand
	minWatchTimeout time.Duration
	maxWatchTimeout time.Duration
	pageSize        int64
	useWatchList    bool
	transform       TransformFunc
	delay           *backoffDelay
	errorHandler    func(error)
	onEvent         func(ReflectorEvent)

	phase        phase
	backoffUntil time.Time // phaseBackoff only
	backoffThen  phase     // phaseBackoff only: phaseList (next pass) or phaseWatch (re-watch)

	lastSyncRV    string
	rvUnavailable bool // the last RV answered 410/too large: list and watch-list at "" (§7.4)
	paginated     bool // an RV="0" list came back in pages: keep paging (§7.4)

	// The LIST in progress (phaseList, phaseListing).
	list listState

	// The watch in progress (phaseWatchOpening, phaseWatching).
	watchStart         time.Time // when the WATCH was issued
	watchRV            string    // the RV the WATCH asked for
	watchEvents        int       // events handled on this stream (skipped ones excluded)
	propagateFromStart bool      // the watch started at a real RV: every event advances lastSyncRV
	seenNonAdded       bool      // a MODIFIED/DELETED/BOOKMARK was seen on this stream

	// The watch-list attempt of the current pass (informer.md §7.5): while watchList is set,
	// the next or current WATCH is a watch-list request, whose events go to tempStore; wlRV is
	// client-go's local list RV, taken from events once a non-ADDED one was seen.
	watchList bool
	tempStore Store
	wlRV      string

	// The resync timer of the current pass (informer.md §2.3).
	resyncActive bool
	resyncAt     time.Time
	resyncErr    error // a Resync error not yet delivered to a stream

	watchErrors int // errors the default OnWatchError saw
}

// listState is one call of client-go's reflector list(): possibly several pages, possibly one
// retry at RV "" after 410/too large, possibly one full-list fallback after a 410 on a
// continuation page.
type listState struct {
	passRV      string             // the RV of the pass's first attempt (client-go's options.ResourceVersion)
	requestedRV string             // the RV this attempt asked for
	paged       bool               // this attempt saw a continue token (client-go's paginatedResult)
	pageSize    int64              // decided once per list() from the first RV (§7.4)
	opts        metav1.ListOptions // the next page to request
	retried     bool               // the RV "" retry has been issued
	fullList    bool               // the in-flight request is the pager's unpaginated fallback
	items       []runtime.Object   // pages received so far
	rv          string             // RV of the first page
	pages       int                // pages received so far
}

// NewReflector returns a Reflector writing to store, not yet started. It validates a copy of
// opts: Clock and Rand are required.
func NewReflector(store ReflectorStore, opts ReflectorOptions) (*Reflector, error) {
	if store == nil {
		return nil, errors.New("informer: NewReflector: store is nil")
	}
	if opts.Clock == nil {
		return nil, errors.New("informer: NewReflector: Clock is required")
	}
	if opts.Rand == nil {
		return nil, errors.New("informer: NewReflector: Rand is required")
	}
	if opts.ResyncPeriod < 0 {
		return nil, fmt.Errorf("informer: NewReflector: negative ResyncPeriod %v", opts.ResyncPeriod)
	}
	if opts.PageSize < 0 {
		return nil, fmt.Errorf("informer: NewReflector: negative PageSize %d", opts.PageSize)
	}
	r := &Reflector{
		store:           store,
		name:            opts.Name,
		typeDescription: typeDescription(opts.ExpectedType),
		expectedGVK:     expectedGVK(opts.ExpectedType),
		resyncPeriod:    opts.ResyncPeriod,
		shouldResync:    opts.ShouldResync,
		clock:           opts.Clock,
		rng:             opts.Rand,
		minWatchTimeout: defaultMinWatchTimeout,
		maxWatchTimeout: 2 * defaultMinWatchTimeout,
		pageSize:        opts.PageSize,
		useWatchList:    opts.UseWatchList,
		transform:       opts.Transform,
		errorHandler:    opts.OnWatchError,
		onEvent:         opts.OnEvent,
		phase:           phaseIdle,
	}
	if opts.ExpectedType != nil {
		r.expectedType = reflect.TypeOf(opts.ExpectedType)
	}
	if r.expectedGVK != nil {
		r.expectedAPIVer = r.expectedGVK.GroupVersion().String()
	}
	if bq, ok := store.(BookmarkQueue); ok {
		r.bookmarks = bq
	}
	// informer.md §7.1: a smaller MinWatchTimeout is ignored.
	if opts.MinWatchTimeout > defaultMinWatchTimeout {
		r.minWatchTimeout = opts.MinWatchTimeout
		r.maxWatchTimeout = 2 * opts.MinWatchTimeout
	}
	b := defaultReflectorBackoff()
	if opts.Backoff != nil {
		b = *opts.Backoff
	}
	r.delay = newBackoffDelay(b, defaultBackoffReset, opts.Clock, opts.Rand)
	if r.errorHandler == nil {
		r.errorHandler = func(error) { r.watchErrors++ }
	}
	return r, nil
}

// typeDescription is how errors name the listed type: the GVK of an unstructured expected type
// when it has one, else the Go type (client-go's getTypeDescriptionFromObject).
func typeDescription(expected runtime.Object) string {
	if expected == nil {
		return defaultExpectedTypeName
	}
	if gvk := expectedGVK(expected); gvk != nil {
		return gvk.String()
	}
	return reflect.TypeOf(expected).String()
}

// expectedGVK is the GVK watch events must carry: only checked for an unstructured expected type
// with a GVK set (informer.md §7.6).
func expectedGVK(expected runtime.Object) *schema.GroupVersionKind {
	u, ok := expected.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	gvk := u.GroupVersionKind()
	if gvk.Empty() {
		return nil
	}
	return &gvk
}

// hasExpectedGVK reports whether obj carries expectedGVK, for the common case where that can be
// told without parsing: an unstructured object whose kind and apiVersion strings are exactly the
// expected ones (parsing an apiVersion that is a GroupVersion's String gives that GroupVersion
// back). False means "not told": the caller parses and compares, as client-go does.
func (r *Reflector) hasExpectedGVK(obj runtime.Object) bool {
	u, ok := obj.(*unstructured.Unstructured)
	return ok && u.GetKind() == r.expectedGVK.Kind && u.GetAPIVersion() == r.expectedAPIVer
}

// Name returns the Reflector's name.
func (r *Reflector) Name() string { return r.name }

// TypeDescription returns how the Reflector names the type it lists in errors.
func (r *Reflector) TypeDescription() string { return r.typeDescription }

// UsesWatchList reports whether each pass starts with a watch-list request (informer.md §7.3).
func (r *Reflector) UsesWatchList() bool { return r.useWatchList }

// InWatchList reports whether the current pass is in its watch-list attempt: the next or open
// WATCH is a watch-list request whose events are not yet in the store.
func (r *Reflector) InWatchList() bool { return r.watchList && r.phase != phaseStopped }

// Start begins the first ListAndWatch pass: the next request is a LIST, issued at once
// (informer.md §7.2: the first pass is not delayed). Start on a started or stopped Reflector
// panics.
func (r *Reflector) Start() {
	if r.phase != phaseIdle { // checked first: Check's arguments would be boxed (allocated) even when it passes
		invariant.Check(false, "reflector %s: Start called twice (phase %d)", r.name, r.phase)
	}
	r.startPass()
}

// Stop is the context being cancelled: no request is issued afterwards, no timer is pending,
// and outcomes of a request still in flight are ignored (client-go discards a LIST that returns
// after cancellation, informer.md §7.4). The driver stops an open watcher itself. Stop is
// idempotent.
func (r *Reflector) Stop() {
	r.phase = phaseStopped
	r.resyncActive = false
	r.resyncErr = nil
}

// Stopped reports whether Stop was called.
func (r *Reflector) Stopped() bool { return r.phase == phaseStopped }

// HasRequest reports whether NextRequest would return a request now. Unlike NextRequest it
// changes nothing (no request is marked in flight, no watch timeout is drawn), so a driver that
// offers "send the request" as a schedulable action can ask it as often as it likes.
func (r *Reflector) HasRequest() bool {
	return r.phase == phaseList || r.phase == phaseWatch
}

// NextRequest returns the request to issue now, if any, and marks it in flight: at most one
// request is in flight, and the next call returns false until its outcome is fed back with
// ListDone (LIST) or WatchOpened (WATCH). It also returns false while a backoff is pending (see
// NextDeadline), while a stream is open, and before Start or after Stop.
func (r *Reflector) NextRequest() (Request, bool) {
	switch r.phase {
	case phaseList:
		r.phase = phaseListing
		return Request{Verb: RequestList, Options: r.list.opts}, true
	case phaseWatch:
		// informer.md §7.1: TimeoutSeconds = int64(min + rand·(max−min)) seconds.
		minS, maxS := r.minWatchTimeout.Seconds(), r.maxWatchTimeout.Seconds()
		timeout := int64(minS + r.rng.Float64()*(maxS-minS))
		opts := metav1.ListOptions{
			ResourceVersion:     r.lastSyncRV,
			TimeoutSeconds:      &timeout,
			AllowWatchBookmarks: true,
		}
		r.phase = phaseWatchOpening
		r.watchStart = r.clock.Now()
		r.watchEvents = 0
		r.seenNonAdded = false
		if r.watchList {
			// informer.md §7.5: a fresh temporary store and local RV for every attempt; the
			// RV is client-go's rewatchResourceVersion ("" once marked unavailable).
			if r.rvUnavailable {
				opts.ResourceVersion = ""
			}
			opts.ResourceVersionMatch = metav1.ResourceVersionMatchNotOlderThan
			sendInitialEvents := true
			opts.SendInitialEvents = &sendInitialEvents
			r.tempStore = NewStore(DeletionHandlingMetaNamespaceKeyFunc)
			r.wlRV = ""
		}
		r.watchRV = opts.ResourceVersion
		// informer.md §7.6: a watch from "" or "0" begins with synthetic ADDED events in no RV
		// order, so they must not move lastSyncRV until a non-ADDED event is seen.
		r.propagateFromStart = opts.ResourceVersion != "" && opts.ResourceVersion != "0"
		return Request{Verb: RequestWatch, Options: opts}, true
	}
	return Request{}, false
}

// ListDone feeds back the outcome of the in-flight LIST: list is a meta.List (typed or
// *unstructured.UnstructuredList) when err is nil. A page with a continue token makes the next
// request the following page; a 410 or "too large resource version" makes it an immediate LIST at
// RV "" (once per pass, informer.md §7.4); any other failure ends the pass with the error
// "failed to list <type>: …" (error handler, then backoff). On success the store is replaced
// with the items at the list's RV, and the watch comes next (informer.md §7.3, §7.4).
// ListDone without a LIST in flight panics; after Stop it is ignored.
func (r *Reflector) ListDone(list runtime.Object, err error) {
	if r.phase == phaseStopped {
		return
	}
	if r.phase != phaseListing { // checked first: Check's arguments would be boxed (allocated) even when it passes
		invariant.Check(false, "reflector %s: ListDone without a LIST in flight (phase %d)", r.name, r.phase)
	}
	l := &r.list
	if err != nil {
		// The pager (informer.md §7.4): a 410 on a continuation page is answered with one full,
		// unpaginated list at the originally requested RV.
		if apierrors.IsResourceExpired(err) && l.opts.Continue != "" && !l.fullList {
			l.fullList = true
			l.opts = metav1.ListOptions{ResourceVersion: l.requestedRV}
			l.items, l.rv, l.pages = nil, "", 0
			r.phase = phaseList
			return
		}
		if isExpiredError(err) || isTooLargeResourceVersionError(err) {
			r.rvUnavailable = true
			if !l.retried {
				r.emit(ReflectorEvent{Kind: EventRelistUnavailable, Err: err})
				l.retried = true
				r.beginListAttempt("")
				return
			}
		}
		r.endPass(fmt.Errorf("failed to list %v: %w", r.typeDescription, err), true)
		return
	}
	// informer.md §7.4: Table lists (a server-side printing format) are rejected.
	if ul, ok := list.(*unstructured.UnstructuredList); ok && isTableGVK(ul.GroupVersionKind()) {
		r.endPass(fmt.Errorf("unsupported list gvk: %v, type: %v", ul.GroupVersionKind(), r.typeDescription), true)
		return
	}
	lm, aerr := meta.ListAccessor(list)
	if aerr != nil {
		r.endPass(fmt.Errorf("unable to understand list result %#v: %v", list, aerr), true)
		return
	}
	items, eerr := meta.ExtractList(list)
	if eerr != nil {
		r.endPass(fmt.Errorf("unable to understand list result %#v (%v)", list, eerr), true)
		return
	}
	if !l.fullList && (lm.GetContinue() != "" || l.pages > 0) {
		if l.pages == 0 {
			l.rv = lm.GetResourceVersion()
		}
		l.paged = true
		l.pages++
		l.items = append(l.items, items...)
		if lm.GetContinue() != "" {
			r.emit(ReflectorEvent{Kind: EventListPage, Items: len(items)})
			// Continuation pages carry no RV: the token pins the snapshot (client-go's pager).
			l.opts.Continue = lm.GetContinue()
			l.opts.ResourceVersion = ""
			l.opts.ResourceVersionMatch = ""
			r.phase = phaseList
			return
		}
		items = l.items
	} else {
		l.rv = lm.GetResourceVersion()
	}
	if l.passRV == "0" && l.paged {
		r.paginated = true
	}
	r.rvUnavailable = false
	objs := make([]any, len(items))
	for i, it := range items {
		objs[i] = it
	}
	if serr := r.store.Replace(objs, l.rv); serr != nil {
		r.endPass(fmt.Errorf("unable to sync list result: %v", serr), true)
		return
	}
	r.lastSyncRV = l.rv
	r.emit(ReflectorEvent{Kind: EventListed, ResourceVersion: l.rv, Items: len(objs)})
	r.list = listState{}
	// informer.md §2.3: the resync timer starts with the watch phase of each pass.
	if r.resyncPeriod > 0 {
		r.resyncActive = true
		r.resyncAt = r.clock.Now().Add(r.resyncPeriod)
	}
	r.phase = phaseWatch
}

// WatchOpened feeds back the outcome of opening the in-flight WATCH. nil means the stream is open:
// feed its events with WatchEvent and its end with WatchClosed. 429 or connection refused means a
// backoff, then a re-watch from the same RV; any other error ends the pass with that error (error
// handler, backoff, relist; informer.md §7.6, §7.7). If a Resync error is pending when the stream
// opens, the Reflector ends the stream at once: Watching() is then false and the driver must stop
// the watcher. WatchOpened without a WATCH in flight panics; after Stop it is ignored.
func (r *Reflector) WatchOpened(err error) {
	if r.phase == phaseStopped {
		return
	}
	if r.phase != phaseWatchOpening { // checked first: Check's arguments would be boxed (allocated) even when it passes
		invariant.Check(false, "reflector %s: WatchOpened without a WATCH in flight (phase %d)", r.name, r.phase)
	}
	if err != nil && r.watchList {
		r.watchListFailed(err)
		return
	}
	if err != nil {
		if isWatchErrorRetriable(err) {
			r.rewatchAfterBackoff(err)
			return
		}
		r.endPass(err, true)
		return
	}
	r.phase = phaseWatching
	r.emit(ReflectorEvent{Kind: EventWatchOpened, ResourceVersion: r.watchRV})
	if r.resyncErr != nil {
		// client-go: the resync goroutine parked its error on a channel the next stream reads
		// first (informer.md §2.3).
		r.endStream(r.takeResyncErr())
	}
}

// WatchEvent feeds one event of the open stream. ADDED, MODIFIED and DELETED go to the store's
// Add, Update and Delete; a BOOKMARK changes no object and is passed to a BookmarkQueue store;
// each then advances LastSyncResourceVersion to the event's RV (not for ADDED events of a watch
// started at "" or "0" until a non-ADDED event was seen). Events of an unexpected type are
// skipped without advancing the RV (informer.md §7.6). An Error event ends the stream: it
// returns stop=true, and the driver must stop the watcher and feed nothing more from it
// (informer.md §7.7 decides what comes next). WatchEvent without an open stream panics; after
// Stop it returns true.
func (r *Reflector) WatchEvent(ev watch.Event) (stop bool) {
	if r.phase == phaseStopped {
		return true
	}
	if r.phase != phaseWatching {
		// Checked before calling invariant.Check: its arguments would be boxed, one allocation
		// per watch event, even when the check passes.
		invariant.Check(false, "reflector %s: WatchEvent without an open stream (phase %d)", r.name, r.phase)
	}
	if ev.Type == watch.Error {
		r.endStream(apierrors.FromObject(ev.Object))
		return true
	}
	if ev.Object == nil {
		r.emit(ReflectorEvent{Kind: EventSkipped, Err: fmt.Errorf("%s event without an object", ev.Type)})
		return false
	}
	if r.expectedType != nil {
		if got := reflect.TypeOf(ev.Object); got != r.expectedType {
			r.emit(ReflectorEvent{Kind: EventSkipped, Err: fmt.Errorf("unexpected watch event object type: want %v, got %v", r.expectedType, got)})
			return false
		}
	}
	expectedKind := false // ev.Object is unstructured of the expected kind and apiVersion
	if r.expectedGVK != nil {
		if expectedKind = r.hasExpectedGVK(ev.Object); !expectedKind {
			if got := ev.Object.GetObjectKind().GroupVersionKind(); got != *r.expectedGVK {
				r.emit(ReflectorEvent{Kind: EventSkipped, Err: fmt.Errorf("unexpected watch event object gvk: want %v, got %v", *r.expectedGVK, got)})
				return false
			}
		}
	}
	// An object just found of the expected kind is a Table only if that kind is, so its kind is
	// not read again (a map lookup per watch event).
	maybeTable := !expectedKind || r.expectedGVK.Kind == "Table"
	if u, ok := ev.Object.(*unstructured.Unstructured); ok && maybeTable && u.GetKind() == "Table" && isTableGVK(u.GroupVersionKind()) {
		r.emit(ReflectorEvent{Kind: EventSkipped, Err: fmt.Errorf("unsupported watch event object gvk: %v", u.GroupVersionKind())})
		return false
	}
	m, err := meta.Accessor(ev.Object)
	if err != nil {
		r.emit(ReflectorEvent{Kind: EventSkipped, Err: fmt.Errorf("unable to understand watch event: %w", err)})
		return false
	}
	rv := m.GetResourceVersion()
	if r.watchList {
		return r.watchListEvent(ev, m, rv)
	}
	var serr error
	switch ev.Type {
	case watch.Added:
		serr = r.store.Add(ev.Object)
	case watch.Modified:
		r.seenNonAdded = true
		serr = r.store.Update(ev.Object)
	case watch.Deleted:
		r.seenNonAdded = true
		serr = r.store.Delete(ev.Object)
	case watch.Bookmark:
		r.seenNonAdded = true
		if r.bookmarks != nil {
			serr = r.bookmarks.Bookmark(rv)
		}
	default:
		serr = fmt.Errorf("unknown watch event type %q", ev.Type)
	}
	if serr != nil {
		// informer.md §7.6: store errors are only reported; the RV still advances.
		r.emit(ReflectorEvent{Kind: EventStoreError, ResourceVersion: rv, Err: serr})
	}
	if r.propagateFromStart || r.seenNonAdded {
		r.lastSyncRV = rv
	}
	r.watchEvents++
	return false
}

// WatchClosed reports that the server closed the open stream. A stream that lasted at least a
// second or delivered an event ended cleanly: the next request is a re-watch from
// LastSyncResourceVersion, with no LIST and no backoff. Otherwise it is a VeryShortWatchError,
// which ends the pass (backoff, relist; informer.md §7.6, §7.7). WatchClosed without an open
// stream panics; after Stop it is ignored.
func (r *Reflector) WatchClosed() {
	if r.phase == phaseStopped {
		return
	}
	if r.phase != phaseWatching { // checked first: Check's arguments would be boxed (allocated) even when it passes
		invariant.Check(false, "reflector %s: WatchClosed without an open stream (phase %d)", r.name, r.phase)
	}
	if r.clock.Since(r.watchStart) < veryShortWatch && r.watchEvents == 0 {
		r.endStream(&VeryShortWatchError{Name: r.name})
		return
	}
	if r.watchList {
		// informer.md §7.5: closed before the end bookmark: a new watch-list request, at once.
		r.emit(ReflectorEvent{Kind: EventWatchListRetry, ResourceVersion: r.watchListRV()})
		r.phase = phaseWatch
		return
	}
	r.emit(ReflectorEvent{Kind: EventWatchClosed, ResourceVersion: r.lastSyncRV})
	r.phase = phaseWatch
}

// NextDeadline returns the earliest time at which Tick has something to do: the end of a
// backoff or the resync timer. false means no timer is pending.
func (r *Reflector) NextDeadline() (time.Time, bool) {
	var at time.Time
	ok := false
	if r.phase == phaseBackoff {
		at, ok = r.backoffUntil, true
	}
	if r.resyncActive && (!ok || r.resyncAt.Before(at)) {
		at, ok = r.resyncAt, true
	}
	return at, ok
}

// Tick fires every timer due at Clock.Now(): the resync timer first (ShouldResync, then the
// store's Resync, then a new timer one period from now; a Resync error ends the open stream, or
// the next one to open, informer.md §2.3), then the end of a backoff, after which NextRequest has
// a request. If a stream was open and Watching() is false after Tick, the driver must stop the
// watcher. Tick with nothing due does nothing.
func (r *Reflector) Tick() {
	now := r.clock.Now()
	if r.resyncActive && !now.Before(r.resyncAt) {
		r.fireResync(now)
	}
	if r.phase == phaseBackoff && !now.Before(r.backoffUntil) {
		r.phase = r.backoffThen
		if r.phase == phaseList {
			r.startPass()
		}
	}
}

// fireResync is one iteration of client-go's resync goroutine (informer.md §2.3).
func (r *Reflector) fireResync(now time.Time) {
	if r.shouldResync == nil || r.shouldResync() {
		r.emit(ReflectorEvent{Kind: EventResync})
		if err := r.store.Resync(); err != nil {
			// The resync goroutine exits after handing its error over: no further ticks this pass.
			r.resyncActive = false
			if r.phase == phaseWatching {
				r.endStream(err)
			} else {
				r.resyncErr = err
			}
			return
		}
	} else {
		r.emit(ReflectorEvent{Kind: EventResyncSkipped})
	}
	r.resyncAt = now.Add(r.resyncPeriod)
}

// LastSyncResourceVersion is the RV of the last LIST or of the last watch event applied
// (informer.md §7.6, §7.8); "" before the first LIST.
func (r *Reflector) LastSyncResourceVersion() string { return r.lastSyncRV }

// Watching reports whether a stream is open: the driver feeds WatchEvent and WatchClosed only
// while it is true.
func (r *Reflector) Watching() bool { return r.phase == phaseWatching }

// WatchErrors is the number of errors the default error handler received (0 when
// ReflectorOptions.OnWatchError was given).
func (r *Reflector) WatchErrors() int { return r.watchErrors }

// startPass begins a ListAndWatch pass: a LIST at client-go's relistResourceVersion
// (informer.md §7.4).
func (r *Reflector) startPass() {
	r.resyncActive = false
	r.resyncErr = nil
	if r.useWatchList {
		// informer.md §7.3: every pass, relists included, tries watch-list first.
		r.watchList = true
		r.phase = phaseWatch
		return
	}
	r.startListPass()
}

// startListPass begins the LIST of a pass: at first, or after the watch-list attempt fell back.
func (r *Reflector) startListPass() {
	rv := r.lastSyncRV
	switch {
	case r.rvUnavailable:
		rv = ""
	case rv == "":
		rv = "0"
	}
	r.list = listState{}
	// informer.md §7.4: the page size is chosen once per list, from the first RV.
	switch {
	case r.pageSize != 0:
		r.list.pageSize = r.pageSize
	case r.paginated:
		r.list.pageSize = defaultPageSize
	case rv != "" && rv != "0":
		r.list.pageSize = 0
	default:
		r.list.pageSize = defaultPageSize
	}
	r.list.passRV = rv
	r.beginListAttempt(rv)
}

// beginListAttempt makes the next request a first page at rv, keeping the pass's page size.
func (r *Reflector) beginListAttempt(rv string) {
	l := &r.list
	l.requestedRV = rv
	l.paged = false
	l.opts = metav1.ListOptions{ResourceVersion: rv, Limit: l.pageSize}
	l.fullList = false
	l.items, l.rv, l.pages = nil, "", 0
	r.phase = phaseList
}

// endStream decides what follows the end of a stream with err (informer.md §7.7): a 429 backs
// off and re-watches; anything else (410 included: the relist uses the last RV) ends the pass
// without calling the error handler.
func (r *Reflector) endStream(err error) {
	if r.watchList {
		r.watchListFailed(err)
		return
	}
	if apierrors.IsTooManyRequests(err) {
		r.rewatchAfterBackoff(err)
		return
	}
	r.endPass(err, false)
}

// rewatchAfterBackoff waits one backoff delay, then re-watches from the last RV; the pass and its
// resync timer go on.
func (r *Reflector) rewatchAfterBackoff(err error) {
	d := r.delay.Next()
	r.phase = phaseBackoff
	r.backoffUntil = r.clock.Now().Add(d)
	r.backoffThen = phaseWatch
	r.emit(ReflectorEvent{Kind: EventWatchRetry, ResourceVersion: r.lastSyncRV, Delay: d, Err: err})
}

// endPass ends the ListAndWatch pass: its resync timer stops, the error handler sees err if the
// pass returned it, and the next pass starts after one backoff delay (informer.md §7.2).
func (r *Reflector) endPass(err error, returned bool) {
	r.resyncActive = false
	r.resyncErr = nil
	r.list = listState{}
	r.watchList, r.tempStore = false, nil
	if returned && err != nil {
		r.errorHandler(err)
	}
	d := r.delay.Next()
	r.phase = phaseBackoff
	r.backoffUntil = r.clock.Now().Add(d)
	r.backoffThen = phaseList
	r.emit(ReflectorEvent{Kind: EventPassEnded, Delay: d, Err: err})
}

func (r *Reflector) takeResyncErr() error {
	err := r.resyncErr
	r.resyncErr = nil
	return err
}

func (r *Reflector) emit(e ReflectorEvent) {
	if r.onEvent != nil {
		r.onEvent(e)
	}
}

// isTableGVK recognises meta.k8s.io Table, which the Reflector does not support (informer.md §7.4,
// §7.6).
func isTableGVK(gvk schema.GroupVersionKind) bool {
	return gvk.Group == "meta.k8s.io" && (gvk.Version == "v1" || gvk.Version == "v1beta1") && gvk.Kind == "Table"
}

// isExpiredError: 410 answered as Expired (1.18+) or Gone (older servers).
func isExpiredError(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// isTooLargeResourceVersionError recognises the three forms of "the RV asked for is newer than
// the server has" (informer.md §7.4): the ResourceVersionTooLarge status cause, and the legacy
// Timeout errors whose cause message or status message says "Too large resource version".
func isTooLargeResourceVersionError(err error) bool {
	if apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		return true
	}
	if !apierrors.IsTimeout(err) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	s := status.Status()
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			if c.Message == "Too large resource version" {
				return true
			}
		}
	}
	return strings.Contains(s.Message, "Too large resource version")
}

// isWatchErrorRetriable: connection refused (the apiserver is probably restarting) and 429 are
// retried as a watch, without a relist (informer.md §7.6).
func isWatchErrorRetriable(err error) bool {
	return utilnet.IsConnectionRefused(err) || apierrors.IsTooManyRequests(err)
}

// watchListEvent applies one event of a watch-list stream to the temporary store (informer.md
// §7.5): every object event is applied, so only final states reach the queue; the local list RV
// follows the events once a non-ADDED one was seen; the bookmark annotated
// k8s.io/initial-events-end completes the attempt.
func (r *Reflector) watchListEvent(ev watch.Event, m metav1.Object, rv string) (stop bool) {
	var serr error
	end := false
	switch ev.Type {
	case watch.Added:
		serr = r.tempAdd(ev.Object)
	case watch.Modified:
		r.seenNonAdded = true
		serr = r.tempUpdate(ev.Object)
	case watch.Deleted:
		r.seenNonAdded = true
		serr = r.tempStore.Delete(ev.Object)
	case watch.Bookmark:
		r.seenNonAdded = true
		end = m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
	default:
		serr = fmt.Errorf("unknown watch event type %q", ev.Type)
	}
	if serr != nil {
		r.emit(ReflectorEvent{Kind: EventStoreError, ResourceVersion: rv, Err: serr})
	}
	if r.seenNonAdded {
		r.wlRV = rv
	}
	r.watchEvents++
	if end {
		r.watchListSynced()
	}
	return r.phase != phaseWatching
}

func (r *Reflector) tempAdd(obj runtime.Object) error {
	o, err := r.transformed(obj)
	if err != nil {
		return err
	}
	return r.tempStore.Add(o)
}

func (r *Reflector) tempUpdate(obj runtime.Object) error {
	o, err := r.transformed(obj)
	if err != nil {
		return err
	}
	return r.tempStore.Update(o)
}

func (r *Reflector) transformed(obj any) (any, error) {
	if r.transform == nil {
		return obj, nil
	}
	return r.transform(obj)
}

// watchListSynced completes the watch-list attempt (informer.md §7.5, §14 T8): the store is
// replaced by the temporary store's objects at the end bookmark's RV, the resync timer starts,
// and the open stream goes on as the pass's watch, whose every event now advances the RV. The
// objects' order is Go map order in client-go; here it is drawn from the seed.
func (r *Reflector) watchListSynced() {
	objs := r.tempStore.List()
	r.rng.Shuffle(len(objs), func(i, j int) { objs[i], objs[j] = objs[j], objs[i] })
	rv := r.wlRV
	r.watchList, r.tempStore, r.wlRV = false, nil, ""
	r.rvUnavailable = false
	if err := r.store.Replace(objs, rv); err != nil {
		// client-go: watchList returns the error, and ListAndWatch falls back to a LIST with
		// the watcher discarded.
		r.emit(ReflectorEvent{Kind: EventWatchListFallback, Err: fmt.Errorf("unable to sync watch-list result: %w", err)})
		r.startListPass() // the stream is left: the driver stops the watcher

		return
	}
	r.lastSyncRV = rv
	r.emit(ReflectorEvent{Kind: EventWatchListSynced, ResourceVersion: rv, Items: len(objs)})
	if r.resyncPeriod > 0 {
		r.resyncActive = true
		r.resyncAt = r.clock.Now().Add(r.resyncPeriod)
	}
	// client-go's watch() starts its own clock and event count for the reused watcher
	// (informer.md §7.6: a reused watch-list watcher advances the RV from the start).
	r.watchStart = r.clock.Now()
	r.watchEvents = 0
	r.propagateFromStart = true
}

// watchListFailed classifies a failure of the watch-list attempt, at open or in the stream, as
// client-go's isErrorRetriableWithSideEffectsFn does (informer.md §7.5): 429 or connection
// refused → one backoff delay, then watch-list again; 410 or too large → mark the RV unavailable
// and watch-list again at once, at ""; anything else → fall back to a LIST within the same pass.
// A stream that was open is left: the driver stops the watcher.
func (r *Reflector) watchListFailed(err error) {
	r.tempStore, r.wlRV = nil, ""
	switch {
	case isWatchErrorRetriable(err):
		d := r.delay.Next()
		r.phase = phaseBackoff
		r.backoffUntil = r.clock.Now().Add(d)
		r.backoffThen = phaseWatch
		r.emit(ReflectorEvent{Kind: EventWatchListRetry, ResourceVersion: r.watchListRV(), Delay: d, Err: err})
	case isExpiredError(err) || isTooLargeResourceVersionError(err):
		r.rvUnavailable = true
		r.phase = phaseWatch
		r.emit(ReflectorEvent{Kind: EventWatchListRetry, ResourceVersion: r.watchListRV(), Err: err})
	default:
		r.watchList = false
		r.emit(ReflectorEvent{Kind: EventWatchListFallback, Err: err})
		r.startListPass()
	}
}

// watchListRV is the RV the next watch-list request asks for.
func (r *Reflector) watchListRV() string {
	if r.rvUnavailable {
		return ""
	}
	return r.lastSyncRV
}
