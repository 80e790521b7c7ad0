package informer

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Tests of the v0.37 API pieces of informer.md §1.3, §1.4, §1.5 and §10: ShutDownEventHandler,
// the DoneCheckers, WaitFor and SetWatchErrorHandlerWithContext, on both drivers.

// infWithin fails the test if f does not return within 10s (a deadlock guard on the real clock;
// goroutine-driver tests only).
func infWithin(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return: deadlock", what)
	}
}

// informer.md §12.1 TestShutDownEventHandler_Lifecycles, §1.3, §16 "Handler registered before
// Run, informer never run": ShutDownEventHandler returns, and does not deadlock, for an informer
// that never started, for a handler added before Run and for one added after Run started; for
// an already removed handle, and after the informer stopped. Method: each case under the
// goroutine driver, guarded by a 10s deadline.
func TestShutDownEventHandlerLifecycles(t *testing.T) {
	t.Run("never started", func(t *testing.T) {
		e := newInfRunEnv(newInfLW(), SharedIndexInformerOptions{})
		reg, _ := e.inf.AddEventHandler(&infRec{})
		infWithin(t, "ShutDownEventHandler", func() {
			if err := ShutDownEventHandler(e.inf, reg); err != nil {
				t.Error(err)
			}
		})
		if reg.HasSynced() {
			t.Error("a never-run informer's handle synced")
		}
	})
	for _, before := range []bool{true, false} {
		name := "added after start"
		if before {
			name = "added before start"
		}
		t.Run(name, func(t *testing.T) {
			lw := newInfLW()
			lw.set("p1")
			e := newInfRunEnv(lw, SharedIndexInformerOptions{})
			var reg ResourceEventHandlerRegistration
			if before {
				reg, _ = e.inf.AddEventHandler(&infRec{})
			}
			e.start()
			if !before {
				reg, _ = e.inf.AddEventHandler(&infRec{})
			}
			infEventually(t, "registration synced", reg.HasSynced)
			infWithin(t, "ShutDownEventHandler", func() {
				if err := ShutDownEventHandler(e.inf, reg); err != nil {
					t.Error(err)
				}
				if err := ShutDownEventHandler(e.inf, reg); err != nil { // idempotent
					t.Error(err)
				}
			})
			other, _ := e.inf.AddEventHandler(&infRec{})
			e.stop()
			infWithin(t, "ShutDownEventHandler after stop", func() {
				if err := ShutDownEventHandler(e.inf, other); err != nil {
					t.Error(err)
				}
			})
		})
	}
	if err := ShutDownEventHandler(NewSharedInformer(newInfLW(), &metav1.PartialObjectMetadata{}, 0), nil); err == nil {
		t.Error("a nil handle was accepted")
	}
}

// informer.md §12.1 TestRemoveEventHandler_SynchronousShutdown, §1.3: unlike RemoveEventHandler,
// ShutDownEventHandler returns only after the callback in progress has returned, and the
// buffered notifications are dropped. Method: the handler blocks in its first OnAdd; another
// object is queued behind it; ShutDownEventHandler runs on its own goroutine; the callback sets a
// flag as its last act before returning; ShutDownEventHandler must observe the flag.
func TestRemoveEventHandlerSynchronousShutdown(t *testing.T) {
	lw := newInfLW()
	lw.set("p1")
	lw.set("p2")
	e := newInfRunEnv(lw, SharedIndexInformerOptions{DisableBatchPop: true})
	entered, release := make(chan struct{}), make(chan struct{})
	var returned atomic.Bool
	var calls atomic.Int32
	reg, _ := e.inf.AddEventHandler(ResourceEventHandlerFuncs{AddFunc: func(any) {
		if calls.Add(1) == 1 {
			close(entered)
			<-release
			returned.Store(true)
		}
	}})
	e.start()
	defer e.stop()
	<-entered
	shutDown := make(chan error, 1)
	go func() { shutDown <- ShutDownEventHandler(e.inf, reg) }()
	// Let ShutDownEventHandler get as far as it can; it must still be waiting.
	infEventually(t, "removal", func() bool { return len(infListeners(e.inf)) == 0 })
	select {
	case err := <-shutDown:
		t.Fatalf("ShutDownEventHandler returned (%v) while the callback was running", err)
	default:
	}
	close(release)
	infWithin(t, "ShutDownEventHandler", func() {
		if err := <-shutDown; err != nil {
			t.Error(err)
		}
	})
	if !returned.Load() {
		t.Error("ShutDownEventHandler returned before the callback did")
	}
	if got := calls.Load(); got != 1 {
		t.Errorf("%d callbacks, want 1: the buffered add must be dropped", got)
	}
}

// informer.md §1.3 under the step driver: nothing runs concurrently, so ShutDownEventHandler
// returns at once, also when called from inside the handler's own callback (which would deadlock
// under Run), and the buffer is dropped.
func TestShutDownEventHandlerStepDriver(t *testing.T) {
	e := newInfStep(t, SharedIndexInformerOptions{})
	e.lw.set("p1")
	e.lw.set("p2")
	var reg ResourceEventHandlerRegistration
	var calls int
	reg, _ = e.inf.AddEventHandler(ResourceEventHandlerFuncs{AddFunc: func(any) {
		calls++
		if err := ShutDownEventHandler(e.inf, reg); err != nil {
			t.Error(err)
		}
	}})
	e.st.Start()
	e.quiesce()
	if calls != 1 {
		t.Errorf("%d callbacks, want 1", calls)
	}
	if got := len(e.st.Listeners()); got != 0 {
		t.Errorf("%d listeners after shutdown, want 0", got)
	}
}

