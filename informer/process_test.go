package informer

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// dataPipeline is a queue, a cache and a recording handler wired the way the informer wires them
// (informer.md §6.1–§6.2), stepped by hand.
type dataPipeline struct {
	queue *RealFIFO
	cache Indexer
	rec   *dataRecorder
	order func(n int, swap func(i, j int))
}

func dataNewPipeline(t *testing.T, atomic bool) *dataPipeline {
	cache := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	opts := RealFIFOOptions{AtomicEvents: atomic, EmitDeltaTypeBookmark: atomic}
	if !atomic {
		opts.KnownObjects = cache
	}
	return &dataPipeline{queue: NewRealFIFO(opts), cache: cache, rec: &dataRecorder{t: t, store: cache}}
}

// drain pops everything one item at a time, through processDeltas.
func (p *dataPipeline) drain(t *testing.T) {
	t.Helper()
	for p.queue.Len() > 0 {
		_, err := p.queue.Pop(func(obj any, init bool) error {
			return processDeltas(p.rec, p.cache, obj.(Deltas), init, DeletionHandlingMetaNamespaceKeyFunc, p.order)
		})
		if err != nil {
			t.Fatalf("process: %v", err)
		}
	}
}

// drainBatch pops everything with PopBatch, as the v0.37 default process loop does.
func (p *dataPipeline) drainBatch(t *testing.T) {
	t.Helper()
	for p.queue.Len() > 0 {
		err := p.queue.PopBatch(
			func(ds []Delta, init bool) error {
				return processDeltasInBatch(p.rec, p.cache, ds, init, DeletionHandlingMetaNamespaceKeyFunc)
			},
			func(obj any, init bool) error {
				return processDeltas(p.rec, p.cache, obj.(Deltas), init, DeletionHandlingMetaNamespaceKeyFunc, p.order)
			})
		if err != nil {
			t.Fatalf("process: %v", err)
		}
	}
}

func (p *dataPipeline) take() []string {
	got := p.rec.got
	p.rec.got = nil
	return got
}

