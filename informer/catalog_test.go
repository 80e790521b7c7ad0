package informer

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Tests for the §12.1, §12.2 and §12.7 bullets of informer.md that no other test file covered.
// Each test names the client-go test it restates and the rule it checks. The goroutine-driver
// tests exist for their data races: run them with -race.

// informer.md §12.1 TestListenerResyncPeriodsDelayed, §4.2: distribution must not wait for the
// listeners to run. Method: the TestListenerResyncPeriods set-up, but no handler is called until
// six resync ticks have been processed; then every buffer is drained at once. Each listener still
// gets the initial add and exactly the resyncs it was due for, in order.
func TestListenerResyncPeriodsDelayed(t *testing.T) {
	e := newInfStep(t, SharedIndexInformerOptions{ResyncPeriod: time.Second})
	e.lw.set("p1")
	h0, _ := e.handler(infDur(0))
	h2, _ := e.handler(infDur(2 * time.Second))
	h3, _ := e.handler(infDur(3 * time.Second))
	e.st.Start()
	// Reflector and queue only: no DeliverNext.
	pump := func() {
		for e.serveOne() || e.st.QueueLen() > 0 {
			if e.st.QueueLen() > 0 {
				_ = e.st.ProcessNext()
			}
		}
	}
	pump()
	for range 6 {
		at := e.clock.Now().Add(time.Second)
		for dl, ok := e.st.NextDeadline(); ok && !dl.After(at); dl, ok = e.st.NextDeadline() {
			e.clock.SetTime(dl)
			e.st.Tick()
			pump()
		}
		e.clock.SetTime(at)
	}
	for _, h := range []*infRec{h0, h2, h3} {
		if got := h.len(); got != 0 {
			t.Fatalf("a handler ran before delivery was allowed: %d calls", got)
		}
	}
	e.quiesce()
	add := "add ns/p1@1 init"
	sync := "update ns/p1@1->ns/p1@1"
	for _, c := range []struct {
		name string
		h    *infRec
		want []string
	}{
		{"h0", h0, []string{add}},
		{"h2", h2, []string{add, sync, sync, sync}}, // 2s, 4s, 6s
		{"h3", h3, []string{add, sync, sync}},       // 3s, 6s
	} {
		if diff := cmp.Diff(c.h.take(), c.want); diff != "" {
			t.Errorf("%s (-got +want):\n%s", c.name, diff)
		}
	}
}

// informer.md §12.1 TestSharedInformerInitializationRace and TestSharedInformerStartRace, §1.5,
// §1.6: AddEventHandler, SetTransform and SetWatchErrorHandler racing with Run must be free of
// data races and deadlocks. Method: start all four at once under the goroutine driver; a setter
// either wins (nil) or loses with "informer has already started"; then stop. Run with -race.
func TestSharedInformerInitializationRace(t *testing.T) {
	for range 20 {
		lw := newInfLW()
		lw.set("p1")
		e := newInfRunEnv(lw, SharedIndexInformerOptions{ResyncPeriod: time.Second})
		var wg sync.WaitGroup
		errs := make(chan error, 3)
		wg.Add(3)
		go func() {
			defer wg.Done()
			if _, err := e.inf.AddEventHandler(&infRec{}); err != nil {
				errs <- err
			}
		}()
		go func() {
			defer wg.Done()
			errs <- e.inf.SetTransform(func(obj any) (any, error) { return obj, nil })
		}()
		go func() {
			defer wg.Done()
			errs <- e.inf.SetWatchErrorHandler(func(*Reflector, error) {})
		}()
		e.start()
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil && err.Error() != "informer has already started" {
				t.Errorf("racing set-up: %v", err)
			}
		}
		if e.inf.IsStopped() {
			t.Error("IsStopped during Run")
		}
		e.stop()
	}
}

