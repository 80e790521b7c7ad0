package oracle_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/oracle"
)

// Goal: attaching the oracles changes nothing: the same seed gives the same trace hash with and
// without them. Method: busy worlds, run twice each.
func TestOraclesChangeNothing(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		hashes := make([]string, 2)
		for i, attach := range []bool{false, true} {
			w, h, gen := busyWorld(t, seed, attach)
			if err := runBusy(t, w, h, gen); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			hashes[i] = w.Sim().Trace().Hash()
		}
		if hashes[0] != hashes[1] {
			t.Errorf("seed %d: trace hash %s without oracles, %s with them", seed, hashes[0], hashes[1])
		}
	}
}

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// planted builds a converged world on configmaps (one DELETED per delete) holding a and b, with
// one informer and one handler, and attaches the oracles named.
func planted(t *testing.T, seed uint64, informerOpts informer.SharedIndexInformerOptions, names ...string) (*world.World, *world.Informer, *world.Handler, *oracle.Handle) {
	t.Helper()
	w, err := world.New(seed, world.Config{DefaultResource: configMaps})
	if err != nil {
		t.Fatal(err)
	}
	h, err := oracle.Attach(w, names...)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b"} {
		if err := w.Apply(world.Op{Kind: world.OpCreate, Name: n}); err != nil {
			t.Fatal(err)
		}
	}
	inf, err := w.AddInformer("inf1", world.InformerSpec{Namespace: "default", Informer: informerOpts})
	if err != nil {
		t.Fatal(err)
	}
	hd, err := w.AddHandler(inf, "h1", nil, world.HandlerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := inf.Start(); err != nil {
		t.Fatal(err)
	}
	if err := h.RunUntilConverged(time.Minute); err != nil {
		t.Fatal(err)
	}
	return w, inf, hd, h
}

// wantViolation checks that err is, or wraps, a violation of oracle whose message contains
// msg, that the handle reports the same, and that its report carries the seed, the replay
// command and the trace before it.
func wantViolation(t *testing.T, h *oracle.Handle, err error, name, msg string) {
	t.Helper()
	err = h.Check(err)
	var v *world.Violation
	if !errors.As(err, &v) {
		t.Fatalf("error %v, want a %s violation", err, name)
	}
	if v.Oracle != name || !strings.Contains(v.Message, msg) {
		t.Fatalf("violation %s: %q, want %s containing %q", v.Oracle, v.Message, name, msg)
	}
	if h.Violation() != v {
		t.Errorf("Violation() = %v, want the run's", h.Violation())
	}
	rep := v.Report()
	if !strings.Contains(rep, "seed: ") || !strings.Contains(rep, world.SeedEnv+"=") || len(v.Window) == 0 {
		t.Errorf("report without seed, replay command or trace:\n%s", rep)
	}
}

func cached(t *testing.T, inf *world.Informer, key string) *unstructured.Unstructured {
	t.Helper()
	obj, ok, err := inf.SharedIndexInformer().GetStore().GetByKey(key)
	if err != nil || !ok {
		t.Fatalf("%s not cached: %v", key, err)
	}
	return obj.(*unstructured.Unstructured).DeepCopy()
}

