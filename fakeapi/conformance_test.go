package fakeapi

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	testclock "k8s.io/utils/clock/testing"
)

// TestConformance ports the conformance scenarios of fakeapi.md §10.4 (items 1-15; item 16
// needs client-go and lives in compare/). Each scenario drives the server through its public API
// only and checks the exact events, RVs and error shapes.
func TestConformance(t *testing.T) {
	tests := []struct {
		name   string
		config func(*Config)
		run    func(t *testing.T, s *Server, clk *testclock.FakeClock)
	}{
		{name: "01 list most recent", run: func(t *testing.T, s *Server, clk *testclock.FakeClock) {
			empty, err := s.list(cmGVR, "", metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := empty.GetResourceVersion(), "1"; got != want {
				t.Errorf("empty list RV %q, want %q (MH-2: set for empty lists)", got, want)
			}
			for _, n := range []string{"c", "a", "b"} {
				mustCreate(t, s, cmGVR, cm("ns", n, nil))
			}
			s.Faults().BurnRevisions(3)
			l, err := s.list(cmGVR, "", metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := names(l), "a@3,b@4,c@2"; got != want {
				t.Errorf("items %s, want %s", got, want)
			}
			if got, want := l.GetResourceVersion(), "7"; got != want {
				t.Errorf("list RV %s, want %s", got, want)
			}
			for _, it := range l.Items {
				if c, err := resourceversion.CompareResourceVersion(l.GetResourceVersion(), it.GetResourceVersion()); err != nil || c < 0 {
					t.Errorf("list RV %s vs item %s: %d, %v", l.GetResourceVersion(), it.GetResourceVersion(), c, err)
				}
			}
		}},
		{name: "02 stale RV=0 list from a frozen cache", run: func(t *testing.T, s *Server, clk *testclock.FakeClock) {
			mustCreate(t, s, cmGVR, cm("ns", "a", nil))
			s.Replicas().Freeze(0)
			mustCreate(t, s, cmGVR, cm("ns", "b", nil))
			l, err := s.list(cmGVR, "", metav1.ListOptions{ResourceVersion: "0"})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := names(l)+" rv="+l.GetResourceVersion(), "a@2 rv=2"; got != want {
				t.Errorf("stale list %s, want %s", got, want)
			}
			l, _ = s.list(cmGVR, "", metav1.ListOptions{})
			if got, want := names(l)+" rv="+l.GetResourceVersion(), "a@2,b@3 rv=3"; got != want {
				t.Errorf("consistent list %s, want %s", got, want)
			}
		}},
		{name: "03 too large RV then unfreeze", run: func(t *testing.T, s *Server, clk *testclock.FakeClock) {
			mustCreate(t, s, cmGVR, cm("ns", "a", nil))
			s.Replicas().Freeze(0)
			mustCreate(t, s, cmGVR, cm("ns", "b", nil))
			_, err := s.list(cmGVR, "", metav1.ListOptions{ResourceVersion: "3"})
			se := wantStatus(t, err, 504, metav1.StatusReasonTimeout)
			if !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
				t.Errorf("causes %+v, want ResourceVersionTooLarge", se.ErrStatus.Details)
			}
			if got, want := se.ErrStatus.Details.RetryAfterSeconds, int32(1); got != want {
				t.Errorf("retry after %d, want %d", got, want)
			}
			if got, want := se.ErrStatus.Message, "Timeout: Too large resource version: 3, current: 2"; got != want {
				t.Errorf("message %q, want %q", got, want)
			}
			s.Replicas().Resume(0)
			l, err := s.list(cmGVR, "", metav1.ListOptions{ResourceVersion: "3"})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := names(l), "a@2,b@3"; got != want {
				t.Errorf("items %s, want %s", got, want)
			}
		}},
		{name: "04 exact list after compaction; exact with RV=0", run: func(t *testing.T, s *Server, clk *testclock.FakeClock) {
			mustCreate(t, s, cmGVR, cm("ns", "a", nil))
			mustCreate(t, s, cmGVR, cm("ns", "b", nil))
			l, err := s.list(cmGVR, "", metav1.ListOptions{ResourceVersion: "2", ResourceVersionMatch: metav1.ResourceVersionMatchExact})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := names(l)+" rv="+l.GetResourceVersion(), "a@2 rv=2"; got != want {
				t.Errorf("exact list %s, want %s", got, want)
			}
			if err := s.Faults().Compact(3); err != nil {
				t.Fatal(err)
			}
			_, err = s.list(cmGVR, "", metav1.ListOptions{ResourceVersion: "2", ResourceVersionMatch: metav1.ResourceVersionMatchExact})
			wantStatus(t, err, 410, metav1.StatusReasonExpired)
			_, err = s.list(cmGVR, "", metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchExact})
			wantStatus(t, err, 422, metav1.StatusReasonInvalid)
		}},
		{name: "05 pagination snapshot, compaction between pages", run: func(t *testing.T, s *Server, clk *testclock.FakeClock) {
			for _, n := range []string{"a", "b", "c", "d"} {
				mustCreate(t, s, cmGVR, cm("ns", n, nil))
			}
			p1, err := s.list(cmGVR, "ns", metav1.ListOptions{Limit: 2})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := names(p1), "a@2,b@3"; got != want {
				t.Errorf("page 1 %s, want %s", got, want)
			}
			if rem := p1.GetRemainingItemCount(); rem == nil || *rem != 2 {
				t.Errorf("remainingItemCount %v, want 2", rem)
			}
			c := s.Resource(cmGVR).Namespace("ns")
			cur, _ := c.Get(bg, "c", metav1.GetOptions{})
			cur.SetLabels(map[string]string{"x": "y"})
			mustUpdate(t, s, cmGVR, cur)
			p2, err := s.list(cmGVR, "ns", metav1.ListOptions{Limit: 2, Continue: p1.GetContinue()})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := names(p2)+" rv="+p2.GetResourceVersion()+" more="+p2.GetContinue(), "c@4,d@5 rv=5 more="; got != want {
				t.Errorf("page 2 %s, want %s (the page-1 snapshot)", got, want)
			}
			// Compact past the snapshot between pages: 410 with a fresh token at the latest revision.
			p1, _ = s.list(cmGVR, "ns", metav1.ListOptions{Limit: 2})
			mustDelete(t, s, cmGVR, "ns", "d")
			if err := s.Faults().Compact(s.Revision()); err != nil {
				t.Fatal(err)
			}
			_, err = s.list(cmGVR, "ns", metav1.ListOptions{Limit: 2, Continue: p1.GetContinue()})
			se := wantStatus(t, err, 410, metav1.StatusReasonExpired)
			fresh := se.ErrStatus.ListMeta.Continue
			if fresh == "" {
				t.Fatalf("410 without a fresh continue token")
			}
			p2, err = s.list(cmGVR, "ns", metav1.ListOptions{Limit: 2, Continue: fresh})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := names(p2)+" rv="+p2.GetResourceVersion(), "c@6 rv=7"; got != want {
				t.Errorf("inconsistent continuation %s, want %s (latest revision)", got, want)
			}
		}},
		{name: "06 watch from list RV: exactly the later writes, delete at its revision", run: func(t *testing.T, s *Server, clk *testclock.FakeClock) {
			mustCreate(t, s, cmGVR, cm("ns", "a", nil))
			l, _ := s.list(cmGVR, "", metav1.ListOptions{})
			w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: l.GetResourceVersion()})
			mustCreate(t, s, podsGVR, obj("Pod", "ns", "p", nil)) // another kind: a gap in RVs
			b := mustCreate(t, s, cmGVR, cm("ns", "b", nil))
			b.SetLabels(map[string]string{"v": "2"})
			mustUpdate(t, s, cmGVR, b)
			mustDelete(t, s, cmGVR, "ns", "a")
			want := []string{"ADDED ns/b 4", "MODIFIED ns/b 5", "DELETED ns/a 6"}
			if diff := cmp.Diff(drain(w), want); diff != "" {
				t.Errorf("events (-got +want):\n%s", diff)
			}
			// Resuming from any delivered RV gives the rest, once.
			w2 := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "4"})
			if diff := cmp.Diff(drain(w2), want[1:]); diff != "" {
				t.Errorf("resume (-got +want):\n%s", diff)
			}
		}},
		{name: "07 watch below compaction floor", run: func(t *testing.T, s *Server, clk *testclock.FakeClock) {
			mustCreate(t, s, cmGVR, cm("ns", "a", nil))
			mustCreate(t, s, cmGVR, cm("ns", "b", nil))
			mustCreate(t, s, cmGVR, cm("ns", "c", nil))
			if err := s.Faults().Compact(4); err != nil {
				t.Fatal(err)
			}
			w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "2"})
			if diff := cmp.Diff(drain(w), []string{"ERROR 410 Expired"}); diff != "" {
				t.Errorf("events (-got +want):\n%s", diff)
			}
			if !w.Done() || w.CloseReason() != CloseExpired {
				t.Errorf("done %v reason %v, want closed as Expired", w.Done(), w.CloseReason())
			}
			// RV 3 = floor-1 is still servable (§4.7 "410 if requested RV < oldest retained - 1").
			w = mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "3"})
			if diff := cmp.Diff(drain(w), []string{"ADDED ns/c 4"}); diff != "" {
				t.Errorf("events from floor-1 (-got +want):\n%s", diff)
			}
		}},
		{name: "08 legacy RV= watch and watch-list", run: func(t *testing.T, s *Server, clk *testclock.FakeClock) {
			mustCreate(t, s, cmGVR, cm("ns", "b", nil))
			mustCreate(t, s, cmGVR, cm("ns", "a", nil))
			s.Faults().BurnRevisions(2)
			w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{})
			if diff := cmp.Diff(drain(w), []string{"ADDED ns/a 3", "ADDED ns/b 2"}); diff != "" {
				t.Errorf("legacy (-got +want):\n%s", diff)
			}
			wl := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "3", SendInitialEvents: ptr(true),
				ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
			mustCreate(t, s, cmGVR, cm("ns", "c", nil))
			want := []string{"ADDED ns/a 3", "ADDED ns/b 2", "BOOKMARK 5 end", "ADDED ns/c 6"}
			if diff := cmp.Diff(drain(wl), want); diff != "" {
				t.Errorf("watch-list (-got +want):\n%s", diff)
			}
		}},
		{name: "09 sendInitialEvents without bookmarks or RVM", run: func(t *testing.T, s *Server, clk *testclock.FakeClock) {
			mustCreate(t, s, cmGVR, cm("ns", "a", nil))
			w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{SendInitialEvents: ptr(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
			if diff := cmp.Diff(drain(w), []string{"ADDED ns/a 2"}); diff != "" {
				t.Errorf("no end bookmark expected (-got +want):\n%s", diff)
			}
			_, err := s.OpenWatch(cmGVR, "", metav1.ListOptions{SendInitialEvents: ptr(true), AllowWatchBookmarks: true})
			wantStatus(t, err, 422, metav1.StatusReasonInvalid)
		}},
		{name: "10 label selector transitions", run: func(t *testing.T, s *Server, clk *testclock.FakeClock) {
			a := mustCreate(t, s, cmGVR, cm("ns", "a", map[string]string{"app": "x"}))
			mustCreate(t, s, cmGVR, cm("ns", "other", map[string]string{"app": "y"}))
			w := mustWatch(t, s, cmGVR, "ns", metav1.ListOptions{ResourceVersion: s.revisionString(), LabelSelector: "app=x", AllowWatchBookmarks: true})
			a.SetLabels(map[string]string{"app": "z"})
			a = mustUpdate(t, s, cmGVR, a) // leaves: DELETED with old content, new RV
			a.SetLabels(map[string]string{"app": "x"})
			mustUpdate(t, s, cmGVR, a) // enters: ADDED
			o, _ := s.Resource(cmGVR).Namespace("ns").Get(bg, "other", metav1.GetOptions{})
			o.SetAnnotations(map[string]string{"n": "1"})
			mustUpdate(t, s, cmGVR, o) // irrelevant: nothing
			s.Faults().TriggerBookmarks()
			got := drain(w)
			want := []string{"DELETED ns/a 4", "ADDED ns/a 5", "BOOKMARK 6"}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("events (-got +want):\n%s", diff)
			}
		}},
		{name: "11 stale update conflicts; identical update is a no-op", run: func(t *testing.T, s *Server, clk *testclock.FakeClock) {
			a := mustCreate(t, s, cmGVR, cm("ns", "a", nil))
			w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: a.GetResourceVersion()})
			stale := a.DeepCopy()
			a.SetLabels(map[string]string{"v": "1"})
			mustUpdate(t, s, cmGVR, a)
			stale.SetLabels(map[string]string{"v": "2"})
			_, err := s.Resource(cmGVR).Namespace("ns").Update(bg, stale, metav1.UpdateOptions{})
			se := wantStatus(t, err, 409, metav1.StatusReasonConflict)
			if got, want := se.ErrStatus.Message, `Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again`; got != want {
				t.Errorf("message %q, want %q", got, want)
			}
			cur, _ := s.Resource(cmGVR).Namespace("ns").Get(bg, "a", metav1.GetOptions{})
			again := mustUpdate(t, s, cmGVR, cur.DeepCopy())
			if got, want := again.GetResourceVersion(), cur.GetResourceVersion(); got != want {
				t.Errorf("no-op update RV %s, want unchanged %s", got, want)
			}
			if got, want := s.Revision(), uint64(3); got != want {
				t.Errorf("revision %d, want %d (no-op consumes none)", got, want)
			}
			if diff := cmp.Diff(drain(w), []string{"MODIFIED ns/a 3"}); diff != "" {
				t.Errorf("events (-got +want):\n%s", diff)
			}
		}},
		{name: "12 finalizers: two-phase delete", run: func(t *testing.T, s *Server, clk *testclock.FakeClock) {
			in := cm("ns", "a", nil)
			in.SetFinalizers([]string{"example.com/hold"})
			a := mustCreate(t, s, cmGVR, in)
			w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: a.GetResourceVersion()})
			mustDelete(t, s, cmGVR, "ns", "a")
			cur, _ := s.Resource(cmGVR).Namespace("ns").Get(bg, "a", metav1.GetOptions{})
			if cur.GetDeletionTimestamp() == nil {
				t.Fatalf("no deletionTimestamp after delete with finalizer")
			}
			add := cur.DeepCopy()
			add.SetFinalizers([]string{"example.com/hold", "example.com/more"})
			_, err := s.Resource(cmGVR).Namespace("ns").Update(bg, add, metav1.UpdateOptions{})
			wantStatus(t, err, 422, metav1.StatusReasonInvalid)
			cur.SetFinalizers(nil)
			mustUpdate(t, s, cmGVR, cur)
			if diff := cmp.Diff(drain(w), []string{"MODIFIED ns/a 3", "DELETED ns/a 4"}); diff != "" {
				t.Errorf("events (-got +want):\n%s", diff)
			}
			_, err = s.Resource(cmGVR).Namespace("ns").Get(bg, "a", metav1.GetOptions{})
			wantStatus(t, err, 404, metav1.StatusReasonNotFound)
		}},
		{name: "13 generateName: deterministic, collisions retried then 409", run: func(t *testing.T, s *Server, clk *testclock.FakeClock) {
			gen := func() (*unstructured.Unstructured, error) {
				u := cm("ns", "", nil)
				u.SetGenerateName("web-")
				return s.Resource(cmGVR).Namespace("ns").Create(bg, u, metav1.CreateOptions{})
			}
			first, err := gen()
			if err != nil {
				t.Fatal(err)
			}
			s2, _ := newTestServer(t, nil)
			u := cm("ns", "", nil)
			u.SetGenerateName("web-")
			second, err := s2.Resource(cmGVR).Namespace("ns").Create(bg, u, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if first.GetName() != second.GetName() || first.GetUID() != second.GetUID() || len(first.GetName()) != len("web-")+5 {
				t.Errorf("names %q/%q uids %q/%q: want equal, deterministic, 5-char suffix", first.GetName(), second.GetName(), first.GetUID(), second.GetUID())
			}
			// Force collisions: a server whose alphabet draws always repeat (one-name space).
			s3, _ := newTestServer(t, func(c *Config) { c.Rand = constRand() })
			for i := 0; i < 2; i++ {
				u := cm("ns", "", nil)
				u.SetGenerateName("web-")
				_, err = s3.Resource(cmGVR).Namespace("ns").Create(bg, u, metav1.CreateOptions{})
			}
			se := wantStatus(t, err, 409, metav1.StatusReasonAlreadyExists)
			if se.ErrStatus.Details == nil || se.ErrStatus.Details.RetryAfterSeconds != 1 {
				t.Errorf("details %+v, want RetryAfterSeconds 1", se.ErrStatus.Details)
			}
		}},
		{name: "14 cache reinit closes watches; re-watch from before gets 410", run: func(t *testing.T, s *Server, clk *testclock.FakeClock) {
			mustCreate(t, s, cmGVR, cm("ns", "a", nil))
			w1 := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "2"})
			w2 := mustWatch(t, s, podsGVR, "", metav1.ListOptions{ResourceVersion: "2"})
			mustCreate(t, s, cmGVR, cm("ns", "b", nil))
			s.Replicas().Reinit(0, 0)
			for _, w := range []*Watcher{w1, w2} {
				drain(w)
				if !w.Done() || w.CloseReason() != CloseReinit {
					t.Errorf("watch %d: done %v reason %v, want closed by Reinit", w.ID(), w.Done(), w.CloseReason())
				}
			}
			w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "2"})
			if diff := cmp.Diff(drain(w), []string{"ERROR 410 Expired"}); diff != "" {
				t.Errorf("re-watch (-got +want):\n%s", diff)
			}
		}},
		{name: "15 slow consumer, bookmark before deadline, close at deadline",
			config: func(c *Config) { c.MaxWatchEvents = 3; c.BookmarkInterval = -1 },
			run: func(t *testing.T, s *Server, clk *testclock.FakeClock) {
				slow := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "1"})
				timed := mustWatch(t, s, podsGVR, "", metav1.ListOptions{ResourceVersion: "1", AllowWatchBookmarks: true, TimeoutSeconds: ptr(int64(10))})
				for _, n := range []string{"a", "b", "c", "d"} {
					mustCreate(t, s, cmGVR, cm("ns", n, nil))
				}
				if got := drain(slow); len(got) != 0 || slow.CloseReason() != CloseSlowConsumer {
					t.Errorf("slow consumer: events %v reason %v, want none and SlowConsumer", got, slow.CloseReason())
				}
				at, ok := s.NextDeadline()
				if want := epoch.Add(8 * time.Second); !ok || !at.Equal(want) {
					t.Fatalf("next deadline %v %v, want %v (2s before the 10s deadline)", at, ok, want)
				}
				clk.SetTime(at)
				s.Advance()
				if diff := cmp.Diff(drain(timed), []string{"BOOKMARK 5"}); diff != "" {
					t.Errorf("before deadline (-got +want):\n%s", diff)
				}
				at, _ = s.NextDeadline()
				clk.SetTime(at)
				s.Advance()
				if !timed.Done() || timed.CloseReason() != CloseDeadline {
					t.Errorf("at %v: done %v reason %v, want closed at Deadline", at, timed.Done(), timed.CloseReason())
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, clk := newTestServer(t, tt.config)
			tt.run(t, s, clk)
		})
	}
}

func (s *Server) revisionString() string { return FormatRV(s.Revision()) }
