package informer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
)

// Test helpers of the shared informer tests: a small in-memory apiserver (infLW) with real
// resourceVersions, a history for watches and scripted failures; a recording handler (infRec);
// and a step-driver harness (infStep) that runs the informer to quiescence. Names start with
// "inf" so they do not collide with other test files of the package.

var infT0 = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// infObj returns object ns/name at rv.
func infObj(name string, rv int) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: strconv.Itoa(rv)},
	}
}

// infDescribe renders an object as "ns/name@rv", a tombstone as "tomb(ns/name@rv)".
func infDescribe(obj any) string {
	key, rv, tomb := describeObj(obj)
	return objText(key, rv, tomb)
}

// infLW is the in-memory ListerWatcher. Every write bumps a global resourceVersion, is kept in
// the history, and goes to every open watcher. It is safe for concurrent use, so the goroutine
// driver can use it too.
type infLW struct {
	mu       sync.Mutex
	rv       int
	objs     map[string]*metav1.PartialObjectMetadata
	history  []watch.Event
	watchers []*infWatcher
	requests []string
	listErrs []error
	// watchBuffer is the capacity of each watcher's channel.
	watchBuffer int
	// watchList makes infLW serve watch-list requests and say so: false (the default) keeps
	// the informer in classic list+watch, as client-go's fake clients do, by answering true to
	// IsWatchListSemanticsUnSupported.
	watchList bool
}

// IsWatchListSemanticsUnSupported is client-go's watch-list probe (informer.md §7.3).
func (lw *infLW) IsWatchListSemanticsUnSupported() bool { return !lw.watchList }

func newInfLW() *infLW {
	return &infLW{objs: map[string]*metav1.PartialObjectMetadata{}, watchBuffer: 4096}
}

// set creates or updates name at the next RV and returns that RV.
func (lw *infLW) set(name string) int {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.rv++
	o := infObj(name, lw.rv)
	t := watch.Modified
	if _, ok := lw.objs[name]; !ok {
		t = watch.Added
	}
	lw.objs[name] = o
	lw.publishLocked(watch.Event{Type: t, Object: o}, true)
	return lw.rv
}

// del deletes name at the next RV.
func (lw *infLW) del(name string) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.rv++
	delete(lw.objs, name)
	lw.publishLocked(watch.Event{Type: watch.Deleted, Object: infObj(name, lw.rv)}, true)
}

// inject sends ev to the open watchers without changing the state (scripted odd events).
func (lw *infLW) inject(ev watch.Event) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.publishLocked(ev, false)
}

// bookmark sends a BOOKMARK at the next RV.
func (lw *infLW) bookmark() {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.rv++
	lw.publishLocked(watch.Event{Type: watch.Bookmark, Object: infObj("", lw.rv)}, false)
}

// expire sends a 410 Expired error event to every watcher and closes them, then forgets the
// history, so that a watch cannot resume: the informer must relist.
func (lw *infLW) expire() {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	st := apierrors.NewResourceExpired("too old resource version").Status()
	lw.publishLocked(watch.Event{Type: watch.Error, Object: &st}, false)
	for _, w := range lw.watchers {
		w.closeLocked()
	}
	lw.watchers = nil
	lw.history = nil
}

// closeWatches ends every open stream cleanly, as a server's watch timeout does (§14 T3).
func (lw *infLW) closeWatches() {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	for _, w := range lw.watchers {
		w.closeLocked()
	}
	lw.watchers = nil
}

// failNextList makes the next LIST answer err.
func (lw *infLW) failNextList(err error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.listErrs = append(lw.listErrs, err)
}

func (lw *infLW) publishLocked(ev watch.Event, keep bool) {
	if keep {
		lw.history = append(lw.history, ev)
	}
	for _, w := range lw.watchers {
		w.ch <- ev
	}
}

// takeRequests returns the requests received since the last call, as text.
func (lw *infLW) takeRequests() []string {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	r := lw.requests
	lw.requests = nil
	return r
}

