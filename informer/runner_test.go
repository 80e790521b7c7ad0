package informer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// Tests of the non-shared informer, [Runner] (informer.md §1.7, §12.2 controller_test.go).

// infRunnerStep builds a Runner over lw on a fake clock and takes its step driver; the handler
// is rec. It reuses the infStep harness, whose listener loop simply finds no listeners.
func infRunnerStep(t *testing.T, rec ResourceEventHandler, opts InformerOptions) (*infStep, Store, *Runner) {
	e := &infStep{t: t, lw: newInfLW(), clock: clocktesting.NewFakeClock(infT0)}
	opts.ListerWatcher = e.lw
	opts.ObjectType = &metav1.PartialObjectMetadata{}
	opts.Handler = rec
	opts.Clock = e.clock
	opts.Rand = rand.New(rand.NewPCG(1, 2))
	store, r := NewInformerWithOptions(opts)
	st, err := r.Steps()
	if err != nil {
		t.Fatal(err)
	}
	e.st = st
	e.inf = r.s
	return e, store, r
}

// informer.md §1.7: a Runner calls its handler inside the pop (no listeners, nothing to
// deliver), and with no per-handler filter and no ShouldResync every resync tick gives OnUpdate
// for every cached object, in every queue mode. Step driver.
func TestRunnerResyncsEveryTickWithoutFilter(t *testing.T) {
	for _, mode := range []QueueMode{QueueRealFIFO, QueueRealFIFONonAtomic, QueueDeltaFIFO} {
		t.Run(mode.String(), func(t *testing.T) {
			rec := &infRec{}
			e, store, r := infRunnerStep(t, rec, InformerOptions{ResyncPeriod: time.Second, QueueMode: mode})
			e.lw.set("p1")
			e.lw.set("p2")
			e.st.Start()
			for e.serveOne() {
			}
			if e.st.QueueLen() == 0 && mode == QueueRealFIFO {
				t.Fatal("nothing queued after the LIST")
			}
			for e.st.QueueLen() > 0 {
				_ = e.st.ProcessNext()
			}
			if diff := cmp.Diff(rec.take(), []string{"add ns/p1@1 init", "add ns/p2@2 init"}); diff != "" {
				t.Errorf("initial list, handled inside the pop (-got +want):\n%s", diff)
			}
			if !r.HasSynced() || !IsDone(r.HasSyncedChecker()) || r.LastSyncResourceVersion() != "2" {
				t.Errorf("synced %v rv %q", r.HasSynced(), r.LastSyncResourceVersion())
			}
			if got := len(e.st.Listeners()); got != 0 {
				t.Errorf("%d listeners, want 0", got)
			}
			e.advance(3 * time.Second)
			sync := []string{"update ns/p1@1->ns/p1@1", "update ns/p2@2->ns/p2@2"}
			want := append(append(append([]string{}, sync...), sync...), sync...)
			if diff := cmp.Diff(rec.take(), want); diff != "" {
				t.Errorf("three ticks (-got +want):\n%s", diff)
			}
			if got := len(store.ListKeys()); got != 2 {
				t.Errorf("store has %d keys, want 2", got)
			}
			if _, ok := store.(Indexer); !ok {
				t.Error("the store is not an Indexer")
			}
		})
	}
}

