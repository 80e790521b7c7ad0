package informer

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/informersim/informersim/internal/invariant"
)

// informer.md §12.3 TestReflectorListAndWatch (classic mode), §7.3, §7.4, §7.6, §13 rule 10:
// the initial LIST asks for {RV "0", Limit 500}; the store is replaced at the list RV; the watch
// starts from that RV with bookmarks and a timeout in [300s, 600s]; every event reaches the store
// in order and the last one's RV becomes LastSyncResourceVersion.
func TestReflectorListAndWatch(t *testing.T) {
	h := newReflHarness(t, nil)
	h.noRequest() // nothing before Start
	h.r.Start()

	gotList := h.next(RequestList)
	if diff := cmp.Diff(metav1.ListOptions{ResourceVersion: "0", Limit: 500}, gotList); diff != "" {
		t.Errorf("first LIST options (-want +got):\n%s", diff)
	}
	h.noRequest() // at most one request in flight
	h.r.ListDone(reflList("10", "", reflPod("a", "3"), reflPod("b", "7")), nil)
	if got, want := h.r.LastSyncResourceVersion(), "10"; got != want {
		t.Errorf("LastSyncResourceVersion after LIST: got %q, want %q", got, want)
	}

	gotWatch := h.next(RequestWatch)
	if gotWatch.TimeoutSeconds == nil || *gotWatch.TimeoutSeconds < 300 || *gotWatch.TimeoutSeconds > 600 {
		t.Errorf("watch TimeoutSeconds: got %v, want in [300, 600]", gotWatch.TimeoutSeconds)
	}
	gotWatch.TimeoutSeconds = nil
	if diff := cmp.Diff(metav1.ListOptions{ResourceVersion: "10", AllowWatchBookmarks: true}, gotWatch); diff != "" {
		t.Errorf("WATCH options (-want +got):\n%s", diff)
	}
	h.r.WatchOpened(nil)

	for _, ev := range []watch.Event{
		reflEvent(watch.Added, reflPod("c", "11")),
		reflEvent(watch.Modified, reflPod("a", "12")),
		reflEvent(watch.Deleted, reflPod("b", "13")),
		reflBookmark("14"),
		reflEvent(watch.Added, reflPod("d", "15")),
	} {
		if stop := h.r.WatchEvent(ev); stop {
			t.Fatalf("WatchEvent(%v): got stop, want continue", ev.Type)
		}
	}
	want := []string{
		"replace [a@3 b@7] rv=10",
		"add c@11", "update a@12", "delete b@13", "bookmark 14", "add d@15",
	}
	if diff := cmp.Diff(want, h.store.take()); diff != "" {
		t.Errorf("store calls (-want +got):\n%s", diff)
	}
	if got, want := h.r.LastSyncResourceVersion(), "15"; got != want {
		t.Errorf("LastSyncResourceVersion: got %q, want %q", got, want)
	}
	if len(h.handled) != 0 {
		t.Errorf("error handler calls: got %v, want none", h.handled)
	}
}

// informer.md §12.3 TestReflectorWatchHandler, §7.6, §16 "object type mismatch": an event whose
// Go type differs from ExpectedType, or whose GVK differs from an unstructured ExpectedType's,
// is skipped and does not advance the RV.
func TestReflectorWatchHandlerSkipsWrongType(t *testing.T) {
	expected := &unstructured.Unstructured{}
	expected.SetGroupVersionKind(reflPodGVK)
	h := newReflHarness(t, func(o *ReflectorOptions) { o.ExpectedType = expected })
	if got, want := h.r.TypeDescription(), "/v1, Kind=Pod"; got != want {
		t.Errorf("TypeDescription: got %q, want %q", got, want)
	}
	h.r.Start()
	h.listAndWatch(reflList("10", ""))
	h.store.take()

	svc := reflPod("s", "11")
	svc.SetKind("Service")
	typed := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "p", ResourceVersion: "12"}}
	// The GVK is compared parsed: "/v1" is core v1 too (hasExpectedGVK's string comparison
	// does not tell; the parse does), "v2" is not.
	slash, v2 := reflPod("b", "12"), reflPod("c", "12")
	slash.SetAPIVersion("/v1")
	v2.SetAPIVersion("v2")
	for _, ev := range []watch.Event{
		reflEvent(watch.Added, svc),
		reflEvent(watch.Added, typed),
		reflEvent(watch.Modified, v2),
		reflEvent(watch.Modified, slash),
		reflEvent(watch.Modified, reflPod("a", "13")),
	} {
		h.r.WatchEvent(ev)
	}
	if diff := cmp.Diff([]string{"update b@12", "update a@13"}, h.store.take()); diff != "" {
		t.Errorf("store calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]ReflectorEventKind{EventWatchOpened, EventSkipped, EventSkipped, EventSkipped},
		h.kinds()[1:]); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	// A skipped event alone leaves the RV where it was.
	h.r.WatchEvent(reflEvent(watch.Added, typed))
	if got, want := h.r.LastSyncResourceVersion(), "13"; got != want {
		t.Errorf("LastSyncResourceVersion after a skipped event: got %q, want %q", got, want)
	}
}

