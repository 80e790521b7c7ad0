package world

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/informer/workqueue"
	"github.com/informersim/informersim/sim"
)

// Second, world-level tests of behaviors that each had a single unit test (issue 26): a change
// that loses one of them now fails a run a user would make too.

// A watch-list informer syncs only at the annotated end-of-initial-events bookmark, never at an
// ordinary bookmark (informer.md §7.5). Against a server that drops the annotation (F-9), as a
// buggy fake does, it never syncs: it keeps retrying the watch-list, with its handler told of
// nothing as initial. Were any bookmark taken for the end, it would sync at once.
func TestWatchListSyncsOnlyAtTheAnnotatedBookmark(t *testing.T) {
	for _, seed := range traceSeeds {
		w := newTraceWorld(t, seed)
		mustApply(t, w, create(configMaps, "a"), create(configMaps, "b"))
		w.Server().Faults().SetWatchListQuirk(fakeapi.WatchListOmitAnnotation)
		n, err := w.AddInformer("inf1", InformerSpec{Resource: configMaps, WatchList: true})
		if err != nil {
			t.Fatal(err)
		}
		h := mustAddHandler(t, w, n, "h1", useInformerResync)
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		if err := w.Sim().RunFor(30 * time.Minute); err != nil {
			t.Fatal(err)
		}
		narration := sim.Narrate(w.Sim().Trace().Events())
		if n.SharedIndexInformer().HasSynced() || len(h.Deliveries().Notifications()) > 0 {
			t.Fatalf("seed %d: synced %v with %d notifications against a server that never sends the end bookmark's annotation:\n%s",
				seed, n.SharedIndexInformer().HasSynced(), len(h.Deliveries().Notifications()), narration)
		}
		if !strings.Contains(narration, "inf1/reflector: BOOKMARK") || strings.Count(narration, "watch-list-retry") < 2 {
			t.Errorf("seed %d: want bookmarks, then watch-list retries:\n%s", seed, narration)
		}
		// The faithful server again: the next attempt syncs.
		w.Server().Faults().SetWatchListQuirk(0)
		if err := w.Sim().RunUntil(n.SharedIndexInformer().HasSynced, 30*time.Minute); err != nil {
			t.Fatalf("seed %d: no sync once the server sends the annotation: %v", seed, err)
		}
		mustConverge(t, w)
	}
}

// A controller that asks its factory for another informer after Start calls Start again, as
// client-go's sample-controller does: only the new informer starts (informer.md §9); the
// running one keeps its watch, lists once, and its handler hears of each object once.
func TestFactoryStartAgainStartsOnlyTheNewInformer(t *testing.T) {
	for _, seed := range traceSeeds {
		w, fac := newFactoryWorld(t, seed)
		podInf, err := fac.ForResource(pods)
		if err != nil {
			t.Fatal(err)
		}
		adds := 0
		if _, err := podInf.Informer().AddEventHandler(informer.ResourceEventHandlerFuncs{AddFunc: func(any) { adds++ }}); err != nil {
			t.Fatal(err)
		}
		fac.Start(nil)
		mustConverge(t, w)
		if _, err := fac.ForResource(configMaps); err != nil {
			t.Fatal(err)
		}
		fac.Start(nil)
		mustConverge(t, w)
		narration := sim.Narrate(w.Sim().Trace().Events())
		for _, want := range []struct {
			line string
			n    int
		}{{"ctrl-pods: start", 1}, {"ctrl-pods/reflector: LIST", 1}, {"ctrl-configmaps: start", 1}} {
			if got := strings.Count(narration, want.line); got != want.n {
				t.Errorf("seed %d: %q %d times, want %d:\n%s", seed, want.line, got, want.n, narration)
			}
		}
		if adds != 1 {
			t.Errorf("seed %d: the pods handler heard %d adds of one pod", seed, adds)
		}
	}
}

