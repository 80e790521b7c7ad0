package informer

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/watch"
)

func infDur(d time.Duration) *time.Duration { return &d }

// infT1 brings a harness through informer.md §14 T1: server p1@1, p2@2; two handlers registered
// before start; initial LIST, Replace, one pop, watch from the list RV.
func infT1(t *testing.T, opts SharedIndexInformerOptions) (*infStep, []*infRec, []ResourceEventHandlerRegistration) {
	e := newInfStep(t, opts)
	e.lw.set("p1")
	e.lw.set("p2")
	h1, r1 := e.handler(nil)
	h2, r2 := e.handler(nil)
	e.st.Start()
	e.quiesce()
	return e, []*infRec{h1, h2}, []ResourceEventHandlerRegistration{r1, r2}
}

// informer.md §14 T1: initial sync with two handlers registered before start, step by step.
func TestInfT1InitialSync(t *testing.T) {
	e := newInfStep(t, SharedIndexInformerOptions{})
	e.lw.set("p1")
	e.lw.set("p2")
	h1, r1 := e.handler(nil)
	h2, r2 := e.handler(nil)
	e.st.Start()
	// Step 1: LIST {RV "0", Limit 500} → Replace → one ReplacedAll item.
	if !e.serveOne() {
		t.Fatal("no LIST pending after Start")
	}
	if got := e.st.QueueLen(); got != 1 {
		t.Fatalf("queue length %d after the LIST, want 1 (one ReplacedAll)", got)
	}
	if e.inf.HasSynced() {
		t.Fatal("informer synced when the LIST returned (§13 rule 12: only after the pop)")
	}
	// Step 2: one pop: cache replaced, both handlers get their adds buffered.
	if err := e.st.ProcessNext(); err != nil {
		t.Fatal(err)
	}
	// Step 3: the queue's initial population is processed → informer synced; handlers not
	// yet, their initial adds are still buffered.
	if !e.inf.HasSynced() {
		t.Fatal("informer not synced after the initial pop")
	}
	if r1.HasSynced() || r2.HasSynced() {
		t.Fatal("a handler synced before its initial adds returned")
	}
	e.quiesce()
	if !r1.HasSynced() || !r2.HasSynced() {
		t.Fatal("handlers not synced after their initial adds returned")
	}
	want := []string{"add ns/p1@1 init", "add ns/p2@2 init"}
	for i, h := range []*infRec{h1, h2} {
		if diff := cmp.Diff(h.take(), want); diff != "" {
			t.Errorf("h%d (-got +want):\n%s", i+1, diff)
		}
	}
	// Step 4: the watch starts at the list RV with bookmarks.
	if diff := cmp.Diff(e.lw.takeRequests(), []string{`List rv="0" limit=500`, `Watch rv="2" bookmarks`}); diff != "" {
		t.Errorf("requests (-got +want):\n%s", diff)
	}
	wantTrace := []string{
		"register h1",
		"register h2",
		"reflector listed 2 items at rv=2",
		"pop ReplacedAll rv=2 n=2 init",
		"cache-replace n=2 rv=2",
		"buffer h1,h2 add ns/p1@1 init",
		"buffer h1,h2 add ns/p2@2 init",
		"synced",
		"reflector watch opened at rv=2",
		"deliver h1 add ns/p1@1 init",
		"deliver h1 add ns/p2@2 init",
		"handler-synced h1",
		"deliver h2 add ns/p1@1 init",
		"deliver h2 add ns/p2@2 init",
		"handler-synced h2",
	}
	if diff := cmp.Diff(e.takeTrace(), wantTrace); diff != "" {
		t.Errorf("trace (-got +want):\n%s", diff)
	}
	if got := e.inf.LastSyncResourceVersion(); got != "2" {
		t.Errorf("LastSyncResourceVersion %q, want 2", got)
	}
}

// infT2 applies informer.md §14 T2's watch events after T1.
func infT2(e *infStep) {
	e.lw.set("p1") // MODIFIED p1@3
	e.lw.del("p2") // DELETED p2@4
	e.lw.set("p3") // ADDED p3@5
	e.lw.set("p4") // ADDED p4@6
	e.lw.bookmark()
	e.quiesce()
}