// Goal: the apiserver re-sending an event it already sent (fakeapi F-11, invalid on purpose)
// breaks the watch guarantees, and the informer then tells the handler of a second delete,
// which breaks per-object order. Method: delete b, wait until the handler heard of it, duplicate
// the DELETED on the open watch; run once with each oracle attached.
func TestPlantedDuplicateEvent(t *testing.T) {
	for _, name := range []string{oracle.WatchGuarantees, oracle.PerObjectOrder} {
		w, _, hd, h := planted(t, 1, informer.SharedIndexInformerOptions{}, name)
		if err := w.Apply(world.Op{Kind: world.OpDelete, Name: "b"}); err != nil {
			t.Fatal(err)
		}
		heard := func() bool {
			n := hd.Deliveries().Notifications()
			return len(n) > 0 && n[len(n)-1].Kind == informer.NotificationDelete
		}
		if err := w.Sim().RunUntil(heard, time.Minute); err != nil {
			t.Fatal(err)
		}
		ids := w.Server().Faults().Watchers()
		if len(ids) != 1 {
			t.Fatalf("open watches %v, want one", ids)
		}
		if err := w.Server().Faults().DuplicateEvent(ids[0]); err != nil {
			t.Fatal(err)
		}
		w.Settle()
		want := map[string]string{oracle.WatchGuarantees: "out of order or duplicate", oracle.PerObjectOrder: "second delete without a re-creation"}[name]
		wantViolation(t, h, w.RunUntilConverged(time.Minute), name, want)
		// The violation stopped the run: the engine refuses every later step with it.
		var v *world.Violation
		if _, err := w.Sim().Step(); !errors.As(err, &v) || v != h.Violation() {
			t.Errorf("%s: a step after the violation: %v, want the violation", name, err)
		}
	}
}

