package informer

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// infEventually polls cond on the real clock (the goroutine driver's tests only) for up to 10s.
func infEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func (lw *infLW) openWatchers() int {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return len(lw.watchers)
}

// infRunEnv runs an informer under the goroutine driver on a fake clock.
type infRunEnv struct {
	lw     *infLW
	clock  *clocktesting.FakeClock
	inf    SharedIndexInformer
	cancel context.CancelFunc
	done   chan struct{}
}

func newInfRunEnv(lw *infLW, opts SharedIndexInformerOptions) *infRunEnv {
	e := &infRunEnv{lw: lw, clock: clocktesting.NewFakeClock(infT0), done: make(chan struct{})}
	opts.Clock = e.clock
	if opts.Rand == nil {
		opts.Rand = rand.New(rand.NewPCG(1, 2))
	}
	e.inf = NewSharedIndexInformerWithOptions(lw, &metav1.PartialObjectMetadata{}, opts)
	return e
}

func (e *infRunEnv) start() {
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	go func() {
		defer close(e.done)
		e.inf.Run(ctx)
	}()
}

func (e *infRunEnv) stop() {
	e.cancel()
	<-e.done
}

// informer.md §1.6, §14 T1/T2/T9 under the goroutine driver: handlers registered before Run sync,
// see watch events in order, and everything stops cleanly (goleak checks in TestMain).
func TestRunLifecycle(t *testing.T) {
	lw := newInfLW()
	lw.set("p1")
	lw.set("p2")
	e := newInfRunEnv(lw, SharedIndexInformerOptions{})
	h := &infRec{}
	reg, _ := e.inf.AddEventHandler(h)
	e.start()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if !WaitForCacheSync(ctx, e.inf.HasSynced, reg.HasSynced) {
		t.Fatal("did not sync")
	}
	lw.set("p1")
	lw.del("p2")
	infEventually(t, "4 notifications", func() bool { return h.len() == 4 })
	e.inf.Run(context.Background()) // a second Run is a no-op
	if _, err := Steps(e.inf); err == nil {
		t.Error("Steps accepted an informer driven by Run")
	}
	e.stop()
	if !e.inf.IsStopped() {
		t.Error("not stopped after Run returned")
	}
	want := []string{"add ns/p1@1 init", "add ns/p2@2 init", "update ns/p1@1->ns/p1@3", "delete ns/p2@4"}
	if diff := cmp.Diff(h.take(), want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
	if _, err := e.inf.AddEventHandler(h); err == nil {
		t.Error("AddEventHandler after stop succeeded")
	}
}

// informer.md §12.1 TestShutdown: no goroutine outlives Run whether the handler was added before
// Run, after sync, or the informer never ran (goleak in TestMain); a handler added and removed
// concurrently with events is race-free (TestSharedInformerHandlerAbuse, in small).
func TestRunConcurrentHandlers(t *testing.T) {
	lw := newInfLW()
	e := newInfRunEnv(lw, SharedIndexInformerOptions{ResyncPeriod: time.Second})
	e.start()
	infEventually(t, "sync", e.inf.HasSynced)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 20 {
				reg, err := e.inf.AddEventHandler(&infRec{})
				if err != nil {
					t.Error(err)
					return
				}
				lw.set("p" + string(rune('a'+i)) + string(rune('a'+j%5)))
				_ = e.inf.LastSyncResourceVersion()
				if err := e.inf.RemoveEventHandler(reg); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for range 5 {
		e.clock.Step(time.Second) // resync ticks race with the writers
	}
	wg.Wait()
	e.stop()
	NewSharedInformer(lw, &metav1.PartialObjectMetadata{}, 0) // never run: nothing to leak
}

// design.md "one logic, two drivers", style rule 5: identical scripted apiserver behavior through
// both drivers (quiescing between phases) gives every handler the same notifications, in the
// same order, including a late join and a relist after a 410.
func TestDriversAgree(t *testing.T) {
	type phase func(lw *infLW)
	phases := []phase{
		func(lw *infLW) { lw.set("p1"); lw.del("p2"); lw.set("p3"); lw.set("p4"); lw.bookmark() },
		nil, // late join of h3
		func(lw *infLW) { lw.set("p5"); lw.set("p3") },
		func(lw *infLW) { lw.expire(); lw.del("p4"); lw.set("p3"); lw.set("p9") }, // then 2s of backoff
		func(lw *infLW) { lw.set("p9"); lw.del("p1") },
	}
	setup := func(lw *infLW) { lw.set("p1"); lw.set("p2") }

	// The step driver.
	se := newInfStep(t, SharedIndexInformerOptions{})
	setup(se.lw)
	stepRecs := []*infRec{{}, {}, {}}
	se.inf.AddEventHandler(stepRecs[0])
	se.inf.AddEventHandler(stepRecs[1])
	se.st.Start()
	se.quiesce()
	var counts [][]int // per phase, per handler: notifications so far
	snap := func(recs []*infRec) []int {
		return []int{recs[0].len(), recs[1].len(), recs[2].len()}
	}
	counts = append(counts, snap(stepRecs))
	for i, p := range phases {
		if p == nil {
			se.inf.AddEventHandler(stepRecs[2])
		} else {
			p(se.lw)
		}
		se.quiesce()
		if i == 3 {
			se.advance(2 * time.Second)
		}
		counts = append(counts, snap(stepRecs))
	}

	// The goroutine driver.
	lw := newInfLW()
	setup(lw)
	re := newInfRunEnv(lw, SharedIndexInformerOptions{})
	runRecs := []*infRec{{}, {}, {}}
	re.inf.AddEventHandler(runRecs[0])
	re.inf.AddEventHandler(runRecs[1])
	re.start()
	defer re.stop()
	wait := func(i int) {
		t.Helper()
		infEventually(t, "phase counts", func() bool { return cmp.Equal(snap(runRecs), counts[i]) })
		infEventually(t, "an open watch", func() bool { return lw.openWatchers() == 1 })
	}
	wait(0)
	for i, p := range phases {
		if p == nil {
			re.inf.AddEventHandler(runRecs[2])
		} else {
			p(lw)
		}
		if i == 3 {
			infEventually(t, "the backoff timer", re.clock.HasWaiters)
			re.clock.Step(2 * time.Second)
		}
		wait(i + 1)
	}
	for i := range stepRecs {
		if diff := cmp.Diff(runRecs[i].take(), stepRecs[i].take()); diff != "" {
			t.Errorf("h%d: goroutine driver vs step driver (-run +step):\n%s", i+1, diff)
		}
	}
}

// informer.md §16 "Empty initial LIST" under the goroutine driver: with a DeltaFIFO or a
// non-atomic RealFIFO the empty first Replace syncs the queue with nothing to pop, and the
// Reflector's write itself (under the driver's queue lock) latches the informer and a
// registration. Method: Run over an empty server, wait for both HasSynced, stop.
func TestRunEmptyInitialListSyncs(t *testing.T) {
	for _, mode := range []QueueMode{QueueDeltaFIFO, QueueRealFIFONonAtomic} {
		t.Run(mode.String(), func(t *testing.T) {
			e := newInfRunEnv(newInfLW(), SharedIndexInformerOptions{QueueMode: mode})
			reg, err := e.inf.AddEventHandler(&infRec{})
			if err != nil {
				t.Fatal(err)
			}
			e.start()
			infEventually(t, "informer and registration synced", func() bool {
				return e.inf.HasSynced() && reg.HasSynced()
			})
			e.stop()
		})
	}
}