// informer.md §1.4, §4.6, §10: the informer's and a registration's DoneCheckers close exactly when
// HasSynced latches, and carry client-go's names. Method: step the initial sync one unit at a
// time and compare IsDone with HasSynced after each step; a late joiner's checker closes once its
// snapshot was handled.
func TestHasSyncedCheckers(t *testing.T) {
	e := newInfStep(t, SharedIndexInformerOptions{})
	e.lw.set("p1")
	_, reg := e.handler(nil)
	ic, rc := e.inf.HasSyncedChecker(), reg.HasSyncedChecker()
	if diff := cmp.Diff(
		[]string{ic.Name(), rc.Name()},
		[]string{"SharedIndexInformer *v1.PartialObjectMetadata", "SharedIndexInformer *v1.PartialObjectMetadata + event handler github.com/informersim/informersim/informer.infRec"},
	); diff != "" {
		t.Errorf("names (-got +want):\n%s", diff)
	}
	check := func(when string) {
		t.Helper()
		if IsDone(ic) != e.inf.HasSynced() || IsDone(rc) != reg.HasSynced() {
			t.Errorf("%s: informer done %v synced %v; registration done %v synced %v",
				when, IsDone(ic), e.inf.HasSynced(), IsDone(rc), reg.HasSynced())
		}
	}
	check("before start")
	e.st.Start()
	for e.serveOne() {
		check("reflector step")
	}
	_ = e.st.ProcessNext()
	check("after the pop")
	if !IsDone(ic) || IsDone(rc) {
		t.Errorf("after the pop: informer done %v (want true), registration done %v (want false)", IsDone(ic), IsDone(rc))
	}
	e.st.DeliverNext(reg)
	check("after the initial add")
	if !IsDone(rc) {
		t.Error("registration checker not done after its initial add")
	}
	_, late := e.handler(nil)
	lc := late.HasSyncedChecker()
	if IsDone(lc) {
		t.Error("late joiner done before its snapshot was handled")
	}
	e.quiesce()
	if !IsDone(lc) {
		t.Error("late joiner not done after its snapshot")
	}
}

// informer.md §10 WaitFor: true at once with no checkers or when all are done; false once ctx
// ends with one pending, even if others are done. Step driver, so every outcome is known.
func TestWaitFor(t *testing.T) {
	e := newInfStep(t, SharedIndexInformerOptions{})
	_, reg := e.handler(nil)
	if !WaitFor(context.Background(), "nothing") {
		t.Error("WaitFor with no checkers: false")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if WaitFor(ctx, "caches", e.inf.HasSyncedChecker(), reg.HasSyncedChecker()) {
		t.Error("WaitFor on unsynced checkers with an ended ctx: true")
	}
	e.st.Start()
	e.quiesce()
	if !WaitFor(ctx, "caches", e.inf.HasSyncedChecker(), reg.HasSyncedChecker()) {
		t.Error("WaitFor on done checkers with an ended ctx: false")
	}
}

// informer.md §10 WaitFor under the goroutine driver: it wakes on the channels, no polling.
func TestWaitForRun(t *testing.T) {
	lw := newInfLW()
	lw.set("p1")
	e := newInfRunEnv(lw, SharedIndexInformerOptions{})
	reg, _ := e.inf.AddEventHandler(&infRec{})
	e.start()
	defer e.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if !WaitFor(ctx, "caches", e.inf.HasSyncedChecker(), reg.HasSyncedChecker()) {
		t.Fatal("WaitFor timed out")
	}
	if !e.inf.HasSynced() || !reg.HasSynced() {
		t.Error("WaitFor returned before HasSynced")
	}
}

// informer.md §1.5: SetWatchErrorHandlerWithContext receives the LIST failure with a context;
// the last of the two setters wins; after start both fail with "informer has already started".
func TestSetWatchErrorHandlerWithContext(t *testing.T) {
	e := newInfStep(t, SharedIndexInformerOptions{})
	var plain, withCtx []string
	if err := e.inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *Reflector, err error) {
		withCtx = append(withCtx, "early "+err.Error())
	}); err != nil {
		t.Fatal(err)
	}
	if err := e.inf.SetWatchErrorHandler(func(r *Reflector, err error) { plain = append(plain, err.Error()) }); err != nil {
		t.Fatal(err)
	}
	if err := e.inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *Reflector, err error) {
		if ctx == nil || r == nil {
			t.Error("nil context or Reflector")
		}
		withCtx = append(withCtx, err.Error())
	}); err != nil {
		t.Fatal(err)
	}
	e.lw.failNextList(apierrors.NewServiceUnavailable("down"))
	e.st.Start()
	e.quiesce()
	if diff := cmp.Diff(withCtx, []string{"failed to list *v1.PartialObjectMetadata: down"}); diff != "" {
		t.Errorf("handler with context (-got +want):\n%s", diff)
	}
	if len(plain) != 0 {
		t.Errorf("the replaced handler was called: %v", plain)
	}
	err := e.inf.SetWatchErrorHandlerWithContext(nil)
	if !errors.Is(err, errAlreadyStarted) {
		t.Errorf("after start: %v", err)
	}
}

// infListeners returns the informer's current listeners, read under the processor lock.
func infListeners(inf SharedInformer) []*listener {
	s := inf.(*sharedIndexInformer)
	s.procLock.Lock()
	defer s.procLock.Unlock()
	return append([]*listener(nil), s.processor.listeners...)
}
