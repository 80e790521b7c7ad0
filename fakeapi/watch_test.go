package fakeapi

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// TestFieldSelectorTransitions checks §4.4 with a per-kind field: a pod moving from node n1 to n2
// leaves a spec.nodeName=n1 watch (DELETED, old content) and enters an n2 watch (ADDED).
func TestFieldSelectorTransitions(t *testing.T) {
	s, _ := newTestServer(t, nil)
	p := obj("Pod", "ns", "p", nil)
	p.Object["spec"] = map[string]any{"nodeName": "n1"}
	cur := mustCreate(t, s, podsGVR, p)
	n1 := mustWatch(t, s, podsGVR, "ns", metav1.ListOptions{ResourceVersion: "2", FieldSelector: "spec.nodeName=n1"})
	n2 := mustWatch(t, s, podsGVR, "", metav1.ListOptions{ResourceVersion: "2", FieldSelector: "spec.nodeName=n2,metadata.namespace=ns"})
	cur.Object["spec"] = map[string]any{"nodeName": "n2"}
	mustUpdate(t, s, podsGVR, cur)
	ev, _ := n1.Next()
	if got, want := render(ev), "DELETED ns/p 3"; got != want {
		t.Errorf("n1 watch: %s, want %s", got, want)
	} else if node := ev.Object.(interface{ UnstructuredContent() map[string]any }).UnstructuredContent()["spec"].(map[string]any)["nodeName"]; node != "n1" {
		t.Errorf("DELETED carries nodeName %v, want the old n1", node)
	}
	if diff := cmp.Diff(drain(n2), []string{"ADDED ns/p 3"}); diff != "" {
		t.Errorf("n2 watch (-got +want):\n%s", diff)
	}
}

// TestInitialEventsFromCache checks §4.1 rows "0"/true and ""/false: RV="0" initial events come
// from the (possibly stale) cache; RV="" with sendInitialEvents=false starts at the current
// revision with no initial state.
func TestInitialEventsFromCache(t *testing.T) {
	s, _ := newTestServer(t, nil)
	mustCreate(t, s, cmGVR, cm("ns", "a", nil))
	s.Replicas().Freeze(0)
	mustCreate(t, s, cmGVR, cm("ns", "b", nil))
	stale := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "0", AllowWatchBookmarks: true})
	fresh := mustWatch(t, s, cmGVR, "", metav1.ListOptions{SendInitialEvents: ptr(false), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	s.Replicas().Resume(0)
	mustCreate(t, s, cmGVR, cm("ns", "c", nil))
	if diff := cmp.Diff(drain(stale), []string{"ADDED ns/a 2", "BOOKMARK 2 end", "ADDED ns/b 3", "ADDED ns/c 4"}); diff != "" {
		t.Errorf("RV=0 (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(drain(fresh), []string{"ADDED ns/c 4"}); diff != "" {
		t.Errorf("RV= without initial events (-got +want):\n%s", diff)
	}
}

// TestDeterministicRecord runs the same seeded workload twice and compares the full record: the
// same seed gives the same requests, UIDs, names and events (MH-13).
func TestDeterministicRecord(t *testing.T) {
	run := func() ([]RequestRecord, []WatchEvent, []string) {
		s, clk := newTestServer(t, func(c *Config) { c.Rand = rand.New(rand.NewPCG(42, 1)); c.Replicas = 2; c.Routing = RoutingRandom })
		rnd := rand.New(rand.NewPCG(42, 2))
		var uids []string
		var ws []*Watcher
		for i := 0; i < 200; i++ {
			switch rnd.IntN(5) {
			case 0, 1:
				u := cm("ns", "", nil)
				u.SetGenerateName("g-")
				out, err := s.Resource(cmGVR).Namespace("ns").Create(bg, u, metav1.CreateOptions{})
				if err == nil {
					uids = append(uids, out.GetName()+"/"+string(out.GetUID()))
				}
			case 2:
				w, err := s.OpenWatch(cmGVR, "", metav1.ListOptions{ResourceVersion: strconv.FormatUint(s.Revision(), 10), AllowWatchBookmarks: true})
				if err == nil {
					ws = append(ws, w)
				}
			case 3:
				clk.Step(20e9)
				s.Advance()
			default:
				for _, w := range ws {
					w.Next()
				}
			}
		}
		return s.Requests(), s.WatchEvents(), uids
	}
	r1, e1, u1 := run()
	r2, e2, u2 := run()
	if diff := cmp.Diff(r1, r2); diff != "" {
		t.Errorf("requests differ (-first +second):\n%s", diff)
	}
	if diff := cmp.Diff(e1, e2); diff != "" {
		t.Errorf("events differ (-first +second):\n%s", diff)
	}
	if diff := cmp.Diff(u1, u2); diff != "" || len(u1) == 0 {
		t.Errorf("names/uids differ (-first +second):\n%s", diff)
	}
}

// TestConcurrentWritersAndConsumers runs writers and channel consumers at once (for -race): each
// consumer sees every write of its resource exactly once, in revision order.
func TestConcurrentWritersAndConsumers(t *testing.T) {
	s, _ := newTestServer(t, nil)
	const writers, perWriter = 4, 50
	var consumers []watch.Interface
	for i := 0; i < 3; i++ {
		w, err := s.watchConcurrent(bg, cmGVR, "", metav1.ListOptions{ResourceVersion: "1"})
		if err != nil {
			t.Fatal(err)
		}
		consumers = append(consumers, w)
	}
	got := make([][]string, len(consumers))
	var cwg sync.WaitGroup
	for i, w := range consumers {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			last := uint64(0)
			for ev := range w.ResultChan() {
				rv, _ := strconv.ParseUint(ev.Object.(interface{ GetResourceVersion() string }).GetResourceVersion(), 10, 64)
				if rv <= last {
					t.Errorf("consumer %d: RV %d after %d", i, rv, last)
				}
				last = rv
				got[i] = append(got[i], render(ev))
				if len(got[i]) == writers*perWriter {
					return
				}
			}
		}()
	}
	var wwg sync.WaitGroup
	for wr := 0; wr < writers; wr++ {
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			for j := 0; j < perWriter; j++ {
				if _, err := s.Resource(cmGVR).Namespace("ns").Create(bg, cm("ns", fmt.Sprintf("w%d-%d", wr, j), nil), metav1.CreateOptions{}); err != nil {
					t.Error(err)
				}
				s.list(cmGVR, "", metav1.ListOptions{ResourceVersion: "0"})
			}
		}()
	}
	wwg.Wait()
	cwg.Wait()
	for _, w := range consumers {
		w.Stop()
	}
	for i := range got {
		if diff := cmp.Diff(got[i], got[0]); diff != "" || len(got[i]) != writers*perWriter {
			t.Errorf("consumer %d saw %d events, differing from consumer 0:\n%s", i, len(got[i]), diff)
		}
	}
}

