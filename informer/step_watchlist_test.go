package informer

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// informer.md §14 T3: the server ends the stream cleanly after its timeout → an immediate
// re-watch from the last synced RV: no LIST, no notification, and the resync timer keeps its
// schedule (it restarts only at a relist, §2.3). Step driver, classic list+watch.
func TestInfT3WatchTimeout(t *testing.T) {
	e, hs, _ := infT1(t, SharedIndexInformerOptions{ResyncPeriod: time.Minute})
	e.lw.set("p1") // MODIFIED p1@3
	e.quiesce()
	for _, h := range hs {
		h.take()
	}
	e.lw.takeRequests()
	before, _ := e.st.NextDeadline()
	e.clock.Step(20 * time.Second)
	e.takeTrace()
	e.lw.closeWatches()
	e.quiesce()
	if diff := cmp.Diff(e.lw.takeRequests(), []string{`Watch rv="3" bookmarks`}); diff != "" {
		t.Errorf("requests (-got +want):\n%s", diff)
	}
	wantTrace := []string{
		"reflector watch closed; re-watch at rv=3",
		"reflector watch opened at rv=3",
	}
	if diff := cmp.Diff(e.takeTrace(), wantTrace); diff != "" {
		t.Errorf("trace (-got +want):\n%s", diff)
	}
	for i, h := range hs {
		if got := h.take(); len(got) != 0 {
			t.Errorf("h%d notified %v, want nothing", i+1, got)
		}
	}
	if after, _ := e.st.NextDeadline(); !after.Equal(before) {
		t.Errorf("resync deadline moved from %v to %v", before.Sub(infT0), after.Sub(infT0))
	}
}

// informer.md §14 T4 (classic list+watch): an Error event 410 in the stream ends the pass
// without the error handler; after one backoff in [0.8s, 1.6s) the relist asks for the last
// synced RV; when that LIST answers 410 as well, a LIST at "" follows at once, then Replace and
// the relist notifications of T5.
func TestInfT4ExpiredInStream(t *testing.T) {
	e, hs, _ := infT1(t, SharedIndexInformerOptions{})
	const handled = 0 // the default error handler counts what it sees: WatchErrors
	for _, h := range hs {
		h.take()
	}
	e.lw.takeRequests()
	e.takeTrace()
	e.lw.expire()  // ERROR 410 in the stream
	e.lw.set("p3") // @3, missed
	e.lw.failNextList(apierrors.NewResourceExpired("too old resource version: 2 (3)"))
	e.quiesce()
	trace := e.takeTrace()
	if len(trace) != 1 || !strings.HasPrefix(trace[0], "reflector pass ended (too old resource version); relist after backoff ") {
		t.Fatalf("trace after the 410: %q", trace)
	}
	at, ok := e.st.NextDeadline()
	if d := at.Sub(e.clock.Now()); !ok || d < 800*time.Millisecond || d >= 1600*time.Millisecond {
		t.Fatalf("backoff %v, want in [0.8s, 1.6s)", d)
	}
	e.advance(1600 * time.Millisecond)
	if diff := cmp.Diff(e.lw.takeRequests(), []string{`List rv="2"`, `List rv=""`, `Watch rv="3" bookmarks`}); diff != "" {
		t.Errorf("requests (-got +want):\n%s", diff)
	}
	want := []string{"update ns/p1@1->ns/p1@1", "update ns/p2@2->ns/p2@2", "add ns/p3@3"}
	for i, h := range hs {
		if diff := cmp.Diff(h.take(), want); diff != "" {
			t.Errorf("h%d (-got +want):\n%s", i+1, diff)
		}
	}
	if got := e.st.Reflector().WatchErrors(); got != handled {
		t.Errorf("the error handler saw %d errors, want %d (a stream 410 is not returned)", got, handled)
	}
}