func (lw *infLW) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.requests = append(lw.requests, Request{Verb: RequestList, Options: options}.String())
	if len(lw.listErrs) > 0 {
		err := lw.listErrs[0]
		lw.listErrs = lw.listErrs[1:]
		return nil, err
	}
	names := make([]string, 0, len(lw.objs))
	for n := range lw.objs {
		names = append(names, n)
	}
	slices.Sort(names)
	list := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(lw.rv)}}
	for _, n := range names {
		list.Items = append(list.Items, *lw.objs[n])
	}
	return list, nil
}

func (lw *infLW) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	o := options
	o.TimeoutSeconds = nil // drawn from the seed; not part of the comparison
	lw.requests = append(lw.requests, Request{Verb: RequestWatch, Options: o}.String())
	if options.SendInitialEvents != nil && *options.SendInitialEvents {
		return lw.watchListLocked(options)
	}
	from, err := strconv.Atoi(options.ResourceVersion)
	if err != nil {
		return nil, fmt.Errorf("infLW: bad watch RV %q", options.ResourceVersion)
	}
	w := &infWatcher{lw: lw, ch: make(chan watch.Event, lw.watchBuffer)}
	for _, ev := range lw.history {
		if rv, _ := strconv.Atoi(ev.Object.(*metav1.PartialObjectMetadata).ResourceVersion); rv > from {
			w.ch <- ev
		}
	}
	lw.watchers = append(lw.watchers, w)
	return w, nil
}

// watchListLocked serves a watch-list request as an apiserver with a watch cache does
// (informer.md §7.5): synthetic ADDED events for the current objects, sorted by name, then a
// BOOKMARK at the current RV annotated k8s.io/initial-events-end, then live events.
func (lw *infLW) watchListLocked(options metav1.ListOptions) (watch.Interface, error) {
	if !lw.watchList {
		return nil, apierrors.NewBadRequest("infLW: watch-list not served")
	}
	if options.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan {
		return nil, apierrors.NewBadRequest("infLW: sendInitialEvents needs resourceVersionMatch=NotOlderThan")
	}
	w := &infWatcher{lw: lw, ch: make(chan watch.Event, lw.watchBuffer)}
	names := make([]string, 0, len(lw.objs))
	for n := range lw.objs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		w.ch <- watch.Event{Type: watch.Added, Object: lw.objs[n]}
	}
	end := infObj("", lw.rv)
	end.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	w.ch <- watch.Event{Type: watch.Bookmark, Object: end}
	lw.watchers = append(lw.watchers, w)
	return w, nil
}

// infWatcher is one watch stream of infLW.
type infWatcher struct {
	lw     *infLW
	ch     chan watch.Event
	closed bool
}

func (w *infWatcher) ResultChan() <-chan watch.Event { return w.ch }

func (w *infWatcher) Stop() {
	w.lw.mu.Lock()
	defer w.lw.mu.Unlock()
	w.closeLocked()
	w.lw.watchers = slices.DeleteFunc(w.lw.watchers, func(x *infWatcher) bool { return x == w })
}

func (w *infWatcher) closeLocked() {
	if !w.closed {
		w.closed = true
		close(w.ch)
	}
}

// infRec records what a handler saw, one line per call; safe for concurrent use.
type infRec struct {
	mu    sync.Mutex
	calls []string
}

func (r *infRec) add(s string) {
	r.mu.Lock()
	r.calls = append(r.calls, s)
	r.mu.Unlock()
}

func (r *infRec) OnAdd(obj any, isInInitialList bool) {
	s := "add " + infDescribe(obj)
	if isInInitialList {
		s += " init"
	}
	r.add(s)
}

func (r *infRec) OnUpdate(oldObj, newObj any) {
	r.add("update " + infDescribe(oldObj) + "->" + infDescribe(newObj))
}

func (r *infRec) OnDelete(obj any) { r.add("delete " + infDescribe(obj)) }

// take returns the calls recorded since the last take.
func (r *infRec) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls
	r.calls = nil
	return c
}

func (r *infRec) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