// WaitForCacheSync reports the informers a factory started, each with whether it synced, and
// not one created after Start and not started yet (informer.md §9): a controller that waits on
// the result waits only for what runs.
func TestFactoryWaitForCacheSyncReportsOnlyStartedInformers(t *testing.T) {
	for _, seed := range traceSeeds {
		w, fac := newFactoryWorld(t, seed)
		if _, err := fac.ForResource(pods); err != nil {
			t.Fatal(err)
		}
		if got := fac.WaitForCacheSync(nil); len(got) != 0 {
			t.Errorf("seed %d: before Start: %v, want nothing", seed, got)
		}
		fac.Start(nil)
		if got := fac.WaitForCacheSync(nil); len(got) != 1 || got[pods] {
			t.Errorf("seed %d: right after Start: %v, want pods not synced yet", seed, got)
		}
		mustConverge(t, w)
		if _, err := fac.ForResource(configMaps); err != nil { // created, not started
			t.Fatal(err)
		}
		res := fac.WaitForCacheSyncWithContext(context.Background())
		if len(res.Synced) != 1 || !res.Synced[pods] || res.Err != nil {
			t.Errorf("seed %d: %+v, want only pods, synced", seed, res)
		}
	}
}

// A controller's retries in the world happen exactly when its rate limiter says, in simulated
// time, which a user reads off the trace: a delayed item is handed out at its time, never
// earlier (even by 1ms, next to an item due just before it), and a Forget through a capped
// limiter (WithMaxWait) resets the item's backoff, so its next failure waits the base delay
// again instead of the cap.
func TestWorkqueueRetriesHappenWhenTheLimiterSays(t *testing.T) {
	for _, seed := range traceSeeds {
		w := newTraceWorld(t, seed)
		q := workqueue.NewTypedRateLimitingQueueWithConfig[string](
			workqueue.NewTypedWithMaxWaitRateLimiter[string](workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, time.Hour), 3*time.Second),
			workqueue.RateLimitingQueueConfig{Clock: w.Sim().ClockFor("ctrl/queue"), StepDriven: true})
		if err := w.AddDeadlines(Deadlines{Actor: "ctrl/queue", Kind: "fire-due", Next: q.NextDeadline, Fire: func() { q.FireDue() }}); err != nil {
			t.Fatal(err)
		}
		got := map[string][]time.Duration{} // when the worker took each key, since the start
		fails := map[string]int{"retry": 2} // "retry" fails twice, succeeds, then fails once more
		if err := w.AddActor(&funcActor{name: "ctrl/worker", ready: func() bool { return q.Len() > 0 }, run: func() {
			key, ok, _ := q.TryGet()
			if !ok {
				return
			}
			defer q.Done(key)
			got[key] = append(got[key], w.Sim().Now())
			if fails[key] > 0 {
				fails[key]--
				q.AddRateLimited(key)
				return
			}
			q.Forget(key)
			if key == "retry" && len(got[key]) == 3 {
				fails[key] = 1
				q.Add(key) // a new event for it: one more failure, after the Forget
			}
		}}); err != nil {
			t.Fatal(err)
		}
		// Two plain delayed items half a millisecond apart.
		q.AddAfter("early", time.Second)
		if _, err := w.After(500*time.Microsecond, "ctrl/test", "add-later", func() { q.AddAfter("later", time.Second) }); err != nil {
			t.Fatal(err)
		}
		q.Add("retry")
		w.Settle()
		mustConverge(t, w)
		want := map[string][]time.Duration{
			"early": {time.Second},
			"later": {time.Second + 500*time.Microsecond},
			// 0: fails, +1s: fails, +2s: succeeds (Forget), again at once: fails, +1s (not the 3s cap).
			"retry": {0, time.Second, 3 * time.Second, 3 * time.Second, 4 * time.Second},
		}
		for key, at := range want {
			if !slices.Equal(got[key], at) {
				t.Errorf("seed %d: %s taken at %v, want %v", seed, key, got[key], at)
			}
		}
	}
}

// newFactoryWorld is a world of seed holding pod p1 and config map c1, with a factory "ctrl"
// on namespace default (nothing created from it yet).
func newFactoryWorld(t *testing.T, seed uint64) (*World, informer.SharedInformerFactory) {
	t.Helper()
	w := newTraceWorld(t, seed)
	mustApply(t, w, create(pods, "p1"), create(configMaps, "c1"))
	fac, err := w.NewFactory(FactoryOptions{Prefix: "ctrl", Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	return w, fac
}
