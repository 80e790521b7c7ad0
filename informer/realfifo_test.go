package informer

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// dataAtomicFIFO is the informer's default queue (informer.md §0.2: RealFIFO + AtomicFIFO).
func dataAtomicFIFO() *RealFIFO {
	return NewRealFIFO(RealFIFOOptions{AtomicEvents: true, EmitDeltaTypeBookmark: true})
}

// dataLegacyFIFO is a non-atomic RealFIFO over known.
func dataLegacyFIFO(known KeyListerGetter) *RealFIFO {
	return NewRealFIFO(RealFIFOOptions{KnownObjects: known})
}

// dataPopAll pops until empty and returns each popped item as "Type:obj" plus its initial flag.
func dataPopAll(t *testing.T, q Queue) []string {
	t.Helper()
	var got []string
	for q.Len() > 0 {
		_, err := q.Pop(func(obj any, init bool) error {
			for _, s := range dataDeltaStrings(obj.(Deltas)) {
				got = append(got, fmt.Sprintf("%s init=%v", s, init))
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Pop: %v", err)
		}
	}
	return got
}

// informer.md §5.3 (the_real_fifo_test mirrors of TestDeltaFIFO_addUpdate and
// _DeleteExistingNonPropagated): every event is its own item, nothing is merged, arrival order.
func TestRealFIFOKeepsEveryEvent(t *testing.T) {
	f := dataLegacyFIFO(NewStore(MetaNamespaceKeyFunc))
	mustStore(t, f.Add(dataObj("ns", "a", "1")))
	mustStore(t, f.Update(dataObj("ns", "a", "2")))
	mustStore(t, f.Update(dataObj("ns", "b", "3")))
	mustStore(t, f.Delete(dataObj("ns", "a", "4")))
	mustStore(t, f.Delete(dataObj("ns", "a", "4")))
	want := []string{
		"Added:ns/a@1 init=false", "Updated:ns/a@2 init=false", "Updated:ns/b@3 init=false",
		"Deleted:ns/a@4 init=false", "Deleted:ns/a@4 init=false",
	}
	if diff := cmp.Diff(want, dataPopAll(t, f)); diff != "" {
		t.Errorf("popped (-want +got):\n%s", diff)
	}
}

// informer.md §5.3 / §16: a Delete for a key the cache does not know is still enqueued
// (mirror of TestDeltaFIFO_enqueueingNoLister, with the opposite outcome).
func TestRealFIFODeleteUnknownEnqueued(t *testing.T) {
	f := dataLegacyFIFO(NewStore(MetaNamespaceKeyFunc))
	mustStore(t, f.Delete(dataObj("ns", "ghost", "1")))
	if diff := cmp.Diff([]string{"Deleted:ns/ghost@1"}, dataDeltaStrings(f.Items())); diff != "" {
		t.Errorf("queued (-want +got):\n%s", diff)
	}
}

// informer.md §5.3: enqueue rejects objects without a key; the transformer runs once per object
// and not on tombstones (mirror of TestDeltaFIFO_transformer).
func TestRealFIFOKeyErrorAndTransform(t *testing.T) {
	calls := 0
	f := NewRealFIFO(RealFIFOOptions{KnownObjects: NewStore(MetaNamespaceKeyFunc), Transformer: func(o any) (any, error) {
		calls++
		u := dataObj("ns", "", "")
		u.SetName(o.(interface{ GetName() string }).GetName())
		u.SetResourceVersion("T")
		return u, nil
	}})
	var ke KeyError
	if err := f.Add(dataNoMeta{"x"}); !errors.As(err, &ke) {
		t.Errorf("Add(no meta) = %v, want KeyError", err)
	}
	mustStore(t, f.Add(dataObj("ns", "a", "1")))
	mustStore(t, f.Replace([]any{dataObj("ns", "b", "2")}, "5"))
	if diff := cmp.Diff([]string{"Added:ns/a@T", "Deleted:tomb(ns/a, ns/a@T)", "Replaced:ns/b@T"}, dataDeltaStrings(f.Items())); diff != "" {
		t.Errorf("queued (-want +got):\n%s", diff)
	}
	if calls != 2 {
		t.Errorf("transformer calls = %d, want 2 (once per object, never for tombstones)", calls)
	}
}

// informer.md §5.3 non-atomic Replace (mirrors of TestDeltaFIFO_ReplaceMakesDeletions and
// TestDeltaFIFOW_ReplaceMakesDeletionsForObjectsOnlyInQueue): deletions come first — queued keys
// not listed (unless their last item is a Deleted), then known keys neither listed nor queued —
// then Replaced per listed object in list order.
func TestRealFIFOReplaceNonAtomic(t *testing.T) {
	known := NewStore(MetaNamespaceKeyFunc)
	mustStore(t, known.Add(dataObj("ns", "k1", "1")))
	mustStore(t, known.Add(dataObj("ns", "k2", "2")))
	mustStore(t, known.Add(dataObj("ns", "k3", "3")))
	f := dataLegacyFIFO(known)
	mustStore(t, f.Update(dataObj("ns", "q1", "10")))
	mustStore(t, f.Update(dataObj("ns", "k2", "11")))
	mustStore(t, f.Delete(dataObj("ns", "q2", "12")))
	mustStore(t, f.Replace([]any{dataObj("ns", "k3", "20"), dataObj("ns", "new", "21")}, "30"))
	want := []string{
		"Updated:ns/q1@10", "Updated:ns/k2@11", "Deleted:ns/q2@12",
		"Deleted:tomb(ns/q1, ns/q1@10)", "Deleted:tomb(ns/k2, ns/k2@11)", // queued, first-appearance order
		"Deleted:tomb(ns/k1, ns/k1@1)", // known only
		"Replaced:ns/k3@20", "Replaced:ns/new@21",
	}
	if diff := cmp.Diff(want, dataDeltaStrings(f.Items())); diff != "" {
		t.Errorf("queued (-want +got):\n%s", diff)
	}
}

// informer.md §5.3 atomic mode (TestRealFIFO_ReplaceAtomic, _ReplaceAtomicPop, _ResyncAtomic):
// Replace appends one ReplacedAll after earlier items, Resync one SyncAll, Bookmark one Bookmark.
func TestRealFIFOAtomic(t *testing.T) {
	f := dataAtomicFIFO()
	mustStore(t, f.Add(dataObj("ns", "a", "1")))
	mustStore(t, f.Replace([]any{dataObj("ns", "b", "2"), dataObj("ns", "c", "3")}, "5"))
	mustStore(t, f.Bookmark("6"))
	mustStore(t, f.Replace(nil, "7"))
	mustStore(t, f.Resync())
	want := []string{
		"Added:ns/a@1 init=false",
		"ReplacedAll:rv=5 [ns/b@2 ns/c@3] init=false",
		"Bookmark:rv=6 init=false",
		"ReplacedAll:rv=7 [] init=false",
		"SyncAll:nil init=false",
	}
	if diff := cmp.Diff(want, dataPopAll(t, f)); diff != "" {
		t.Errorf("popped (-want +got):\n%s", diff)
	}
	// Without EmitDeltaTypeBookmark, Bookmark is a no-op.
	g := NewRealFIFO(RealFIFOOptions{AtomicEvents: true})
	mustStore(t, g.Bookmark("1"))
	if g.Len() != 0 {
		t.Errorf("Bookmark without EmitDeltaTypeBookmark queued %d items", g.Len())
	}
}

// informer.md §5.3: atomic Replace does not check keys at enqueue time (§6.3 checks them).
func TestRealFIFOAtomicReplaceSkipsKeyCheck(t *testing.T) {
	f := dataAtomicFIFO()
	if err := f.Replace([]any{dataNoMeta{"x"}}, "1"); err != nil {
		t.Errorf("atomic Replace with a keyless object = %v, want nil", err)
	}
}

// informer.md §5.3 Resync, non-atomic (mirrors of TestDeltaFIFO_Resync, _ResyncNonExisting,
// _UpdateResyncRace): Sync(cached object) for each known key with no item anywhere in the queue.
func TestRealFIFOResyncNonAtomic(t *testing.T) {
	known := NewStore(MetaNamespaceKeyFunc)
	mustStore(t, known.Add(dataObj("ns", "a", "1")))
	mustStore(t, known.Add(dataObj("ns", "b", "2")))
	f := dataLegacyFIFO(known)
	mustStore(t, f.Update(dataObj("ns", "b", "3")))
	mustStore(t, f.Add(dataObj("ns", "c", "4")))
	mustStore(t, f.Resync())
	if diff := cmp.Diff([]string{"Updated:ns/b@3", "Added:ns/c@4", "Sync:ns/a@1"}, dataDeltaStrings(f.Items())); diff != "" {
		t.Errorf("queued (-want +got):\n%s", diff)
	}
}

// informer.md §5.1/§5.3 (TestDeltaFIFO_HasSynced mirrors): Add first syncs at once; an N-item first
// Replace needs N pops, each flagged initial; the latch moves after process returns; an empty
// atomic Replace still needs one pop (§13 rule 12); synced is sticky.
func TestRealFIFOHasSynced(t *testing.T) {
	f := dataAtomicFIFO()
	mustStore(t, f.Add(dataObj("ns", "a", "1")))
	if !f.HasSynced() {
		t.Errorf("Add first: HasSynced false")
	}

	f = dataAtomicFIFO()
	mustStore(t, f.Replace(nil, "1"))
	if f.HasSynced() {
		t.Errorf("empty atomic Replace synced before its pop")
	}
	_, _ = f.Pop(func(any, bool) error {
		if f.HasSynced() {
			t.Errorf("HasSynced true while the initial item is being processed")
		}
		return nil
	})
	if !f.HasSynced() {
		t.Errorf("not synced after popping the initial ReplacedAll")
	}

	known := NewStore(MetaNamespaceKeyFunc)
	mustStore(t, known.Add(dataObj("ns", "gone", "1")))
	g := dataLegacyFIFO(known)
	mustStore(t, g.Replace([]any{dataObj("ns", "a", "2"), dataObj("ns", "a", "3")}, "5"))
	// Tombstone + two items for one key: all three count (HasSyncedCorrectOnDeletion mirror).
	want := []string{"Deleted:tomb(ns/gone, ns/gone@1) init=true", "Replaced:ns/a@2 init=true", "Replaced:ns/a@3 init=true"}
	if diff := cmp.Diff(want, dataPopAll(t, g)); diff != "" {
		t.Errorf("popped (-want +got):\n%s", diff)
	}
	if !g.HasSynced() {
		t.Errorf("not synced after the initial population")
	}
	mustStore(t, g.Replace(nil, "9"))
	if !g.HasSynced() {
		t.Errorf("HasSynced must be sticky")
	}
}

// informer.md §5.1 / TestDeltaFIFO_PopShouldUnblockWhenClosed: ours never blocks; an empty queue
// says ErrQueueEmpty, or ErrFIFOClosed once closed; items queued before Close still pop.
func TestRealFIFOEmptyAndClosed(t *testing.T) {
	f := dataAtomicFIFO()
	noop := func(any, bool) error { return nil }
	if _, err := f.Pop(noop); err != ErrQueueEmpty {
		t.Errorf("Pop on empty = %v, want ErrQueueEmpty", err)
	}
	mustStore(t, f.Add(dataObj("ns", "a", "1")))
	f.Close()
	if _, err := f.Pop(noop); err != nil {
		t.Errorf("Pop after Close with an item = %v, want nil", err)
	}
	if _, err := f.Pop(noop); err != ErrFIFOClosed {
		t.Errorf("Pop on closed empty = %v, want ErrFIFOClosed", err)
	}
	if err := f.PopBatch(func([]Delta, bool) error { return nil }, noop); err != ErrFIFOClosed {
		t.Errorf("PopBatch on closed empty = %v, want ErrFIFOClosed", err)
	}
}

// informer.md §5.3: Pop returns process's error with the popped Deltas.
func TestRealFIFOPopReturnsProcessError(t *testing.T) {
	f := dataAtomicFIFO()
	mustStore(t, f.Add(dataObj("ns", "a", "1")))
	boom := errors.New("boom")
	got, err := f.Pop(func(any, bool) error { return boom })
	if err != boom || dataDescribe(got.(Deltas)[0].Object) != "ns/a@1" {
		t.Errorf("Pop = %v, %v", got, err)
	}
}

// informer.md §5.3 constructor invariants: contradictory options panic.
func TestRealFIFOConstructorInvariants(t *testing.T) {
	for name, opts := range map[string]RealFIFOOptions{
		"atomic with known objects":     {AtomicEvents: true, KnownObjects: NewStore(MetaNamespaceKeyFunc)},
		"non-atomic without known":      {},
		"non-atomic with bookmark emit": {KnownObjects: NewStore(MetaNamespaceKeyFunc), EmitDeltaTypeBookmark: true},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: NewRealFIFO did not panic", name)
				}
			}()
			NewRealFIFO(opts)
		}()
	}
}

