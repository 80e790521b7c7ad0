package fakeapi

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestTimeTravel reproduces k/k#59848 (fakeapi.md §9 row 1): a client that saw revision 3 on one
// apiserver restarts, lists RV="0" on a lagging one and gets an older state.
func TestTimeTravel(t *testing.T) {
	s, _ := newTestServer(t, func(c *Config) { c.Replicas = 2 })
	mustCreate(t, s, cmGVR, cm("ns", "a", nil))
	s.Replicas().Freeze(1)
	mustDelete(t, s, cmGVR, "ns", "a")
	lw := s.ListerWatcher(cmGVR, "")
	lw.Replica = 0
	fresh, _ := lw.List(metav1.ListOptions{ResourceVersion: "0"})
	lw.Replica = 1
	stale, _ := lw.List(metav1.ListOptions{ResourceVersion: "0"})
	sl := stale.(*unstructured.UnstructuredList)
	if got, want := names(sl)+"@"+sl.GetResourceVersion(), "a@2@2"; got != want {
		t.Errorf("stale list %s, want %s", got, want)
	}
	_ = fresh
	// A NotOlderThan read at the fresh RV on the lagging server: 504 (k/k#100745).
	s.Replicas().RouteNext(1)
	_, err := s.list(cmGVR, "", metav1.ListOptions{ResourceVersion: "3", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	wantStatus(t, err, 504, metav1.StatusReasonTimeout)
	if got := s.Requests(); got[len(got)-1].Replica != 1 {
		t.Errorf("served by replica %d, want 1", got[len(got)-1].Replica)
	}
}

// TestReplicaLag checks that a lagging cache delivers events only once the clock passes the lag,
// in order, and that NextDeadline names that time.
func TestReplicaLag(t *testing.T) {
	s, clk := newTestServer(t, func(c *Config) { c.BookmarkInterval = -1; c.CompactionInterval = -1; c.WatchTimeout = WatchTimeoutNone })
	s.Replicas().SetLag(0, 2*time.Second)
	w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "1"})
	mustCreate(t, s, cmGVR, cm("ns", "a", nil))
	clk.Step(time.Second)
	mustCreate(t, s, cmGVR, cm("ns", "b", nil))
	if got := drain(w); len(got) != 0 {
		t.Fatalf("events %v before the lag passed", got)
	}
	at, ok := s.NextDeadline()
	if want := epoch.Add(2 * time.Second); !ok || !at.Equal(want) {
		t.Fatalf("next deadline %v, want %v", at, want)
	}
	clk.SetTime(at)
	s.Advance()
	if diff := cmp.Diff(drain(w), []string{"ADDED ns/a 2"}); diff != "" {
		t.Errorf("after 2s (-got +want):\n%s", diff)
	}
	clk.Step(time.Second)
	s.Advance()
	if diff := cmp.Diff(drain(w), []string{"ADDED ns/b 3"}); diff != "" {
		t.Errorf("after 3s (-got +want):\n%s", diff)
	}
}

// TestRoutingPolicies checks round-robin and seeded random routing.
func TestRoutingPolicies(t *testing.T) {
	s, _ := newTestServer(t, func(c *Config) { c.Replicas = 3; c.Routing = RoutingRoundRobin })
	for i := 0; i < 4; i++ {
		s.list(cmGVR, "", metav1.ListOptions{})
	}
	var got []int
	for _, r := range s.Requests() {
		got = append(got, r.Replica)
	}
	if diff := cmp.Diff(got, []int{0, 1, 2, 0}); diff != "" {
		t.Errorf("round robin (-got +want):\n%s", diff)
	}
	draw := func() []int {
		s, _ := newTestServer(t, func(c *Config) { c.Replicas = 3; c.Routing = RoutingRandom })
		for i := 0; i < 8; i++ {
			s.list(cmGVR, "", metav1.ListOptions{})
		}
		var out []int
		for _, r := range s.Requests() {
			out = append(out, r.Replica)
		}
		return out
	}
	if diff := cmp.Diff(draw(), draw()); diff != "" {
		t.Errorf("random routing is not reproducible (-first +second):\n%s", diff)
	}
}

