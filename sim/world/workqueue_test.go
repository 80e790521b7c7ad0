package world

import (
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/informer/workqueue"
)

// Goal (item 3, with a workqueue): a controller built as client-go's are (handlers add keys to a
// rate-limited workqueue, a worker takes them, a failure is retried with AddRateLimited) runs in
// the world with no goroutine: the worker is a user actor, the queue's waiting items are
// Deadlines, and RunUntilConverged returns only once every retry has run.
func TestWorldHostsAWorkqueueController(t *testing.T) {
	for _, seed := range traceSeeds {
		w := newTraceWorld(t, seed)
		n, err := w.AddInformer("inf1", InformerSpec{Resource: configMaps, Namespace: "default"})
		if err != nil {
			t.Fatal(err)
		}
		q := workqueue.NewTypedRateLimitingQueueWithConfig[string](
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, time.Minute),
			workqueue.RateLimitingQueueConfig{Clock: w.Sim().ClockFor("ctrl/queue"), StepDriven: true})
		add := func(obj any) {
			key, _ := informer.DeletionHandlingMetaNamespaceKeyFunc(obj)
			q.Add(key)
		}
		if _, err := w.AddHandler(n, "ctrl", informer.ResourceEventHandlerFuncs{
			AddFunc: add, UpdateFunc: func(_, obj any) { add(obj) }, DeleteFunc: add,
		}, HandlerOptions{}); err != nil {
			t.Fatal(err)
		}
		attempts := map[string]int{}
		var done []string
		if err := w.AddActor(&funcActor{name: "ctrl/worker", ready: func() bool { return q.Len() > 0 }, run: func() {
			key, ok, _ := q.TryGet()
			if !ok {
				return
			}
			defer q.Done(key)
			attempts[key]++
			if attempts[key] < 3 { // fails twice: retried after 1s, then 2s
				q.AddRateLimited(key)
				return
			}
			q.Forget(key)
			done = append(done, key)
		}}); err != nil {
			t.Fatal(err)
		}
		if err := w.AddDeadlines(Deadlines{Actor: "ctrl/queue", Kind: "fire-due", Next: q.NextDeadline, Fire: func() { q.FireDue() }}); err != nil {
			t.Fatal(err)
		}
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		mustApply(t, w, create(configMaps, "a"))
		start := w.Sim().Now()
		mustConverge(t, w)
		if len(done) != 1 || attempts["default/a"] != 3 || q.Len() != 0 || q.Waiting() != 0 {
			t.Fatalf("seed %d: converged with the controller not done: done %v attempts %v len %d waiting %d", seed, done, attempts, q.Len(), q.Waiting())
		}
		if took := w.Sim().Now() - start; took < 3*time.Second {
			t.Errorf("seed %d: two retries (1s, 2s) done in %v", seed, took)
		}
		if !strings.Contains(w.Sim().Trace().String(), "ctrl/queue") {
			t.Errorf("seed %d: no step of the queue's deadlines in the trace", seed)
		}
	}
	w := newTraceWorld(t, 1)
	for _, d := range []Deadlines{{Kind: "k", Next: func() (time.Time, bool) { return time.Time{}, false }, Fire: func() {}}, {Actor: "a", Kind: "k"}} {
		if err := w.AddDeadlines(d); err == nil || !strings.HasPrefix(err.Error(), "world: AddDeadlines") {
			t.Errorf("AddDeadlines(%+v) = %v", d, err)
		}
	}
}
