package informer

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// informer.md §12.1 TestListenerResyncPeriods: informer 1s, listeners 0/2s/3s: all get the
// initial adds; at 2s only the 2s listener resyncs, at 3s only the 3s one; the 0 one never.
func TestListenerResyncPeriods(t *testing.T) {
	e := newInfStep(t, SharedIndexInformerOptions{ResyncPeriod: time.Second})
	e.lw.set("p1")
	h0, _ := e.handler(infDur(0))
	h2, _ := e.handler(infDur(2 * time.Second))
	h3, _ := e.handler(infDur(3 * time.Second))
	e.st.Start()
	e.quiesce()
	for i, h := range []*infRec{h0, h2, h3} {
		if diff := cmp.Diff(h.take(), []string{"add ns/p1@1 init"}); diff != "" {
			t.Errorf("h%d initial (-got +want):\n%s", i, diff)
		}
	}
	sync := []string{"update ns/p1@1->ns/p1@1"}
	for _, step := range []struct {
		at         string
		h0, h2, h3 []string
	}{
		{"1s", nil, nil, nil},
		{"2s", nil, sync, nil},
		{"3s", nil, nil, sync},
		{"4s", nil, sync, nil},
		{"5s", nil, nil, nil},
		{"6s", nil, sync, sync},
	} {
		e.advance(time.Second)
		for _, c := range []struct {
			name string
			h    *infRec
			want []string
		}{{"h0", h0, step.h0}, {"h2", h2, step.h2}, {"h3", h3, step.h3}} {
			if diff := cmp.Diff(c.h.take(), c.want); diff != "" {
				t.Errorf("at %s %s (-got +want):\n%s", step.at, c.name, diff)
			}
		}
	}
}

// informer.md §2.2, §12.1 TestResyncCheckPeriod: pre-start registrations lower the check period
// (12h→1m→55s→5s); existing listeners keep their requested periods; 0 stays 0; a post-start
// registration cannot lower it.
func TestResyncCheckPeriod(t *testing.T) {
	e := newInfStep(t, SharedIndexInformerOptions{ResyncPeriod: 12 * time.Hour})
	s := e.inf.(*sharedIndexInformer)
	periods := func() []time.Duration {
		var out []time.Duration
		for _, l := range e.st.Listeners() {
			out = append(out, l.ResyncPeriod)
		}
		return out
	}
	e.handler(infDur(0))
	if got := s.resyncCheckPeriod; got != 12*time.Hour {
		t.Errorf("check %v, want 12h", got)
	}
	e.handler(infDur(time.Minute))
	e.handler(infDur(55 * time.Second))
	if got := s.resyncCheckPeriod; got != 55*time.Second {
		t.Errorf("check %v, want 55s", got)
	}
	if diff := cmp.Diff(periods(), []time.Duration{0, time.Minute, 55 * time.Second}); diff != "" {
		t.Errorf("periods (-got +want):\n%s", diff)
	}
	e.handler(infDur(5 * time.Second))
	if diff := cmp.Diff(periods(), []time.Duration{0, time.Minute, 55 * time.Second, 5 * time.Second}); diff != "" {
		t.Errorf("periods (-got +want):\n%s", diff)
	}
	e.st.Start()
	e.quiesce()
	e.handler(infDur(2 * time.Second)) // post-start: raised to the check period
	e.handler(infDur(500 * time.Millisecond))
	if diff := cmp.Diff(periods()[4:], []time.Duration{5 * time.Second, 5 * time.Second}); diff != "" {
		t.Errorf("post-start periods (-got +want):\n%s", diff)
	}
}

// informer.md §2.2: an informer with ResyncPeriod 0 never resyncs, whatever handlers ask; a
// handler period under 1s is raised to 1s, the check period is not clamped.
func TestResyncPeriodZeroAndMinimum(t *testing.T) {
	e := newInfStep(t, SharedIndexInformerOptions{})
	e.handler(infDur(time.Minute))
	if got := e.st.Listeners()[0].ResyncPeriod; got != 0 {
		t.Errorf("period %v under a never-resyncing informer, want 0", got)
	}
	e2 := newInfStep(t, SharedIndexInformerOptions{ResyncPeriod: 300 * time.Millisecond})
	e2.handler(nil)
	if got, check := e2.st.Listeners()[0].ResyncPeriod, e2.inf.(*sharedIndexInformer).resyncCheckPeriod; got != time.Second || check != 300*time.Millisecond {
		t.Errorf("period %v check %v, want 1s and 300ms", got, check)
	}
}