// infStep is the step-driver harness (t may be nil, for examples; failures then panic): an informer on a fake clock over an infLW, driven to
// quiescence with a fixed policy (reflector first, then the queue, then listeners in
// registration order).
type infStep struct {
	t     *testing.T
	lw    *infLW
	clock *clocktesting.FakeClock
	inf   SharedIndexInformer
	st    *Stepper
	w     watch.Interface // the open watch, if any
	trace []string
	// lwOverride, if set, serves the Reflector's requests instead of lw.
	lwOverride ListerWatcher
}

func newInfStep(t *testing.T, opts SharedIndexInformerOptions) *infStep {
	e := &infStep{t: t, lw: newInfLW(), clock: clocktesting.NewFakeClock(infT0)}
	opts.Clock = e.clock
	if opts.Rand == nil {
		opts.Rand = rand.New(rand.NewPCG(1, 2))
	}
	e.inf = NewSharedIndexInformerWithOptions(e.lw, &metav1.PartialObjectMetadata{}, opts)
	st, err := Steps(e.inf)
	if err != nil {
		panic(err)
	}
	e.st = st
	st.SetObserver(func(ev StepEvent) { e.trace = append(e.trace, ev.String()) })
	return e
}

// handler registers a new recorder with the given resync period (nil: the informer default).
func (e *infStep) handler(period *time.Duration) (*infRec, ResourceEventHandlerRegistration) {
	rec := &infRec{}
	reg, err := e.inf.AddEventHandlerWithOptions(rec, HandlerOptions{ResyncPeriod: period})
	if err != nil {
		panic(err)
	}
	return rec, reg
}

// serveOne performs one unit of Reflector work: issue a pending request, or feed one buffered
// event (or the close) of the open stream. It reports whether it did anything.
func (e *infStep) serveOne() bool {
	r := e.st.Reflector()
	if r == nil {
		return false
	}
	if e.w != nil && !r.Watching() {
		e.w.Stop()
		e.w = nil
	}
	if req, ok := r.NextRequest(); ok {
		ctx := context.Background()
		var lw ListerWatcher = e.lw
		if e.lwOverride != nil {
			lw = e.lwOverride
		}
		switch req.Verb {
		case RequestList:
			list, err := lw.ListWithContext(ctx, req.Options)
			r.ListDone(list, err)
		case RequestWatch:
			w, err := lw.WatchWithContext(ctx, req.Options)
			r.WatchOpened(err)
			if err == nil {
				e.w = w
				if !r.Watching() {
					e.w.Stop()
					e.w = nil
				}
			}
		}
		return true
	}
	if e.w == nil {
		return false
	}
	select {
	case ev, ok := <-e.w.ResultChan():
		if !ok {
			r.WatchClosed()
			e.w = nil
			return true
		}
		if r.WatchEvent(ev) {
			e.w.Stop()
			e.w = nil
		}
		return true
	default:
		return false
	}
}

// quiesce steps until nothing is enabled.
func (e *infStep) quiesce() {
	for range 100000 {
		if e.serveOne() {
			continue
		}
		if e.st.QueueLen() > 0 {
			_ = e.st.ProcessNext()
			continue
		}
		delivered := false
		for _, l := range e.st.Listeners() {
			if l.Buffered > 0 {
				e.st.DeliverNext(l.Registration)
				delivered = true
				break
			}
		}
		if !delivered {
			return
		}
	}
	panic("informer did not quiesce")
}

// advance moves the fake clock to now+d one deadline at a time, firing each timer and
// quiescing after it.
func (e *infStep) advance(d time.Duration) {
	target := e.clock.Now().Add(d)
	for {
		dl, ok := e.st.NextDeadline()
		if !ok || dl.After(target) {
			break
		}
		if dl.After(e.clock.Now()) {
			e.clock.SetTime(dl)
		}
		e.st.Tick()
		e.quiesce()
	}
	e.clock.SetTime(target)
}

// takeTrace returns the observer lines since the last call.
func (e *infStep) takeTrace() []string {
	t := e.trace
	e.trace = nil
	return t
}