// Goal: cache-before-notify catches a cache that is behind what a handler is told. Method: once
// an update is buffered for the handler, put the older state back in the cache behind the
// informer's back.
func TestPlantedStaleCache(t *testing.T) {
	w, inf, hd, h := planted(t, 2, informer.SharedIndexInformerOptions{}, oracle.CacheBeforeNotify)
	old := cached(t, inf, "default/a")
	if err := w.Apply(world.Op{Kind: world.OpUpdate, Name: "a"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Sim().RunUntil(func() bool { return hd.Buffered() > 0 }, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := inf.SharedIndexInformer().GetStore().Update(old); err != nil {
		t.Fatal(err)
	}
	wantViolation(t, h, w.RunUntilConverged(time.Minute), oracle.CacheBeforeNotify, "the cache holds an older rv")
}

// Goal: eventual consistency catches a cache that diverges from the apiserver. Method: add an
// object to the cache behind the informer's back.
func TestPlantedGhost(t *testing.T) {
	_, inf, _, h := planted(t, 3, informer.SharedIndexInformerOptions{}, oracle.EventualConsistency)
	ghost := cached(t, inf, "default/a")
	ghost.SetName("ghost")
	if err := inf.SharedIndexInformer().GetStore().Add(ghost); err != nil {
		t.Fatal(err)
	}
	wantViolation(t, h, h.RunUntilConverged(time.Minute), oracle.EventualConsistency, "key default/ghost: present")
}

// Goal: late join catches a snapshot that is not the cache the trace shows. Method: slip an
// object into the cache behind the informer's back (no cache write is narrated), then join.
func TestPlantedLateJoinSnapshot(t *testing.T) {
	w, inf, _, h := planted(t, 4, informer.SharedIndexInformerOptions{}, oracle.LateJoin)
	ghost := cached(t, inf, "default/a")
	ghost.SetName("ghost")
	if err := inf.SharedIndexInformer().GetStore().Add(ghost); err != nil {
		t.Fatal(err)
	}
	_, err := w.After(time.Second, "test", "join", func() {
		if _, err := w.AddHandler(inf, "late", nil, world.HandlerOptions{}); err != nil {
			t.Error(err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	wantViolation(t, h, w.Sim().RunFor(2*time.Second), oracle.LateJoin, "joined with a snapshot of 3 object(s), but the cache holds 2")
}

// Goal: the tombstones oracle catches a tombstone that does not carry the last state the cache
// held. Method: change a's cached RV behind the informer's back, then cut the watch with a 410
// while a is deleted, so the relist sends a tombstone built from the altered cache.
func TestPlantedTombstone(t *testing.T) {
	w, inf, _, h := planted(t, 5, informer.SharedIndexInformerOptions{}, oracle.Tombstones)
	a := cached(t, inf, "default/a")
	a.SetResourceVersion("1")
	if err := inf.SharedIndexInformer().GetStore().Update(a); err != nil {
		t.Fatal(err)
	}
	for _, op := range []world.Op{{Kind: world.OpCloseWatches, Code: 410}, {Kind: world.OpDelete, Name: "a"}} {
		if err := w.Apply(op); err != nil {
			t.Fatal(err)
		}
	}
	wantViolation(t, h, w.RunUntilConverged(time.Minute), oracle.Tombstones, "but the last state the cache held was rv=2")
}

// Goal: resync alignment catches a resync that skips a cached object. Method: remove b from the
// cache behind the informer's back just before a resync tick: SyncAll then resyncs only a.
func TestPlantedResyncSkip(t *testing.T) {
	w, inf, _, h := planted(t, 6, informer.SharedIndexInformerOptions{ResyncPeriod: 5 * time.Second}, oracle.ResyncAlignment)
	if err := inf.SharedIndexInformer().GetStore().Delete(cached(t, inf, "default/b")); err != nil {
		t.Fatal(err)
	}
	wantViolation(t, h, w.Sim().RunFor(10*time.Second), oracle.ResyncAlignment, "a resync gave no sync update for the cached default/b")
}

// Goal: a violation names the run's replay command: the scenario runner's, when it sets one.
func TestViolationCarriesTheRunnersRepro(t *testing.T) {
	w, err := world.NewFromConfig(sim.Config{Seed: 9, Repro: "informersim run late-join --seed 9"}, fakeapi.Config{}, world.Config{DefaultResource: configMaps})
	if err != nil {
		t.Fatal(err)
	}
	h, err := oracle.Attach(w, oracle.EventualConsistency)
	if err != nil {
		t.Fatal(err)
	}
	inf, err := w.AddInformer("inf1", world.InformerSpec{})
	if err != nil {
		t.Fatal(err)
	}
	if err := inf.Start(); err != nil {
		t.Fatal(err)
	}
	if err := h.RunUntilConverged(time.Minute); err != nil {
		t.Fatal(err)
	}
	ghost := &unstructured.Unstructured{}
	ghost.SetNamespace("default")
	ghost.SetName("ghost")
	ghost.SetResourceVersion("1")
	if err := inf.SharedIndexInformer().GetStore().Add(ghost); err != nil {
		t.Fatal(err)
	}
	err = h.RunUntilConverged(time.Minute)
	if v := h.Violation(); v == nil || v.Seed != 9 || !strings.Contains(err.Error(), "repro: informersim run late-join --seed 9") {
		t.Fatalf("violation %v, error %v: want seed 9 and the runner's command", v, err)
	}
}

// Goal: per-object order holds the handlers to states the apiserver committed. Method: a planted
// bug, a transform that rewrites each object's resourceVersion: the cache, the handlers and even
// the convergence check (which applies the same transform) agree with each other, and the order
// is monotonic, but the states told never existed.
func TestPlantedFabricatedState(t *testing.T) {
	w, err := world.New(7, world.Config{DefaultResource: configMaps})
	if err != nil {
		t.Fatal(err)
	}
	h, err := oracle.Attach(w, oracle.PerObjectOrder)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Apply(world.Op{Kind: world.OpCreate, Name: "a"}); err != nil {
		t.Fatal(err)
	}
	shift := func(obj any) (any, error) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			rv, _ := strconv.ParseUint(u.GetResourceVersion(), 10, 64)
			u.SetResourceVersion(strconv.FormatUint(rv+1000, 10))
		}
		return obj, nil
	}
	inf, err := w.AddInformer("inf1", world.InformerSpec{Namespace: "default", Transform: shift})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddHandler(inf, "h1", nil, world.HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := inf.Start(); err != nil {
		t.Fatal(err)
	}
	wantViolation(t, h, h.RunUntilConverged(time.Minute), oracle.PerObjectOrder, "the apiserver committed no write at rv=1002")
}
