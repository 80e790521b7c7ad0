package fakeapi

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestListErrorRows covers every row of fakeapi.md §3.2 plus the invalid rows of the §3.1
// dispatch table: each case sets up the server, issues one LIST and checks code, reason, message
// and the extra fields (causes, retry-after, continue token).
func TestListErrorRows(t *testing.T) {
	setup := func(t *testing.T, edit func(*Config)) *Server {
		s, _ := newTestServer(t, edit)
		for _, n := range []string{"a", "b", "c"} {
			mustCreate(t, s, cmGVR, cm("ns", n, nil))
		} // revisions 2, 3, 4
		return s
	}
	tests := []struct {
		name    string
		prepare func(s *Server)
		opts    metav1.ListOptions
		code    int32
		reason  metav1.StatusReason
		message string
		causes  []metav1.CauseType
		retry   int32
	}{
		{name: "exact RV below compaction floor", prepare: func(s *Server) { s.Faults().Compact(4) },
			opts: metav1.ListOptions{ResourceVersion: "3", ResourceVersionMatch: metav1.ResourceVersionMatchExact},
			code: 410, reason: metav1.StatusReasonExpired, message: "The resourceVersion for the provided list is too old."},
		{name: "legacy limited RV=N below floor (exact)", prepare: func(s *Server) { s.Faults().Compact(4) },
			opts: metav1.ListOptions{ResourceVersion: "2", Limit: 1},
			code: 410, reason: metav1.StatusReasonExpired, message: "The resourceVersion for the provided list is too old."},
		{name: "NotOlderThan future RV from the cache",
			opts: metav1.ListOptions{ResourceVersion: "9", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
			code: 504, reason: metav1.StatusReasonTimeout, message: "Timeout: Too large resource version: 9, current: 4",
			causes: []metav1.CauseType{metav1.CauseTypeResourceVersionTooLarge}, retry: 1},
		{name: "unlimited RV=N future (not older than)",
			opts: metav1.ListOptions{ResourceVersion: "9"},
			code: 504, reason: metav1.StatusReasonTimeout, message: "Timeout: Too large resource version: 9, current: 4",
			causes: []metav1.CauseType{metav1.CauseTypeResourceVersionTooLarge}, retry: 1},
		{name: "exact future RV from storage",
			opts: metav1.ListOptions{ResourceVersion: "9", ResourceVersionMatch: metav1.ResourceVersionMatchExact},
			code: 504, reason: metav1.StatusReasonTimeout, message: "Timeout: Too large resource version: 9, current: 4",
			causes: []metav1.CauseType{metav1.CauseTypeResourceVersionTooLarge}, retry: 0},
		{name: "cache not ready", prepare: func(s *Server) { s.Replicas().SetReady(0, false) },
			opts: metav1.ListOptions{ResourceVersion: "0"},
			code: 429, reason: metav1.StatusReasonTooManyRequests, message: "storage is (re)initializing", retry: 1},
		{name: "cache not ready, selector list with limit", prepare: func(s *Server) { s.Replicas().SetReady(0, false) },
			opts: metav1.ListOptions{ResourceVersion: "0", Limit: 5, LabelSelector: "a=b"},
			code: 429, reason: metav1.StatusReasonTooManyRequests, message: "storage is (re)initializing", retry: 1},
		{name: "unparseable RV", opts: metav1.ListOptions{ResourceVersion: "abc"},
			code: 400, reason: metav1.StatusReasonBadRequest, message: `invalid resource version: strconv.ParseUint: parsing "abc": invalid syntax`},
		{name: "unparseable continue", opts: metav1.ListOptions{Continue: "!!"},
			code: 400, reason: metav1.StatusReasonBadRequest, message: "invalid continue token: illegal base64 data at input byte 0"},
		{name: "unparseable label selector", opts: metav1.ListOptions{LabelSelector: "a in (b"},
			code: 400, reason: metav1.StatusReasonBadRequest},
		{name: "unparseable field selector", opts: metav1.ListOptions{FieldSelector: "a=b=c=="},
			code: 400, reason: metav1.StatusReasonBadRequest},
		{name: "unsupported field selector", opts: metav1.ListOptions{FieldSelector: "spec.nodeName=n1"},
			code: 400, reason: metav1.StatusReasonBadRequest, message: "field label not supported: spec.nodeName"},
		{name: "RV with continue", opts: metav1.ListOptions{ResourceVersion: "3", Continue: "x"},
			code: 400, reason: metav1.StatusReasonBadRequest, message: "specifying resource version is not allowed when using continue"},
		{name: "RVM without RV", opts: metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
			code: 422, reason: metav1.StatusReasonInvalid, causes: []metav1.CauseType{metav1.CauseType(field.ErrorTypeForbidden)}},
		{name: "exact with RV=0", opts: metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchExact},
			code: 422, reason: metav1.StatusReasonInvalid, causes: []metav1.CauseType{metav1.CauseType(field.ErrorTypeForbidden)}},
		{name: "unknown RVM", opts: metav1.ListOptions{ResourceVersion: "3", ResourceVersionMatch: "Newest"},
			code: 422, reason: metav1.StatusReasonInvalid, causes: []metav1.CauseType{metav1.CauseTypeFieldValueNotSupported}},
		{name: "sendInitialEvents on list", opts: metav1.ListOptions{SendInitialEvents: ptr(true)},
			code: 422, reason: metav1.StatusReasonInvalid, causes: []metav1.CauseType{metav1.CauseType(field.ErrorTypeForbidden)}},
		{name: "RVM with continue", opts: metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, Continue: "x"},
			code: 422, reason: metav1.StatusReasonInvalid, causes: []metav1.CauseType{metav1.CauseType(field.ErrorTypeForbidden)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := setup(t, nil)
			if tt.prepare != nil {
				tt.prepare(s)
			}
			_, err := s.list(cmGVR, "ns", tt.opts)
			se := wantStatus(t, err, tt.code, tt.reason)
			if tt.message != "" && se.ErrStatus.Message != tt.message {
				t.Errorf("message %q, want %q", se.ErrStatus.Message, tt.message)
			}
			var causes []metav1.CauseType
			var retry int32
			if d := se.ErrStatus.Details; d != nil {
				for _, c := range d.Causes {
					causes = append(causes, c.Type)
				}
				retry = d.RetryAfterSeconds
			}
			if tt.causes != nil {
				if diff := cmp.Diff(causes, tt.causes); diff != "" {
					t.Errorf("causes (-got +want):\n%s", diff)
				}
			}
			if retry != tt.retry {
				t.Errorf("retry after %d, want %d", retry, tt.retry)
			}
		})
	}
	t.Run("not-ready cache delegates a limited selector-free list", func(t *testing.T) {
		s := setup(t, nil)
		s.Replicas().SetReady(0, false)
		l, err := s.list(cmGVR, "ns", metav1.ListOptions{ResourceVersion: "0", Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := names(l)+" more="+fmt.Sprint(l.GetContinue() != ""), "a@2,b@3 more=true"; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	})
	t.Run("unknown resource", func(t *testing.T) {
		s := setup(t, nil)
		_, err := s.list(schema.GroupVersionResource{Group: "x", Version: "v1", Resource: "ys"}, "", metav1.ListOptions{})
		wantStatus(t, err, 404, metav1.StatusReasonNotFound)
	})
}

// TestWatchEndRows covers the rows of fakeapi.md §4.6: how a watch ends and what the client sees.
func TestWatchEndRows(t *testing.T) {
	for _, row := range []struct {
		name  string
		check func(t *testing.T)
	}{
		{"server deadline from timeoutSeconds: clean close", watchEndsAtTimeoutSeconds},
		{"server deadline without timeoutSeconds: seeded draw in [30m, 60m)", watchDeadlineDrawn},
		{"WatchTimeoutServer ignores the client's timeout", watchTimeoutServerIgnoresClient},
		{"client Stop", watchClientStop},
		{"start RV too old: ERROR 410 in the stream", watchTooOldInStream},
		{"start RV too old: 410 from Watch() when configured", watchTooOldFromWatch},
		{"sendInitialEvents at an RV the cache cannot reach: ERROR 504 after the wait", watchInitialEventsTooLarge},
		{"sendInitialEvents waits for a lagging cache, then streams", watchInitialEventsWaitForCache},
		{"error close faults", watchErrorCloseFaults},
		{"rejected before streaming", watchRejectedBeforeStreaming},
	} {
		t.Run(row.name, row.check)
	}
}

// watchEndsAtTimeoutSeconds: server deadline from timeoutSeconds: clean close (a row of
// TestWatchEndRows).
func watchEndsAtTimeoutSeconds(t *testing.T) {
	s, clk := newTestServer(t, nil)
	w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "1", TimeoutSeconds: ptr(int64(30))})
	clk.Step(29 * time.Second)
	s.Advance()
	if w.Done() {
		t.Fatalf("closed before the deadline")
	}
	clk.Step(time.Second)
	s.Advance()
	if got := drain(w); len(got) != 0 || !w.Done() || w.CloseReason() != CloseDeadline {
		t.Errorf("events %v done %v reason %v, want clean close at deadline", got, w.Done(), w.CloseReason())
	}
}