// informer.md §12.3 TestReflectorHandleWatchResultChanClosedBefore, §7.6: a stream closed within
// a second with no event is a VeryShortWatchError; it ends the pass (no error handler call) and
// the relist comes after a backoff. A stream that lasted a second, or delivered an event, ended
// cleanly: re-watch at once from the last RV, no LIST, no backoff (§7.7, §12.3 T3).
func TestReflectorVeryShortWatch(t *testing.T) {
	h := newReflHarness(t, nil)
	h.r.Start()
	h.listAndWatch(reflList("10", ""))

	h.advance(999 * time.Millisecond)
	h.r.WatchClosed()
	var vs *VeryShortWatchError
	last := h.events[len(h.events)-1]
	if last.Kind != EventPassEnded || !errors.As(last.Err, &vs) {
		t.Fatalf("after a very short watch: got %v, want PassEnded with VeryShortWatchError", last)
	}
	if len(h.handled) != 0 {
		t.Errorf("error handler calls: got %v, want none (stream errors are not returned, §7.2)", h.handled)
	}
	h.noRequest()
	if d := h.fireDeadline(); d < 800*time.Millisecond || d >= 1600*time.Millisecond {
		t.Errorf("backoff before the relist: got %v, want in [0.8s, 1.6s)", d)
	}
	if got := h.next(RequestList); got.ResourceVersion != "10" {
		t.Errorf("relist RV: got %q, want %q", got.ResourceVersion, "10")
	}
}

// informer.md §7.7 and §13 rule 10: a clean close re-watches at once from the last RV.
func TestReflectorRewatchAfterCleanClose(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []watch.Event
		lasted time.Duration
		wantRV string
	}{
		{name: "lasted 1s, no events", lasted: time.Second, wantRV: "10"},
		{name: "one event, immediate close", events: []watch.Event{reflEvent(watch.Added, reflPod("x", "11"))}, wantRV: "11"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newReflHarness(t, nil)
			h.r.Start()
			h.listAndWatch(reflList("10", ""))
			for _, ev := range tc.events {
				h.r.WatchEvent(ev)
			}
			h.advance(tc.lasted)
			h.r.WatchClosed()
			if _, ok := h.r.NextDeadline(); ok {
				t.Errorf("NextDeadline after a clean close: got one, want none (no backoff)")
			}
			if got := h.next(RequestWatch); got.ResourceVersion != tc.wantRV {
				t.Errorf("re-watch RV: got %q, want %q", got.ResourceVersion, tc.wantRV)
			}
		})
	}
}

// informer.md §12.3 TestBackoffOnTooManyRequests, §7.6, §7.7: a 429 when opening the watch and a
// 429 in the stream each cost one backoff delay, then a re-watch from the last RV without a LIST.
func TestBackoffOnTooManyRequests(t *testing.T) {
	h := newReflHarness(t, nil)
	h.r.Start()
	h.next(RequestList)
	h.r.ListDone(reflList("10", ""), nil)

	h.next(RequestWatch)
	h.r.WatchOpened(reflTooMany())
	h.noRequest()
	if d := h.fireDeadline(); d < 800*time.Millisecond || d >= 1600*time.Millisecond {
		t.Errorf("first backoff: got %v, want in [0.8s, 1.6s)", d)
	}
	h.next(RequestWatch)
	h.r.WatchOpened(nil)
	if stop := h.r.WatchEvent(reflErrorEvent(reflTooMany())); !stop {
		t.Fatalf("WatchEvent(429 error): got continue, want stop")
	}
	h.noRequest()
	if d := h.fireDeadline(); d < 1600*time.Millisecond || d >= 3200*time.Millisecond {
		t.Errorf("second backoff: got %v, want in [1.6s, 3.2s)", d)
	}
	if got := h.next(RequestWatch); got.ResourceVersion != "10" {
		t.Errorf("re-watch RV: got %q, want %q", got.ResourceVersion, "10")
	}
	if len(h.handled) != 0 {
		t.Errorf("error handler calls: got %v, want none", h.handled)
	}
}

// informer.md §12.3 TestNoRelistOnTooManyRequests: repeated 429s on watch never relist:
// one LIST, then five WATCHes.
func TestNoRelistOnTooManyRequests(t *testing.T) {
	h := newReflHarness(t, nil)
	h.r.Start()
	lists, watches := 0, 0
	for watches < 5 {
		req, ok := h.r.NextRequest()
		if !ok {
			h.fireDeadline()
			continue
		}
		switch req.Verb {
		case RequestList:
			lists++
			h.r.ListDone(reflList("10", ""), nil)
		case RequestWatch:
			watches++
			h.r.WatchOpened(reflTooMany())
		}
	}
	if lists != 1 {
		t.Errorf("LISTs: got %d, want 1", lists)
	}
}