// TestReinitNotReady checks F-3: after a reinit with a not-ready window, cache requests get 429
// until the clock passes it.
func TestReinitNotReady(t *testing.T) {
	s, clk := newTestServer(t, nil)
	s.Replicas().Reinit(0, 5*time.Second)
	_, err := s.OpenWatch(cmGVR, "", metav1.ListOptions{ResourceVersion: "1"})
	wantStatus(t, err, 429, metav1.StatusReasonTooManyRequests)
	clk.Step(5 * time.Second)
	if _, err := s.OpenWatch(cmGVR, "", metav1.ListOptions{ResourceVersion: "1"}); err != nil {
		t.Errorf("after the window: %v", err)
	}
}

// TestPeriodicCompaction checks the etcd-like compactor: each tick compacts to the revision seen
// on the previous tick (fakeapi.md §2).
func TestPeriodicCompaction(t *testing.T) {
	s, clk := newTestServer(t, func(c *Config) { c.CompactionInterval = time.Minute; c.BookmarkInterval = -1 })
	mustCreate(t, s, cmGVR, cm("ns", "a", nil)) // rev 2
	clk.Step(time.Minute)
	s.Advance() // compacts to 1 (seen at start), records 2
	if got := s.CompactedRevision(); got != 1 {
		t.Errorf("after tick 1: floor %d, want 1", got)
	}
	mustCreate(t, s, cmGVR, cm("ns", "b", nil)) // rev 3
	clk.Step(time.Minute)
	s.Advance()
	if got := s.CompactedRevision(); got != 2 {
		t.Errorf("after tick 2: floor %d, want 2", got)
	}
	w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "1"})
	if diff := cmp.Diff(drain(w), []string{"ADDED ns/a 2", "ADDED ns/b 3"}); diff != "" {
		t.Errorf("watch from floor-1 (-got +want):\n%s", diff)
	}
}

// TestLogBound checks MaxLogEntries: the log never grows beyond its limit; old RVs expire.
func TestLogBound(t *testing.T) {
	s, _ := newTestServer(t, func(c *Config) { c.MaxLogEntries = 8 })
	for i := 0; i < 50; i++ {
		u := cm("ns", "a", nil)
		if i == 0 {
			mustCreate(t, s, cmGVR, u)
			continue
		}
		cur, _ := s.Resource(cmGVR).Namespace("ns").Get(bg, "a", metav1.GetOptions{})
		cur.SetLabels(map[string]string{"i": FormatRV(uint64(i))})
		mustUpdate(t, s, cmGVR, cur)
	}
	s.mu.Lock()
	n, versions := s.log.len(), len(s.resources[cmGVR].keys[objKey{"ns", "a"}].versions)
	s.mu.Unlock()
	if n > 8 || versions > 9 {
		t.Errorf("log %d entries, %d versions; want <= 8 and <= 9", n, versions)
	}
	w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "2"})
	if diff := cmp.Diff(drain(w), []string{"ERROR 410 Expired"}); diff != "" {
		t.Errorf("watch from a trimmed RV (-got +want):\n%s", diff)
	}
}