// watchDeadlineDrawn: server deadline without timeoutSeconds: seeded draw in [30m, 60m) (a row
// of TestWatchEndRows).
func watchDeadlineDrawn(t *testing.T) {
	s, _ := newTestServer(t, func(c *Config) { c.BookmarkInterval = -1; c.CompactionInterval = -1 })
	mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "1"})
	at, ok := s.NextDeadline()
	d := at.Sub(epoch)
	if !ok || d < 30*time.Minute || d >= 60*time.Minute {
		t.Errorf("deadline after %v (%v), want within [30m, 60m)", d, ok)
	}
}

// watchTimeoutServerIgnoresClient: WatchTimeoutServer ignores the client's timeout (a row of
// TestWatchEndRows).
func watchTimeoutServerIgnoresClient(t *testing.T) {
	s, _ := newTestServer(t, func(c *Config) {
		c.WatchTimeout, c.BookmarkInterval, c.CompactionInterval = WatchTimeoutServer, -1, -1
	})
	mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "1", TimeoutSeconds: ptr(int64(5))})
	if at, _ := s.NextDeadline(); at.Sub(epoch) < 30*time.Minute {
		t.Errorf("deadline after %v, want the server's own >= 30m", at.Sub(epoch))
	}
	if got, want := s.Requests()[0].Options.TimeoutSeconds, int64(5); got == nil || *got != want {
		t.Errorf("recorded client timeout %v, want %d", got, want)
	}
}