// client-go TestReplaceEvents (informer.md §5.3, §6.3): atomic and non-atomic Replace give the same
// notifications and the same store: tombstone deletes first, then updates and adds in list order;
// the store already reflects each event when the handler runs (dataRecorder checks §13 rule 1).
func TestProcessReplaceEvents(t *testing.T) {
	var results [][]string
	for _, atomic := range []bool{true, false} {
		p := dataNewPipeline(t, atomic)
		mustStore(t, p.queue.Replace([]any{dataObj("ns", "a", "1"), dataObj("ns", "b", "2"), dataObj("ns", "c", "3")}, "3"))
		p.drain(t)
		initial := p.take()
		if diff := cmp.Diff([]string{"add ns/a@1 init=true", "add ns/b@2 init=true", "add ns/c@3 init=true"}, initial); diff != "" {
			t.Errorf("atomic=%v initial list (-want +got):\n%s", atomic, diff)
		}
		mustStore(t, p.queue.Replace([]any{dataObj("ns", "d", "4"), dataObj("ns", "b", "5"), dataObj("ns", "a", "1")}, "5"))
		p.drain(t)
		got := append(p.take(), dataDescribeAll(p.cache.List())...)
		results = append(results, got)
	}
	want := []string{
		"delete tomb(ns/c, ns/c@3)",
		"add ns/d@4 init=false", "update ns/b@2 -> ns/b@5", "update ns/a@1 -> ns/a@1",
		"ns/a@1", "ns/b@5", "ns/d@4",
	}
	if diff := cmp.Diff(want, results[0]); diff != "" {
		t.Errorf("atomic relist (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(results[0], results[1]); diff != "" {
		t.Errorf("non-atomic relist differs from atomic (-atomic +non-atomic):\n%s", diff)
	}
}

// client-go TestResetWatch (informer.md §14 T5): after a watch reset that dropped changes, the
// relist gives update(existing) and add(new) with isInInitialList=false, and tombstones for the
// missed deletes; the initial add had isInInitialList=true. Atomic and non-atomic agree.
func TestProcessResetWatch(t *testing.T) {
	for _, atomic := range []bool{true, false} {
		p := dataNewPipeline(t, atomic)
		mustStore(t, p.queue.Replace([]any{dataObj("ns", "p1", "1")}, "1"))
		p.drain(t)
		mustStore(t, p.queue.Add(dataObj("ns", "p4", "6")))
		p.drain(t)
		// Watch reset: p1 changed, p4 deleted, p9 created while disconnected.
		mustStore(t, p.queue.Replace([]any{dataObj("ns", "p1", "8"), dataObj("ns", "p9", "9")}, "9"))
		p.drain(t)
		want := []string{
			"add ns/p1@1 init=true",
			"add ns/p4@6 init=false",
			"delete tomb(ns/p4, ns/p4@6)",
			"update ns/p1@1 -> ns/p1@8",
			"add ns/p9@9 init=false",
		}
		if diff := cmp.Diff(want, p.take()); diff != "" {
			t.Errorf("atomic=%v (-want +got):\n%s", atomic, diff)
		}
	}
}

// client-go TestStoreResourceVersion (informer.md §8.2, §6.2): with the atomic FIFO the store RV
// follows the list RV, update and delete event RVs, and bookmarks.
func TestProcessStoreResourceVersion(t *testing.T) {
	p := dataNewPipeline(t, true)
	steps := []struct {
		do   func()
		want string
	}{
		{func() { mustStore(t, p.queue.Replace([]any{dataObj("ns", "a", "1")}, "4")) }, "4"},
		{func() { mustStore(t, p.queue.Update(dataObj("ns", "a", "5"))) }, "5"},
		{func() { mustStore(t, p.queue.Delete(dataObj("ns", "a", "6"))) }, "6"},
		{func() { mustStore(t, p.queue.Bookmark("9")) }, "9"},
		{func() { mustStore(t, p.queue.Replace(nil, "12")) }, "12"},
	}
	for i, s := range steps {
		s.do()
		p.drain(t)
		if got := p.cache.LastStoreSyncResourceVersion(); got != s.want {
			t.Errorf("step %d: store RV = %q, want %q", i, got, s.want)
		}
	}
	if got := p.take(); len(got) != 3 {
		t.Errorf("bookmarks must not notify; got %v", got)
	}
}

// informer.md §6.2 / §14 T2: the cache, not the event type, decides the notification; a Deleted
// for an unknown key still notifies; SyncAll gives OnUpdate(o, o) per cached object in key order.
func TestProcessDeltasClassification(t *testing.T) {
	p := dataNewPipeline(t, true)
	mustStore(t, p.queue.Update(dataObj("ns", "b", "1"))) // MODIFIED for unknown → add
	mustStore(t, p.queue.Add(dataObj("ns", "b", "2")))    // ADDED for cached → update
	mustStore(t, p.queue.Add(dataObj("ns", "a", "3")))
	mustStore(t, p.queue.Delete(dataObj("ns", "ghost", "4"))) // unknown key → delete anyway
	mustStore(t, p.queue.Resync())
	p.drain(t)
	want := []string{
		"add ns/b@1 init=false", "update ns/b@1 -> ns/b@2", "add ns/a@3 init=false", "delete ns/ghost@4",
		"update ns/a@3 -> ns/a@3", "update ns/b@2 -> ns/b@2",
	}
	if diff := cmp.Diff(want, p.take()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// informer.md §6.2: SyncAll ends the processing of its Deltas; the first store error abandons the
// rest and is returned.
func TestProcessDeltasStopsAndErrors(t *testing.T) {
	cache := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, nil)
	mustStore(t, cache.Add(dataObj("ns", "a", "1")))
	rec := &dataRecorder{t: t, store: cache}
	err := processDeltas(rec, cache, Deltas{{Type: SyncAll}, {Type: Added, Object: dataObj("ns", "z", "2")}}, false, DeletionHandlingMetaNamespaceKeyFunc, nil)
	if err != nil || len(rec.got) != 1 {
		t.Errorf("SyncAll then Added: err %v, got %v; want only the sync", err, rec.got)
	}
	rec.got = nil
	err = processDeltas(rec, cache, Deltas{
		{Type: Added, Object: dataObj("ns", "b", "3")},
		{Type: Added, Object: dataNoMeta{"bad"}},
		{Type: Added, Object: dataObj("ns", "c", "4")},
	}, false, DeletionHandlingMetaNamespaceKeyFunc, nil)
	if err == nil {
		t.Errorf("a key error was not returned")
	}
	if diff := cmp.Diff([]string{"add ns/b@3 init=false"}, rec.got); diff != "" {
		t.Errorf("after a key error the rest must be abandoned (-want +got):\n%s", diff)
	}
}

// informer.md §6.3: a key error in a ReplacedAll returns before the cache or handler is touched.
func TestProcessReplacedAllKeyErrorTouchesNothing(t *testing.T) {
	cache := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, nil)
	mustStore(t, cache.Add(dataObj("ns", "a", "1")))
	rec := &dataRecorder{t: t, store: cache}
	info := ReplacedAllInfo{ResourceVersion: "9", Objects: []any{dataObj("ns", "b", "2"), dataNoMeta{"bad"}}}
	if err := processDeltas(rec, cache, Deltas{{Type: ReplacedAll, Object: info}}, false, DeletionHandlingMetaNamespaceKeyFunc, nil); err == nil {
		t.Errorf("no error")
	}
	if len(rec.got) != 0 || cache.LastStoreSyncResourceVersion() != "1" || len(cache.ListKeys()) != 1 {
		t.Errorf("cache or handler touched: notifications %v, keys %v, rv %q", rec.got, cache.ListKeys(), cache.LastStoreSyncResourceVersion())
	}
}

// informer.md §6.3 and style.md rule 9: relist tombstones are sorted by key, then permuted by the
// informer's order function (client-go: map order).
func TestProcessReplacedAllTombstoneOrder(t *testing.T) {
	run := func(order func(int, func(i, j int))) []string {
		cache := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, nil)
		for _, n := range []string{"c", "a", "b"} {
			mustStore(t, cache.Add(dataObj("ns", n, "1")))
		}
		rec := &dataRecorder{t: t, store: cache}
		mustStore(t, processDeltas(rec, cache, Deltas{{Type: ReplacedAll, Object: ReplacedAllInfo{ResourceVersion: "2"}}}, false, DeletionHandlingMetaNamespaceKeyFunc, order))
		return rec.got
	}
	sorted := []string{"delete tomb(ns/a, ns/a@1)", "delete tomb(ns/b, ns/b@1)", "delete tomb(ns/c, ns/c@1)"}
	if diff := cmp.Diff(sorted, run(nil)); diff != "" {
		t.Errorf("nil order (-want +got):\n%s", diff)
	}
	reverse := func(n int, swap func(i, j int)) {
		for i := 0; i < n/2; i++ {
			swap(i, n-1-i)
		}
	}
	if diff := cmp.Diff([]string{sorted[2], sorted[1], sorted[0]}, run(reverse)); diff != "" {
		t.Errorf("reversing order (-want +got):\n%s", diff)
	}
}

