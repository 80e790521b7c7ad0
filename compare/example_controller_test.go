package compare

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/informer/workqueue"
)

// A controller loop as client-go users write it, an informer's handlers feeding a rate-limited
// workqueue, run deterministically: the informer under its step driver (watch-list start-up,
// the v0.37 default), the fake apiserver and the workqueue on one fake clock, and a loop that
// takes one enabled action at a time: the Reflector's request, a watch event, a pop, a
// delivery, a worker's turn (only while an item waits), and, when nothing else is enabled, the
// clock jumps to the workqueue's next retry. Reconciling "web" fails twice, so it is retried
// after the default controller limiter's 5ms, then 10ms.
func Example_controllerLoop() {
	start := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := testingclock.NewFakeClock(start)
	srv, _ := fakeapi.New(fakeapi.Config{Clock: clk, WatchTimeout: fakeapi.WatchTimeoutNone,
		BookmarkInterval: -1, CompactionInterval: -1})
	ctx := context.Background()
	for _, name := range []string{"web", "db"} {
		_, _ = srv.Resource(podsGVR).Namespace("default").Create(ctx, newPod("default", name), metav1.CreateOptions{})
	}
	lw := srv.ListerWatcher(podsGVR, "default")
	inf := informer.NewSharedIndexInformerWithOptions(lw, podExample(),
		informer.SharedIndexInformerOptions{Clock: clk, Rand: rand.New(rand.NewPCG(1, 2))})
	st, _ := informer.Steps(inf)
	queue := workqueue.NewTypedRateLimitingQueueWithConfig[string](
		workqueue.DefaultTypedControllerRateLimiter[string](clk),
		workqueue.RateLimitingQueueConfig{Clock: clk, StepDriven: true})
	enqueue := func(obj any) {
		key, _ := informer.DeletionHandlingMetaNamespaceKeyFunc(obj)
		queue.Add(key)
	}
	_, _ = inf.AddEventHandler(informer.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue,
	})
	failures := map[string]int{"default/web": 2}
	reconcile := func(key string) error {
		if failures[key] > 0 {
			failures[key]--
			return fmt.Errorf("not ready")
		}
		return nil
	}

	st.Start()
	var w *fakeapi.Watcher
	wrote := false
	for step := 0; step < 1000; step++ {
		r := st.Reflector()
		switch {
		case r.HasRequest():
			req, _ := r.NextRequest()
			if req.Verb == informer.RequestList {
				list, err := lw.List(req.Options)
				r.ListDone(list, err)
				continue
			}
			var err error
			w, err = lw.OpenWatch(req.Options)
			fmt.Printf("%v request: %s\n", clk.Since(start), req.Verb)
			r.WatchOpened(err)
		case w != nil && w.Pending() > 0:
			ev, _ := w.Next()
			if r.WatchEvent(ev) {
				w.Stop()
				w = nil
			}
		case st.QueueLen() > 0:
			_ = st.ProcessNext()
		case st.Buffered(st.Listeners()[0].Registration) > 0:
			st.DeliverNext(st.Listeners()[0].Registration)
		case queue.Len() > 0:
			key, _ := queue.Get()
			if err := reconcile(key); err != nil {
				queue.AddRateLimited(key)
				fmt.Printf("%v reconcile %s: %v, retry %d\n", clk.Since(start), key, err, queue.NumRequeues(key))
			} else {
				queue.Forget(key)
				fmt.Printf("%v reconcile %s: done\n", clk.Since(start), key)
			}
			queue.Done(key)
		default:
			if at, ok := queue.NextDeadline(); ok {
				clk.SetTime(at)
				queue.FireDue()
				continue
			}
			if !wrote {
				wrote = true
				clk.Step(time.Second)
				fmt.Printf("%v delete default/db\n", clk.Since(start))
				_ = srv.Resource(podsGVR).Namespace("default").Delete(ctx, "db", metav1.DeleteOptions{})
				continue
			}
			fmt.Println("quiescent; synced:", inf.HasSynced())
			st.Stop()
			queue.ShutDown()
			return
		}
	}
	// Output:
	// 0s request: Watch
	// 0s reconcile default/web: not ready, retry 1
	// 0s reconcile default/db: done
	// 5ms reconcile default/web: not ready, retry 2
	// 15ms reconcile default/web: done
	// 1.015s delete default/db
	// 1.015s reconcile default/db: done
	// quiescent; synced: true
}