// informer.md §12.3 TestReflectorListAndWatchInitConnBackoff, §7.6: connection refused when
// opening the watch backs off with growing delays and re-watches, without a LIST and without the
// error handler.
func TestReflectorWatchOpenConnectionRefused(t *testing.T) {
	h := newReflHarness(t, nil)
	h.r.Start()
	h.next(RequestList)
	h.r.ListDone(reflList("10", ""), nil)
	lo := 800 * time.Millisecond
	for i := range 4 {
		h.next(RequestWatch)
		h.r.WatchOpened(reflConnRefused())
		if d := h.fireDeadline(); d < lo || d >= 2*lo {
			t.Errorf("backoff %d: got %v, want in [%v, %v)", i, d, lo, 2*lo)
		}
		lo *= 2
	}
	if got := h.next(RequestWatch); got.ResourceVersion != "10" {
		t.Errorf("re-watch RV: got %q, want %q", got.ResourceVersion, "10")
	}
	if len(h.handled) != 0 {
		t.Errorf("error handler calls: got %v, want none", h.handled)
	}
}

// informer.md §12.3 TestReflectorListAndWatchWithErrors, §7.2, §7.7: a watch that cannot be
// opened for another reason (here 410) is returned by the pass: the error handler sees it, then
// a backoff, then a relist at the last RV. The store keeps what it had.
func TestReflectorWatchOpenOtherError(t *testing.T) {
	h := newReflHarness(t, nil)
	h.r.Start()
	h.next(RequestList)
	h.r.ListDone(reflList("10", ""), nil)
	h.next(RequestWatch)
	h.r.WatchOpened(reflGone())
	if len(h.handled) != 1 || !apierrors.IsResourceExpired(h.handled[0]) {
		t.Fatalf("error handler calls: got %v, want one 410", h.handled)
	}
	h.noRequest()
	h.fireDeadline()
	if got := h.next(RequestList); got.ResourceVersion != "10" || got.Limit != 0 {
		t.Errorf("relist options: got %+v, want RV 10 and no Limit (§7.4)", got)
	}
}

// informer.md §7.2, §7.3: a failed LIST is returned wrapped as "failed to list <type>: …", seen
// by the error handler, and retried after a backoff; the retry is again at "0" since nothing was
// ever synced.
func TestReflectorListError(t *testing.T) {
	h := newReflHarness(t, nil)
	h.r.Start()
	h.next(RequestList)
	boom := apierrors.NewInternalError(errors.New("boom"))
	h.r.ListDone(nil, boom)
	if len(h.handled) != 1 {
		t.Fatalf("error handler calls: got %d, want 1", len(h.handled))
	}
	if got := h.handled[0]; !errors.Is(got, boom) || !strings.HasPrefix(got.Error(), "failed to list *unstructured.Unstructured: ") {
		t.Errorf("handled error: got %q, want \"failed to list *unstructured.Unstructured: …\" wrapping the LIST error", got)
	}
	h.noRequest()
	h.fireDeadline()
	if diff := cmp.Diff(metav1.ListOptions{ResourceVersion: "0", Limit: 500}, h.next(RequestList)); diff != "" {
		t.Errorf("retried LIST (-want +got):\n%s", diff)
	}
}

// informer.md §12.3 T4 and §7.7: a 410 in the stream ends the pass without the error handler;
// after one backoff the relist asks for the last RV (not "" and not "0") with no Limit.
func TestReflectorExpiredInStream(t *testing.T) {
	h := newReflHarness(t, nil)
	h.r.Start()
	h.listAndWatch(reflList("10", ""))
	h.r.WatchEvent(reflEvent(watch.Modified, reflPod("a", "12")))
	if stop := h.r.WatchEvent(reflErrorEvent(reflGone())); !stop {
		t.Fatalf("WatchEvent(410): got continue, want stop")
	}
	if h.r.Watching() {
		t.Errorf("Watching after a 410: got true, want false")
	}
	if len(h.handled) != 0 {
		t.Errorf("error handler calls: got %v, want none", h.handled)
	}
	h.noRequest()
	if d := h.fireDeadline(); d < 800*time.Millisecond {
		t.Errorf("backoff: got %v, want >= 0.8s", d)
	}
	if diff := cmp.Diff(metav1.ListOptions{ResourceVersion: "12"}, h.next(RequestList)); diff != "" {
		t.Errorf("relist (-want +got):\n%s", diff)
	}
}

// informer.md §12.3 TestReflectorExpiredExactResourceVersion, §7.4: a relist at an RV that
// answers 410 is retried at once at RV "" (no backoff, same paging), and the next relist after
// that success uses the new list RV again.
func TestReflectorExpiredExactResourceVersion(t *testing.T) {
	h := newReflHarness(t, nil)
	h.r.Start()
	h.listAndWatch(reflList("10", ""))
	h.r.WatchEvent(reflErrorEvent(reflGone()))
	h.fireDeadline()
	h.next(RequestList)
	h.r.ListDone(nil, reflGone())
	if _, ok := h.r.NextDeadline(); ok {
		t.Errorf("NextDeadline after a 410 LIST: got one, want none (immediate retry)")
	}
	if diff := cmp.Diff(metav1.ListOptions{ResourceVersion: ""}, h.next(RequestList)); diff != "" {
		t.Errorf("retry (-want +got):\n%s", diff)
	}
	h.r.ListDone(reflList("20", "", reflPod("a", "15")), nil)
	if got := h.next(RequestWatch); got.ResourceVersion != "20" {
		t.Errorf("watch RV: got %q, want %q", got.ResourceVersion, "20")
	}
	if len(h.handled) != 0 {
		t.Errorf("error handler calls: got %v, want none", h.handled)
	}
}

