package fakeapi

import (
	"errors"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// TestPeriodicBookmarkNeverAheadOfServingCache: fakeapi.md §4.5, informer.md §7.6: a periodic
// bookmark carries the resourceVersion of the watch cache that serves the watch, never a newer
// one, so a lagging replica never announces a revision it has not sent. Method: two replicas;
// the watch is pinned to replica 1, which lags 3s behind the store (then freezes); one write per
// second for 12s while bookmarks go out every second. Each bookmark's RV must equal replica 1's
// revision when it was queued, must be below the store's revision while the replica lags, and no
// event at or below a bookmark's RV may follow that bookmark on the stream.
func TestPeriodicBookmarkNeverAheadOfServingCache(t *testing.T) {
	s, clk := newTestServer(t, func(c *Config) {
		c.Replicas = 2
		c.BookmarkInterval = time.Second
		c.CompactionInterval = -1
		c.WatchTimeout = WatchTimeoutNone
	})
	s.Replicas().SetLag(1, 3*time.Second)
	lw := s.ListerWatcher(cmGVR, "")
	lw.Replica = 1
	w, err := lw.OpenWatch(metav1.ListOptions{ResourceVersion: strconv.FormatUint(s.Revision(), 10), AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	var stream []watch.Event
	bookmarks := 0
	lagged := 0
	collect := func() {
		for {
			ev, ok := w.Next()
			if !ok {
				return
			}
			stream = append(stream, ev)
			if ev.Type != watch.Bookmark {
				continue
			}
			bookmarks++
			rv := rvOf(t, ev)
			if cache, _ := s.Replicas().Revision(1); rv > cache {
				t.Errorf("bookmark at %d, ahead of the serving cache at %d", rv, cache)
			}
			if rv < s.Revision() {
				lagged++
			}
		}
	}
	for i := range 12 {
		mustCreate(t, s, cmGVR, cm("ns", "c"+strconv.Itoa(i), nil))
		if i == 8 {
			s.Replicas().Freeze(1) // a frozen cache keeps announcing its own, older revision
		}
		clk.Step(time.Second)
		s.Advance()
		collect()
	}
	if bookmarks < 10 {
		t.Fatalf("%d bookmarks in 12s at a 1s interval, want at least 10", bookmarks)
	}
	if lagged == 0 {
		t.Fatal("no bookmark was sent while the replica lagged: the test checks nothing")
	}
	maxBookmark := uint64(0)
	for _, ev := range stream {
		rv := rvOf(t, ev)
		if ev.Type == watch.Bookmark {
			maxBookmark = max(maxBookmark, rv)
			continue
		}
		if rv <= maxBookmark {
			t.Errorf("%s at %d after a bookmark at %d: the bookmark announced it before it was sent", ev.Type, rv, maxBookmark)
		}
	}
	cache, err := s.Replicas().Revision(1)
	if err != nil {
		t.Fatal(err)
	}
	if got := maxBookmark; got > cache || s.Revision() <= cache {
		t.Errorf("last bookmark %d, frozen cache %d, store %d: want bookmark <= cache < store", got, cache, s.Revision())
	}
}

func rvOf(t *testing.T, ev watch.Event) uint64 {
	t.Helper()
	m, err := metav1Accessor(ev)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := strconv.ParseUint(m, 10, 64)
	if err != nil {
		t.Fatalf("%s event RV %q: %v", ev.Type, m, err)
	}
	return rv
}

func metav1Accessor(ev watch.Event) (string, error) {
	o, ok := ev.Object.(metav1.Object)
	if !ok {
		return "", errNotObject
	}
	return o.GetResourceVersion(), nil
}

var errNotObject = errors.New("fakeapi test: event object has no metadata")