// watchClientStop: client Stop (a row of TestWatchEndRows).
func watchClientStop(t *testing.T) {
	s, _ := newTestServer(t, nil)
	w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "1"})
	mustCreate(t, s, cmGVR, cm("ns", "a", nil))
	w.Stop()
	w.Stop()
	if got := drain(w); len(got) != 0 || !w.Done() || w.CloseReason() != CloseStopped {
		t.Errorf("events %v done %v reason %v, want Stopped with nothing pending", got, w.Done(), w.CloseReason())
	}
}

// watchTooOldInStream: start RV too old: ERROR 410 in the stream (a row of TestWatchEndRows).
func watchTooOldInStream(t *testing.T) {
	s, _ := newTestServer(t, nil)
	mustCreate(t, s, cmGVR, cm("ns", "a", nil))
	mustCreate(t, s, cmGVR, cm("ns", "b", nil))
	s.Faults().Compact(3)
	w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "1"})
	ev, _ := w.Next()
	err := apierrors.FromObject(ev.Object)
	se := wantStatus(t, err, 410, metav1.StatusReasonExpired)
	// fakeapi.md §4.6 row 3, §4.7: the cacher names oldest-1, the lowest RV it can still
	// watch from (watch_cache_history.go); after Compact(3) that is 2.
	if got, want := se.ErrStatus.Message, "too old resource version: 1 (2)"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if !w.Done() {
		t.Errorf("not closed after the ERROR event")
	}
}

// watchTooOldFromWatch: start RV too old: 410 from Watch() when configured (a row of
// TestWatchEndRows).
func watchTooOldFromWatch(t *testing.T) {
	s, _ := newTestServer(t, func(c *Config) { c.ExpiredWatchAsError = true })
	mustCreate(t, s, cmGVR, cm("ns", "a", nil))
	mustCreate(t, s, cmGVR, cm("ns", "b", nil))
	s.Faults().Compact(3)
	_, err := s.OpenWatch(cmGVR, "", metav1.ListOptions{ResourceVersion: "1"})
	wantStatus(t, err, 410, metav1.StatusReasonExpired)
}