// informer.md §14 T2: watch events become notifications decided by cache state; a bookmark
// advances RVs without a notification.
func TestInfT2WatchEvents(t *testing.T) {
	e, hs, _ := infT1(t, SharedIndexInformerOptions{})
	hs[0].take()
	hs[1].take()
	infT2(e)
	want := []string{"update ns/p1@1->ns/p1@3", "delete ns/p2@4", "add ns/p3@5", "add ns/p4@6"}
	for i, h := range hs {
		if diff := cmp.Diff(h.take(), want); diff != "" {
			t.Errorf("h%d (-got +want):\n%s", i+1, diff)
		}
	}
	if got := e.inf.LastSyncResourceVersion(); got != "7" {
		t.Errorf("LastSyncResourceVersion %q after BOOKMARK@7, want 7", got)
	}
	if got := e.inf.GetStore().LastStoreSyncResourceVersion(); got != "7" {
		t.Errorf("store RV %q after the Bookmark item, want 7", got)
	}
	// An ADDED for a cached key → update; MODIFIED for an unknown key → add; DELETED for an
	// unknown key → delete anyway (T2, last sentence).
	e.lw.inject(watch.Event{Type: watch.Added, Object: infObj("p1", 8)})
	e.lw.inject(watch.Event{Type: watch.Modified, Object: infObj("zz", 9)})
	e.lw.inject(watch.Event{Type: watch.Deleted, Object: infObj("gone", 10)})
	e.quiesce()
	want = []string{"update ns/p1@3->ns/p1@8", "add ns/zz@9", "delete ns/gone@10"}
	if diff := cmp.Diff(hs[0].take(), want); diff != "" {
		t.Errorf("odd events (-got +want):\n%s", diff)
	}
}

// informer.md §14 T5 (and T4): a 410 in the stream → backoff → relist at the last RV → tombstone
// deletes first, then updates (the unchanged one sync-class) and adds, in list order.
func TestInfT5RelistAfterMissedEvents(t *testing.T) {
	e, hs, _ := infT1(t, SharedIndexInformerOptions{})
	infT2(e)
	hs[0].take()
	hs[1].take()
	e.lw.takeRequests()
	e.lw.expire()  // 410 in the stream
	e.lw.del("p4") // @8: missed
	e.lw.set("p3") // @9: missed
	e.lw.set("p9") // @10: missed
	e.quiesce()
	if got := e.lw.takeRequests(); len(got) != 0 {
		t.Fatalf("requests before the backoff ended: %v", got)
	}
	e.advance(2 * time.Second) // the first backoff is in [0.8s, 1.6s)
	if diff := cmp.Diff(e.lw.takeRequests(), []string{`List rv="7"`, `Watch rv="10" bookmarks`}); diff != "" {
		t.Errorf("requests (-got +want):\n%s", diff)
	}
	// ResyncPeriod 0: flags stay true forever, so every handler gets the same-RV update.
	want := []string{"delete tomb(ns/p4@6)", "update ns/p1@3->ns/p1@3", "update ns/p3@5->ns/p3@9", "add ns/p9@10"}
	for i, h := range hs {
		if diff := cmp.Diff(h.take(), want); diff != "" {
			t.Errorf("h%d (-got +want):\n%s", i+1, diff)
		}
	}
}

// informer.md §14 T6: informer 10s; H1 period 0, H2 default, H3 25s. Resyncs reach only due
// handlers: H2 every 10s, H3 at ticks ≥25s after its previous resync (every 30s), H1 never.
func TestInfT6Resync(t *testing.T) {
	e := newInfStep(t, SharedIndexInformerOptions{ResyncPeriod: 10 * time.Second})
	e.lw.set("p1")
	h1, _ := e.handler(infDur(0))
	h2, _ := e.handler(nil)
	h3, _ := e.handler(infDur(25 * time.Second))
	e.st.Start()
	e.quiesce()
	for _, h := range []*infRec{h1, h2, h3} {
		h.take()
	}
	got := map[string][]string{}
	for i := range 6 {
		e.advance(10 * time.Second)
		at := (time.Duration(i+1) * 10 * time.Second).String()
		for j, h := range []*infRec{h1, h2, h3} {
			for _, c := range h.take() {
				got[at] = append(got[at], "h"+string(rune('1'+j))+" "+c)
			}
		}
	}
	sync := "update ns/p1@1->ns/p1@1"
	want := map[string][]string{
		"10s":  {"h2 " + sync},
		"20s":  {"h2 " + sync},
		"30s":  {"h2 " + sync, "h3 " + sync},
		"40s":  {"h2 " + sync},
		"50s":  {"h2 " + sync},
		"1m0s": {"h2 " + sync, "h3 " + sync},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("resyncs by time (-got +want):\n%s", diff)
	}
}

