package compare

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
)

// podExample is the expected type of every informer here: unstructured v1 Pods.
func podExample() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	return u
}

// podWriter writes pods of srv for a test, failing it on any error.
type podWriter struct {
	t   *testing.T
	ctx context.Context
	srv *fakeapi.Server
}

func (w podWriter) create(ns, name string) {
	w.t.Helper()
	if _, err := w.srv.Resource(podsGVR).Namespace(ns).Create(w.ctx, newPod(ns, name), metav1.CreateOptions{}); err != nil {
		w.t.Fatalf("create %s/%s: %v", ns, name, err)
	}
}

func (w podWriter) update(ns, name string) {
	w.t.Helper()
	c := w.srv.Resource(podsGVR).Namespace(ns)
	p, err := c.Get(w.ctx, name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatalf("get %s/%s: %v", ns, name, err)
	}
	labels := p.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels["gen"] = p.GetResourceVersion()
	p.SetLabels(labels)
	if _, err := c.Update(w.ctx, p, metav1.UpdateOptions{}); err != nil {
		w.t.Fatalf("update %s/%s: %v", ns, name, err)
	}
}

func (w podWriter) del(ns, name string) {
	w.t.Helper()
	if err := w.srv.Resource(podsGVR).Namespace(ns).Delete(w.ctx, name, metav1.DeleteOptions{}); err != nil {
		w.t.Fatalf("delete %s/%s: %v", ns, name, err)
	}
}

