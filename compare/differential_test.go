package compare

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
)

// differentialBudget bounds the whole differential test on the real clock. Two relists each
// cost one client-go backoff (0.8–1.6 s, then 1.6–3.2 s), so the test usually takes 3–5 s.
const differentialBudget = 10 * time.Second

// notification is one handler call as a recorder saw it.
type notification struct {
	Kind string // "add", "update", "delete"
	Key  string
	RV   string // the new object's RV; for a tombstone, the RV of the last known state
	// Tombstone is the Go type of a DeletedFinalStateUnknown handed to OnDelete: "cache" for
	// client-go's, "informer" for ours, "" for a plain object.
	Tombstone string
}

func (n notification) String() string {
	s := n.Kind + " " + n.Key + "@" + n.RV
	if n.Tombstone != "" {
		s += " (tombstone " + n.Tombstone + ")"
	}
	return s
}

// recorder is an event handler for both client-go and our informer (same method set) that
// records every notification.
type recorder struct {
	mu  sync.Mutex
	got []notification
}

func (r *recorder) add(n notification) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, n)
}

func (r *recorder) notifications() []notification {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

func (r *recorder) OnAdd(obj any, _ bool) { r.add(describe("add", obj)) }
func (r *recorder) OnUpdate(_, obj any)   { r.add(describe("update", obj)) }
func (r *recorder) OnDelete(obj any)      { r.add(describe("delete", obj)) }

// describe turns a handler argument into a notification, unwrapping either tombstone type.
func describe(kind string, obj any) notification {
	n := notification{Kind: kind}
	switch t := obj.(type) {
	case cache.DeletedFinalStateUnknown:
		n.Key, n.Tombstone, obj = t.Key, "cache", t.Obj
	case informer.DeletedFinalStateUnknown:
		n.Key, n.Tombstone, obj = t.Key, "informer", t.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		n.RV = fmt.Sprintf("<%T>", obj)
		return n
	}
	if n.Key == "" {
		n.Key = m.GetNamespace() + "/" + m.GetName()
	}
	n.RV = m.GetResourceVersion()
	return n
}

// gate holds WATCH requests while closed: a test-side network partition, so the test can
// change the server while informers are disconnected without relying on backoff timing.
type gate struct {
	mu      sync.Mutex
	open    chan struct{} // closed when the gate is open; replaced by hold
	waiting int           // watch requests currently held
}

func newGate() *gate {
	g := &gate{open: make(chan struct{})}
	close(g.open)
	return g
}

func (g *gate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open = make(chan struct{})
}

func (g *gate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.open)
}

func (g *gate) held() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waiting
}

// wait blocks until the gate is open or ctx is done.
func (g *gate) wait(ctx context.Context) error {
	g.mu.Lock()
	open := g.open
	g.waiting++
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.waiting--
		g.mu.Unlock()
	}()
	select {
	case <-open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// gatedLW is fakeapi's ListerWatcher with WATCH requests going through a gate. Embedding keeps
// List, ListWithContext and IsWatchListSemanticsUnSupported, so client-go still sees whether
// watch-list is supported.
type gatedLW struct {
	*fakeapi.ListerWatcher
	gate *gate
}

func (g gatedLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return g.WatchWithContext(context.Background(), opts)
}

func (g gatedLW) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	if err := g.gate.wait(ctx); err != nil {
		return nil, err
	}
	return g.ListerWatcher.WatchWithContext(ctx, opts)
}

// subject is one informer under test.
type subject struct {
	name      string
	tombstone string // the tombstone type its handler must receive
	store     func() []any
	synced    func() bool
	rec       *recorder
	done      chan struct{}
}

// TestDifferential runs client-go's informer (watch-list and list+watch) and ours on one fakeapi
// server through a scripted sequence of writes and faults, and checks after each phase that all
// three converge to the server's state, then that they agree with each other.
//
// Method: each phase changes the server, then polls (real clock, bounded by differentialBudget)
// until every informer's store maps key→RV exactly as a fresh LIST does. Writes happen only at
// points where every informer is in a known state (watching, or with its watch held by the
// gate), so each key's notification sequence is deterministic and can be compared across
// informers, up to the order in which different keys' tombstones arrive (map order in
// client-go, seeded in ours).
func TestDifferential(t *testing.T) {
	leakOpts := []goleak.Option{goleak.IgnoreCurrent()}
	ctx, cancel := context.WithTimeout(context.Background(), differentialBudget)
	defer cancel()

	srv, err := fakeapi.New(fakeapi.Config{})
	if err != nil {
		t.Fatal(err)
	}
	d := &differential{t: t, ctx: ctx, cancel: cancel, srv: srv, pods: srv.Resource(podsGVR), gate: newGate()}
	for i := range 6 {
		d.create([]string{"a", "b"}[i%2], fmt.Sprintf("p%d", i))
	}
	d.startSubjects()
	defer d.stopAll()
	d.start = time.Now()
	d.phases()

	checkRequests(t, srv)
	stores := map[string]map[string]string{}
	for _, s := range d.subjects {
		stores[s.name] = storeState(t, s.store())
	}
	d.stopAll()
	subjects := d.subjects
	for _, s := range subjects[1:] {
		if diff := cmp.Diff(stores[s.name], stores[subjects[0].name]); diff != "" {
			t.Errorf("store of %s differs from %s (-%s +%s):\n%s", s.name, subjects[0].name, s.name, subjects[0].name, diff)
		}
	}
	checkNotifications(t, subjects, stores)
	goleak.VerifyNone(t, leakOpts...)
}