// dataPopBatches pops with PopBatch until empty and returns each unit of work as a list of items.
func dataPopBatches(t *testing.T, f *RealFIFO) [][]string {
	t.Helper()
	var got [][]string
	for f.Len() > 0 {
		err := f.PopBatch(
			func(ds []Delta, init bool) error {
				got = append(got, append([]string{fmt.Sprintf("batch init=%v", init)}, dataDeltaStrings(ds)...))
				return nil
			},
			func(obj any, init bool) error {
				got = append(got, append([]string{fmt.Sprintf("single init=%v", init)}, dataDeltaStrings(obj.(Deltas))...))
				return nil
			})
		if err != nil {
			t.Fatalf("PopBatch: %v", err)
		}
	}
	return got
}

// TestRealFIFO_PopMultipleDeltaInBatch mirror (informer.md §5.3): batches never cross the
// initial-population boundary, a duplicate key ends a batch, non-batchable items go alone.
func TestRealFIFOPopBatchBoundaries(t *testing.T) {
	known := NewStore(MetaNamespaceKeyFunc)
	f := dataLegacyFIFO(known)
	mustStore(t, f.Replace([]any{dataObj("ns", "a", "1"), dataObj("ns", "b", "2")}, "5"))
	mustStore(t, f.Add(dataObj("ns", "c", "3")))
	mustStore(t, f.Update(dataObj("ns", "d", "4")))
	mustStore(t, f.Update(dataObj("ns", "c", "5")))
	want := [][]string{
		{"batch init=true", "Replaced:ns/a@1", "Replaced:ns/b@2"},
		{"batch init=false", "Added:ns/c@3", "Updated:ns/d@4"},
		{"single init=false", "Updated:ns/c@5"},
	}
	if diff := cmp.Diff(want, dataPopBatches(t, f)); diff != "" {
		t.Errorf("batches (-want +got):\n%s", diff)
	}

	g := dataAtomicFIFO()
	mustStore(t, g.Add(dataObj("ns", "a", "1")))
	mustStore(t, g.Replace([]any{dataObj("ns", "b", "2")}, "5"))
	mustStore(t, g.Add(dataObj("ns", "c", "3")))
	mustStore(t, g.Resync())
	want = [][]string{
		{"single init=false", "Added:ns/a@1"},
		{"single init=false", "ReplacedAll:rv=5 [ns/b@2]"},
		{"single init=false", "Added:ns/c@3"},
		{"single init=false", "SyncAll:nil"},
	}
	if diff := cmp.Diff(want, dataPopBatches(t, g)); diff != "" {
		t.Errorf("atomic batches (-want +got):\n%s", diff)
	}
}

