package fakeapi

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
)

// Compile-time checks: *Watcher is a watch.Interface; the ListerWatcher has client-go's methods.
var (
	_ watch.Interface = (*Watcher)(nil)
	_ interface {
		List(metav1.ListOptions) (runtime.Object, error)
		Watch(metav1.ListOptions) (watch.Interface, error)
		ListWithContext(context.Context, metav1.ListOptions) (runtime.Object, error)
		WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error)
		IsWatchListSemanticsUnSupported() bool
	} = (*ListerWatcher)(nil)
)

func recv(t *testing.T, ch <-chan watch.Event) (watch.Event, bool) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		return ev, ok
	case <-time.After(5 * time.Second):
		t.Fatalf("no event within 5s")
	}
	return watch.Event{}, false
}

// TestResultChanAdapter drives a watch through the goroutine adapter, the way client-go consumes
// it: events arrive on the channel, the server-side deadline closes it (through a real clock's
// timer), and Stop ends the goroutine (goleak checks in TestMain).
func TestResultChanAdapter(t *testing.T) {
	s, err := New(Config{Clock: clock.RealClock{}})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, cmGVR, cm("ns", "a", nil))
	lw := s.ListerWatcher(cmGVR, "ns")
	wi, err := lw.Watch(metav1.ListOptions{ResourceVersion: "0", SendInitialEvents: ptr(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true, TimeoutSeconds: ptr(int64(1))})
	if err != nil {
		t.Fatal(err)
	}
	defer wi.Stop()
	var got []string
	ev, _ := recv(t, wi.ResultChan())
	got = append(got, render(ev))
	ev, _ = recv(t, wi.ResultChan())
	got = append(got, render(ev))
	mustCreate(t, s, cmGVR, cm("ns", "b", nil))
	for {
		ev, _ = recv(t, wi.ResultChan())
		if ev.Type != watch.Bookmark { // the pre-deadline bookmark may come first
			got = append(got, render(ev))
			break
		}
	}
	if diff := cmp.Diff(got, []string{"ADDED ns/a 2", "BOOKMARK 2 end", "ADDED ns/b 3"}); diff != "" {
		t.Errorf("events (-got +want):\n%s", diff)
	}
	// The 1s deadline (its pre-deadline bookmark is already due) passes on the real clock: the adapter wakes, Advances, and closes.
	for {
		ev, ok := recv(t, wi.ResultChan())
		if !ok {
			break
		}
		if ev.Type != watch.Bookmark {
			t.Errorf("unexpected event %s before close", render(ev))
		}
	}
	if got := wi.(*Watcher).CloseReason(); got != CloseDeadline {
		t.Errorf("close reason %v, want Deadline", got)
	}
}

func TestResultChanStopAndContext(t *testing.T) {
	s, _ := newTestServer(t, nil)
	w, err := s.watchConcurrent(bg, cmGVR, "", metav1.ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	ch := w.ResultChan()
	w.Stop()
	if _, ok := recv(t, ch); ok {
		t.Errorf("channel still open after Stop")
	}
	ctx, cancel := context.WithCancel(bg)
	lw := s.ListerWatcher(cmGVR, "")
	wi, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, ok := recv(t, wi.ResultChan()); ok {
		t.Errorf("channel still open after cancel")
	}
	wi.Stop()
	if got := wi.(*Watcher).CloseReason(); got != CloseStopped {
		t.Errorf("close reason %v, want Stopped", got)
	}
	// An error close delivers the ERROR event, then closes the channel.
	wi, _ = lw.Watch(metav1.ListOptions{ResourceVersion: "1"})
	ch = wi.ResultChan()
	s.Faults().CloseWatch(wi.(*Watcher).ID(), NewWatchError(410))
	ev, ok := recv(t, ch)
	if !ok || ev.Type != watch.Error {
		t.Errorf("got %v %v, want the ERROR event", ev, ok)
	}
	if _, ok := recv(t, ch); ok {
		t.Errorf("channel open after the ERROR event")
	}
	wi.Stop()
}

func TestListerWatcherSwitchAndRecord(t *testing.T) {
	s, _ := newTestServer(t, nil)
	var observed []Record
	s.OnRecord(func(r Record) { observed = append(observed, r) })
	lw := s.ListerWatcher(cmGVR, "ns")
	lw.Name = "informer-1"
	if lw.IsWatchListSemanticsUnSupported() {
		t.Errorf("watch-list unsupported by default")
	}
	lw.WatchListUnsupported = true
	if !lw.IsWatchListSemanticsUnSupported() {
		t.Errorf("switch ignored")
	}
	lw.Tweak = func(o *metav1.ListOptions) { o.LabelSelector = "app=x" }
	mustCreate(t, s, cmGVR, cm("ns", "a", map[string]string{"app": "x"}))
	l, err := lw.ListWithContext(bg, metav1.ListOptions{ResourceVersion: "0", Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	w, err := lw.OpenWatch(metav1.ListOptions{ResourceVersion: "1", AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	drain(w)
	w.Stop()
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("requests %+v, want create, list, watch", reqs)
	}
	gotList := reqs[1]
	if gotList.Client != "informer-1" || gotList.Verb != VerbList || gotList.Options.LabelSelector != "app=x" ||
		gotList.Options.Limit != 500 || gotList.ListRV != l.(interface{ GetResourceVersion() string }).GetResourceVersion() || gotList.Replica != 0 {
		t.Errorf("list record %+v", gotList)
	}
	if reqs[2].WatchID != w.ID() || reqs[0].ObjectRV != "2" || reqs[0].Name != "a" {
		t.Errorf("records %+v", reqs)
	}
	evs := s.WatchEvents()
	if len(evs) != 2 || evs[0].Type != watch.Added || evs[0].Key != "ns/a" || evs[0].RV != "2" || evs[1].Close != CloseStopped {
		t.Errorf("event records %+v", evs)
	}
	if len(observed) != 5 {
		t.Errorf("observer saw %d records, want 5", len(observed))
	}
}