// differential is TestDifferential's run: the server, the three informers under test and the
// gate on their re-watches. Its phases change the server in order and wait for convergence
// after each, so they share this state rather than being independent subtests.
type differential struct {
	t        *testing.T
	ctx      context.Context
	cancel   context.CancelFunc // ends the informers' runs (stopAll)
	srv      *fakeapi.Server
	pods     *fakeapi.ResourceClient
	gate     *gate
	subjects []*subject
	stopped  bool
	start    time.Time // when the informers started, for the phases' log lines
}

func (d *differential) create(ns, name string) {
	d.t.Helper()
	if _, err := d.pods.Namespace(ns).Create(d.ctx, newPod(ns, name), metav1.CreateOptions{}); err != nil {
		d.t.Fatalf("create %s/%s: %v", ns, name, err)
	}
}

// update labels the pod with its current RV, so each update changes it.
func (d *differential) update(ns, name string) {
	d.t.Helper()
	p, err := d.pods.Namespace(ns).Get(d.ctx, name, metav1.GetOptions{})
	if err != nil {
		d.t.Fatalf("get %s/%s: %v", ns, name, err)
	}
	labels := p.GetLabels()
	labels["gen"] = p.GetResourceVersion()
	p.SetLabels(labels)
	if _, err := d.pods.Namespace(ns).Update(d.ctx, p, metav1.UpdateOptions{}); err != nil {
		d.t.Fatalf("update %s/%s: %v", ns, name, err)
	}
}

func (d *differential) del(ns, name string) {
	d.t.Helper()
	if err := d.pods.Namespace(ns).Delete(d.ctx, name, metav1.DeleteOptions{}); err != nil {
		d.t.Fatalf("delete %s/%s: %v", ns, name, err)
	}
}

// startSubjects starts client-go's informer in both start-up modes and ours, each on its own
// gated ListerWatcher with a recording handler.
func (d *differential) startSubjects() {
	t, ctx := d.t, d.ctx
	t.Helper()
	example := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("Pod")
		return u
	}
	newLW := func(name string, watchListUnsupported bool) gatedLW {
		lw := d.srv.ListerWatcher(podsGVR, "")
		lw.Name = name
		lw.WatchListUnsupported = watchListUnsupported
		return gatedLW{ListerWatcher: lw, gate: d.gate}
	}
	for _, mode := range []struct {
		name        string
		unsupported bool
	}{{"clientgo-watchlist", false}, {"clientgo-listwatch", true}} {
		inf := cache.NewSharedIndexInformer(newLW(mode.name, mode.unsupported), example(), 0, cache.Indexers{})
		s := &subject{name: mode.name, tombstone: "cache", store: inf.GetStore().List,
			synced: inf.HasSynced, rec: &recorder{}, done: make(chan struct{})}
		if _, err := inf.AddEventHandler(s.rec); err != nil {
			t.Fatal(err)
		}
		go func() { defer close(s.done); inf.RunWithContext(ctx) }()
		d.subjects = append(d.subjects, s)
	}
	inf := informer.NewSharedIndexInformerWithOptions(newLW("ours", true), example(),
		informer.SharedIndexInformerOptions{})
	s := &subject{name: "ours", tombstone: "informer", store: inf.GetStore().List,
		synced: inf.HasSynced, rec: &recorder{}, done: make(chan struct{})}
	if _, err := inf.AddEventHandler(s.rec); err != nil {
		t.Fatal(err)
	}
	go func() { defer close(s.done); inf.Run(ctx) }()
	d.subjects = append(d.subjects, s)
}

// stopAll ends the informers' runs and waits for them; a second call does nothing.
func (d *differential) stopAll() {
	if d.stopped {
		return
	}
	d.stopped = true
	d.cancel()
	for _, s := range d.subjects {
		<-s.done
	}
}