// informer.md §16: duplicate keys in a list are each classified against the pre-replace cache;
// the cache keeps the last entry.
func TestProcessReplacedAllDuplicateKeys(t *testing.T) {
	cache := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, nil)
	rec := &dataRecorder{t: t}
	info := ReplacedAllInfo{ResourceVersion: "3", Objects: []any{dataObj("ns", "a", "1"), dataObj("ns", "a", "2")}}
	mustStore(t, processDeltas(rec, cache, Deltas{{Type: ReplacedAll, Object: info}}, true, DeletionHandlingMetaNamespaceKeyFunc, nil))
	if diff := cmp.Diff([]string{"add ns/a@1 init=true", "add ns/a@2 init=true"}, rec.got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ns/a@2"}, dataDescribeAll(cache.List())); diff != "" {
		t.Errorf("cache (-want +got):\n%s", diff)
	}
}

// client-go TestProcessDeltasInBatch (informer.md §6.4): only successful transactions fire
// callbacks, the error reports the failed count; add versus update comes from the cache before the
// batch; each callback sees the whole batch applied.
func TestProcessDeltasInBatch(t *testing.T) {
	cache := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, nil)
	mustStore(t, cache.Add(dataObj("ns", "a", "1")))
	mustStore(t, cache.Add(dataObj("ns", "gone", "1")))
	rec := &dataRecorder{t: t, store: cache}
	var seen [][]string
	wrapped := dataHandlerFunc(func(s string) { seen = append(seen, cache.ListKeys()); rec.got = append(rec.got, s) })
	err := processDeltasInBatch(wrapped, cache, []Delta{
		{Type: Updated, Object: dataObj("ns", "a", "2")},
		{Type: Added, Object: dataNoMeta{"bad"}},
		{Type: Deleted, Object: DeletedFinalStateUnknown{Key: "ns/gone", Obj: dataObj("ns", "gone", "1")}},
		{Type: Added, Object: dataObj("ns", "b", "3")},
	}, false, DeletionHandlingMetaNamespaceKeyFunc)
	if err == nil || !strings.Contains(err.Error(), "(1/4)") {
		t.Errorf("error = %v, want one of four failed", err)
	}
	want := []string{"update ns/a@1 -> ns/a@2", "delete tomb(ns/gone, ns/gone@1)", "add ns/b@3 init=false"}
	if diff := cmp.Diff(want, rec.got); diff != "" {
		t.Errorf("callbacks (-want +got):\n%s", diff)
	}
	for i, keys := range seen {
		if diff := cmp.Diff([]string{"ns/a", "ns/b"}, keys); diff != "" {
			t.Errorf("callback %d saw a partial batch (-want +got):\n%s", i, diff)
		}
	}
	if err := processDeltasInBatch(rec, cache, []Delta{{Type: SyncAll}}, false, DeletionHandlingMetaNamespaceKeyFunc); err == nil {
		t.Errorf("a non-batchable type in a batch was accepted")
	}
}

