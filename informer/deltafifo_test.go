package informer

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// dataPopDeltaFIFO pops until empty and returns one line per popped key: "init=…: Type:obj ...".
func dataPopDeltaFIFO(t *testing.T, f *DeltaFIFO) []string {
	t.Helper()
	var got []string
	for f.Len() > 0 {
		_, err := f.Pop(func(obj any, init bool) error {
			got = append(got, fmt.Sprintf("init=%v: %v", init, dataDeltaStrings(obj.(Deltas))))
			return nil
		})
		if err != nil {
			t.Fatalf("Pop: %v", err)
		}
	}
	return got
}

// client-go TestDeltaFIFO_addUpdate and _DeleteExistingNonPropagated (informer.md §5.2): deltas
// of one key pop together, oldest first, nothing merged but Deleted+Deleted.
func TestDeltaFIFOAddUpdateDelete(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	mustStore(t, f.Add(dataObj("ns", "a", "1")))
	mustStore(t, f.Update(dataObj("ns", "a", "2")))
	mustStore(t, f.Add(dataObj("ns", "b", "3")))
	mustStore(t, f.Delete(dataObj("ns", "a", "4")))
	mustStore(t, f.Delete(dataObj("ns", "a", "5")))
	want := []string{
		"init=false: [Added:ns/a@1 Updated:ns/a@2 Deleted:ns/a@4]",
		"init=false: [Added:ns/b@3]",
	}
	if diff := cmp.Diff(want, dataPopDeltaFIFO(t, f)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// informer.md §5.2 dedup: of two Deleted, the older is kept unless it is a tombstone.
func TestDeltaFIFODedup(t *testing.T) {
	tomb := Delta{Type: Deleted, Object: DeletedFinalStateUnknown{Key: "ns/a"}}
	real := Delta{Type: Deleted, Object: dataObj("ns", "a", "2")}
	if diff := cmp.Diff([]string{"Deleted:ns/a@2"}, dataDeltaStrings(dedupDeltas(Deltas{tomb, real}))); diff != "" {
		t.Errorf("tombstone then real (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Deleted:ns/a@2"}, dataDeltaStrings(dedupDeltas(Deltas{real, tomb}))); diff != "" {
		t.Errorf("real then tombstone (-want +got):\n%s", diff)
	}
}

// client-go TestDeltaFIFO_enqueueingNoLister and _enqueueingWithLister (informer.md §5.2): Delete
// of a key neither known nor queued is ignored; of a known key, enqueued.
func TestDeltaFIFODeleteFiltering(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	mustStore(t, f.Delete(dataObj("ns", "ghost", "1")))
	if f.Len() != 0 {
		t.Errorf("Delete of an unknown key was queued (no lister)")
	}
	known := NewStore(MetaNamespaceKeyFunc)
	mustStore(t, known.Add(dataObj("ns", "k", "1")))
	g := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: known})
	mustStore(t, g.Delete(dataObj("ns", "ghost", "1")))
	mustStore(t, g.Delete(dataObj("ns", "k", "2")))
	if diff := cmp.Diff([]string{"ns/k"}, g.Keys()); diff != "" {
		t.Errorf("queued keys (-want +got):\n%s", diff)
	}
}