// informer.md §7.4: the immediate retry at "" happens once per pass; if it fails too, the pass
// returns the error and the next pass lists at "" again (the RV stays unavailable).
func TestReflectorExpiredRetryFailsToo(t *testing.T) {
	h := newReflHarness(t, nil)
	h.r.Start()
	h.listAndWatch(reflList("10", ""))
	h.r.WatchEvent(reflErrorEvent(reflGone()))
	h.fireDeadline()
	h.next(RequestList)
	h.r.ListDone(nil, reflGone())
	h.next(RequestList)
	h.r.ListDone(nil, reflGone())
	if len(h.handled) != 1 {
		t.Fatalf("error handler calls: got %v, want 1", h.handled)
	}
	h.noRequest()
	h.fireDeadline()
	if got := h.next(RequestList); got.ResourceVersion != "" {
		t.Errorf("next pass RV: got %q, want \"\"", got.ResourceVersion)
	}
}

// informer.md §12.3 TestReflectorFullListIfTooLarge, §7.4: each of the three forms of "too large
// resource version" makes the relist retry at once at RV "".
func TestReflectorFullListIfTooLarge(t *testing.T) {
	withCause := apierrors.NewTimeoutError("too large resource version", 1)
	withCause.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge}}
	legacyCause := apierrors.NewTimeoutError("timeout", 1)
	legacyCause.ErrStatus.Details.Causes = []metav1.StatusCause{{Message: "Too large resource version"}}
	legacyMessage := apierrors.NewTimeoutError("Too large resource version: 20, current: 10", 1)
	for name, err := range map[string]error{
		"status cause":   withCause,
		"legacy cause":   legacyCause,
		"legacy message": legacyMessage,
	} {
		t.Run(name, func(t *testing.T) {
			h := newReflHarness(t, nil)
			h.r.Start()
			h.listAndWatch(reflList("20", ""))
			h.r.WatchEvent(reflErrorEvent(apierrors.NewInternalError(errors.New("x"))))
			h.fireDeadline()
			if got := h.next(RequestList); got.ResourceVersion != "20" {
				t.Fatalf("relist RV: got %q, want 20", got.ResourceVersion)
			}
			h.r.ListDone(nil, err)
			if got := h.next(RequestList); got.ResourceVersion != "" {
				t.Errorf("retry RV: got %q, want \"\"", got.ResourceVersion)
			}
		})
	}
	// A plain timeout is not one of them: the pass fails instead.
	h := newReflHarness(t, nil)
	h.r.Start()
	h.next(RequestList)
	h.r.ListDone(nil, apierrors.NewTimeoutError("slow", 1))
	h.noRequest()
	if len(h.handled) != 1 {
		t.Errorf("error handler calls for a plain timeout: got %v, want 1", h.handled)
	}
}

// informer.md §12.3 TestReflectorResyncWithResourceVersion: the first list is at "0", the relist
// at the last synced RV.
func TestReflectorResyncWithResourceVersion(t *testing.T) {
	h := newReflHarness(t, nil)
	h.r.Start()
	var got []string
	got = append(got, h.next(RequestList).ResourceVersion)
	h.r.ListDone(reflList("10", ""), nil)
	h.next(RequestWatch)
	h.r.WatchOpened(apierrors.NewInternalError(errors.New("x")))
	h.fireDeadline()
	got = append(got, h.next(RequestList).ResourceVersion)
	if diff := cmp.Diff([]string{"0", "10"}, got); diff != "" {
		t.Errorf("LIST RVs (-want +got):\n%s", diff)
	}
}

// informer.md §12.3 TestReflectorResync, §2.3, §2.4: the resync timer fires every period during
// the watch; ShouldResync=false skips the store's Resync; a Resync error ends the stream, and so
// the pass, without the error handler (ListAndWatch returns nil).
func TestReflectorResync(t *testing.T) {
	should := true
	h := newReflHarness(t, func(o *ReflectorOptions) {
		o.ResyncPeriod = 30 * time.Second
		o.ShouldResync = func() bool { return should }
	})
	h.r.Start()
	h.listAndWatch(reflList("10", ""))
	h.store.take()

	if d := h.fireDeadline(); d != 30*time.Second {
		t.Errorf("first resync after %v, want 30s", d)
	}
	should = false
	if d := h.fireDeadline(); d != 30*time.Second {
		t.Errorf("second resync tick after %v, want 30s", d)
	}
	if diff := cmp.Diff([]string{"resync"}, h.store.take()); diff != "" {
		t.Errorf("store calls (-want +got):\n%s", diff)
	}

	should = true
	h.store.resyncErr = errors.New("resync failed")
	h.fireDeadline()
	if h.r.Watching() {
		t.Fatalf("Watching after a Resync error: got true, want false (the driver stops the watcher)")
	}
	if len(h.handled) != 0 {
		t.Errorf("error handler calls: got %v, want none", h.handled)
	}
	last := h.events[len(h.events)-1]
	if last.Kind != EventPassEnded || last.Err != h.store.resyncErr {
		t.Errorf("last event: got %v, want PassEnded with the Resync error", last)
	}
	h.fireDeadline() // the backoff; no resync timer is left from the ended pass
	if got := h.next(RequestList); got.ResourceVersion != "10" {
		t.Errorf("relist RV: got %q, want 10", got.ResourceVersion)
	}
}