// TestPassiveCoreStartsNoGoroutine checks style rule 3: writes, lists, pull-based watches,
// Advance and faults start no goroutine; only ResultChan does.
func TestPassiveCoreStartsNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	s, clk := newTestServer(t, func(c *Config) { c.Replicas = 2 })
	w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "1", AllowWatchBookmarks: true})
	mustCreate(t, s, cmGVR, cm("ns", "a", nil))
	s.list(cmGVR, "", metav1.ListOptions{ResourceVersion: "0"})
	s.Replicas().SetLag(1, time.Second)
	clk.Step(2 * time.Minute)
	s.Advance()
	s.Replicas().Reinit(0, 0)
	drain(w)
	w.Stop()
	if after := runtime.NumGoroutine(); after > before { // fewer is fine: an earlier test's goroutine may just have exited
		t.Errorf("goroutines %d -> %d, want none started", before, after)
	}
}

// TestRelistStorm reproduces §9 "relist storm": a reinit closes every watch of the replica and
// every client resuming from its last RV gets 410 at once.
func TestRelistStorm(t *testing.T) {
	s, _ := newTestServer(t, nil)
	mustCreate(t, s, cmGVR, cm("ns", "a", nil))
	var ws []*Watcher
	for i := 0; i < 5; i++ {
		ws = append(ws, mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "2"}))
	}
	mustCreate(t, s, cmGVR, cm("ns", "b", nil))
	s.Replicas().Reinit(0, 0)
	for _, w := range ws {
		drain(w)
		re := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "2"})
		if diff := cmp.Diff(drain(re), []string{"ERROR 410 Expired"}); diff != "" {
			t.Errorf("re-watch after reinit (-got +want):\n%s", diff)
		}
	}
	// The fresh list RV is servable again.
	l, _ := s.list(cmGVR, "", metav1.ListOptions{})
	re := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: l.GetResourceVersion()})
	if got := drain(re); len(got) != 0 || re.Done() {
		t.Errorf("watch from the new list RV: %v done %v", got, re.Done())
	}
}

// Goal: Ready is Pending() > 0 || Done() at every point of a watch's life: open and idle, with
// events queued, drained, ended with an ERROR event still queued, and fully delivered.
func TestWatcherReady(t *testing.T) {
	s, _ := newTestServer(t, func(c *Config) { c.MaxWatchEvents = 2 })
	w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "1"})
	check := func(step string, want bool) {
		t.Helper()
		if got, def := w.Ready(), w.Pending() > 0 || w.Done(); got != want || got != def {
			t.Errorf("%s: Ready() = %v, want %v (Pending() > 0 || Done() = %v)", step, got, want, def)
		}
	}
	check("idle", false)
	mustCreate(t, s, cmGVR, cm("ns", "a", nil))
	check("one event", true)
	drain(w)
	check("drained", false)
	for i := range 3 { // over MaxWatchEvents: the watch ends with an ERROR event
		mustCreate(t, s, cmGVR, cm("ns", fmt.Sprintf("b%d", i), nil))
	}
	check("ended, ERROR queued", true)
	drain(w)
	check("ended, delivered", true)
	if !w.Done() {
		t.Fatal("the watch did not end: the test does not reach the closed state")
	}
}