// watchInitialEventsTooLarge: sendInitialEvents at an RV the cache cannot reach: ERROR 504 after
// the wait (a row of TestWatchEndRows).
func watchInitialEventsTooLarge(t *testing.T) {
	s, clk := newTestServer(t, nil)
	s.Replicas().Freeze(0)
	mustCreate(t, s, cmGVR, cm("ns", "a", nil))
	w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "2", SendInitialEvents: ptr(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	if got := drain(w); len(got) != 0 {
		t.Fatalf("events %v while waiting", got)
	}
	clk.Step(DefaultResourceVersionWait)
	s.Advance()
	ev, _ := w.Next()
	err := apierrors.FromObject(ev.Object)
	wantStatus(t, err, 504, metav1.StatusReasonTimeout)
	if !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) || !w.Done() || w.CloseReason() != CloseTooLarge {
		t.Errorf("err %v done %v reason %v", err, w.Done(), w.CloseReason())
	}
}

// watchInitialEventsWaitForCache: sendInitialEvents waits for a lagging cache, then streams (a
// row of TestWatchEndRows).
func watchInitialEventsWaitForCache(t *testing.T) {
	s, clk := newTestServer(t, nil)
	s.Replicas().SetLag(0, time.Second)
	mustCreate(t, s, cmGVR, cm("ns", "a", nil))
	w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{SendInitialEvents: ptr(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	if got := drain(w); len(got) != 0 {
		t.Fatalf("events %v before the cache caught up", got)
	}
	at, _ := s.NextDeadline()
	clk.SetTime(at)
	s.Advance()
	if diff := cmp.Diff(drain(w), []string{"ADDED ns/a 2", "BOOKMARK 2 end"}); diff != "" {
		t.Errorf("events (-got +want):\n%s", diff)
	}
}

// watchErrorCloseFaults: error close faults (a row of TestWatchEndRows).
func watchErrorCloseFaults(t *testing.T) {
	for _, code := range []int32{410, 429, 500, 504} {
		s, _ := newTestServer(t, nil)
		w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "1"})
		mustCreate(t, s, cmGVR, cm("ns", "a", nil))
		if err := s.Faults().CloseWatch(w.ID(), NewWatchError(code)); err != nil {
			t.Fatal(err)
		}
		got := drain(w)
		if len(got) != 1 || got[0][:9] != fmt.Sprintf("ERROR %d", code) || !w.Done() {
			t.Errorf("code %d: events %v done %v", code, got, w.Done())
		}
	}
}

// watchRejectedBeforeStreaming: rejected before streaming (a row of TestWatchEndRows).
func watchRejectedBeforeStreaming(t *testing.T) {
	s, _ := newTestServer(t, nil)
	_, err := s.OpenWatch(cmGVR, "", metav1.ListOptions{ResourceVersion: "x"})
	wantStatus(t, err, 400, metav1.StatusReasonBadRequest)
	_, err = s.OpenWatch(cmGVR, "", metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	wantStatus(t, err, 422, metav1.StatusReasonInvalid)
	_, err = s.OpenWatch(cmGVR, "", metav1.ListOptions{SendInitialEvents: ptr(true), ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	wantStatus(t, err, 422, metav1.StatusReasonInvalid)
	s.Replicas().SetReady(0, false)
	_, err = s.OpenWatch(cmGVR, "", metav1.ListOptions{ResourceVersion: "1"})
	wantStatus(t, err, 429, metav1.StatusReasonTooManyRequests)
	s.Replicas().SetReady(0, true)
	s.Faults().FailNext(VerbWatch, apierrors.NewInternalError(errors.New("boom")))
	_, err = s.OpenWatch(cmGVR, "", metav1.ListOptions{ResourceVersion: "1"})
	wantStatus(t, err, 500, metav1.StatusReasonInternalError)
	s.Faults().FailNext(VerbWatch, NewConnectionRefused())
	_, err = s.OpenWatch(cmGVR, "", metav1.ListOptions{ResourceVersion: "1"})
	if !utilnet.IsConnectionRefused(err) {
		t.Errorf("error %v is not recognised as connection refused", err)
	}
	if _, err := s.OpenWatch(cmGVR, "", metav1.ListOptions{ResourceVersion: "1"}); err != nil {
		t.Errorf("failures must be consumed once: %v", err)
	}
}