// converge polls until every informer has synced and its store maps key→RV as a fresh LIST
// does, and fails the test, naming the phase, at the budget's end.
func (d *differential) converge(phase string) {
	t := d.t
	t.Helper()
	var want map[string]string
	var diffs []string
	for {
		want = serverState(t, d.srv)
		diffs = diffs[:0]
		for _, s := range d.subjects {
			if !s.synced() {
				diffs = append(diffs, s.name+": not synced")
				continue
			}
			if diff := cmp.Diff(storeState(t, s.store()), want); diff != "" {
				diffs = append(diffs, fmt.Sprintf("%s store (-got +want):\n%s", s.name, diff))
			}
		}
		if len(diffs) == 0 {
			t.Logf("%-30s converged after %v", phase, time.Since(d.start).Round(time.Millisecond))
			return
		}
		select {
		case <-d.ctx.Done():
			t.Fatalf("phase %q: no convergence within %v:\n%s", phase, differentialBudget, strings.Join(diffs, "\n"))
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// waitHeld waits until n watch requests are held at the gate.
func (d *differential) waitHeld(n int) {
	d.t.Helper()
	for d.gate.held() < n {
		select {
		case <-d.ctx.Done():
			d.t.Fatalf("only %d of %d watch requests reached the gate", d.gate.held(), n)
		case <-time.After(time.Millisecond):
		}
	}
}

// phases is the scripted sequence of writes and faults, each phase ending in convergence.
func (d *differential) phases() {
	t, srv, create, update, del, converge := d.t, d.srv, d.create, d.update, d.del, d.converge
	t.Helper()
	// Phase 1: initial sync, then ordinary writes seen on open watches.
	converge("initial sync")
	create("a", "p6")
	create("b", "p7")
	update("a", "p0")
	update("b", "p1")
	update("a", "p0")
	del("a", "p2")
	converge("writes while watching")

	// Phase 2: every watch closes cleanly (each has delivered events, so it is not a "very
	// short" watch); informers re-watch from their last RV and get what they missed from the
	// watch history, without a relist.
	srv.Faults().CloseAllWatches(nil)
	update("b", "p3")
	create("a", "p8")
	del("a", "p4")
	converge("clean close, re-watch")

	// Phase 3: every watch ends with an ERROR 410; the pass ends and each informer relists
	// after one backoff delay (at least 800 ms). A pod deleted meanwhile is missed on the watch
	// and learnt from the relist: a tombstone.
	srv.Faults().CloseAllWatches(fakeapi.NewWatchError(410))
	del("b", "p5")
	update("a", "p6")
	create("b", "p9")
	converge("410 close, relist")
	// A write after the relist, so the new watches deliver an event before the next close.
	update("b", "p7")
	converge("write after relist")

	// Phase 4: watches close while the gate holds re-watches; while all three are
	// disconnected, pods are deleted and changed and the history is compacted past their RV.
	// The re-watch then gets 410, the informers relist, and the deletes become tombstones.
	d.gate.hold()
	srv.Faults().CloseAllWatches(nil)
	d.waitHeld(len(d.subjects))
	del("a", "p0")
	del("b", "p1")
	update("b", "p3")
	create("a", "p10")
	if err := srv.Faults().Compact(srv.Revision()); err != nil {
		t.Fatal(err)
	}
	d.gate.release()
	converge("compaction while down, relist")

	// Phase 5: ordinary writes after all of it.
	update("a", "p8")
	del("b", "p9")
	create("b", "p11")
	converge("writes after faults")
}

// checkNotifications checks each informer's handler calls: replayed they give its store; its
// tombstones are of its own type, carry the last known RV and are exactly the deletes missed while
// disconnected; RVs never go back for a key; and, key by key, the three saw the same sequence (up
// to the tombstone's type).
func checkNotifications(t *testing.T, subjects []*subject, stores map[string]map[string]string) {
	t.Helper()
	wantTombstones := []string{"a/p0", "b/p1", "b/p5"}
	perKey := map[string]map[string][]notification{}
	for _, s := range subjects {
		got := s.rec.notifications()
		if d := cmp.Diff(replay(got), stores[s.name]); d != "" {
			t.Errorf("%s: handler's replayed view differs from its store (-replay +store):\n%s", s.name, d)
		}
		var tombstones []string
		last := map[string]string{}
		for _, n := range got {
			if n.Tombstone != "" {
				tombstones = append(tombstones, n.Key)
				if n.Tombstone != s.tombstone {
					t.Errorf("%s: %v: tombstone of type %s, want %s", s.name, n, n.Tombstone, s.tombstone)
				}
				if n.RV != last[n.Key] {
					t.Errorf("%s: %v: tombstone carries RV %s, want the last known %s", s.name, n, n.RV, last[n.Key])
				}
			} else if prev := last[n.Key]; prev != "" && (rvLess(n.RV, prev) || n.RV == prev && n.Kind != "update") {
				// An update may repeat the RV: a relist re-delivers unchanged objects. In
				// client-go such same-RV updates are sync-class, yet reach every handler here
				// because a listener starts "syncing" and, with no resync period, stays so.
				t.Errorf("%s: %v: RV before the previous %s for the key", s.name, n, prev)
			}
			last[n.Key] = n.RV
		}
		sort.Strings(tombstones)
		if d := cmp.Diff(tombstones, wantTombstones); d != "" {
			t.Errorf("%s: keys deleted as DeletedFinalStateUnknown (-got +want):\n%s", s.name, d)
		}
		byKey := map[string][]notification{}
		for _, n := range got {
			byKey[n.Key] = append(byKey[n.Key], n)
		}
		perKey[s.name] = byKey
		if testing.Verbose() {
			for _, n := range got {
				t.Logf("%s: %v", s.name, n)
			}
		}
	}
	ignoreTombstoneType := cmp.Transformer("tombstone", func(n notification) notification {
		if n.Tombstone != "" {
			n.Tombstone = "yes"
		}
		return n
	})
	for _, s := range subjects[1:] {
		if d := cmp.Diff(perKey[s.name], perKey[subjects[0].name], ignoreTombstoneType); d != "" {
			t.Errorf("per-key notifications of %s differ from %s (-%s +%s):\n%s", s.name, subjects[0].name, s.name, subjects[0].name, d)
		}
	}
}

// serverState is the server's current pods, key → RV, from a consistent LIST.
func serverState(t *testing.T, srv *fakeapi.Server) map[string]string {
	t.Helper()
	list, err := srv.Resource(podsGVR).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	state := map[string]string{}
	for _, p := range list.Items {
		state[p.GetNamespace()+"/"+p.GetName()] = p.GetResourceVersion()
	}
	return state
}

// storeState is an informer store's content, key → RV.
func storeState(t *testing.T, objs []any) map[string]string {
	t.Helper()
	state := map[string]string{}
	for _, o := range objs {
		m, err := meta.Accessor(o)
		if err != nil {
			t.Fatalf("cached %T: %v", o, err)
		}
		state[m.GetNamespace()+"/"+m.GetName()] = m.GetResourceVersion()
	}
	return state
}

// replay applies notifications in order to an empty view: what a handler that mirrors the
// cache would hold.
func replay(ns []notification) map[string]string {
	view := map[string]string{}
	for _, n := range ns {
		if n.Kind == "delete" {
			delete(view, n.Key)
		} else {
			view[n.Key] = n.RV
		}
	}
	return view
}

// rvLess compares decimal resourceVersions (fakeapi's are canonical: no leading zeros).
func rvLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// checkRequests checks, from fakeapi's request and event records, that each informer took the
// path the test is about: client-go's watch-list informer started and relisted with streaming
// watch-list requests and never LISTed; the two list+watch informers LISTed at start and on each
// of the two relists and never asked for initial events; and every informer's re-watch after the
// compaction got 410 Expired.
func checkRequests(t *testing.T, srv *fakeapi.Server) {
	t.Helper()
	type counts struct{ lists, watches, watchLists, expired int }
	byClient := map[string]*counts{}
	clientOf := map[uint64]string{}
	for _, rq := range srv.Requests() {
		if rq.Client == "" || rq.Verb != fakeapi.VerbList && rq.Verb != fakeapi.VerbWatch {
			continue // the test's own reads and writes
		}
		c := byClient[rq.Client]
		if c == nil {
			c = &counts{}
			byClient[rq.Client] = c
		}
		sendInitial := rq.Options.SendInitialEvents != nil && *rq.Options.SendInitialEvents
		switch {
		case rq.Verb == fakeapi.VerbList:
			c.lists++
		case sendInitial:
			c.watchLists++
		default:
			c.watches++
		}
		if rq.Verb == fakeapi.VerbWatch {
			clientOf[rq.WatchID] = rq.Client
		}
		t.Logf("request %-18s %-5s rv=%-3q rvm=%-14q sendInitialEvents=%-5v watch=%d code=%d",
			rq.Client, rq.Verb, rq.Options.ResourceVersion, rq.Options.ResourceVersionMatch, sendInitial, rq.WatchID, rq.Code)
	}
	for _, ev := range srv.WatchEvents() {
		if ev.Close == fakeapi.CloseExpired {
			byClient[clientOf[ev.WatchID]].expired++
		}
	}
	want := map[string]counts{
		"clientgo-watchlist": {lists: 0, watches: 2, watchLists: 3, expired: 1},
		"clientgo-listwatch": {lists: 3, watches: 5, watchLists: 0, expired: 1},
		"ours":               {lists: 3, watches: 5, watchLists: 0, expired: 1},
	}
	for client, w := range want {
		got := byClient[client]
		if got == nil {
			t.Errorf("%s: no list or watch request recorded", client)
			continue
		}
		if *got != w {
			t.Errorf("%s: requests %+v, want %+v", client, *got, w)
		}
	}
}