// infT8 brings a watch-list harness to the end of informer.md §14 T8, feeding the stream by hand
// so that a MODIFIED arrives among the initial events: ADDED p1@1, ADDED p2@2, MODIFIED p1@3,
// then the end bookmark at 3.
func infT8(t *testing.T) (*infStep, []*infRec) {
	e := newInfStep(t, SharedIndexInformerOptions{})
	e.lw.watchList = true
	h1, _ := e.handler(nil)
	h2, _ := e.handler(nil)
	e.st.Start()
	r := e.st.Reflector()
	req, ok := r.NextRequest()
	if !ok || req.Verb != RequestWatch {
		t.Fatalf("first request %v, %v; want a watch-list", req, ok)
	}
	req.Options.TimeoutSeconds = nil
	if got, want := req.String(), `Watch rv="" match=NotOlderThan sendInitialEvents bookmarks`; got != want {
		t.Fatalf("first request %s, want %s", got, want)
	}
	r.WatchOpened(nil)
	end := infObj("", 3)
	end.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	for _, ev := range []watch.Event{
		{Type: watch.Added, Object: infObj("p1", 1)},
		{Type: watch.Added, Object: infObj("p2", 2)},
		{Type: watch.Modified, Object: infObj("p1", 3)},
		{Type: watch.Bookmark, Object: end},
	} {
		if r.WatchEvent(ev) {
			t.Fatalf("WatchEvent(%v) ended the stream", ev.Type)
		}
		if e.st.QueueLen() != 0 && ev.Type != watch.Bookmark {
			t.Fatalf("the queue has items before the end bookmark")
		}
	}
	return e, []*infRec{h1, h2}
}

// informer.md §14 T8: the watch-list start-up, exactly: one request; the temporary store keeps
// final states only (p1@3, not p1@1); Replace at the end bookmark's RV; then processing as in T1
// (object order drawn from the seed), and the same stream goes on as the live watch: no new
// request, and a live event is an ordinary notification.
func TestInfT8WatchListInitialStream(t *testing.T) {
	e, hs := infT8(t)
	r := e.st.Reflector()
	if !r.Watching() || r.HasRequest() {
		t.Fatalf("after the end bookmark: Watching=%v HasRequest=%v, want true, false", r.Watching(), r.HasRequest())
	}
	if got := e.st.QueueLen(); got != 1 {
		t.Fatalf("queue length %d, want 1 (one ReplacedAll)", got)
	}
	e.quiesce()
	// The trace is exact for this seed; the add order is drawn from it.
	wantTrace := []string{
		"register h1",
		"register h2",
		"reflector watch opened at rv=",
		"reflector watch-list synced 2 items at rv=3; watching on",
		"pop ReplacedAll rv=3 n=2 init",
		"cache-replace n=2 rv=3",
		"buffer h1,h2 add ns/p2@2 init",
		"buffer h1,h2 add ns/p1@3 init",
		"synced",
		"deliver h1 add ns/p2@2 init",
		"deliver h1 add ns/p1@3 init",
		"handler-synced h1",
		"deliver h2 add ns/p2@2 init",
		"deliver h2 add ns/p1@3 init",
		"handler-synced h2",
	}
	if diff := cmp.Diff(e.takeTrace(), wantTrace); diff != "" {
		t.Errorf("trace (-got +want):\n%s", diff)
	}
	if got := e.inf.LastSyncResourceVersion(); got != "3" {
		t.Errorf("LastSyncResourceVersion %q, want 3", got)
	}
	// The live part of the same stream.
	if r.WatchEvent(watch.Event{Type: watch.Added, Object: infObj("p3", 4)}) {
		t.Fatal("a live event ended the stream")
	}
	e.quiesce()
	for i, h := range hs {
		got := h.take()
		if diff := cmp.Diff(got, []string{"add ns/p2@2 init", "add ns/p1@3 init", "add ns/p3@4"}); diff != "" {
			t.Errorf("h%d (-got +want):\n%s", i+1, diff)
		}
	}
	if got := e.lw.takeRequests(); len(got) != 0 {
		t.Errorf("requests sent through the ListerWatcher: %v, want none (the test fed the stream)", got)
	}
	if got := e.inf.LastSyncResourceVersion(); got != "4" {
		t.Errorf("LastSyncResourceVersion %q, want 4 (a reused watch-list watcher advances from the start)", got)
	}
}

