package world

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
)

// The worked traces of informer.md §14, reproduced end to end: fakeapi serves, the network
// delays, the informer's components interleave as the seed decides, and each handler's
// notification sequence must come out exactly as the spec says, for every seed tried. The fake
// apiserver's store starts at revision 1 (as etcd does), so its first write is rv=2 where the
// spec's examples start at 1: p1@1, p2@2 of T1 are p1@2, p2@3 here.
//
// The resource: the worked traces are written for objects that a delete removes in one event
// (T2's DELETED p2@4 is one revision after MODIFIED p1@3). The apiserver deletes pods gracefully
// (fakeapi.md §5.3): even an unscheduled pod's delete is MODIFIED with deletionTimestamp, then
// DELETED at the next revision. So the traces that delete (T2, T5, and T7, which continues T2)
// run on configmaps, which have no graceful deletion, and keep the spec's events and RVs exactly;
// the informer treats both kinds alike, so they teach the same thing. The traces without a delete
// (T1, T6, T9) stay on pods. TestWorldT2PodDelete shows what a pod's delete looks like instead.
//
// The start-up: every trace runs in both of the Reflector's start-ups, LIST then WATCH
// (informer.md §7.3, §7.4) and the watch-list stream (§7.5, T8), as subtests named after the
// mode. They differ only where the spec says so: the requests sent, and the order of a replace's
// objects, which is list order after a LIST and unspecified (map order, drawn from the seed here)
// after a watch-list, so a watch-list's initial adds and a watch-list relist's notifications are
// compared as sets, and both orders must turn up over the seeds.

// traceSeeds are the seeds every worked trace runs with; each gives another interleaving and
// other latencies, never another outcome.
var traceSeeds = []uint64{1, 2, 3, 4, 5, 6, 7, 8, 42, 1234}

// startModes are the Reflector's two start-ups, as the world.s InformerSpec.WatchList.
var startModes = []struct {
	name      string
	watchList bool
}{{"list-watch", false}, {"watch-list", true}}

// inEachMode runs f as one subtest per start-up.
func inEachMode(t *testing.T, f func(t *testing.T, watchList bool)) {
	for _, m := range startModes {
		t.Run(m.name, func(t *testing.T) { f(t, m.watchList) })
	}
}