// informer.md §12.2 TestPanicPropagated, §1.7: a panic in a Runner's handler propagates out of
// Run (goroutine driver), with every goroutine Run started gone (goleak in TestMain), and out of
// ProcessNext (step driver).
func TestPanicPropagated(t *testing.T) {
	lw := newInfLW()
	lw.set("p1")
	_, r := NewInformerWithOptions(InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &metav1.PartialObjectMetadata{},
		Handler:       ResourceEventHandlerFuncs{AddFunc: func(any) { panic("oops") }},
		Clock:         clocktesting.NewFakeClock(infT0),
	})
	recovered := make(chan any, 1)
	go func() {
		defer func() { recovered <- recover() }()
		r.Run(context.Background())
	}()
	select {
	case got := <-recovered:
		if got != "oops" {
			t.Errorf("Run panicked with %v, want oops", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not panic")
	}

	e, _, _ := infRunnerStep(t, ResourceEventHandlerFuncs{AddFunc: func(any) { panic("oops") }}, InformerOptions{})
	e.lw.set("p1")
	e.st.Start()
	for e.serveOne() {
	}
	func() {
		defer func() {
			if got := recover(); got != "oops" {
				t.Errorf("ProcessNext panicked with %v, want oops", got)
			}
		}()
		_ = e.st.ProcessNext()
	}()
}

// informer.md §12.2 TestUpdate, §1.7: each object is created in state FROM; the handler moves it
// to TO on its add and deletes it on the FROM→TO update. Whatever the resyncs interleave, the
// handler sees only the transitions FROM→TO, FROM→FROM and TO→TO (a resync shows identical old and
// new), and every handler-driven delete arrives. The state is the RV's rank: the create is
// FROM, the first update TO. Step driver, resync every second.
func TestUpdate(t *testing.T) {
	const n = 20
	var e *infStep
	created := map[string]int{} // name → RV of its FROM state
	deletes := 0
	var bad []string
	state := func(obj any) string {
		o := obj.(*metav1.PartialObjectMetadata)
		rv, _ := strconv.Atoi(o.ResourceVersion)
		if rv == created[o.Name] {
			return "FROM"
		}
		return "TO"
	}
	rec := ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			e.lw.set(obj.(*metav1.PartialObjectMetadata).Name)
		},
		UpdateFunc: func(oldObj, newObj any) {
			from, to := state(oldObj), state(newObj)
			switch {
			case from == "FROM" && to == "TO":
				e.lw.del(newObj.(*metav1.PartialObjectMetadata).Name)
			case from == to && infDescribe(oldObj) == infDescribe(newObj):
			default:
				bad = append(bad, infDescribe(oldObj)+"->"+infDescribe(newObj))
			}
		},
		DeleteFunc: func(any) { deletes++ },
	}
	e, store, _ := infRunnerStep(t, rec, InformerOptions{ResyncPeriod: time.Second})
	e.st.Start()
	e.quiesce()
	for i := range n {
		name := fmt.Sprintf("p%02d", i)
		created[name] = e.lw.set(name)
		if i%3 == 0 {
			e.advance(time.Second) // resyncs interleave with the transitions
		}
		e.quiesce()
	}
	e.advance(2 * time.Second)
	if len(bad) > 0 {
		t.Errorf("transitions other than FROM→TO, FROM→FROM, TO→TO: %v", bad)
	}
	if deletes != n {
		t.Errorf("%d deletes arrived, want %d", deletes, n)
	}
	if keys := store.ListKeys(); len(keys) != 0 {
		t.Errorf("store not empty: %v", keys)
	}
}

// informer.md §12.2 TestHammerController, §1.7: random concurrent creates, updates and deletes
// through a Runner under the goroutine driver, with resyncs firing all along, cause no data race
// (run with -race) and no deadlock, and once the writers stop, the store and the handler's own
// view both equal the server's state. Seeds are fixed so a failure replays its operations.
func TestHammerController(t *testing.T) {
	lw := newInfLW()
	clk := clocktesting.NewFakeClock(infT0)
	var mu sync.Mutex
	view := map[string]string{} // key → "ns/name@rv" the handler last saw
	record := func(obj any) {
		mu.Lock()
		defer mu.Unlock()
		o := obj.(*metav1.PartialObjectMetadata)
		view[o.Namespace+"/"+o.Name] = infDescribe(o)
	}
	store, r := NewInformerWithOptions(InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &metav1.PartialObjectMetadata{},
		ResyncPeriod:  100 * time.Millisecond,
		Clock:         clk,
		Handler: ResourceEventHandlerFuncs{
			AddFunc:    record,
			UpdateFunc: func(_, newObj any) { record(newObj) },
			DeleteFunc: func(obj any) {
				if tomb, ok := obj.(DeletedFinalStateUnknown); ok {
					obj = tomb.Obj
				}
				o := obj.(*metav1.PartialObjectMetadata)
				mu.Lock()
				delete(view, o.Namespace+"/"+o.Name)
				mu.Unlock()
			},
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx)
	}()
	infEventually(t, "sync", r.HasSynced)
	var writers sync.WaitGroup
	for w := range 8 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			rnd := rand.New(rand.NewPCG(uint64(w), 7))
			for range 100 {
				name := fmt.Sprintf("w%d-%d", w, rnd.IntN(10))
				if rnd.IntN(3) == 0 {
					lw.mu.Lock()
					_, exists := lw.objs[name]
					lw.mu.Unlock()
					if exists {
						lw.del(name)
						continue
					}
				}
				lw.set(name)
			}
		}()
	}
	ticking := make(chan struct{})
	go func() {
		defer close(ticking)
		for range 50 {
			clk.Step(100 * time.Millisecond)
			time.Sleep(100 * time.Microsecond)
		}
	}()
	writers.Wait()
	<-ticking
	want := map[string]string{}
	lw.mu.Lock()
	for name, o := range lw.objs {
		want["ns/"+name] = infDescribe(o)
	}
	lw.mu.Unlock()
	infEventually(t, "convergence", func() bool {
		got := map[string]string{}
		for _, obj := range store.List() {
			key, _ := MetaNamespaceKeyFunc(obj)
			got[key] = infDescribe(obj)
		}
		mu.Lock()
		defer mu.Unlock()
		return cmp.Equal(got, want) && cmp.Equal(view, want)
	})
	cancel()
	<-done
}