// TestWatchListQuirks checks F-9: each quirk changes only the end-of-initial-events bookmark.
func TestWatchListQuirks(t *testing.T) {
	for _, tt := range []struct {
		quirk WatchListQuirk
		want  []string
	}{
		{0, []string{"ADDED ns/a 2", "BOOKMARK 2 end"}},
		{WatchListOmitAnnotation, []string{"ADDED ns/a 2", "BOOKMARK 2"}},
		{WatchListOmitEndBookmark, []string{"ADDED ns/a 2"}},
		{WatchListEndBookmarkWithoutRV, []string{"ADDED ns/a 2", "BOOKMARK  end"}},
	} {
		t.Run(tt.quirk.String(), func(t *testing.T) {
			s, _ := newTestServer(t, nil)
			mustCreate(t, s, cmGVR, cm("ns", "a", nil))
			s.Faults().SetWatchListQuirk(tt.quirk)
			w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{SendInitialEvents: ptr(true),
				ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
			if diff := cmp.Diff(drain(w), tt.want); diff != "" {
				t.Errorf("events (-got +want):\n%s", diff)
			}
		})
	}
}

// TestCacheHistoryBound checks MaxCacheHistoryEvents (§4.7): a busy cache rejects watches from
// RVs its ring no longer holds although the store was never compacted.
func TestCacheHistoryBound(t *testing.T) {
	s, _ := newTestServer(t, func(c *Config) { c.MaxCacheHistoryEvents = 2 })
	for _, n := range []string{"a", "b", "c", "d"} {
		mustCreate(t, s, cmGVR, cm("ns", n, nil)) // revisions 2..5
	}
	w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "2"})
	if diff := cmp.Diff(drain(w), []string{"ERROR 410 Expired"}); diff != "" {
		t.Errorf("from 2 (-got +want):\n%s", diff)
	}
	w = mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "3"})
	if diff := cmp.Diff(drain(w), []string{"ADDED ns/c 4", "ADDED ns/d 5"}); diff != "" {
		t.Errorf("from 3 (-got +want):\n%s", diff)
	}
	if _, err := s.list(cmGVR, "", metav1.ListOptions{ResourceVersion: "2", ResourceVersionMatch: metav1.ResourceVersionMatchExact}); err != nil {
		t.Errorf("exact list from storage at 2: %v (etcd still has it)", err)
	}
}

// TestDuplicateEvent checks F-11: the last delivered event comes again, then the stream goes on.
func TestDuplicateEvent(t *testing.T) {
	s, _ := newTestServer(t, nil)
	w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "1"})
	if err := s.Faults().DuplicateEvent(w.ID()); err == nil {
		t.Errorf("duplicate before any delivery: no error")
	}
	mustCreate(t, s, cmGVR, cm("ns", "a", nil))
	mustCreate(t, s, cmGVR, cm("ns", "b", nil))
	w.Next()
	if err := s.Faults().DuplicateEvent(w.ID()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(drain(w), []string{"ADDED ns/a 2", "ADDED ns/b 3"}); diff != "" {
		t.Errorf("events (-got +want):\n%s", diff)
	}
}

// TestNextDeadlineNeverInThePast checks that an overdue action is reported as due now.
func TestNextDeadlineNeverInThePast(t *testing.T) {
	s, clk := newTestServer(t, nil)
	mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "1", AllowWatchBookmarks: true, TimeoutSeconds: ptr(int64(1))})
	clk.Step(time.Hour)
	if at, ok := s.NextDeadline(); !ok || !at.Equal(clk.Now()) {
		t.Errorf("next deadline %v %v, want now %v", at, ok, clk.Now())
	}
}