// client-go TestDeltaFIFO_ReplaceMakesDeletions, _ReplaceDeltaType and
// TestDeltaFIFOW_ReplaceMakesDeletionsForObjectsOnlyInQueue (informer.md §5.2): Replaced (or Sync)
// per listed object; tombstones for queued-only keys carry the newest queued object, for known
// keys the cached object; already-queued keys keep their place, new ones follow in list order,
// known-only deletions last.
func TestDeltaFIFOReplace(t *testing.T) {
	known := NewStore(MetaNamespaceKeyFunc)
	mustStore(t, known.Add(dataObj("ns", "k1", "1")))
	mustStore(t, known.Add(dataObj("ns", "k2", "2")))
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: known, EmitDeltaTypeReplaced: true})
	mustStore(t, f.Update(dataObj("ns", "q", "10")))
	mustStore(t, f.Delete(dataObj("ns", "k2", "11")))
	mustStore(t, f.Replace([]any{dataObj("ns", "new", "20"), dataObj("ns", "k2", "21")}, "30"))
	want := []string{
		"init=false: [Updated:ns/q@10 Deleted:tomb(ns/q, ns/q@10)]",
		"init=false: [Deleted:ns/k2@11 Replaced:ns/k2@21]",
		"init=false: [Replaced:ns/new@20]",
		"init=false: [Deleted:tomb(ns/k1, ns/k1@1)]",
	}
	if diff := cmp.Diff(want, dataPopDeltaFIFO(t, f)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	// Without EmitDeltaTypeReplaced, listed objects arrive as Sync (client-go
	// TestDeltaFIFO_addReplace: Add then Replace pops once with the Replace value newest).
	g := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	mustStore(t, g.Add(dataObj("ns", "a", "1")))
	mustStore(t, g.Replace([]any{dataObj("ns", "a", "2")}, "2"))
	if diff := cmp.Diff([]string{"init=false: [Added:ns/a@1 Sync:ns/a@2]"}, dataPopDeltaFIFO(t, g)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// client-go TestDeltaFIFO_replaceWithDeleteDeltaIn (informer.md §5.2): a queued Delete followed by a
// Replace that lists the object yields [Deleted, Sync].
func TestDeltaFIFOReplaceWithDeleteDeltaIn(t *testing.T) {
	known := NewStore(MetaNamespaceKeyFunc)
	mustStore(t, known.Add(dataObj("ns", "a", "1")))
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: known})
	mustStore(t, f.Delete(dataObj("ns", "a", "2")))
	mustStore(t, f.Replace([]any{dataObj("ns", "a", "3")}, "3"))
	if diff := cmp.Diff([]string{"init=false: [Deleted:ns/a@2 Sync:ns/a@3]"}, dataPopDeltaFIFO(t, f)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// client-go TestDeltaFIFOW_ReplaceMakesDeletionsForObjectsOnlyInQueue (informer.md §5.2): a key
// queued only as a tombstone gets one tombstone, deduped, and the new tombstone unwraps the old.
func TestDeltaFIFOReplaceQueuedTombstone(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	mustStore(t, f.Add(dataObj("ns", "a", "1")))
	mustStore(t, f.Replace(nil, "2"))
	mustStore(t, f.Replace(nil, "3"))
	want := []string{"init=false: [Added:ns/a@1 Deleted:tomb(ns/a, ns/a@1)]"}
	if diff := cmp.Diff(want, dataPopDeltaFIFO(t, f)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// client-go TestDeltaFIFO_transformer (informer.md §5.2): transform once per listed or written
// object; tombstones carry already-transformed objects; resyncs are not transformed.
func TestDeltaFIFOTransformer(t *testing.T) {
	calls := 0
	tf := func(o any) (any, error) {
		calls++
		u := dataObj("ns", o.(interface{ GetName() string }).GetName(), "T")
		return u, nil
	}
	known := NewStore(MetaNamespaceKeyFunc)
	mustStore(t, known.Add(dataObj("ns", "cached", "1")))
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: known, Transformer: tf, EmitDeltaTypeReplaced: true})
	mustStore(t, f.Add(dataObj("ns", "a", "1")))
	mustStore(t, f.Resync())
	mustStore(t, f.Replace([]any{dataObj("ns", "b", "2")}, "2"))
	want := []string{
		"init=false: [Added:ns/a@T Deleted:tomb(ns/a, ns/a@T)]",
		"init=false: [Sync:ns/cached@1 Deleted:tomb(ns/cached, ns/cached@1)]",
		"init=false: [Replaced:ns/b@T]",
	}
	if diff := cmp.Diff(want, dataPopDeltaFIFO(t, f)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if calls != 2 {
		t.Errorf("transformer calls = %d, want 2", calls)
	}
}

// client-go TestDeltaFIFO_Resync, _ResyncNonExisting, _UpdateResyncRace (informer.md §5.2):
// Resync queues Sync for known keys without queued deltas, never behind a queued Update.
func TestDeltaFIFOResync(t *testing.T) {
	known := NewStore(MetaNamespaceKeyFunc)
	mustStore(t, known.Add(dataObj("ns", "a", "1")))
	mustStore(t, known.Add(dataObj("ns", "b", "2")))
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: known})
	mustStore(t, f.Update(dataObj("ns", "b", "3")))
	mustStore(t, f.Resync())
	want := []string{"init=false: [Updated:ns/b@3]", "init=false: [Sync:ns/a@1]"}
	if diff := cmp.Diff(want, dataPopDeltaFIFO(t, f)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// client-go TestDeltaFIFO_detectLineJumpers (informer.md §5.2): a key keeps its place while it
// accumulates deltas; after it pops, a new delta queues it at the end.
func TestDeltaFIFONoLineJumping(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	mustStore(t, f.Add(dataObj("ns", "a", "1")))
	mustStore(t, f.Add(dataObj("ns", "b", "2")))
	mustStore(t, f.Update(dataObj("ns", "a", "3")))
	if diff := cmp.Diff([]string{"ns/a", "ns/b"}, f.Keys()); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	_, _ = f.Pop(func(any, bool) error { return nil })
	mustStore(t, f.Update(dataObj("ns", "a", "4")))
	if diff := cmp.Diff([]string{"ns/b", "ns/a"}, f.Keys()); diff != "" {
		t.Errorf("keys after pop (-want +got):\n%s", diff)
	}
}

// client-go TestDeltaFIFO_HasSynced and _HasSyncedCorrectOnDeletion (informer.md §5.1, §5.2): Add
// first syncs; an empty first Replace syncs at once; N listed keys plus tombstones need that many
// pops, duplicate keys count once, every initial pop is flagged; the latch closes before the last
// initial process runs.
func TestDeltaFIFOHasSynced(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	mustStore(t, f.Add(dataObj("ns", "a", "1")))
	if !f.HasSynced() {
		t.Errorf("Add first: not synced")
	}
	g := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	mustStore(t, g.Replace(nil, "1"))
	if !g.HasSynced() {
		t.Errorf("empty first Replace: not synced")
	}

	known := NewStore(MetaNamespaceKeyFunc)
	mustStore(t, known.Add(dataObj("ns", "gone", "1")))
	h := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: known, EmitDeltaTypeReplaced: true})
	mustStore(t, h.Replace([]any{dataObj("ns", "a", "1"), dataObj("ns", "a", "2"), dataObj("ns", "b", "3")}, "3"))
	var flags []bool
	var syncedDuring []bool
	for h.Len() > 0 {
		_, _ = h.Pop(func(_ any, init bool) error {
			flags = append(flags, init)
			syncedDuring = append(syncedDuring, h.HasSynced())
			return nil
		})
	}
	if diff := cmp.Diff([]bool{true, true, true}, flags); diff != "" {
		t.Errorf("isInInitialList (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]bool{false, false, true}, syncedDuring); diff != "" {
		t.Errorf("HasSynced during process (-want +got):\n%s", diff)
	}
}

// client-go TestDeltaFIFO_KeyOf (informer.md §5.2).
func TestDeltaFIFOKeyOf(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	for _, obj := range []any{
		dataObj("ns", "a", "1"),
		DeletedFinalStateUnknown{Key: "ns/a"},
		Deltas{{Type: Added, Object: dataObj("ns", "x", "1")}, {Type: Deleted, Object: DeletedFinalStateUnknown{Key: "ns/a"}}},
	} {
		if key, err := f.KeyOf(obj); err != nil || key != "ns/a" {
			t.Errorf("KeyOf(%T) = %q, %v; want ns/a", obj, key, err)
		}
	}
	if _, err := f.KeyOf(Deltas{}); err == nil {
		t.Errorf("KeyOf(empty Deltas) succeeded")
	}
}

// client-go TestDeltaFIFO_PopShouldUnblockWhenClosed (informer.md §5.1): ours never blocks; empty
// gives ErrQueueEmpty, closed and empty ErrFIFOClosed; queued keys still pop after Close.
func TestDeltaFIFOEmptyAndClosed(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	noop := func(any, bool) error { return nil }
	if _, err := f.Pop(noop); err != ErrQueueEmpty {
		t.Errorf("Pop on empty = %v, want ErrQueueEmpty", err)
	}
	mustStore(t, f.Add(dataObj("ns", "a", "1")))
	f.Close()
	if _, err := f.Pop(noop); err != nil {
		t.Errorf("Pop after Close with an item = %v", err)
	}
	if _, err := f.Pop(noop); err != ErrFIFOClosed {
		t.Errorf("Pop on closed empty = %v, want ErrFIFOClosed", err)
	}
}

// informer.md §5.2 + §6.2 end to end: the legacy path gives the same notifications as RealFIFO for
// a relist (TestReplaceEvents at the DeltaFIFO level), except the queue order puts the tombstone
// after the Replaced items.
func TestDeltaFIFOPipelineRelist(t *testing.T) {
	cache := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, nil)
	rec := &dataRecorder{t: t, store: cache}
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: cache, EmitDeltaTypeReplaced: true})
	drain := func() {
		for f.Len() > 0 {
			_, err := f.Pop(func(obj any, init bool) error {
				return processDeltas(rec, cache, obj.(Deltas), init, DeletionHandlingMetaNamespaceKeyFunc, nil)
			})
			mustStore(t, err)
		}
	}
	mustStore(t, f.Replace([]any{dataObj("ns", "a", "1"), dataObj("ns", "b", "2")}, "2"))
	drain()
	mustStore(t, f.Replace([]any{dataObj("ns", "b", "3"), dataObj("ns", "c", "4")}, "4"))
	drain()
	want := []string{
		"add ns/a@1 init=true", "add ns/b@2 init=true",
		"update ns/b@2 -> ns/b@3", "add ns/c@4 init=false", "delete tomb(ns/a, ns/a@1)",
	}
	if diff := cmp.Diff(want, rec.got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