// converge polls, on the real clock until ctx ends, until every subject has synced and its store
// maps key→RV exactly as a fresh LIST of srv does.
func converge(t *testing.T, ctx context.Context, srv *fakeapi.Server, subjects []*subject, phase string) {
	t.Helper()
	for {
		want := serverState(t, srv)
		var diffs []string
		for _, s := range subjects {
			if !s.synced() {
				diffs = append(diffs, s.name+": not synced")
				continue
			}
			if d := cmp.Diff(storeState(t, s.store()), want); d != "" {
				diffs = append(diffs, fmt.Sprintf("%s store (-got +want):\n%s", s.name, d))
			}
		}
		if len(diffs) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			if len(diffs) > 4 {
				diffs = append(diffs[:4], fmt.Sprintf("... and %d more", len(diffs)-4))
			}
			t.Fatalf("phase %q: no convergence:\n%s", phase, strings.Join(diffs, "\n"))
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// requestCounts is what one client (a ListerWatcher's Name) sent, from fakeapi's record.
type requestCounts struct{ Lists, Watches, WatchLists int }

func countRequests(srv *fakeapi.Server) map[string]requestCounts {
	out := map[string]requestCounts{}
	for _, rq := range srv.Requests() {
		if rq.Client == "" {
			continue
		}
		c := out[rq.Client]
		switch {
		case rq.Verb == fakeapi.VerbList:
			c.Lists++
		case rq.Verb == fakeapi.VerbWatch && rq.Options.SendInitialEvents != nil && *rq.Options.SendInitialEvents:
			c.WatchLists++
		case rq.Verb == fakeapi.VerbWatch:
			c.Watches++
		}
		out[rq.Client] = c
	}
	return out
}

// startClientGo runs a client-go shared informer named name over srv (watch-list unless
// unsupported) with one recording handler.
func startClientGo(t *testing.T, ctx context.Context, srv *fakeapi.Server, g *gate, name string, unsupported bool) *subject {
	t.Helper()
	lw := srv.ListerWatcher(podsGVR, "")
	lw.Name, lw.WatchListUnsupported = name, unsupported
	inf := cache.NewSharedIndexInformer(gatedLW{ListerWatcher: lw, gate: g}, podExample(), 0, cache.Indexers{})
	s := &subject{name: name, tombstone: "cache", store: inf.GetStore().List, synced: inf.HasSynced,
		rec: &recorder{}, done: make(chan struct{})}
	if _, err := inf.AddEventHandler(s.rec); err != nil {
		t.Fatal(err)
	}
	go func() { defer close(s.done); inf.RunWithContext(ctx) }()
	return s
}

// startOurs is startClientGo for our informer, goroutine driver.
func startOurs(t *testing.T, ctx context.Context, srv *fakeapi.Server, g *gate, name string, unsupported bool) *subject {
	t.Helper()
	lw := srv.ListerWatcher(podsGVR, "")
	lw.Name, lw.WatchListUnsupported = name, unsupported
	inf := informer.NewSharedIndexInformerWithOptions(gatedLW{ListerWatcher: lw, gate: g}, podExample(), informer.SharedIndexInformerOptions{})
	s := &subject{name: name, tombstone: "informer", store: inf.GetStore().List, synced: inf.HasSynced,
		rec: &recorder{}, done: make(chan struct{})}
	if _, err := inf.AddEventHandler(s.rec); err != nil {
		t.Fatal(err)
	}
	go func() { defer close(s.done); inf.Run(ctx) }()
	return s
}

// perKey groups a handler's notifications by object key: within a key the order is the
// contract (informer.md §4.5); across keys, the initial adds of a watch-list come in map order
// in client-go and in a seeded order in ours.
func perKey(ns []notification) map[string][]notification {
	out := map[string][]notification{}
	for _, n := range ns {
		if n.Tombstone != "" {
			n.Tombstone = "yes"
		}
		out[n.Key] = append(out[n.Key], n)
	}
	return out
}

// TestDifferentialWatchList runs client-go's informer and ours, both in watch-list mode
// (informer.md §7.5, the v0.37 default), side by side on one fakeapi server through the phases
// of TestDifferential: initial stream, writes while watching, a clean close (re-watch without a
// relist), an ERROR 410 (relist, which in this mode is a new watch-list at the last RV), and a
// compaction while both are disconnected. After each phase both stores must equal the server's
// state; at the end each handler's notifications, grouped per key, must be identical, and both
// informers must have sent the same requests: no LIST, the same watch-lists and plain watches.
func TestDifferentialWatchList(t *testing.T) {
	leakOpts := []goleak.Option{goleak.IgnoreCurrent()}
	ctx, cancel := context.WithTimeout(context.Background(), differentialBudget)
	defer cancel()
	srv, err := fakeapi.New(fakeapi.Config{})
	if err != nil {
		t.Fatal(err)
	}
	w := podWriter{t: t, ctx: ctx, srv: srv}
	for i := range 6 {
		w.create([]string{"a", "b"}[i%2], fmt.Sprintf("p%d", i))
	}
	g := newGate()
	subjects := []*subject{
		startClientGo(t, ctx, srv, g, "clientgo-watchlist", false),
		startOurs(t, ctx, srv, g, "ours-watchlist", false),
	}
	stopped := false
	stopAll := func() {
		if !stopped {
			stopped = true
			cancel()
			for _, s := range subjects {
				<-s.done
			}
		}
	}
	defer stopAll()

	converge(t, ctx, srv, subjects, "initial watch-list")
	w.create("a", "p6")
	w.update("a", "p0")
	w.del("a", "p2")
	converge(t, ctx, srv, subjects, "writes while watching")

	srv.Faults().CloseAllWatches(nil)
	w.update("b", "p3")
	w.create("a", "p8")
	converge(t, ctx, srv, subjects, "clean close, re-watch")

	srv.Faults().CloseAllWatches(fakeapi.NewWatchError(410))
	w.del("b", "p5")
	w.create("b", "p9")
	converge(t, ctx, srv, subjects, "410 close, watch-list relist")
	w.update("b", "p9")
	converge(t, ctx, srv, subjects, "write after relist")

	g.hold()
	srv.Faults().CloseAllWatches(nil)
	for g.held() < len(subjects) {
		select {
		case <-ctx.Done():
			t.Fatalf("only %d of %d re-watches reached the gate", g.held(), len(subjects))
		case <-time.After(time.Millisecond):
		}
	}
	w.del("a", "p0")
	w.update("b", "p3")
	w.create("a", "p10")
	if err := srv.Faults().Compact(srv.Revision()); err != nil {
		t.Fatal(err)
	}
	g.release()
	converge(t, ctx, srv, subjects, "compaction while down")
	w.update("a", "p8")
	converge(t, ctx, srv, subjects, "writes after faults")

	counts := countRequests(srv)
	stopAll()
	cg, ours := subjects[0], subjects[1]
	if got, want := counts[ours.name], counts[cg.name]; got != want {
		t.Errorf("requests: ours %+v, client-go %+v", got, want)
	}
	if c := counts[ours.name]; c.Lists != 0 || c.WatchLists < 3 {
		t.Errorf("ours sent %+v, want no LIST and a watch-list at start and at each of the two relists", c)
	}
	if d := cmp.Diff(perKey(ours.rec.notifications()), perKey(cg.rec.notifications())); d != "" {
		t.Errorf("per-key notifications (-ours +client-go):\n%s", d)
	}
	for _, s := range subjects {
		if d := cmp.Diff(replay(s.rec.notifications()), storeState(t, s.store())); d != "" {
			t.Errorf("%s: replayed view differs from the store (-replay +store):\n%s", s.name, d)
		}
	}
	goleak.VerifyNone(t, leakOpts...)
}

// stormInformers is the number of our informers a reinitialisation disconnects at once.
const stormInformers = 50

// TestRelistStorm: an apiserver restart disconnects every informer at once (informer.md §7.7,
// fakeapi.md §6 F-3). Method: for each start-up mode, 50 of our informers and one client-go
// informer (the reference ladder) sync on one fakeapi server and each sees a write; revisions
// move on without events (so no informer's last RV is still in the new cache's history); then
// the replica reinitialises, closing all 51 watches cleanly. Each informer re-watches from its
// last RV, gets 410, backs off and relists (a LIST in list+watch mode, a watch-list in watch-list
// mode). Every informer must recover and converge to the server's state, including writes made
// after the storm, and each of ours must have sent exactly the requests client-go's did:
// list+watch: LIST, WATCH, WATCH(410), LIST, WATCH; watch-list: WATCH-LIST, WATCH(410),
// WATCH-LIST.
func TestRelistStorm(t *testing.T) {
	for _, mode := range []struct {
		name        string
		unsupported bool
		want        requestCounts
	}{
		{"list+watch", true, requestCounts{Lists: 2, Watches: 3}},
		{"watch-list", false, requestCounts{Watches: 1, WatchLists: 2}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			leakOpts := []goleak.Option{goleak.IgnoreCurrent()}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			srv, err := fakeapi.New(fakeapi.Config{})
			if err != nil {
				t.Fatal(err)
			}
			w := podWriter{t: t, ctx: ctx, srv: srv}
			for i := range 5 {
				w.create("ns", fmt.Sprintf("p%d", i))
			}
			g := newGate()
			subjects := []*subject{startClientGo(t, ctx, srv, g, "clientgo", mode.unsupported)}
			for i := range stormInformers {
				subjects = append(subjects, startOurs(t, ctx, srv, g, fmt.Sprintf("ours-%02d", i), mode.unsupported))
			}
			var once sync.Once
			stopAll := func() {
				once.Do(func() {
					cancel()
					for _, s := range subjects {
						<-s.done
					}
				})
			}
			defer stopAll()
			converge(t, ctx, srv, subjects, "initial sync")
			// One event on every watch, so that no watch ends "very short" (informer.md §7.6).
			w.update("ns", "p0")
			converge(t, ctx, srv, subjects, "write before the storm")
			srv.Faults().BurnRevisions(3)
			srv.Replicas().Reinit(0, 0)
			w.del("ns", "p1")
			w.create("ns", "p5")
			converge(t, ctx, srv, subjects, "after the reinitialisation")
			w.update("ns", "p2")
			converge(t, ctx, srv, subjects, "write after the storm")

			counts := countRequests(srv)
			stopAll()
			if got := counts["clientgo"]; got != mode.want {
				t.Errorf("client-go's ladder: %+v, want %+v", got, mode.want)
			}
			differ := 0
			for _, s := range subjects[1:] {
				if got := counts[s.name]; got != counts["clientgo"] {
					differ++
					if differ <= 3 {
						t.Errorf("%s sent %+v, client-go %+v", s.name, got, counts["clientgo"])
					}
				}
				if d := cmp.Diff(replay(s.rec.notifications()), storeState(t, s.store())); d != "" {
					t.Errorf("%s: replayed view differs from the store (-replay +store):\n%s", s.name, d)
				}
			}
			if differ > 0 {
				t.Errorf("%d of %d informers left client-go's ladder", differ, stormInformers)
			}
			t.Logf("%s: each informer sent %+v", mode.name, counts[subjects[1].name])
			goleak.VerifyNone(t, leakOpts...)
		})
	}
}
