package informer

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// The tests of this file restate client-go's reflector_watchlist_test.go (informer.md §12.4) and
// the watch-list rules of §7.3 and §7.5 on the step-driven Reflector.

func wlHarness(t *testing.T) *reflHarness {
	return newReflHarness(t, func(o *ReflectorOptions) { o.UseWatchList = true })
}

// reflEndBookmark is the bookmark that ends a watch-list's initial events.
func reflEndBookmark(rv string) watch.Event {
	ev := reflBookmark(rv)
	ev.Object.(*unstructured.Unstructured).SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	return ev
}

// wlOptions is a watch-list request's options at rv, without the random timeout.
func wlOptions(rv string) metav1.ListOptions {
	yes := true
	return metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		SendInitialEvents: &yes, AllowWatchBookmarks: true}
}

// nextWatchList takes the pending request, which must be a watch-list at rv.
func (h *reflHarness) nextWatchList(rv string) {
	h.t.Helper()
	got := h.next(RequestWatch)
	if got.TimeoutSeconds == nil || *got.TimeoutSeconds < 300 || *got.TimeoutSeconds > 600 {
		h.t.Errorf("watch-list TimeoutSeconds: got %v, want in [300, 600]", got.TimeoutSeconds)
	}
	got.TimeoutSeconds = nil
	if diff := cmp.Diff(wlOptions(rv), got); diff != "" {
		h.t.Fatalf("watch-list options (-want +got):\n%s", diff)
	}
}

// feed sends events to the open stream, failing if one ends it.
func (h *reflHarness) feed(evs ...watch.Event) {
	h.t.Helper()
	for _, ev := range evs {
		if h.r.WatchEvent(ev) {
			h.t.Fatalf("WatchEvent(%v) ended the stream", ev.Type)
		}
	}
}

// sortReplaces sorts the objects inside each "replace [...]" line: the watch-list hands them to
// the store in an order drawn from the seed (client-go: Go map order).
func sortReplaces(ops []string) []string {
	out := slices.Clone(ops)
	for i, op := range out {
		if !strings.HasPrefix(op, "replace [") {
			continue
		}
		end := strings.Index(op, "]")
		items := strings.Fields(op[len("replace ["):end])
		slices.Sort(items)
		out[i] = "replace [" + strings.Join(items, " ") + op[end:]
	}
	return out
}