// Goal: NextDeadline's kept answer is never stale: after every kind of change (writes, watches
// opened, drained, stopped and timing out, replica lag, freeze, readiness, compaction, the clock
// moving) it is what a fresh computation gives. Method: a scripted run with every deadline source
// active, comparing NextDeadline with nextDeadline_locked after each step, and calling it twice
// so the second answer comes from what was kept.
func TestNextDeadlineKeptAnswerNeverStale(t *testing.T) {
	s, clk := newTestServer(t, func(c *Config) {
		c.Replicas = 2
		c.CompactionInterval = 5 * time.Minute
		c.BookmarkInterval = 7 * time.Second
		c.BookmarkBeforeDeadline = 3 * time.Second
		c.ResourceVersionWait = 4 * time.Second
	})
	changes := 0
	var last time.Time
	check := func(step string) {
		t.Helper()
		for range 2 {
			got, gotOK := s.NextDeadline()
			s.mu.Lock()
			want, wantOK := s.nextDeadline_locked()
			s.mu.Unlock()
			if gotOK != wantOK || !got.Equal(want) {
				t.Fatalf("%s: NextDeadline %v %v, want %v %v", step, got, gotOK, want, wantOK)
			}
			if !got.Equal(last) {
				changes++
				last = got
			}
		}
	}
	check("start")
	s.Replicas().SetLag(1, 2*time.Second)
	check("lag")
	watchTimeout := int64(30)
	w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "1", AllowWatchBookmarks: true, TimeoutSeconds: &watchTimeout})
	check("watch")
	w2 := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "1000"}) // waits for a future RV
	check("waiting watch")
	for i := range 6 {
		mustCreate(t, s, cmGVR, cm("ns", fmt.Sprintf("o%d", i), nil))
		check("create")
		clk.Step(1500 * time.Millisecond)
		check("clock")
		s.Advance()
		check("advance")
		drain(w)
		check("drain")
	}
	s.Replicas().Freeze(0)
	check("freeze")
	s.Replicas().SetReady(1, false)
	check("not ready")
	s.Replicas().SetReady(1, true)
	check("ready")
	w2.Stop()
	check("stop")
	for range 40 {
		at, ok := s.NextDeadline()
		if !ok {
			break
		}
		clk.SetTime(at)
		check("to the deadline")
		s.Advance()
		check("advance at the deadline")
		drain(w)
		check("drain")
	}
	if changes < 10 {
		t.Errorf("the deadline changed %d times: the run does not exercise the kept answer", changes)
	}
}

// TestStepMovesAFrozenCacheToARevision checks Replicas.Step (fakeapi.md §6 F-2): a frozen cache
// moves to exactly the revision asked, serves that state to RV="0" lists and delivers the events
// up to it to its watches, stays frozen afterwards, and is never moved past the store.
func TestStepMovesAFrozenCacheToARevision(t *testing.T) {
	s, _ := newTestServer(t, func(c *Config) { c.BookmarkInterval = -1; c.CompactionInterval = -1; c.WatchTimeout = WatchTimeoutNone })
	w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "1"})
	if err := s.Replicas().Freeze(0); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b", "c"} { // revisions 2, 3, 4
		mustCreate(t, s, cmGVR, cm("ns", n, nil))
	}
	staleList := func() string {
		l, err := s.list(cmGVR, "", metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		return names(l) + " list RV " + l.GetResourceVersion()
	}
	if got, want := staleList(), " list RV 1"; got != want {
		t.Fatalf("frozen cache lists %q, want %q", got, want)
	}
	if err := s.Replicas().Step(0, 3); err != nil {
		t.Fatal(err)
	}
	if rev, _ := s.Replicas().Revision(0); rev != 3 {
		t.Errorf("after Step(0, 3) the cache is at %d, want 3", rev)
	}
	if got, want := staleList(), "a@2,b@3 list RV 3"; got != want {
		t.Errorf("after Step(0, 3) the cache lists %q, want %q", got, want)
	}
	if diff := cmp.Diff(drain(w), []string{"ADDED ns/a 2", "ADDED ns/b 3"}); diff != "" {
		t.Errorf("events after Step(0, 3) (-got +want):\n%s", diff)
	}
	// Still frozen: a new write does not move it.
	mustCreate(t, s, cmGVR, cm("ns", "d", nil)) // revision 5
	if rev, _ := s.Replicas().Revision(0); rev != 3 {
		t.Errorf("a write moved the stepped, frozen cache to %d", rev)
	}
	// A step past the store stops at the store's revision.
	if err := s.Replicas().Step(0, 99); err != nil {
		t.Fatal(err)
	}
	if rev, _ := s.Replicas().Revision(0); rev != 5 {
		t.Errorf("Step(0, 99) moved the cache to %d, want the store's revision 5", rev)
	}
	if diff := cmp.Diff(drain(w), []string{"ADDED ns/c 4", "ADDED ns/d 5"}); diff != "" {
		t.Errorf("events after Step(0, 99) (-got +want):\n%s", diff)
	}
}