// informer.md §14 T4 in watch-list mode, and T8 through the ListerWatcher: the 410 ends the pass;
// after the backoff the relist is a watch-list at the last RV, whose sync yields the relist
// notifications (tombstones first) and keeps the stream as the watch.
func TestInfT4WatchListRelist(t *testing.T) {
	e := newInfStep(t, SharedIndexInformerOptions{})
	e.lw.watchList = true
	e.lw.set("p1")
	e.lw.set("p2")
	h, _ := e.handler(nil)
	e.st.Start()
	e.quiesce()
	if diff := cmp.Diff(e.lw.takeRequests(), []string{`Watch rv="" match=NotOlderThan sendInitialEvents bookmarks`}); diff != "" {
		t.Errorf("start-up requests (-got +want):\n%s", diff)
	}
	init := h.take()
	slices.Sort(init)
	if diff := cmp.Diff(init, []string{"add ns/p1@1 init", "add ns/p2@2 init"}); diff != "" {
		t.Errorf("initial adds (-got +want):\n%s", diff)
	}
	e.lw.set("p1") // @3, seen
	e.quiesce()
	e.lw.expire()
	e.lw.del("p2") // @4, missed
	e.lw.set("p3") // @5, missed
	e.quiesce()
	e.advance(1600 * time.Millisecond)
	if diff := cmp.Diff(e.lw.takeRequests(), []string{`Watch rv="3" match=NotOlderThan sendInitialEvents bookmarks`}); diff != "" {
		t.Errorf("relist requests (-got +want):\n%s", diff)
	}
	// Tombstones first, then the listed objects in the order the watch-list drew from the seed.
	want := []string{"update ns/p1@1->ns/p1@3", "delete tomb(ns/p2@2)", "add ns/p3@5", "update ns/p1@3->ns/p1@3"}
	if diff := cmp.Diff(h.take(), want); diff != "" {
		t.Errorf("h1 (-got +want):\n%s", diff)
	}
	e.lw.set("p4") // @6, on the same stream
	e.quiesce()
	if diff := cmp.Diff(h.take(), []string{"add ns/p4@6"}); diff != "" {
		t.Errorf("live event after the relist (-got +want):\n%s", diff)
	}
	if got := e.lw.takeRequests(); len(got) != 0 {
		t.Errorf("requests after the relist: %v, want none", got)
	}
}

// informer.md §12.4 TestNewReflectorWithDisablementWatchList, §7.3: watch-list is used unless the
// ListerWatcher says IsWatchListSemanticsUnSupported() (true) or the informer disables it; a
// ListerWatcher without the method uses it, as client-go's plain cache.ListWatch does.
func TestInformerWatchListDisablement(t *testing.T) {
	plain := struct{ ListerWatcher }{newInfLW()} // hides the probe method
	supported := newInfLW()
	supported.watchList = true
	for _, c := range []struct {
		name    string
		lw      ListerWatcher
		disable bool
		want    bool
	}{
		{"no probe", plain, false, true},
		{"probe says supported", supported, false, true},
		{"probe says unsupported", newInfLW(), false, false},
		{"disabled", supported, true, false},
	} {
		inf := NewSharedIndexInformerWithOptions(c.lw, &metav1.PartialObjectMetadata{}, SharedIndexInformerOptions{DisableWatchList: c.disable})
		st, err := Steps(inf)
		if err != nil {
			t.Fatal(err)
		}
		st.Start()
		if got := st.Reflector().UsesWatchList(); got != c.want {
			t.Errorf("%s: UsesWatchList %v, want %v", c.name, got, c.want)
		}
		st.Stop()
	}
}

// informer.md §1.5, §12.3 TestReflectorRespectStoreTransformer: in watch-list mode the initial
// objects are transformed twice (temporary store, then the queue's Replace) and a live one once:
// 2 initial objects and 1 live add make 5 calls.
func TestInformerWatchListTransformsTwice(t *testing.T) {
	e := newInfStep(t, SharedIndexInformerOptions{})
	e.lw.watchList = true
	e.lw.set("foo-1")
	e.lw.set("foo-2")
	calls := 0
	if err := e.inf.SetTransform(func(obj any) (any, error) { calls++; return obj, nil }); err != nil {
		t.Fatal(err)
	}
	e.st.Start()
	e.quiesce()
	e.lw.set("foo-3")
	e.quiesce()
	if calls != 5 {
		t.Errorf("transform calls %d, want 5", calls)
	}
	if got := e.inf.GetStore().ListKeys(); !cmp.Equal(got, []string{"ns/foo-1", "ns/foo-2", "ns/foo-3"}) {
		t.Errorf("cache keys %v", got)
	}
}