// informer.md §2.3: a Resync error that fires while no stream is open (waiting to re-watch after
// a 429) ends the next stream as soon as it opens.
func TestReflectorResyncErrorBetweenStreams(t *testing.T) {
	h := newReflHarness(t, func(o *ReflectorOptions) { o.ResyncPeriod = time.Second })
	h.store.resyncErr = errors.New("resync failed")
	h.r.Start()
	h.next(RequestList)
	h.r.ListDone(reflList("10", ""), nil)
	h.next(RequestWatch)
	h.r.WatchOpened(reflTooMany()) // backoff in [0.8s, 1.6s)
	// Fire deadlines until the re-watch is pending: the resync (1s) may come first.
	for {
		if _, ok := h.r.NextRequest(); ok {
			break
		}
		h.fireDeadline()
	}
	h.r.WatchOpened(nil)
	if h.r.Watching() {
		t.Errorf("Watching after opening with a pending Resync error: got true, want false")
	}
}

// informer.md §2.3 and §13 rule 5: the resync timer restarts from zero at each relist, but not at
// a re-watch within the same pass.
func TestReflectorResyncTimerRestartsAtRelistOnly(t *testing.T) {
	h := newReflHarness(t, func(o *ReflectorOptions) { o.ResyncPeriod = 30 * time.Second })
	h.r.Start()
	h.listAndWatch(reflList("10", ""))
	start := h.clock.Now()

	// A clean close and re-watch 20s in: the timer keeps its deadline.
	h.advance(20 * time.Second)
	h.r.WatchClosed()
	h.next(RequestWatch)
	h.r.WatchOpened(nil)
	if at, _ := h.r.NextDeadline(); !at.Equal(start.Add(30 * time.Second)) {
		t.Errorf("resync deadline after a re-watch: got %v, want %v", at, start.Add(30*time.Second))
	}

	// A relist 25s in: the timer restarts when that LIST succeeds.
	h.advance(5 * time.Second)
	h.r.WatchEvent(reflErrorEvent(reflGone()))
	backoffEnd, _ := h.r.NextDeadline()
	if !backoffEnd.Before(start.Add(30 * time.Second)) {
		t.Fatalf("backoff ends at %v, want before the old resync deadline", backoffEnd)
	}
	h.fireDeadline()
	h.listAndWatch(reflList("11", ""))
	relisted := h.clock.Now()
	if at, _ := h.r.NextDeadline(); !at.Equal(relisted.Add(30 * time.Second)) {
		t.Errorf("resync deadline after a relist: got %v, want %v", at, relisted.Add(30*time.Second))
	}
	if diff := cmp.Diff([]string{"replace [] rv=10", "replace [] rv=11"}, h.store.take()); diff != "" {
		t.Errorf("store calls (-want +got; no resync expected):\n%s", diff)
	}
}

// informer.md §12.3 TestWatchTimeout, §7.1: TimeoutSeconds lies in [min, 2·min]; min is 5m by
// default, a smaller MinWatchTimeout is ignored, a larger one is used.
func TestWatchTimeout(t *testing.T) {
	for _, tc := range []struct {
		min          time.Duration
		wantLo, want int64
	}{
		{min: 0, wantLo: 300, want: 600},
		{min: time.Minute, wantLo: 300, want: 600},
		{min: 15 * time.Minute, wantLo: 900, want: 1800},
	} {
		h := newReflHarness(t, func(o *ReflectorOptions) { o.MinWatchTimeout = tc.min })
		h.r.Start()
		h.next(RequestList)
		h.r.ListDone(reflList("1", ""), nil)
		for range 50 {
			opts := h.next(RequestWatch)
			if s := *opts.TimeoutSeconds; s < tc.wantLo || s > tc.want {
				t.Errorf("MinWatchTimeout %v: TimeoutSeconds %d, want in [%d, %d]", tc.min, s, tc.wantLo, tc.want)
			}
			h.r.WatchOpened(nil)
			h.advance(time.Second)
			h.r.WatchClosed()
		}
	}
}