// informer.md §12.1 TestSharedInformerWatchDisruption, §2.5: after one resync tick, a
// no-resync listener's flag is false, so it does not see unchanged objects on relist; a
// resync listener does.
func TestSharedInformerWatchDisruption(t *testing.T) {
	e := newInfStep(t, SharedIndexInformerOptions{ResyncPeriod: 10 * time.Second})
	e.lw.set("p1")
	e.lw.set("p2")
	hNo, _ := e.handler(infDur(0))
	hYes, _ := e.handler(nil)
	e.st.Start()
	e.quiesce()
	e.advance(10 * time.Second) // the tick: hNo flag false, hYes flag true
	hNo.take()
	hYes.take()
	e.lw.expire()
	e.lw.set("p2") // changed while the watch was down
	e.quiesce()
	e.advance(2 * time.Second)
	if diff := cmp.Diff(hNo.take(), []string{"update ns/p2@2->ns/p2@3"}); diff != "" {
		t.Errorf("no-resync listener (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(hYes.take(), []string{"update ns/p1@1->ns/p1@1", "update ns/p2@2->ns/p2@3"}); diff != "" {
		t.Errorf("resync listener (-got +want):\n%s", diff)
	}
}

// informer.md §12.1 TestAddWhileActive, TestRemoveWhileActive, TestSharedInformerMultipleRegistration,
// TestRemovingRemovedSharedInformer, TestSharedInformerRemoveForeignHandler.
func TestAddRemoveWhileActive(t *testing.T) {
	e, hs, regs := infT1(t, SharedIndexInformerOptions{})
	hs[0].take()
	dup := &infRec{}
	d1, _ := e.inf.AddEventHandler(dup)
	d2, _ := e.inf.AddEventHandler(dup)
	e.quiesce()
	if got := len(dup.take()); got != 4 {
		t.Errorf("a handler registered twice saw %d snapshot adds, want 4 (two registrations)", got)
	}
	if err := e.inf.RemoveEventHandler(regs[0]); err != nil {
		t.Fatal(err)
	}
	if err := e.inf.RemoveEventHandler(regs[0]); err != nil {
		t.Errorf("removing a removed handle: %v", err)
	}
	other := newInfStep(t, SharedIndexInformerOptions{})
	_, foreign := other.handler(nil)
	if err := e.inf.RemoveEventHandler(foreign); err != nil {
		t.Errorf("removing a foreign handle: %v", err)
	}
	if err := e.inf.RemoveEventHandler(nil); err == nil || !strings.HasPrefix(err.Error(), "invalid key type") {
		t.Errorf("removing a nil handle: %v", err)
	}
	if err := e.inf.RemoveEventHandler(d1); err != nil {
		t.Fatal(err)
	}
	e.lw.set("p3")
	e.quiesce()
	if got := hs[0].take(); len(got) != 0 {
		t.Errorf("removed handler saw %v", got)
	}
	if diff := cmp.Diff(dup.take(), []string{"add ns/p3@3"}); diff != "" {
		t.Errorf("remaining duplicate registration (-got +want):\n%s", diff)
	}
	if !d2.HasSynced() {
		t.Error("remaining registration not synced")
	}
	if got := len(e.st.Listeners()); got != 2 {
		t.Errorf("%d listeners, want 2", got)
	}
}

// informer.md §1.5, §12.1 TestSharedInformerErrorHandling, TestSharedInformerTransformer:
// SetTransform/SetWatchErrorHandler only before start; the handler sees LIST failures; handlers
// receive transformed objects.
func TestSetTransformAndWatchErrorHandler(t *testing.T) {
	e := newInfStep(t, SharedIndexInformerOptions{})
	var seen []string
	if err := e.inf.SetWatchErrorHandler(func(r *Reflector, err error) { seen = append(seen, err.Error()) }); err != nil {
		t.Fatal(err)
	}
	if err := e.inf.SetTransform(func(obj any) (any, error) {
		o := obj.(*metav1.PartialObjectMetadata).DeepCopy()
		o.Name = strings.ToUpper(o.Name)
		return o, nil
	}); err != nil {
		t.Fatal(err)
	}
	h, _ := e.handler(nil)
	e.lw.set("p1")
	e.lw.failNextList(apierrors.NewServiceUnavailable("down"))
	e.st.Start()
	e.quiesce()
	if diff := cmp.Diff(seen, []string{"failed to list *v1.PartialObjectMetadata: down"}); diff != "" {
		t.Errorf("watch error handler (-got +want):\n%s", diff)
	}
	e.advance(2 * time.Second)
	if diff := cmp.Diff(h.take(), []string{"add ns/P1@1 init"}); diff != "" {
		t.Errorf("transformed adds (-got +want):\n%s", diff)
	}
	for _, err := range []error{e.inf.SetTransform(nil), e.inf.SetWatchErrorHandler(nil)} {
		if err == nil || err.Error() != "informer has already started" {
			t.Errorf("after start: %v, want \"informer has already started\"", err)
		}
	}
}

// informer.md §1.5, §12.1 TestIndexer: indexers added before and after start both work; a
// later index is populated at once; a name conflict is an error.
func TestIndexer(t *testing.T) {
	e := newInfStep(t, SharedIndexInformerOptions{Indexers: Indexers{NamespaceIndex: MetaNamespaceIndexFunc}})
	byName := func(obj any) ([]string, error) { return []string{obj.(*metav1.PartialObjectMetadata).Name}, nil }
	if err := e.inf.AddIndexers(Indexers{"first": byName}); err != nil {
		t.Fatal(err)
	}
	e.lw.set("p1")
	e.lw.set("p2")
	e.st.Start()
	e.quiesce()
	if err := e.inf.AddIndexers(Indexers{"later": byName}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(e.inf.GetIndexer().ListIndexFuncValues("later"), []string{"p1", "p2"}); diff != "" {
		t.Errorf("later index (-got +want):\n%s", diff)
	}
	if got, _ := e.inf.GetIndexer().ByIndex("first", "p2"); len(got) != 1 {
		t.Errorf("first index: %d objects, want 1", len(got))
	}
	if err := e.inf.AddIndexers(Indexers{"first": byName}); err == nil {
		t.Error("conflicting index name accepted")
	}
	if e.inf.GetStore() != Store(e.inf.GetIndexer()) {
		t.Error("GetStore and GetIndexer differ")
	}
}

// informer.md §1.1, §1.4: the initial state before start.
func TestStateBeforeStart(t *testing.T) {
	inf := NewSharedInformer(newInfLW(), &metav1.PartialObjectMetadata{}, 0)
	if inf.HasSynced() || inf.IsStopped() || inf.LastSyncResourceVersion() != "" {
		t.Errorf("initial state: synced %v stopped %v rv %q", inf.HasSynced(), inf.IsStopped(), inf.LastSyncResourceVersion())
	}
	if _, err := Steps(infForeign{inf}); err == nil {
		t.Error("Steps accepted a foreign implementation")
	}
}

type infForeign struct{ SharedInformer }

func (infForeign) AddIndexers(Indexers) error { return nil }
func (infForeign) GetIndexer() Indexer        { return nil }

// informer.md §12.1 TestEventPanics, §13 rule 7: a panic in a handler propagates out of
// DeliverNext; a panicking initial add keeps that registration unsynced forever, others sync.
func TestEventPanics(t *testing.T) {
	e := newInfStep(t, SharedIndexInformerOptions{})
	e.lw.set("p1")
	boom := errors.New("boom")
	bad, _ := e.inf.AddEventHandler(ResourceEventHandlerFuncs{AddFunc: func(any) { panic(boom) }})
	good, _ := e.inf.AddEventHandler(&infRec{})
	e.st.Start()
	for e.serveOne() {
	}
	_ = e.st.ProcessNext()
	func() {
		defer func() {
			if r := recover(); r != boom {
				t.Errorf("recovered %v, want boom", r)
			}
		}()
		e.st.DeliverNext(bad)
	}()
	e.quiesce()
	if bad.HasSynced() || !good.HasSynced() {
		t.Errorf("synced: panicking %v (want false), good %v (want true)", bad.HasSynced(), good.HasSynced())
	}
}

// informer.md §5.2, §0.2: the legacy DeltaFIFO and the non-atomic RealFIFO give handlers the
// same T1/T2/T5 story as the default queue (tombstone order aside).
func TestQueueModesAgree(t *testing.T) {
	run := func(mode QueueMode, batch bool) []string {
		e, hs, _ := infT1(t, SharedIndexInformerOptions{QueueMode: mode, DisableBatchPop: !batch})
		infT2(e)
		e.lw.expire()
		e.lw.del("p4")
		e.lw.set("p9")
		e.quiesce()
		e.advance(2 * time.Second)
		return hs[0].take()
	}
	want := run(QueueRealFIFO, true)
	for _, c := range []struct {
		mode  QueueMode
		batch bool
	}{{QueueRealFIFO, false}, {QueueRealFIFONonAtomic, true}, {QueueRealFIFONonAtomic, false}, {QueueDeltaFIFO, false}} {
		got, w := run(c.mode, c.batch), want
		if c.mode == QueueDeltaFIFO {
			// §5.2: DeltaFIFO appends relist tombstones after the replacements.
			got, w = slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(w))
		}
		if diff := cmp.Diff(got, w); diff != "" {
			t.Errorf("%v batch=%v differs from RealFIFO (-got +want):\n%s", c.mode, c.batch, diff)
		}
	}
}

// informer.md §16 "Empty initial LIST", §5.1: a DeltaFIFO (or non-atomic RealFIFO) whose first
// Replace is empty is synced at once, with nothing to pop, so the informer and a handler
// registered before start sync without waiting for a watch event. Method: start over an empty
// server, quiesce (no event ever arrives), check both HasSynced.
func TestEmptyInitialListSyncsWithoutPop(t *testing.T) {
	for _, mode := range []QueueMode{QueueDeltaFIFO, QueueRealFIFONonAtomic, QueueRealFIFO} {
		t.Run(mode.String(), func(t *testing.T) {
			e := newInfStep(t, SharedIndexInformerOptions{QueueMode: mode})
			_, reg := e.handler(nil)
			e.st.Start()
			e.quiesce()
			if got, want := e.inf.HasSynced(), true; got != want {
				t.Errorf("informer HasSynced = %v, want %v", got, want)
			}
			if got, want := reg.HasSynced(), true; got != want {
				t.Errorf("registration HasSynced = %v, want %v", got, want)
			}
		})
	}
}

// informer.md §5.2, §1.4: DeltaFIFO's Pop counts the last initial item as popped BEFORE calling
// process, so the informer's synced latch closes before that item reaches the cache; RealFIFO's
// only after processing returns (§5.3). Method: two objects, one handler, quiesce, and compare
// the trace position of "synced" with the cache write of the last initial object.
func TestInformerSyncedTimingByQueue(t *testing.T) {
	for _, c := range []struct {
		mode         QueueMode
		syncedBefore bool
	}{
		{QueueDeltaFIFO, true},
		{QueueRealFIFONonAtomic, false},
		{QueueRealFIFO, false},
	} {
		t.Run(c.mode.String(), func(t *testing.T) {
			e := newInfStep(t, SharedIndexInformerOptions{QueueMode: c.mode, DisableBatchPop: true})
			e.lw.set("p1")
			e.lw.set("p2")
			e.handler(nil)
			e.st.Start()
			e.quiesce()
			trace := e.takeTrace()
			synced := slices.Index(trace, "synced")
			last := slices.IndexFunc(trace, func(l string) bool {
				return l == "cache-add ns/p2@2" || strings.HasPrefix(l, "cache-replace")
			})
			if synced < 0 || last < 0 {
				t.Fatalf("trace lacks synced or the last cache write:\n%s", strings.Join(trace, "\n"))
			}
			if got := synced < last; got != c.syncedBefore {
				t.Errorf("synced before the last initial cache write = %v, want %v; trace:\n%s", got, c.syncedBefore, strings.Join(trace, "\n"))
			}
		})
	}
}

// informer.md §16 "Delete of an object not in the cache", §5.2, §5.3: a watch DELETED for a key
// the informer never cached reaches OnDelete under RealFIFO (both modes, batch pop on) and is
// dropped at enqueue time under DeltaFIFO. Method: sync on one object, inject the DELETED,
// quiesce, compare what the handler saw.
func TestWatchDeleteOfUnknownKeyByQueue(t *testing.T) {
	for _, c := range []struct {
		mode QueueMode
		want []string
	}{
		{QueueRealFIFO, []string{"delete ns/ghost@9"}},
		{QueueRealFIFONonAtomic, []string{"delete ns/ghost@9"}},
		{QueueDeltaFIFO, nil},
	} {
		t.Run(c.mode.String(), func(t *testing.T) {
			e := newInfStep(t, SharedIndexInformerOptions{QueueMode: c.mode})
			e.lw.set("p1")
			rec, _ := e.handler(nil)
			e.st.Start()
			e.quiesce()
			rec.take()
			e.lw.inject(watch.Event{Type: watch.Deleted, Object: infObj("ghost", 9)})
			e.quiesce()
			if diff := cmp.Diff(rec.take(), c.want); diff != "" {
				t.Errorf("handler calls (-got +want):\n%s", diff)
			}
		})
	}
}