// informer.md §14 T7 and §3: a late joiner gets the cache snapshot as initial-list adds (order
// drawn from the seed), then live events; its handle syncs once the snapshot was handled.
func TestInfT7LateJoin(t *testing.T) {
	e, _, _ := infT1(t, SharedIndexInformerOptions{})
	infT2(e)
	e.lw.del("p4") // cache is now {p1@3, p3@5}
	e.quiesce()
	e.takeTrace()
	h4, r4 := e.handler(nil)
	if r4.HasSynced() {
		t.Fatal("late joiner synced before its snapshot was delivered")
	}
	e.lw.set("p5")
	e.quiesce()
	if !r4.HasSynced() {
		t.Fatal("late joiner not synced after its snapshot was delivered")
	}
	got := h4.take()
	if len(got) != 3 {
		t.Fatalf("h4 saw %v, want 2 snapshot adds then the live add", got)
	}
	snap := slices.Clone(got[:2])
	slices.Sort(snap)
	if diff := cmp.Diff(snap, []string{"add ns/p1@3 init", "add ns/p3@5 init"}); diff != "" {
		t.Errorf("snapshot (-got +want):\n%s", diff)
	}
	if got[2] != "add ns/p5@9" {
		t.Errorf("live event %q, want add ns/p5@9", got[2])
	}
}

// informer.md §14 T9 (client-go TestStateSharedInformer, TestAddOnStoppedSharedInformer,
// TestRemoveOnStoppedSharedInformer): stop drops buffers; then AddEventHandler fails with
// client-go's message, RemoveEventHandler is a no-op, and Run does nothing.
func TestInfT9Stop(t *testing.T) {
	e, hs, regs := infT1(t, SharedIndexInformerOptions{})
	if e.inf.IsStopped() {
		t.Fatal("stopped while running")
	}
	e.lw.set("p1")
	for e.serveOne() {
	}
	_ = e.st.ProcessNext() // the update is buffered, not delivered
	if e.st.Buffered(regs[0]) != 1 {
		t.Fatalf("pending %d, want 1", e.st.Buffered(regs[0]))
	}
	hs[0].take()
	e.st.Stop()
	if !e.inf.IsStopped() {
		t.Fatal("not stopped after Stop")
	}
	if got := e.st.Buffered(regs[0]); got != 0 {
		t.Errorf("pending %d after stop, want 0 (buffers dropped)", got)
	}
	if got := len(e.st.Listeners()); got != 0 {
		t.Errorf("%d listeners after stop, want 0", got)
	}
	_, err := e.inf.AddEventHandler(&infRec{})
	if err == nil || !strings.HasSuffix(err.Error(), "was not added to shared informer because it has stopped already") {
		t.Errorf("AddEventHandler after stop: %v", err)
	}
	if err := e.inf.RemoveEventHandler(regs[1]); err != nil {
		t.Errorf("RemoveEventHandler after stop: %v", err)
	}
	if err := e.inf.AddIndexers(Indexers{"x": MetaNamespaceIndexFunc}); err == nil || err.Error() != "indexer was not added because it has stopped already" {
		t.Errorf("AddIndexers after stop: %v", err)
	}
	if got := e.st.QueueLen(); got != 0 {
		t.Errorf("QueueLen %d after stop, want 0", got)
	}
	if got := hs[0].take(); len(got) != 0 {
		t.Errorf("handler saw %v after stop", got)
	}
}

// Style rule 7: stepping with nothing to do, or mixing drivers, panics.
func TestInfStepMisusePanics(t *testing.T) {
	e := newInfStep(t, SharedIndexInformerOptions{})
	_, reg := e.handler(nil)
	infMustPanic(t, "ProcessNext before Start", func() { _ = e.st.ProcessNext() })
	infMustPanic(t, "DeliverNext with nothing pending", func() { e.st.DeliverNext(reg) })
	infMustPanic(t, "Run on a stepped informer", func() { e.inf.Run(t.Context()) })
	e.st.Start()
	infMustPanic(t, "Start twice", func() { e.st.Start() })
	if _, err := Steps(e.inf); err != nil {
		t.Errorf("Steps again: %v, want the same Stepper", err)
	}
}

func infMustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", what)
		}
	}()
	f()
}

// Determinism (design.md rule 1): two runs with the same seed produce the same trace, late-join
// order and tombstone order included.
func TestInfStepTraceReplays(t *testing.T) {
	run := func() []string {
		e, _, _ := infT1(t, SharedIndexInformerOptions{})
		infT2(e)
		e.handler(nil)
		e.lw.expire()
		e.lw.del("p1")
		e.lw.del("p3")
		e.quiesce()
		e.advance(2 * time.Second)
		return e.takeTrace()
	}
	a, b := run(), run()
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("traces differ (-first +second):\n%s", diff)
	}
}