// informer.md §5.3 PopBatch: duplicate keys are found from the keys the items have when they are
// popped, as client-go computes them then. A non-atomic Resync queues the cached objects
// themselves, so a handler that renames one (which it must not) after the resync changes its key
// in the queue too; the key the queue kept at enqueue must not hide that.
func TestRealFIFOPopBatchKeysAtPop(t *testing.T) {
	known := NewStore(MetaNamespaceKeyFunc)
	a, b := dataObj("ns", "a", "1"), dataObj("ns", "b", "2")
	mustStore(t, known.Add(a))
	mustStore(t, known.Add(b))
	f := dataLegacyFIFO(known)
	mustStore(t, f.Resync()) // Sync(a), Sync(b), keyed ns/a and ns/b at enqueue
	a.SetName("b")           // now both are ns/b: a batch must stop before the second
	want := [][]string{
		{"single init=true", "Sync:ns/b@1"},
		{"single init=true", "Sync:ns/b@2"},
	}
	if diff := cmp.Diff(want, dataPopBatches(t, f)); diff != "" {
		t.Errorf("batches (-want +got):\n%s", diff)
	}
}

// informer.md §5.3 batchSize: at most 1000 items per batch.
func TestRealFIFOPopBatchSize(t *testing.T) {
	f := dataAtomicFIFO()
	for i := 0; i < 2500; i++ {
		mustStore(t, f.Add(dataObj("ns", fmt.Sprint(i), "1")))
	}
	var sizes []int
	for f.Len() > 0 {
		_ = f.PopBatch(func(ds []Delta, _ bool) error { sizes = append(sizes, len(ds)); return nil },
			func(any, bool) error { sizes = append(sizes, 1); return nil })
	}
	if diff := cmp.Diff([]int{1000, 1000, 500}, sizes); diff != "" {
		t.Errorf("batch sizes (-want +got):\n%s", diff)
	}
}