// informer.md §12.1 TestSharedInformerHandlerAbuse, §1.2, §1.3: many goroutines add and remove
// handlers while events flow and while the informer stops. No data race, no deadlock, and the
// only AddEventHandler error is client-go's "stopped already" one, only once the informer has
// stopped. Method: 16 churners, a writer, cancel midway. Run with -race.
func TestSharedInformerHandlerAbuse(t *testing.T) {
	lw := newInfLW()
	e := newInfRunEnv(lw, SharedIndexInformerOptions{})
	e.start()
	infEventually(t, "sync", e.inf.HasSynced)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				reg, err := e.inf.AddEventHandler(&infRec{})
				if err != nil {
					if !strings.HasSuffix(err.Error(), "was not added to shared informer because it has stopped already") {
						t.Errorf("AddEventHandler: %v", err)
					}
					if !e.inf.IsStopped() {
						t.Error("AddEventHandler failed before the informer stopped")
					}
					return
				}
				if err := e.inf.RemoveEventHandler(reg); err != nil {
					t.Errorf("RemoveEventHandler: %v", err)
				}
			}
		}()
	}
	for i := range 200 {
		lw.set("p" + string(rune('a'+i%7)))
	}
	e.stop()
	close(stop)
	wg.Wait()
}

// informer.md §12.1 TestRemoveEventHandler_AsynchronousPanic, §1.3, §16 "RemoveEventHandler while a
// callback runs": removal does not wait for the callback in progress. Method: a handler blocks
// inside OnAdd under the goroutine driver; RemoveEventHandler must return while it is still
// blocked; the callback then completes and nothing more is delivered. (client-go's test also
// panics in the callback; ours does not recover panics under Run, see doc.go.)
func TestRemoveEventHandlerAsynchronous(t *testing.T) {
	lw := newInfLW()
	lw.set("p1")
	e := newInfRunEnv(lw, SharedIndexInformerOptions{})
	entered, release := make(chan struct{}), make(chan struct{})
	var calls sync.WaitGroup
	calls.Add(1)
	var mu sync.Mutex
	var seen []string
	reg, _ := e.inf.AddEventHandler(ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		mu.Lock()
		seen = append(seen, infDescribe(obj))
		first := len(seen) == 1
		mu.Unlock()
		if first {
			close(entered)
			<-release
			calls.Done()
		}
	}})
	e.start()
	defer e.stop()
	<-entered
	if err := e.inf.RemoveEventHandler(reg); err != nil {
		t.Fatal(err)
	}
	lw.set("p2")
	close(release)
	calls.Wait()
	infEventually(t, "p2 processed", func() bool {
		_, ok, _ := e.inf.GetStore().GetByKey("ns/p2")
		return ok
	})
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff(seen, []string{"ns/p1@1"}); diff != "" {
		t.Errorf("removed handler saw (-got +want):\n%s", diff)
	}
}

// informer.md §12.2 TestTransformingInformer, §1.5: the transform runs before the cache and the
// handlers, and a watch delete notifies with the transformed object too (the queue transforms
// Delete objects). Method: a transform that upper-cases names and drops the RV-less annotations;
// add, update, delete; compare handler calls and cache keys.
func TestTransformingInformerDeletes(t *testing.T) {
	for _, mode := range []QueueMode{QueueRealFIFO, QueueRealFIFONonAtomic, QueueDeltaFIFO} {
		t.Run(mode.String(), func(t *testing.T) {
			e := newInfStep(t, SharedIndexInformerOptions{QueueMode: mode})
			if err := e.inf.SetTransform(func(obj any) (any, error) {
				o := obj.(*metav1.PartialObjectMetadata).DeepCopy()
				o.Name = strings.ToUpper(o.Name)
				return o, nil
			}); err != nil {
				t.Fatal(err)
			}
			rec, _ := e.handler(nil)
			e.lw.set("p1")
			e.st.Start()
			e.quiesce()
			e.lw.set("p1")
			e.lw.del("p1")
			e.quiesce()
			want := []string{"add ns/P1@1 init", "update ns/P1@1->ns/P1@2", "delete ns/P1@3"}
			if diff := cmp.Diff(rec.take(), want); diff != "" {
				t.Errorf("handler (-got +want):\n%s", diff)
			}
			if keys := e.inf.GetStore().ListKeys(); len(keys) != 0 {
				t.Errorf("cache keys after delete: %v", keys)
			}
		})
	}
}