// informer.md §12.3 TestReflectorListAndWatch (watch-list half), §12.4 TestWatchList "synced
// after the bookmark", §14 T8: the first request is {RV "", NotOlderThan, SendInitialEvents,
// bookmarks}; objects stream into a temporary store (nothing reaches the queue), the annotated
// bookmark replaces the queue at its RV, and the same stream goes on as the watch: no new
// request, and live events reach the queue directly, every one advancing the RV.
func TestReflectorWatchListSync(t *testing.T) {
	h := wlHarness(t)
	h.r.Start()
	if !h.r.InWatchList() {
		t.Fatal("InWatchList false at start with UseWatchList")
	}
	h.nextWatchList("")
	h.r.WatchOpened(nil)
	h.feed(
		reflEvent(watch.Added, reflPod("a", "3")),
		reflEvent(watch.Added, reflPod("b", "2")),
		reflBookmark("4"), // an ordinary bookmark does not end the initial events
	)
	if ops := h.store.take(); len(ops) != 0 {
		t.Fatalf("the queue saw %v before the end bookmark, want nothing", ops)
	}
	if got := h.r.LastSyncResourceVersion(); got != "" {
		t.Fatalf("LastSyncResourceVersion before the end bookmark: %q, want \"\"", got)
	}
	h.feed(reflEndBookmark("5"))
	if h.r.InWatchList() || !h.r.Watching() {
		t.Fatalf("after the end bookmark: InWatchList=%v Watching=%v, want false, true", h.r.InWatchList(), h.r.Watching())
	}
	h.noRequest()
	h.feed(reflEvent(watch.Added, reflPod("c", "6")), reflEvent(watch.Modified, reflPod("a", "7")))
	want := []string{"replace [a@3 b@2] rv=5", "add c@6", "update a@7"}
	if diff := cmp.Diff(want, sortReplaces(h.store.take())); diff != "" {
		t.Errorf("store calls (-want +got):\n%s", diff)
	}
	if got := h.r.LastSyncResourceVersion(); got != "7" {
		t.Errorf("LastSyncResourceVersion: %q, want 7", got)
	}
	if diff := cmp.Diff([]ReflectorEventKind{EventWatchOpened, EventWatchListSynced}, h.kinds()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// informer.md §12.4 TestWatchList "not synced without the annotated bookmark" and "closed before
// sync → new watch-list request": a stream that ends cleanly before the end bookmark is retried
// at once as a new watch-list with a fresh temporary store (what the first stream carried is
// not replayed).
func TestReflectorWatchListClosedBeforeSync(t *testing.T) {
	h := wlHarness(t)
	h.r.Start()
	h.nextWatchList("")
	h.r.WatchOpened(nil)
	h.feed(reflEvent(watch.Added, reflPod("gone", "3")))
	h.r.WatchClosed()
	if h.store.take() != nil {
		t.Fatal("the queue was written before the end bookmark")
	}
	h.nextWatchList("") // at once: no backoff
	h.r.WatchOpened(nil)
	h.feed(reflEvent(watch.Added, reflPod("a", "4")), reflEndBookmark("4"))
	if diff := cmp.Diff([]string{"replace [a@4] rv=4"}, h.store.take()); diff != "" {
		t.Errorf("store calls (-want +got):\n%s", diff)
	}
}

// informer.md §12.4 TestWatchList "updates/deletes during streaming collapse in the temp store":
// handlers only see final states; TestWatchListResourceVersion: the list RV is taken from events
// only once a non-ADDED event was seen, and is the end bookmark's in the end.
func TestReflectorWatchListCollapsesInTempStore(t *testing.T) {
	h := wlHarness(t)
	h.r.Start()
	h.nextWatchList("")
	h.r.WatchOpened(nil)
	h.feed(
		reflEvent(watch.Added, reflPod("a", "9")),
		reflEvent(watch.Added, reflPod("b", "2")),
		reflEvent(watch.Added, reflPod("c", "5")),
		reflEvent(watch.Modified, reflPod("a", "10")),
		reflEvent(watch.Deleted, reflPod("b", "11")),
		reflEndBookmark("12"),
	)
	if diff := cmp.Diff([]string{"replace [a@10 c@5] rv=12"}, sortReplaces(h.store.take())); diff != "" {
		t.Errorf("store calls (-want +got):\n%s", diff)
	}
	if got := h.r.LastSyncResourceVersion(); got != "12" {
		t.Errorf("LastSyncResourceVersion: %q, want 12", got)
	}
}

// informer.md §12.4 TestNewReflectorWithDisablementWatchList and TestWatchList "fallback to
// LIST/WATCH when disabled": without UseWatchList the first request is a LIST (the classic
// tests cover the rest); with it, any other open error, Invalid included, falls back to a LIST
// at "0" in the same pass, without the error handler and without backoff (informer.md §7.3).
func TestReflectorWatchListFallbackOnOpenError(t *testing.T) {
	off := newReflHarness(t, nil)
	off.r.Start()
	off.next(RequestList)
	if off.r.UsesWatchList() || off.r.InWatchList() {
		t.Error("watch-list used without UseWatchList")
	}

	for name, err := range map[string]error{
		"invalid":  apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "", nil),
		"internal": apierrors.NewInternalError(context.DeadlineExceeded),
		"bad":      apierrors.NewBadRequest("sendInitialEvents unsupported"),
	} {
		t.Run(name, func(t *testing.T) {
			h := wlHarness(t)
			h.r.Start()
			h.nextWatchList("")
			h.r.WatchOpened(err)
			if diff := cmp.Diff(metav1.ListOptions{ResourceVersion: "0", Limit: 500}, h.next(RequestList)); diff != "" {
				t.Errorf("fallback LIST (-want +got):\n%s", diff)
			}
			h.r.ListDone(reflList("7", "", reflPod("a", "7")), nil)
			w := h.next(RequestWatch)
			if w.SendInitialEvents != nil || w.ResourceVersion != "7" {
				t.Errorf("watch after the fallback: %+v, want a plain watch at 7", w)
			}
			if len(h.handled) != 0 {
				t.Errorf("error handler saw %v, want nothing", h.handled)
			}
			if diff := cmp.Diff([]ReflectorEventKind{EventWatchListFallback, EventListed}, h.kinds()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// informer.md §12.4 TestWatchList "429 retried with same options" and §7.5: 429 and connection
// refused, at open or in the stream, wait one backoff delay and send the same watch-list again.
func TestReflectorWatchListRetriesTooManyRequests(t *testing.T) {
	h := wlHarness(t)
	h.r.Start()
	h.nextWatchList("")
	h.r.WatchOpened(reflTooMany())
	h.noRequest()
	if d := h.fireDeadline(); d < 800*time.Millisecond || d >= 1600*time.Millisecond {
		t.Errorf("first backoff %v, want in [0.8s, 1.6s)", d)
	}
	h.nextWatchList("")
	h.r.WatchOpened(nil)
	if !h.r.WatchEvent(reflErrorEvent(reflTooMany())) {
		t.Fatal("a 429 Error event did not end the stream")
	}
	h.noRequest()
	h.fireDeadline()
	h.nextWatchList("")
	h.r.WatchOpened(reflConnRefused())
	h.fireDeadline()
	h.nextWatchList("")
	if len(h.handled) != 0 {
		t.Errorf("error handler saw %v, want nothing", h.handled)
	}
}

// informer.md §7.5: 410 (or too large) marks the RV unavailable and retries at once at RV "";
// a non-retriable stream error, or a stream that closes at once with nothing in it
// (VeryShortWatchError), falls back to a LIST.
func TestReflectorWatchListExpiredAndStreamErrors(t *testing.T) {
	h := wlHarness(t)
	h.r.Start()
	h.nextWatchList("")
	h.r.WatchOpened(nil)
	h.feed(reflEvent(watch.Added, reflPod("a", "2")), reflEndBookmark("2"))
	// A relist pass (after a 410 in the live stream) tries watch-list at the last RV...
	if !h.r.WatchEvent(reflErrorEvent(reflGone())) {
		t.Fatal("410 did not end the stream")
	}
	h.fireDeadline()
	h.nextWatchList("2")
	// ...which answers 410: at once again, at "".
	h.r.WatchOpened(reflGone())
	h.nextWatchList("")
	h.r.WatchOpened(nil)
	if !h.r.WatchEvent(reflErrorEvent(apierrors.NewInternalError(context.Canceled))) {
		t.Fatal("500 did not end the stream")
	}
	if diff := cmp.Diff(metav1.ListOptions{ResourceVersion: "", Limit: 500}, h.next(RequestList)); diff != "" {
		t.Errorf("fallback LIST after a 500 (-want +got):\n%s", diff)
	}
	h.r.ListDone(reflList("3", ""), nil)
	h.next(RequestWatch)
	h.r.WatchOpened(nil)
	h.r.WatchClosed() // at once, no events: VeryShortWatchError ends the pass
	h.fireDeadline()
	h.nextWatchList("3")
	h.r.WatchOpened(nil)
	h.r.WatchClosed()
	if diff := cmp.Diff(metav1.ListOptions{ResourceVersion: "3"}, h.next(RequestList)); diff != "" {
		t.Errorf("fallback LIST after a very short watch-list (-want +got):\n%s", diff)
	}
	var fallbacks []string
	for _, e := range h.events {
		if e.Kind == EventWatchListFallback {
			fallbacks = append(fallbacks, e.Err.Error())
		}
	}
	if len(fallbacks) != 2 || !strings.Contains(fallbacks[1], "very short watch") {
		t.Errorf("fallbacks %q, want a 500 and a very short watch", fallbacks)
	}
}

// informer.md §12.4 TestWatchList "closed after sync → plain watch from last RV" and "410 on
// re-watch → error returned": after the sync the stream is an ordinary watch; when it closes,
// the re-watch is a plain watch; a 410 opening it ends the pass with the error (handler, backoff)
// and the next pass tries watch-list again. The resync timer starts at the sync.
func TestReflectorWatchListAfterSync(t *testing.T) {
	h := newReflHarness(t, func(o *ReflectorOptions) { o.UseWatchList = true; o.ResyncPeriod = time.Minute })
	h.r.Start()
	h.nextWatchList("")
	h.r.WatchOpened(nil)
	if _, ok := h.r.NextDeadline(); ok {
		t.Fatal("a resync timer runs before the watch-list synced")
	}
	h.advance(2 * time.Second)
	h.feed(reflEvent(watch.Added, reflPod("a", "2")), reflEndBookmark("3"))
	if at, ok := h.r.NextDeadline(); !ok || !at.Equal(reflEpoch.Add(time.Minute+2*time.Second)) {
		t.Errorf("resync deadline %v, %v; want one period after the sync", at, ok)
	}
	h.advance(2 * time.Second)
	h.feed(reflEvent(watch.Modified, reflPod("a", "4")))
	h.r.WatchClosed()
	w := h.next(RequestWatch)
	w.TimeoutSeconds = nil
	if diff := cmp.Diff(metav1.ListOptions{ResourceVersion: "4", AllowWatchBookmarks: true}, w); diff != "" {
		t.Errorf("re-watch after the sync (-want +got):\n%s", diff)
	}
	h.r.WatchOpened(reflGone())
	if len(h.handled) != 1 || !apierrors.IsResourceExpired(h.handled[0]) {
		t.Fatalf("error handler saw %v, want the 410", h.handled)
	}
	h.fireDeadline()
	h.nextWatchList("4")
}

// informer.md §12.4 TestWatchList: a watch-list stream that closes right after the sync with no
// live event is a very short watch of the reused watcher (client-go's watch() times it from the
// sync): the pass ends and the next one starts after a backoff.
func TestReflectorWatchListVeryShortAfterSync(t *testing.T) {
	h := wlHarness(t)
	h.r.Start()
	h.nextWatchList("")
	h.r.WatchOpened(nil)
	h.advance(5 * time.Second)
	h.feed(reflEndBookmark("1"))
	h.r.WatchClosed()
	h.noRequest()
	h.fireDeadline()
	h.nextWatchList("1")
}

// informer.md §1.5, §12.3 TestReflectorRespectStoreTransformer (the temporary store's half): the
// temporary store applies the queue's transform to streamed objects.
func TestReflectorWatchListTransformsTempStore(t *testing.T) {
	calls := 0
	h := newReflHarness(t, func(o *ReflectorOptions) {
		o.UseWatchList = true
		o.Transform = func(obj any) (any, error) {
			calls++
			u := obj.(*unstructured.Unstructured).DeepCopy()
			u.SetLabels(map[string]string{"transformed": "yes"})
			return u, nil
		}
	})
	h.r.Start()
	h.nextWatchList("")
	h.r.WatchOpened(nil)
	var replaced []any
	h.r.store = replaceSpy{ReflectorStore: h.store, got: &replaced}
	h.feed(reflEvent(watch.Added, reflPod("a", "1")), reflEvent(watch.Modified, reflPod("a", "2")), reflEndBookmark("2"))
	if calls != 2 {
		t.Errorf("transform calls %d, want 2", calls)
	}
	if len(replaced) != 1 || replaced[0].(*unstructured.Unstructured).GetLabels()["transformed"] != "yes" {
		t.Errorf("replaced %v, want one transformed object", replaced)
	}
}

type replaceSpy struct {
	ReflectorStore
	got *[]any
}

func (s replaceSpy) Replace(list []any, rv string) error {
	*s.got = list
	return s.ReflectorStore.Replace(list, rv)
}

// informer.md §12.3 TestReflectorWatchHandler, in watch-list mode: events of an unexpected type
// are skipped and do not count for the list RV.
func TestReflectorWatchListSkipsWrongType(t *testing.T) {
	h := wlHarness(t)
	h.r.Start()
	h.nextWatchList("")
	h.r.WatchOpened(nil)
	h.feed(
		reflEvent(watch.Added, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "x", ResourceVersion: "9"}}),
		reflEvent(watch.Added, reflPod("a", "1")),
		reflEndBookmark("2"),
	)
	if diff := cmp.Diff([]string{"replace [a@1] rv=2"}, h.store.take()); diff != "" {
		t.Errorf("store calls (-want +got):\n%s", diff)
	}
}

// The requests print their watch-list options, for traces.
func TestRequestStringWatchList(t *testing.T) {
	to := int64(300)
	o := wlOptions("")
	o.TimeoutSeconds = &to
	got := Request{Verb: RequestWatch, Options: o}.String()
	if want := `Watch rv="" match=NotOlderThan sendInitialEvents bookmarks timeout=300s`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	var _ runtime.Object = reflPod("a", "1")
}