// TestRealFIFO_PopBrokenItemsInBatch mirror (informer.md §5.3): an item whose key fails is
// included in the batch and ends it, or is popped alone when first. (Such items can only be
// queued by bypassing enqueue's key check: here, a key function that fails later.)
func TestRealFIFOPopBatchBrokenKey(t *testing.T) {
	broken := map[string]bool{}
	kf := func(obj any) (string, error) {
		k, err := MetaNamespaceKeyFunc(obj)
		if err == nil && broken[k] {
			return "", errors.New("broken")
		}
		return k, err
	}
	f := NewRealFIFO(RealFIFOOptions{AtomicEvents: true, KeyFunction: kf})
	for _, n := range []string{"a", "bad1", "c", "bad2", "e"} {
		mustStore(t, f.Add(dataObj("ns", n, "1")))
	}
	broken["ns/bad1"], broken["ns/bad2"] = true, true
	want := [][]string{
		{"batch init=false", "Added:ns/a@1", "Added:ns/bad1@1"},
		{"batch init=false", "Added:ns/c@1", "Added:ns/bad2@1"},
		{"single init=false", "Added:ns/e@1"},
	}
	if diff := cmp.Diff(want, dataPopBatches(t, f)); diff != "" {
		t.Errorf("batches (-want +got):\n%s", diff)
	}
	mustStore(t, f.Add(dataObj("ns", "ok", "1")))
	broken["ns/ok"] = true
	mustStore(t, f.Add(dataObj("ns", "x", "1")))
	if diff := cmp.Diff([][]string{{"single init=false", "Added:ns/ok@1"}, {"single init=false", "Added:ns/x@1"}}, dataPopBatches(t, f)); diff != "" {
		t.Errorf("broken first item (-want +got):\n%s", diff)
	}
}