// informer.md §12.2 TestTransformingInformerRace, §1.5: each object is transformed exactly once on
// its way in, even with resyncs every second (resyncs reuse cached, already transformed objects),
// and a cache reader only ever sees transformed objects. Method: a counting transform that marks
// its output; 20 objects; 5 resync ticks under the step driver.
func TestTransformingInformerOnce(t *testing.T) {
	for _, mode := range []QueueMode{QueueRealFIFO, QueueRealFIFONonAtomic, QueueDeltaFIFO} {
		t.Run(mode.String(), func(t *testing.T) {
			e := newInfStep(t, SharedIndexInformerOptions{QueueMode: mode, ResyncPeriod: time.Second})
			calls := map[string]int{}
			if err := e.inf.SetTransform(func(obj any) (any, error) {
				o := obj.(*metav1.PartialObjectMetadata)
				if o.Annotations["transformed"] == "yes" {
					t.Errorf("%s transformed twice", o.Name)
				}
				calls[o.Name]++
				o = o.DeepCopy()
				o.Annotations = map[string]string{"transformed": "yes"}
				return o, nil
			}); err != nil {
				t.Fatal(err)
			}
			rec, _ := e.handler(nil)
			for i := range 20 {
				e.lw.set("p" + string(rune('a'+i)))
			}
			e.st.Start()
			e.quiesce()
			e.advance(5 * time.Second)
			for name, n := range calls {
				if n != 1 {
					t.Errorf("%s transformed %d times, want 1", name, n)
				}
			}
			if got := len(calls); got != 20 {
				t.Errorf("%d objects transformed, want 20", got)
			}
			for _, obj := range e.inf.GetStore().List() {
				if obj.(*metav1.PartialObjectMetadata).Annotations["transformed"] != "yes" {
					t.Errorf("cache holds an untransformed %s", infDescribe(obj))
				}
			}
			if got := rec.len(); got != 20+5*20 {
				t.Errorf("%d notifications, want 20 adds and 5 resyncs of 20", got)
			}
		})
	}
}

// informer.md §12.2 TestStoreResourceVersionWithNonMetaTransform, §8.2: when the transform turns
// objects into values without metadata, updates leave the store RV alone, while a relist (and the
// initial list) sets it to the list RV. Method: an atomic RealFIFO whose transform keeps only the
// name, a constant key function, processDeltas into a plain store.
func TestStoreResourceVersionWithNonMetaTransform(t *testing.T) {
	keyFunc := func(any) (string, error) { return "pod-1", nil }
	store := NewStore(keyFunc)
	q := NewRealFIFO(RealFIFOOptions{
		KeyFunction:  keyFunc,
		AtomicEvents: true,
		Transformer: func(obj any) (any, error) {
			return obj.(*metav1.PartialObjectMetadata).Name, nil
		},
	})
	drain := func() {
		for q.Len() > 0 {
			if _, err := q.Pop(func(obj any, init bool) error {
				return processDeltas(ResourceEventHandlerFuncs{}, store, obj.(Deltas), init, keyFunc, nil)
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	mustStore(t, q.Replace([]any{infObj("pod-1", 3)}, "3"))
	drain()
	if got, want := store.LastStoreSyncResourceVersion(), "3"; got != want {
		t.Errorf("after the initial list: store RV %q, want %q", got, want)
	}
	mustStore(t, q.Update(infObj("pod-1", 4)))
	drain()
	if got, want := store.LastStoreSyncResourceVersion(), "3"; got != want {
		t.Errorf("after a non-meta update: store RV %q, want %q", got, want)
	}
	if got, _, _ := store.GetByKey("pod-1"); got != "pod-1" {
		t.Errorf("cached %v, want the transformed name", got)
	}
	mustStore(t, q.Replace([]any{infObj("pod-1", 7)}, "8"))
	drain()
	if got, want := store.LastStoreSyncResourceVersion(), "8"; got != want {
		t.Errorf("after a relist: store RV %q, want %q", got, want)
	}
}

// informer.md §12.7 processor_listener_test BenchmarkListener, §4.4: the cost of one notification
// through a listener: buffer it, hand it out, record its completion.
func BenchmarkListener(b *testing.B) {
	l := newListener(1, ResourceEventHandlerFuncs{}, 0, 0, infT0)
	n := notification{kind: NotificationAdd, newObj: infObj("p", 1)}
	b.ReportAllocs()
	for b.Loop() {
		l.add(&n)
		m := l.next()
		l.call(&m)
		l.finish(&m)
	}
}