// informer.md §12.3 TestReflectorResourceVersionUpdate, §7.6: ADDED, MODIFIED, BOOKMARK and
// DELETED events each advance LastSyncResourceVersion; a watch from "" (list without an RV) does
// not advance on ADDED events until a non-ADDED one arrives (§16).
func TestReflectorResourceVersionUpdate(t *testing.T) {
	h := newReflHarness(t, nil)
	h.r.Start()
	h.listAndWatch(reflList("10", ""))
	var got []string
	for _, ev := range []watch.Event{
		reflEvent(watch.Added, reflPod("a", "11")),
		reflEvent(watch.Modified, reflPod("a", "12")),
		reflBookmark("13"),
		reflEvent(watch.Deleted, reflPod("a", "14")),
	} {
		h.r.WatchEvent(ev)
		got = append(got, h.r.LastSyncResourceVersion())
	}
	if diff := cmp.Diff([]string{"11", "12", "13", "14"}, got); diff != "" {
		t.Errorf("RVs (-want +got):\n%s", diff)
	}

	h = newReflHarness(t, nil)
	h.r.Start()
	if w := h.listAndWatch(reflList("", "")); w.ResourceVersion != "" {
		t.Fatalf("watch RV after a list without RV: got %q, want \"\"", w.ResourceVersion)
	}
	got = nil
	for _, ev := range []watch.Event{
		reflEvent(watch.Added, reflPod("b", "5")),
		reflEvent(watch.Added, reflPod("a", "3")),
		reflEvent(watch.Modified, reflPod("a", "6")),
		reflEvent(watch.Added, reflPod("c", "7")),
	} {
		h.r.WatchEvent(ev)
		got = append(got, h.r.LastSyncResourceVersion())
	}
	if diff := cmp.Diff([]string{"", "", "6", "7"}, got); diff != "" {
		t.Errorf("RVs of a watch from \"\" (-want +got):\n%s", diff)
	}
}

// informer.md §12.3 TestReflectorReplacesStoreOnUnsafeDelete: a 500 Status in the stream ends the
// pass; the relist's Replace carries the server's state; last RV = relist RV.
func TestReflectorReplacesStoreOnUnsafeDelete(t *testing.T) {
	h := newReflHarness(t, nil)
	h.r.Start()
	h.listAndWatch(reflList("10", "", reflPod("a", "1"), reflPod("corrupt", "2")))
	h.r.WatchEvent(reflErrorEvent(apierrors.NewInternalError(errors.New("unable to decode"))))
	if len(h.handled) != 0 {
		t.Errorf("error handler calls: got %v, want none", h.handled)
	}
	h.fireDeadline()
	h.next(RequestList)
	h.r.ListDone(reflList("12", "", reflPod("a", "1")), nil)
	want := []string{"replace [a@1 corrupt@2] rv=10", "replace [a@1] rv=12"}
	if diff := cmp.Diff(want, h.store.take()); diff != "" {
		t.Errorf("store calls (-want +got):\n%s", diff)
	}
	if got := h.r.LastSyncResourceVersion(); got != "12" {
		t.Errorf("LastSyncResourceVersion: got %q, want 12", got)
	}
}

// informer.md §7.4 (client-go's pager): a page with a continue token is followed by the next page
// at RV "" with the token and the same Limit; the pages are replaced as one list at the first
// page's RV. A paginated RV="0" list keeps later relists paginated
// (TestReflectorPaginatingNonConsistentReadsIfWatchCacheDisabled); otherwise a relist at an RV
// has no Limit (TestReflectorNotPaginatingNotConsistentReads).
func TestReflectorPaginatedList(t *testing.T) {
	for _, tc := range []struct {
		name      string
		paginated bool
		wantLimit int64
	}{
		{name: "paginated initial list", paginated: true, wantLimit: 500},
		{name: "single page", paginated: false, wantLimit: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newReflHarness(t, nil)
			h.r.Start()
			h.next(RequestList)
			if tc.paginated {
				h.r.ListDone(reflList("10", "tok1", reflPod("a", "1")), nil)
				if diff := cmp.Diff(metav1.ListOptions{Limit: 500, Continue: "tok1"}, h.next(RequestList)); diff != "" {
					t.Errorf("second page (-want +got):\n%s", diff)
				}
				h.r.ListDone(reflList("11", "", reflPod("b", "2")), nil)
			} else {
				h.r.ListDone(reflList("10", "", reflPod("a", "1"), reflPod("b", "2")), nil)
			}
			if diff := cmp.Diff([]string{"replace [a@1 b@2] rv=10"}, h.store.take()); diff != "" {
				t.Errorf("store calls (-want +got):\n%s", diff)
			}
			h.next(RequestWatch)
			h.r.WatchOpened(apierrors.NewBadRequest("x"))
			h.fireDeadline()
			if got := h.next(RequestList); got.ResourceVersion != "10" || got.Limit != tc.wantLimit {
				t.Errorf("relist: got %+v, want RV 10, Limit %d", got, tc.wantLimit)
			}
		})
	}
}