// informer.md §6.4, §14: a batch pop of a whole pipeline gives the same notifications as item-by-
// item pops.
func TestProcessBatchPipelineMatchesSingle(t *testing.T) {
	feed := func(p *dataPipeline) {
		mustStore(t, p.queue.Replace([]any{dataObj("ns", "a", "1"), dataObj("ns", "b", "2")}, "2"))
		mustStore(t, p.queue.Update(dataObj("ns", "a", "3")))
		mustStore(t, p.queue.Add(dataObj("ns", "c", "4")))
		mustStore(t, p.queue.Delete(dataObj("ns", "b", "5")))
		mustStore(t, p.queue.Update(dataObj("ns", "a", "6")))
		mustStore(t, p.queue.Bookmark("7"))
		mustStore(t, p.queue.Replace([]any{dataObj("ns", "a", "6")}, "8"))
	}
	single, batch := dataNewPipeline(t, true), dataNewPipeline(t, true)
	feed(single)
	feed(batch)
	single.drain(t)
	batch.drainBatch(t)
	if diff := cmp.Diff(single.take(), batch.take()); diff != "" {
		t.Errorf("batch differs from single (-single +batch):\n%s", diff)
	}
	if single.cache.LastStoreSyncResourceVersion() != "8" || batch.cache.LastStoreSyncResourceVersion() != "8" {
		t.Errorf("store RVs %q, %q; want 8", single.cache.LastStoreSyncResourceVersion(), batch.cache.LastStoreSyncResourceVersion())
	}
}

// informer.md §6.4: a store without transactions is processed one delta at a time.
func TestProcessDeltasInBatchWithoutTransactions(t *testing.T) {
	store := dataPlainStore{NewStore(DeletionHandlingMetaNamespaceKeyFunc)}
	rec := &dataRecorder{t: t, store: store}
	err := processDeltasInBatch(rec, store, []Delta{
		{Type: Added, Object: dataObj("ns", "a", "1")},
		{Type: Added, Object: dataNoMeta{"bad"}},
		{Type: Added, Object: dataObj("ns", "b", "2")},
	}, true, DeletionHandlingMetaNamespaceKeyFunc)
	if err == nil {
		t.Errorf("the key error of the middle delta was not reported")
	}
	if diff := cmp.Diff([]string{"add ns/a@1 init=true", "add ns/b@2 init=true"}, rec.got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// dataPlainStore hides the Transaction method of a store.
type dataPlainStore struct{ Store }

// dataHandlerFunc adapts a function receiving a dataRecorder-style line to a handler.
type dataHandlerFunc func(string)

func (f dataHandlerFunc) OnAdd(obj any, init bool) {
	f("add " + dataDescribe(obj) + map[bool]string{true: " init=true", false: " init=false"}[init])
}
func (f dataHandlerFunc) OnUpdate(o, n any) {
	f("update " + dataDescribe(o) + " -> " + dataDescribe(n))
}
func (f dataHandlerFunc) OnDelete(obj any) { f("delete " + dataDescribe(obj)) }