func newTraceWorld(t *testing.T, seed uint64) *World {
	t.Helper()
	w, err := New(seed, Config{})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func mustApply(t *testing.T, w *World, ops ...Op) {
	t.Helper()
	for _, op := range ops {
		if err := w.Apply(op); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
	}
}

func mustConverge(t *testing.T, w *World) {
	t.Helper()
	if err := w.RunUntilConverged(5 * time.Minute); err != nil {
		t.Fatalf("%v\n%s", err, tail(w, 40))
	}
}

// tail is the end of the trace, for failure messages.
func tail(w *World, n int) string {
	ev := w.Sim().Trace().Events()
	ev = ev[max(0, len(ev)-n):]
	out := ""
	for _, e := range ev {
		out += e.String() + "\n"
	}
	return out
}

func mustAddHandler(t *testing.T, w *World, n *Informer, name string, resync time.Duration) *Handler {
	t.Helper()
	h, err := w.AddHandler(n, name, nil, handlerOpts(resync))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func create(gvr schema.GroupVersionResource, name string) Op {
	return Op{Kind: OpCreate, Resource: gvr, Name: name}
}
func update(gvr schema.GroupVersionResource, name string) Op {
	return Op{Kind: OpUpdate, Resource: gvr, Name: name}
}
func del(gvr schema.GroupVersionResource, name string) Op {
	return Op{Kind: OpDelete, Resource: gvr, Name: name}
}

// t1 brings a world through T1 (initial sync, two handlers registered before Run) on resource
// gvr, in the start-up watchList picks: the server holds p1@2, p2@3.
func t1(t *testing.T, seed uint64, gvr schema.GroupVersionResource, opts informer.SharedIndexInformerOptions, watchList bool) (*World, *Informer, []*Handler) {
	t.Helper()
	w := newTraceWorld(t, seed)
	mustApply(t, w, create(gvr, "p1"), create(gvr, "p2"))
	n, err := w.AddInformer("inf1", InformerSpec{Resource: gvr, Namespace: "default", Informer: opts, WatchList: watchList})
	if err != nil {
		t.Fatal(err)
	}
	hs := []*Handler{mustAddHandler(t, w, n, "h1", useInformerResync), mustAddHandler(t, w, n, "h2", useInformerResync)}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	mustConverge(t, w)
	return w, n, hs
}

// informer.md §14 T1: LIST {RV "0", Limit 500} → Replace → one pop → both handlers get the list
// as initial adds in list order, sync, and the watch starts at the list RV with bookmarks. On
// pods: nothing is deleted. In the watch-list start-up (T8) the one request is the streaming
// WATCH from rv "" (NotOlderThan, sendInitialEvents), whose end bookmark at rv 3 syncs the
// informer and which then goes on as the watch; the initial adds come in the temporary store's
// order, the same for both handlers, and over the seeds in both orders.
func TestWorldT1InitialSync(t *testing.T) {
	inEachMode(t, func(t *testing.T, watchList bool) {
		wantReqs := []string{`List rv="0" limit=500`, `Watch rv="3" bookmarks`}
		if watchList {
			wantReqs = []string{`Watch rv="" match=NotOlderThan sendInitialEvents bookmarks`}
		}
		orders := map[string]bool{}
		for _, seed := range traceSeeds {
			w, n, hs := t1(t, seed, pods, informer.SharedIndexInformerOptions{}, watchList)
			want := []string{"add(default/p1@2,true)", "add(default/p2@3,true)"}
			var first []string
			for i, h := range hs {
				got := h.Deliveries().Take()
				if i == 0 {
					first = slices.Clone(got)
				} else if diff := cmp.Diff(got, first); diff != "" {
					t.Errorf("seed %d %s: another order than %s (-got +%s):\n%s", seed, h.Actor(), hs[0].Actor(), hs[0].Actor(), diff)
				}
				if len(got) > 0 {
					orders[got[0]] = true
				}
				if watchList {
					slices.Sort(got)
				}
				if diff := cmp.Diff(got, want); diff != "" {
					t.Errorf("seed %d %s (-got +want):\n%s", seed, h.Actor(), diff)
				}
				if !h.HasSynced() {
					t.Errorf("seed %d %s: not synced", seed, h.Actor())
				}
			}
			if got := requests(w, "inf1"); !slices.Equal(got, wantReqs) {
				t.Errorf("seed %d requests %q, want %q", seed, got, wantReqs)
			}
			if got := n.SharedIndexInformer().LastSyncResourceVersion(); got != "3" {
				t.Errorf("seed %d LastSyncResourceVersion %q, want 3", seed, got)
			}
		}
		if wantOrders := map[bool]int{false: 1, true: 2}[watchList]; len(orders) != wantOrders {
			t.Errorf("initial adds began with %v over %d seeds; want %d order(s)", orders, len(traceSeeds), wantOrders)
		}
	})
}

// requests renders the requests client sent, as informer.Request prints them (without the
// random watch timeout).
func requests(w *World, client string) []string {
	var out []string
	for _, r := range w.Server().Requests() {
		if r.Client != client {
			continue
		}
		verb := informer.RequestList
		if r.Verb == fakeapi.VerbWatch {
			verb = informer.RequestWatch
		}
		o := r.Options
		o.TimeoutSeconds = nil
		out = append(out, informer.Request{Verb: verb, Options: o}.String())
	}
	return out
}

// informer.md §14 T2: MODIFIED p1 → upd to all; DELETED p2 → del with the event's object;
// ADDED p3 → add(…, false); a BOOKMARK moves the RV and notifies nobody. On configmaps, so p2's
// delete is the spec's single DELETED p2@5 and every RV is the spec's plus one.
func TestWorldT2WatchEvents(t *testing.T) {
	inEachMode(t, func(t *testing.T, watchList bool) {
		for _, seed := range traceSeeds {
			w, n, hs := t1(t, seed, configMaps, informer.SharedIndexInformerOptions{}, watchList)
			hs[0].Deliveries().Take()
			hs[1].Deliveries().Take()
			mustApply(t, w, update(configMaps, "p1"), del(configMaps, "p2"), create(configMaps, "p3"))
			mustConverge(t, w)
			want := []string{"upd(default/p1@2->4)", "del(default/p2@5)", "add(default/p3@6,false)"}
			for _, h := range hs {
				if diff := cmp.Diff(h.Deliveries().Take(), want); diff != "" {
					t.Errorf("seed %d %s (-got +want):\n%s", seed, h.Actor(), diff)
				}
			}
			// A bookmark: two revisions burned elsewhere, then the apiserver's bookmark tick.
			w.Server().Faults().BurnRevisions(2)
			w.Server().Faults().TriggerBookmarks()
			w.Settle()
			mustConverge(t, w)
			if got := n.SharedIndexInformer().LastSyncResourceVersion(); got != "8" {
				t.Errorf("seed %d LastSyncResourceVersion %q after the bookmark, want 8", seed, got)
			}
			for _, h := range hs {
				if got := h.Deliveries().Take(); len(got) != 0 {
					t.Errorf("seed %d %s notified of a bookmark: %q", seed, h.Actor(), got)
				}
			}
		}
	})
}

// TestWorldT2PodDelete is T2's writes on pods, which the apiserver deletes gracefully
// (fakeapi.md §5.3): deleting the unscheduled p2 stores deletionTimestamp with grace 0 (MODIFIED
// p2@5), then removes it (DELETED p2@6). Every handler sees both, in order: an upd whose new
// object is terminating, then the del carrying that terminating state; p3 comes one revision
// later than in T2. Method: T2's script on pods, the notifications and the deletion fields of the
// objects handed to the handlers compared.
func TestWorldT2PodDelete(t *testing.T) {
	inEachMode(t, func(t *testing.T, watchList bool) {
		for _, seed := range traceSeeds {
			w, _, hs := t1(t, seed, pods, informer.SharedIndexInformerOptions{}, watchList)
			for _, h := range hs {
				h.Deliveries().Take()
			}
			mustApply(t, w, update(pods, "p1"), del(pods, "p2"), create(pods, "p3"))
			mustConverge(t, w)
			want := []string{"upd(default/p1@2->4)", "upd(default/p2@3->5)", "del(default/p2@6)", "add(default/p3@7,false)"}
			for _, h := range hs {
				var terminating []string
				for _, no := range h.Deliveries().Notifications() {
					u, ok := no.Object.(*unstructured.Unstructured)
					if !ok || u.GetDeletionTimestamp() == nil {
						continue
					}
					g := u.GetDeletionGracePeriodSeconds()
					terminating = append(terminating, fmt.Sprintf("%v %s@%s grace=%d", no.Kind, no.Key, no.ResourceVersion, *g))
				}
				wantTerm := []string{"update default/p2@5 grace=0", "delete default/p2@6 grace=0"}
				if diff := cmp.Diff(terminating, wantTerm); diff != "" {
					t.Errorf("seed %d %s objects with deletionTimestamp (-got +want):\n%s", seed, h.Actor(), diff)
				}
				if diff := cmp.Diff(h.Deliveries().Take(), want); diff != "" {
					t.Errorf("seed %d %s (-got +want):\n%s", seed, h.Actor(), diff)
				}
			}
		}
	})
}

// informer.md §14 T5: the watch drops (410) while p4 is deleted, p3 modified and p9 created;
// the relist yields the tombstone of p4 (with its last cached state) first, then in list order a
// sync-class upd of the unchanged p1 (to every handler: the informer never ticks, so every
// isSyncing flag stays true), upd(p3), add(p9,false). The cache already equals the list when the
// first of them is delivered. On configmaps, so p4's delete takes one revision and p3@6, p9@7
// keep the spec's numbering (plus one).
func TestWorldT5RelistAfterMissedEvents(t *testing.T) {
	inEachMode(t, func(t *testing.T, watchList bool) {
		orders := map[string]bool{}
		for _, seed := range traceSeeds {
			w := newTraceWorld(t, seed)
			mustApply(t, w, create(configMaps, "p1"), create(configMaps, "p3"), create(configMaps, "p4")) // p1@2 p3@3 p4@4
			n, err := w.AddInformer("inf1", InformerSpec{Resource: configMaps, Namespace: "default", Informer: informer.SharedIndexInformerOptions{}, WatchList: watchList})
			if err != nil {
				t.Fatal(err)
			}
			cacheAtFirst := -1
			h1, err := w.AddHandler(n, "h1", informer.ResourceEventHandlerFuncs{DeleteFunc: func(any) {
				if cacheAtFirst < 0 {
					cacheAtFirst = len(n.SharedIndexInformer().GetStore().List())
				}
			}}, HandlerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			hs := []*Handler{h1, mustAddHandler(t, w, n, "h2", useInformerResync)}
			if err := n.Start(); err != nil {
				t.Fatal(err)
			}
			mustConverge(t, w)
			for _, h := range hs {
				h.Deliveries().Take()
			}
			mustApply(t, w, Op{Kind: OpCloseWatches, Code: 410}, del(configMaps, "p4"), update(configMaps, "p3"), create(configMaps, "p9"))
			mustConverge(t, w)
			want := []string{"del(tomb default/p4@4)", "upd(default/p1@2->2)", "upd(default/p3@3->6)", "add(default/p9@7,false)"}
			if watchList {
				slices.Sort(want[1:])
			}
			var first []string
			for i, h := range hs {
				got := h.Deliveries().Take()
				if i == 0 {
					first = slices.Clone(got)
					orders[strings.Join(got, " ")] = true
				} else if diff := cmp.Diff(got, first); diff != "" {
					t.Errorf("seed %d %s: another order than %s (-got +%s):\n%s", seed, h.Actor(), hs[0].Actor(), hs[0].Actor(), diff)
				}
				if watchList && len(got) > 1 {
					// The tombstones first, then the temporary store's objects in its order.
					slices.Sort(got[1:])
				}
				if diff := cmp.Diff(got, want); diff != "" {
					t.Errorf("seed %d %s (-got +want):\n%s", seed, h.Actor(), diff)
				}
			}
			if cacheAtFirst != 3 {
				t.Errorf("seed %d: the cache held %d objects at the tombstone, want the new list's 3", seed, cacheAtFirst)
			}
			// The relist is at the last RV: a LIST then a WATCH from its RV, or a watch-list
			// stream that goes on as the watch (informer.md §7.4, §7.5).
			wantReqs := []string{`List rv="4"`, `Watch rv="7" bookmarks`}
			if watchList {
				wantReqs = []string{`Watch rv="" match=NotOlderThan sendInitialEvents bookmarks`, `Watch rv="4" match=NotOlderThan sendInitialEvents bookmarks`}
			}
			reqs := requests(w, "inf1")
			if got := reqs[max(0, len(reqs)-2):]; !slices.Equal(got, wantReqs) {
				t.Errorf("seed %d: last requests %q, want the relist at the last RV %q", seed, got, wantReqs)
			}
		}
		if watchList != (len(orders) > 1) {
			t.Errorf("%d order(s) of the relist's notifications over %d seeds; want one after a LIST, several after a watch-list", len(orders), len(traceSeeds))
		}
	})
}

// informer.md §14 T6: informer ResyncPeriod 10s; H1 asks 0, H2 the default (10s), H3 25s, all
// before Run. Ticks come every 10s after the LIST (or the watch-list's end bookmark): H2 resyncs at each, H3 at the first tick at
// least 25s after its registration and then 25s after that (≈30s, 60s), H1 never. Then T5's
// stale-flag rule: after the tick at 70s only H2 is flagged, so a relist's unchanged object
// reaches H2 alone. On pods: nothing is deleted.
func TestWorldT6ResyncAlignment(t *testing.T) {
	inEachMode(t, func(t *testing.T, watchList bool) {
		for _, seed := range traceSeeds {
			w := newTraceWorld(t, seed)
			mustApply(t, w, create(pods, "p1"))
			n, err := w.AddInformer("inf1", InformerSpec{Resource: pods, Namespace: "default", Informer: informer.SharedIndexInformerOptions{ResyncPeriod: 10 * time.Second}, WatchList: watchList})
			if err != nil {
				t.Fatal(err)
			}
			h1 := mustAddHandler(t, w, n, "h1", 0)
			h2 := mustAddHandler(t, w, n, "h2", useInformerResync)
			h3 := mustAddHandler(t, w, n, "h3", 25*time.Second)
			if err := n.Start(); err != nil {
				t.Fatal(err)
			}
			mustConverge(t, w)
			listAt := lastListed(w, n)
			if err := w.Sim().RunFor(listAt + 75*time.Second - w.Sim().Now()); err != nil {
				t.Fatal(err)
			}
			syncTimes := func(h *Handler) []time.Duration {
				var out []time.Duration
				for _, no := range h.Deliveries().Notifications() {
					if no.Sync {
						out = append(out, no.Time-listAt)
					}
				}
				return out
			}
			s := time.Second
			for _, c := range []struct {
				h    *Handler
				want []time.Duration
			}{
				{h1, nil},
				{h2, []time.Duration{10 * s, 20 * s, 30 * s, 40 * s, 50 * s, 60 * s, 70 * s}},
				{h3, []time.Duration{30 * s, 60 * s}},
			} {
				if diff := cmp.Diff(syncTimes(c.h), c.want); diff != "" {
					t.Errorf("seed %d %s resyncs after the LIST (-got +want):\n%s", seed, c.h.Actor(), diff)
				}
				c.h.Deliveries().Take()
			}
			// A relist now (before the tick at 80s): the flags of the tick at 70s decide.
			mustApply(t, w, Op{Kind: OpCloseWatches, Code: 410})
			mustConverge(t, w)
			if w.Sim().Now() >= listAt+80*time.Second {
				t.Fatalf("seed %d: the relist ran past the next tick", seed)
			}
			for _, c := range []struct {
				h    *Handler
				want []string
			}{{h1, nil}, {h2, []string{"upd(default/p1@2->2)"}}, {h3, nil}} {
				if diff := cmp.Diff(c.h.Deliveries().Take(), c.want, cmpNilEmpty); diff != "" {
					t.Errorf("seed %d %s after the relist (-got +want):\n%s", seed, c.h.Actor(), diff)
				}
			}
		}
	})
}

var cmpNilEmpty = cmp.Transformer("nilEmpty", func(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
})

// informer.md §14 T7: after T2, H4 registers: it gets the cache as initial adds (in an order the
// seed draws), is unsynced until they return, then gets what is processed afterwards. On
// configmaps, as T2 whose state it starts from.
func TestWorldT7LateJoin(t *testing.T) {
	inEachMode(t, func(t *testing.T, watchList bool) {
		orders := map[string]bool{}
		for _, seed := range traceSeeds {
			w, n, hs := t1(t, seed, configMaps, informer.SharedIndexInformerOptions{}, watchList)
			mustApply(t, w, update(configMaps, "p1"), del(configMaps, "p2"), create(configMaps, "p3"))
			mustConverge(t, w)
			h4 := mustAddHandler(t, w, n, "h4", useInformerResync)
			if h4.HasSynced() {
				t.Errorf("seed %d: h4 synced before its initial adds were delivered", seed)
			}
			mustConverge(t, w)
			got := h4.Deliveries().Take()
			orders[got[0]] = true
			slices.Sort(got)
			if diff := cmp.Diff(got, []string{"add(default/p1@4,true)", "add(default/p3@6,true)"}); diff != "" {
				t.Errorf("seed %d h4 snapshot (-got +want):\n%s", seed, diff)
			}
			if !h4.HasSynced() {
				t.Errorf("seed %d: h4 not synced after its initial adds", seed)
			}
			mustApply(t, w, create(configMaps, "p5"), update(configMaps, "p3"))
			mustConverge(t, w)
			if diff := cmp.Diff(h4.Deliveries().Take(), []string{"add(default/p5@7,false)", "upd(default/p3@6->8)"}); diff != "" {
				t.Errorf("seed %d h4 live events (-got +want):\n%s", seed, diff)
			}
			if got := len(hs[0].Deliveries().Notifications()); got != 7 {
				t.Errorf("seed %d h1 got %d notifications, want 7", seed, got)
			}
		}
		if len(orders) != 2 {
			t.Errorf("late-join snapshots began with %v over %d seeds; want both orders drawn", orders, len(traceSeeds))
		}
	})
}

// informer.md §14 T9: Stop ends everything: the watch is stopped at the apiserver, buffered
// notifications are dropped, AddEventHandler fails, RemoveEventHandler is a no-op, and later
// writes reach nobody. On pods: nothing is deleted.
func TestWorldT9Stop(t *testing.T) {
	inEachMode(t, func(t *testing.T, watchList bool) {
		for _, seed := range traceSeeds {
			w, n, hs := t1(t, seed, pods, informer.SharedIndexInformerOptions{}, watchList)
			hs[0].Deliveries().Take()
			mustApply(t, w, update(pods, "p1"))
			if err := w.Sim().RunUntil(func() bool { return hs[0].Buffered() > 0 }, time.Minute); err != nil {
				t.Fatal(err)
			}
			n.Stop()
			if !n.SharedIndexInformer().IsStopped() {
				t.Errorf("seed %d: IsStopped false after Stop", seed)
			}
			if got := hs[0].Buffered(); got != 0 {
				t.Errorf("seed %d: h1 still has %d notifications buffered", seed, got)
			}
			if got := w.Server().Faults().Watchers(); len(got) != 0 {
				t.Errorf("seed %d: watches %v still open at the apiserver", seed, got)
			}
			if _, err := w.AddHandler(n, "late", nil, handlerOpts(useInformerResync)); err == nil {
				t.Errorf("seed %d: AddHandler after Stop succeeded", seed)
			}
			if err := hs[1].Remove(); err != nil {
				t.Errorf("seed %d: Remove after Stop: %v", seed, err)
			}
			mustApply(t, w, create(pods, "p7"))
			if err := w.Sim().RunFor(10 * time.Minute); err != nil {
				t.Fatal(err)
			}
			if got := hs[0].Deliveries().Take(); len(got) != 0 {
				t.Errorf("seed %d: h1 notified after Stop: %q", seed, got)
			}
			if err := w.Sim().RunUntilQuiescent(); err != nil {
				t.Errorf("seed %d: a stopped world does not quiesce: %v", seed, err)
			}
		}
	})
}

// lastListed is when n's Reflector last replaced its store from the apiserver, the instant its
// resync timer restarts (informer.md §2.3, §7.5): its last "listed" (a LIST) or
// "watch-list-synced" (a watch-list's end bookmark) event.
func lastListed(w *World, n *Informer) time.Duration {
	at := time.Duration(-1)
	for _, e := range w.Sim().Trace().Events() {
		if e.Actor == n.reflectorActor && (e.Kind == "listed" || e.Kind == "watch-list-synced") {
			at = e.Time
		}
	}
	return at
}