// informer.md §12.3 TestReflectorFullListIfExpired, §7.4: a 410 on a continuation page is
// answered with one unpaginated list at the originally requested RV.
func TestReflectorFullListIfExpired(t *testing.T) {
	h := newReflHarness(t, func(o *ReflectorOptions) { o.PageSize = 1 })
	h.r.Start()
	if diff := cmp.Diff(metav1.ListOptions{ResourceVersion: "0", Limit: 1}, h.next(RequestList)); diff != "" {
		t.Errorf("first page (-want +got):\n%s", diff)
	}
	h.r.ListDone(reflList("10", "tok1", reflPod("a", "1")), nil)
	h.next(RequestList)
	h.r.ListDone(nil, reflGone())
	if diff := cmp.Diff(metav1.ListOptions{ResourceVersion: "0"}, h.next(RequestList)); diff != "" {
		t.Errorf("full list (-want +got):\n%s", diff)
	}
	h.r.ListDone(reflList("12", "", reflPod("a", "1"), reflPod("b", "2")), nil)
	if diff := cmp.Diff([]string{"replace [a@1 b@2] rv=12"}, h.store.take()); diff != "" {
		t.Errorf("store calls (-want +got):\n%s", diff)
	}
}

// informer.md §7.4 and §12.3 TestReflectorListExtract: typed lists work as well as unstructured
// ones (meta.ExtractList, meta.ListAccessor).
func TestReflectorTypedList(t *testing.T) {
	h := newReflHarness(t, func(o *ReflectorOptions) { o.ExpectedType = &metav1.PartialObjectMetadata{} })
	h.r.Start()
	h.next(RequestList)
	list := &metav1.PartialObjectMetadataList{
		ListMeta: metav1.ListMeta{ResourceVersion: "4"},
		Items:    []metav1.PartialObjectMetadata{{ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: "2"}}},
	}
	h.r.ListDone(list, nil)
	h.next(RequestWatch)
	h.r.WatchOpened(nil)
	h.r.WatchEvent(reflEvent(watch.Added, reflPod("u", "5"))) // wrong Go type
	h.r.WatchEvent(reflEvent(watch.Added, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "b", ResourceVersion: "6"}}))
	if diff := cmp.Diff([]string{"replace [a@2] rv=4", "add b@6"}, h.store.take()); diff != "" {
		t.Errorf("store calls (-want +got):\n%s", diff)
	}
}

// informer.md §7.6: a store without Bookmark still advances the RV on bookmarks; store errors on
// watch events are only reported and the RV advances.
func TestReflectorBookmarkWithoutBookmarkQueue(t *testing.T) {
	type plain struct{ ReflectorStore }
	s := &reflStore{addErr: errors.New("transform failed")}
	var events []ReflectorEvent
	r, err := NewReflector(plain{s}, ReflectorOptions{
		Clock: newReflHarness(t, nil).clock, Rand: newReflHarness(t, nil).r.rng,
		OnEvent: func(e ReflectorEvent) { events = append(events, e) },
	})
	if err != nil {
		t.Fatal(err)
	}
	r.Start()
	r.NextRequest()
	r.ListDone(reflList("1", ""), nil)
	r.NextRequest()
	r.WatchOpened(nil)
	r.WatchEvent(reflBookmark("5"))
	r.WatchEvent(reflEvent(watch.Added, reflPod("a", "6")))
	if diff := cmp.Diff([]string{"replace [] rv=1", "add a@6"}, s.take()); diff != "" {
		t.Errorf("store calls (-want +got):\n%s", diff)
	}
	if got := r.LastSyncResourceVersion(); got != "6" {
		t.Errorf("LastSyncResourceVersion: got %q, want 6", got)
	}
	if last := events[len(events)-1]; last.Kind != EventStoreError {
		t.Errorf("last event: got %v, want StoreError", last)
	}
}

// informer.md §12.3 TestReflectorWatchStoppedBefore/After, §7.4: after Stop no request is issued,
// no timer is pending, and late outcomes are ignored.
func TestReflectorStop(t *testing.T) {
	h := newReflHarness(t, func(o *ReflectorOptions) { o.ResyncPeriod = time.Second })
	h.r.Start()
	h.next(RequestList)
	h.r.Stop()
	h.r.ListDone(reflList("10", ""), nil)
	h.noRequest()
	if _, ok := h.r.NextDeadline(); ok {
		t.Errorf("NextDeadline after Stop: got one, want none")
	}
	if diff := cmp.Diff([]string(nil), h.store.take()); diff != "" {
		t.Errorf("store calls after Stop (-want +got):\n%s", diff)
	}
	if stop := h.r.WatchEvent(reflBookmark("3")); !stop {
		t.Errorf("WatchEvent after Stop: got continue, want stop")
	}
}

// style.md rule 7: feeding an outcome for a request that is not in flight is misuse and panics
// with the broken rule.
func TestReflectorMisusePanics(t *testing.T) {
	h := newReflHarness(t, nil)
	h.r.Start()
	defer func() {
		if _, ok := recover().(invariant.Violation); !ok {
			t.Errorf("ListDone without a LIST in flight: want an invariant.Violation panic")
		}
	}()
	h.r.ListDone(reflList("1", ""), nil)
}