// informer.md §5.3 atomic Replace: the ReplacedAll payload holds the transformed objects; a
// transform error fails the Replace and queues nothing.
func TestRealFIFOAtomicReplaceTransforms(t *testing.T) {
	fail := false
	f := NewRealFIFO(RealFIFOOptions{AtomicEvents: true, Transformer: func(o any) (any, error) {
		if fail {
			return nil, errors.New("transform failed")
		}
		return dataObj("ns", o.(interface{ GetName() string }).GetName(), "T"), nil
	}})
	mustStore(t, f.Replace([]any{dataObj("ns", "a", "1"), dataObj("ns", "b", "2")}, "3"))
	fail = true
	if err := f.Replace([]any{dataObj("ns", "c", "4")}, "5"); err == nil {
		t.Errorf("Replace with a failing transformer succeeded")
	}
	if diff := cmp.Diff([]string{"ReplacedAll:rv=3 [ns/a@T ns/b@T]"}, dataDeltaStrings(f.Items())); diff != "" {
		t.Errorf("queued (-want +got):\n%s", diff)
	}
}

// The keys a RealFIFO builds at enqueue are MetaNamespaceKeyFunc's, for every shape of object,
// and an object queued again under a key built before costs no allocation (keyTable); objects
// the table does not handle are left to the key function, and the table forgets everything
// once it holds keyTableMax keys.
func TestRealFIFOKeyTable(t *testing.T) {
	var kt keyTable
	objs := []any{dataObj("ns", "a", "1"), dataObj("", "node", "1"), dataObj("a/b", "c", "1"),
		dataMeta("ns", "m", "1"), dataObj("ns", strings.Repeat("x", 300), "1")}
	for _, u := range oddUnstructured() {
		objs = append(objs, u)
	}
	for _, obj := range objs {
		want, err := MetaNamespaceKeyFunc(obj)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if got, ok := kt.keyOf(obj); !ok || got != want {
				t.Errorf("keyOf(%s) = %q, %v; want %q", dataDescribe(obj), got, ok, want)
			}
		}
	}
	a := dataObj("ns", "a", "2")
	if n := testing.AllocsPerRun(100, func() { kt.keyOf(a) }); n != 0 {
		t.Errorf("a key built before: %v allocations, want 0", n)
	}
	for _, obj := range []any{ExplicitKey("ns/x"), DeletedFinalStateUnknown{Key: "ns/x"}, Deltas{{Type: Added, Object: a}},
		Delta{Type: Added, Object: a}, dataNoMeta{id: "x"}, nil, (*unstructured.Unstructured)(nil)} {
		if _, ok := kt.keyOf(obj); ok {
			t.Errorf("keyOf(%#v) answered; the key function must", obj)
		}
	}
	for i := range keyTableMax {
		kt.keyOf(dataObj("ns", fmt.Sprint("p", i), "1"))
	}
	if len(kt.keys) > keyTableMax {
		t.Errorf("the table holds %d keys, more than keyTableMax", len(kt.keys))
	}
}