// The constructor validates its options (style.md rule 17).
func TestNewReflectorValidates(t *testing.T) {
	h := newReflHarness(t, nil)
	ok := ReflectorOptions{Clock: h.clock, Rand: h.r.rng}
	for name, mod := range map[string]func(*ReflectorOptions){
		"no clock":      func(o *ReflectorOptions) { o.Clock = nil },
		"no rand":       func(o *ReflectorOptions) { o.Rand = nil },
		"negative sync": func(o *ReflectorOptions) { o.ResyncPeriod = -1 },
	} {
		o := ok
		mod(&o)
		if _, err := NewReflector(&reflStore{}, o); err == nil {
			t.Errorf("%s: got nil error, want one", name)
		}
	}
	if _, err := NewReflector(&reflStore{}, ok); err != nil {
		t.Errorf("valid options: got %v, want nil", err)
	}
}

// Determinism (design.md rule 1): the same seed gives the same requests and delays.
func TestReflectorDeterministic(t *testing.T) {
	run := func() []string {
		h := newReflHarness(t, nil)
		h.r.Start()
		var out []string
		for i := range 12 {
			req, ok := h.r.NextRequest()
			if !ok {
				out = append(out, h.fireDeadline().String())
				continue
			}
			out = append(out, req.String())
			switch {
			case req.Verb == RequestList:
				h.r.ListDone(reflList("10", ""), nil)
			case i%2 == 0:
				h.r.WatchOpened(reflTooMany())
			default:
				h.r.WatchOpened(apierrors.NewBadRequest("x"))
			}
		}
		return out
	}
	if diff := cmp.Diff(run(), run()); diff != "" {
		t.Errorf("two runs differ (-first +second):\n%s", diff)
	}
}

// informer.md §7.4, §7.6 and §12.3 TestIsUnsupportedTableObject: a Table list fails the pass; a
// Table object in the stream is skipped.
func TestReflectorRejectsTables(t *testing.T) {
	table := schema.GroupVersionKind{Group: "meta.k8s.io", Version: "v1", Kind: "Table"}
	h := newReflHarness(t, func(o *ReflectorOptions) { o.ExpectedType = nil })
	h.r.Start()
	h.next(RequestList)
	l := reflList("1", "")
	l.SetGroupVersionKind(table)
	h.r.ListDone(l, nil)
	if len(h.handled) != 1 || !strings.HasPrefix(h.handled[0].Error(), "unsupported list gvk") {
		t.Errorf("error handler calls: got %v, want one \"unsupported list gvk\"", h.handled)
	}
	h.fireDeadline()
	h.listAndWatch(reflList("1", ""))
	row := reflPod("t", "2")
	row.SetGroupVersionKind(table)
	h.r.WatchEvent(reflEvent(watch.Added, row))
	if diff := cmp.Diff([]string{"replace [] rv=1"}, h.store.take()); diff != "" {
		t.Errorf("store calls (-want +got):\n%s", diff)
	}
}

// informer.md §2.3: after a tick the next timer is one period from when the tick ran, so ticks
// drift by however late they fire.
func TestReflectorResyncDrift(t *testing.T) {
	h := newReflHarness(t, func(o *ReflectorOptions) { o.ResyncPeriod = 30 * time.Second })
	h.r.Start()
	h.listAndWatch(reflList("1", ""))
	h.advance(35 * time.Second) // the driver ticks 5s late
	h.r.Tick()
	if at, _ := h.r.NextDeadline(); !at.Equal(h.clock.Now().Add(30 * time.Second)) {
		t.Errorf("next resync: got %v, want %v", at, h.clock.Now().Add(30*time.Second))
	}
}

// HasRequest is the side-effect-free twin of NextRequest that a scheduling driver polls: it is
// true exactly when NextRequest would return a request, and asking it any number of times
// changes nothing (no request in flight, no watch timeout drawn from the Reflector's rand).
func TestReflectorHasRequestHasNoSideEffects(t *testing.T) {
	timeouts := func(polls int) []int64 {
		h := newReflHarness(t, nil)
		if h.r.HasRequest() {
			t.Fatalf("HasRequest before Start = true, want false")
		}
		h.r.Start()
		var got []int64
		for i := range 4 {
			for range polls {
				if !h.r.HasRequest() {
					t.Fatalf("pass %d: HasRequest = false with a request pending", i)
				}
			}
			verb := RequestWatch
			if i == 0 {
				verb = RequestList
			}
			opts := h.next(verb)
			if h.r.HasRequest() {
				t.Fatalf("pass %d: HasRequest = true with the request in flight", i)
			}
			if i == 0 {
				h.r.ListDone(reflList("1", ""), nil)
				continue
			}
			got = append(got, *opts.TimeoutSeconds)
			h.r.WatchOpened(nil)
			h.advance(time.Second)
			h.r.WatchClosed()
		}
		return got
	}
	if diff := cmp.Diff(timeouts(0), timeouts(25)); diff != "" {
		t.Errorf("polling HasRequest changed the drawn watch timeouts (-no polls +25 polls per request):\n%s", diff)
	}
}
