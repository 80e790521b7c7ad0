package world

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/internal/invariant"
	"github.com/informersim/informersim/sim"
)

// swarmWatchList is the start-up the swarms give informer i (0 for inf1, 1 for inf2) under seed:
// the watch-list stream (informer.md §7.5) when bit i of the seed is set, LIST then WATCH (§7.3)
// otherwise. Any four consecutive seeds run both informers in both modes, alone and mixed, and
// a failing seed replays in its own mode.
func swarmWatchList(seed uint64, i int) bool { return seed>>i&1 == 1 }

// swarmWorld is the determinism world: fakeapi, two informers (one namespace with two
// handlers, all namespaces with a resync period and one handler), each in the start-up
// swarmWatchList draws from the seed, a seeded stream of writes with watch closes (clean and
// 410), compactions and injected request failures, then a liveness phase with faults off until
// the world converges.
func swarmWorld(seed uint64, level sim.TraceLevel) (*World, error) {
	return swarmWorldOn(seed, level, fakeapi.Config{})
}

// swarmWorldOn is swarmWorld on an apiserver of apiCfg.
func swarmWorldOn(seed uint64, level sim.TraceLevel, apiCfg fakeapi.Config) (*World, error) {
	w, err := NewFromConfig(sim.Config{Seed: seed, Trace: level, FaultSiteProbability: 0.5}, apiCfg, Config{})
	if err != nil {
		return nil, err
	}
	inf1, err := w.AddInformer("inf1", InformerSpec{Resource: pods, Namespace: "default", Informer: informer.SharedIndexInformerOptions{}, WatchList: swarmWatchList(seed, 0)})
	if err != nil {
		return nil, err
	}
	inf2, err := w.AddInformer("inf2", InformerSpec{Resource: pods, Namespace: "", Informer: informer.SharedIndexInformerOptions{ResyncPeriod: 20 * time.Second}, WatchList: swarmWatchList(seed, 1)})
	if err != nil {
		return nil, err
	}
	for _, h := range []struct {
		n      *Informer
		name   string
		resync time.Duration
	}{{inf1, "h1", useInformerResync}, {inf1, "h2", 0}, {inf2, "h1", useInformerResync}} {
		if _, err := w.AddHandler(h.n, h.name, nil, handlerOpts(h.resync)); err != nil {
			return nil, err
		}
	}
	if err := inf1.Start(); err != nil {
		return nil, err
	}
	if err := inf2.Start(); err != nil {
		return nil, err
	}
	gen, err := w.Generate(GenConfig{Namespaces: []string{"default", "other"}, Ops: 40, FaultOps: true, FaultPoints: true})
	if err != nil {
		return nil, err
	}
	// Safety phase: the workload and its faults, every delivery checked by the order oracle.
	if err := w.Sim().RunUntil(gen.Finished, time.Hour); err != nil {
		return w, err
	}
	// Liveness phase: faults off, converge.
	w.Sim().SetFaultsEnabled(false)
	return w, w.RunUntilConverged(time.Hour)
}

// Goal: a whole world replays exactly: 1,000 seeds, each run twice, give the same trace hash,
// and every run converges (each informer's cache and each handler's replayed view equal the
// apiserver's state), in both start-ups. Method: swarmWorld with sim.TraceHashOnly, whose
// informers take the start-up swarmWatchList draws from the seed; each run's requests show that
// mode was the one run (a watch-list informer sent sendInitialEvents, a LIST-then-WATCH one
// never did).
func TestWorldDeterminism1000Seeds(t *testing.T) {
	seeds := uint64(1000)
	if testing.Short() {
		seeds = 100
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		var hashes [2]string
		for i := range hashes {
			w, err := swarmWorld(seed, sim.TraceHashOnly)
			if err != nil {
				t.Fatalf("seed %d run %d: %v", seed, i+1, err)
			}
			if err := checkStartModes(w, seed); err != nil {
				t.Fatalf("seed %d run %d: %v", seed, i+1, err)
			}
			hashes[i] = w.Sim().Trace().Hash()
		}
		if hashes[0] != hashes[1] {
			t.Fatalf("seed %d: two runs hashed %s and %s", seed, hashes[0], hashes[1])
		}
	}
}

// checkStartModes checks that inf1 and inf2 started as swarmWatchList says for seed: an informer in
// the watch-list start-up sent at least one request with sendInitialEvents, one in the LIST then
// WATCH start-up none.
func checkStartModes(w *World, seed uint64) error {
	streamed := map[string]bool{}
	for _, r := range w.Server().Requests() {
		if r.Options.SendInitialEvents != nil && *r.Options.SendInitialEvents {
			streamed[r.Client] = true
		}
	}
	for i, name := range []string{"inf1", "inf2"} {
		if want := swarmWatchList(seed, i); streamed[name] != want {
			return fmt.Errorf("%s: watch-list requests sent %v, want %v", name, streamed[name], want)
		}
	}
	return nil
}

// Goal: seeds explore. Method: (1) 100 seeds of swarmWorld: distinct traces; (2) one fixed
// script (the same writes at the same times) under 100 seeds: distinct interleavings, counted by
// hashing the sequence of (actor, action) the scheduler ran, without times, so latencies alone
// do not count.
func TestWorldDistinctInterleavings(t *testing.T) {
	traces := map[string]bool{}
	for seed := uint64(1); seed <= 100; seed++ {
		w, err := swarmWorld(seed, sim.TraceHashOnly)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		traces[w.Sim().Trace().Hash()] = true
	}
	schedules := map[string]bool{}
	for seed := uint64(1); seed <= 100; seed++ {
		w, h := scriptedWorld(t, seed)
		if err := w.RunUntilConverged(time.Hour); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		schedules[hex.EncodeToString(h.Sum(nil))] = true
	}
	t.Logf("distinct traces: %d of 100 seeds; distinct interleavings of one fixed script: %d of 100 seeds", len(traces), len(schedules))
	if len(traces) < 100 {
		t.Errorf("only %d distinct traces in 100 seeds", len(traces))
	}
	if len(schedules) < 90 {
		t.Errorf("only %d distinct interleavings of a fixed script in 100 seeds", len(schedules))
	}
}

// scriptedWorld: one informer with three handlers and a fixed script of writes, a watch drop
// and a compaction; h hashes the schedule (the step sequence, without times).
func scriptedWorld(t *testing.T, seed uint64) (*World, hash.Hash) {
	t.Helper()
	w, err := NewFromConfig(sim.Config{Seed: seed, Trace: sim.TraceHashOnly}, fakeapi.Config{}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	last := int64(0)
	w.Sim().Subscribe(func(e sim.Event) {
		if e.Step != last { // the first event of a step is the step itself
			last = e.Step
			h.Write([]byte(e.Actor + " " + e.Kind + "\n"))
		}
	})
	n, err := w.AddInformer("inf1", InformerSpec{Resource: pods, Namespace: "default", Informer: informer.SharedIndexInformerOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"h1", "h2", "h3"} {
		mustAddHandler(t, w, n, name, useInformerResync)
	}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Script(100*time.Millisecond,
		create(pods, "a"), create(pods, "b"), create(pods, "c"), Op{Kind: OpSleep, Duration: 20 * time.Millisecond},
		update(pods, "a"), del(pods, "b"), Op{Kind: OpSleep, Duration: time.Second},
		Op{Kind: OpCloseWatches}, update(pods, "c"), Op{Kind: OpSleep, Duration: time.Second},
		Op{Kind: OpCompact}, Op{Kind: OpCloseWatches, Code: 410}, create(pods, "b"), del(pods, "a")); err != nil {
		t.Fatal(err)
	}
	return w, h
}

// Goal: a panicking handler fails the run, with the seed in the error, instead of crashing the
// process (design.md "Bad input").
func TestWorldHandlerPanicIsARunError(t *testing.T) {
	w, err := New(7, Config{})
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, w, create(pods, "p1"))
	n, err := w.AddInformer("inf1", InformerSpec{Resource: pods, Namespace: "default", Informer: informer.SharedIndexInformerOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	bad := informer.ResourceEventHandlerFuncs{UpdateFunc: func(_, _ any) { panic("handler bug") }}
	if _, err := w.AddHandler(n, "bad", bad, handlerOpts(useInformerResync)); err != nil {
		t.Fatal(err)
	}
	good := mustAddHandler(t, w, n, "good", useInformerResync)
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	mustConverge(t, w)
	mustApply(t, w, update(pods, "p1"))
	err = w.RunUntilConverged(time.Minute)
	var re *sim.RunError
	if !errors.As(err, &re) {
		t.Fatalf("run error %v (%T), want a *sim.RunError", err, err)
	}
	if re.Seed != 7 || re.Actor != "inf1/bad" || re.Panic != "handler bug" {
		t.Errorf("RunError seed %d actor %q panic %v, want seed 7, inf1/bad, handler bug", re.Seed, re.Actor, re.Panic)
	}
	if !strings.Contains(err.Error(), "seed 7") {
		t.Errorf("error does not name the seed: %v", err)
	}
	if got := good.Deliveries().Notifications(); len(got) == 0 {
		t.Errorf("the good handler saw nothing")
	}
}

// Goal: the per-object order oracle and the cache-before-notify oracle catch each kind of
// violation. Method: feed a DeliveryLog sequences no informer may produce, first without a cache,
// then with a cache set up to be behind or ahead of the notification.
func TestWorldRecorderOrderOracle(t *testing.T) {
	w, err := New(1, Config{})
	if err != nil {
		t.Fatal(err)
	}
	obj := defaultObject
	for _, c := range []struct {
		name string
		feed func(r recFeed)
		want string // "" means no violation
	}{
		{"in order", func(r recFeed) {
			r.OnAdd(obj("a", "2"), true)
			r.OnUpdate(obj("a", "2"), obj("a", "5"))
			r.OnUpdate(obj("a", "5"), obj("a", "5"))
			r.OnDelete(informer.DeletedFinalStateUnknown{Key: "default/a", Obj: obj("a", "5")})
			r.OnAdd(obj("a", "9"), false)
			r.OnDelete(obj("b", "3")) // a DELETED for a key never held (T2)
		}, ""},
		{"rv goes back", func(r recFeed) {
			r.OnAdd(obj("a", "5"), true)
			r.OnUpdate(obj("a", "5"), obj("a", "4"))
		}, "rv went from 5 to 4"},
		{"stale old object", func(r recFeed) {
			r.OnAdd(obj("a", "5"), true)
			r.OnUpdate(obj("a", "3"), obj("a", "7"))
		}, "not the last state"},
		{"update after delete", func(r recFeed) {
			r.OnAdd(obj("a", "5"), true)
			r.OnDelete(obj("a", "6"))
			r.OnUpdate(obj("a", "6"), obj("a", "7"))
		}, "does not hold"},
		{"double add", func(r recFeed) {
			r.OnAdd(obj("a", "5"), true)
			r.OnAdd(obj("a", "6"), false)
		}, "add of a key the handler holds"},
		{"re-creation not after the delete", func(r recFeed) {
			r.OnAdd(obj("a", "5"), true)
			r.OnDelete(obj("a", "6"))
			r.OnAdd(obj("a", "6"), false)
		}, "re-creation at rv=6 not after the delete at rv=6"},
		{"delete older than the state held", func(r recFeed) {
			r.OnAdd(obj("a", "5"), true)
			r.OnDelete(obj("a", "4"))
		}, "delete at rv=4 before rv=5"},
		{"second delete", func(r recFeed) {
			r.OnAdd(obj("a", "5"), true)
			r.OnDelete(obj("a", "5"))
			r.OnDelete(informer.DeletedFinalStateUnknown{Key: "default/a", Obj: obj("a", "5")})
		}, "second delete without a re-creation"},
		{"unparsable rv", func(r recFeed) {
			r.OnAdd(obj("a", "x"), true)
		}, `unparsable resourceVersion "x"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := violation(t, func() { c.feed(recFeed{newDeliveryLog(w, "t/h", nil, 10)}) })
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Errorf("violation %q, want one containing %q", got, c.want)
			}
		})
	}
	// Cache before notify: the delivery log compares each notification with the informer's cache.
	cache := informer.NewStore(informer.MetaNamespaceKeyFunc)
	cachedA5 := obj("a", "5")
	for _, c := range []struct {
		name   string
		cached *unstructured.Unstructured // nil: the key is not cached
		feed   func(r recFeed)
		want   string
	}{
		{"add of a newer state than cached", obj("a", "3"), func(r recFeed) { r.OnAdd(obj("a", "5"), false) }, "the cache holds an older rv=3"},
		{"delete of a key still cached at its rv", obj("a", "5"), func(r recFeed) {
			r.OnAdd(obj("a", "5"), false)
			r.OnDelete(obj("a", "5"))
		}, "the cache still holds the deleted key at rv=5"},
		{"add of the cached state", obj("a", "5"), func(r recFeed) { r.OnAdd(obj("a", "5"), false) }, ""},
		{"add of a state since deleted", nil, func(r recFeed) { r.OnAdd(obj("a", "5"), false) }, ""},
		// The cache's very object (as the informer hands it out): no RV to read again for an
		// add, but a delete of it is still caught.
		{"add of the cached object itself", cachedA5, func(r recFeed) { r.OnAdd(cachedA5, false) }, ""},
		{"update to the cached object itself", cachedA5, func(r recFeed) {
			r.OnAdd(obj("a", "4"), false)
			r.OnUpdate(obj("a", "4"), cachedA5)
		}, ""},
		{"delete of the cached object itself", cachedA5, func(r recFeed) {
			r.OnAdd(cachedA5, false)
			r.OnDelete(cachedA5)
		}, "the cache still holds the deleted key at rv=5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := cache.Replace(nil, ""); err != nil {
				t.Fatal(err)
			}
			if c.cached != nil {
				if err := cache.Add(c.cached); err != nil {
					t.Fatal(err)
				}
			}
			got := violation(t, func() { c.feed(recFeed{newDeliveryLog(w, "t/h", newCacheLookup(cache), 10)}) })
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Errorf("violation %q, want one containing %q", got, c.want)
			}
		})
	}
	// The Recorders of one informer's handlers share a cacheLookup, which keeps a lookup while the
	// cache is unchanged: a write between two handlers' deliveries of one notification, even one
	// behind the informer's back, is seen by the second check; without a write the kept lookup
	// answers. Also through a store without a generation, which is read at every check.
	for _, c := range []struct {
		name   string
		store  informer.Store
		behind bool // put the older state back in the cache between the deliveries
		want   string
	}{
		{"stale write between handlers", informer.NewStore(informer.MetaNamespaceKeyFunc), true, "the cache holds an older rv=3"},
		{"no write between handlers", informer.NewStore(informer.MetaNamespaceKeyFunc), false, ""},
		{"stale write, store without a generation", plainStore{informer.NewStore(informer.MetaNamespaceKeyFunc)}, true, "the cache holds an older rv=3"},
	} {
		t.Run("shared/"+c.name, func(t *testing.T) {
			if err := c.store.Add(obj("a", "5")); err != nil {
				t.Fatal(err)
			}
			lookup := newCacheLookup(c.store)
			first, second := newDeliveryLog(w, "t/h1", lookup, 10), newDeliveryLog(w, "t/h2", lookup, 10)
			if got := violation(t, func() { recFeed{first}.OnAdd(obj("a", "5"), false) }); got != "" {
				t.Fatalf("first handler: violation %q", got)
			}
			if c.behind {
				if err := c.store.Update(obj("a", "3")); err != nil {
					t.Fatal(err)
				}
			}
			got := violation(t, func() { recFeed{second}.OnAdd(obj("a", "5"), false) })
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Errorf("second handler: violation %q, want one containing %q", got, c.want)
			}
		})
	}
}

// plainStore hides its store's Generation: a Store that has none.
type plainStore struct{ informer.Store }

// violation runs f and returns the message of the invariant.Violation it panics with, or "".
func violation(t *testing.T, f func()) (msg string) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			var v invariant.Violation
			if err, ok := r.(error); ok && errors.As(err, &v) {
				msg = v.Message
				return
			}
			panic(r)
		}
	}()
	f()
	return ""
}

// Goal: a window of one in-flight event (flow control) and wide latencies change nothing but
// timing: the world still converges and the handlers still see every change.
func TestWorldTightWindowConverges(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		w, err := New(seed, Config{MaxInFlightEvents: 1, MinLatency: time.Millisecond, MaxLatency: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		n, err := w.AddInformer("inf1", InformerSpec{Resource: pods, Namespace: "", Informer: informer.SharedIndexInformerOptions{}})
		if err != nil {
			t.Fatal(err)
		}
		h := mustAddHandler(t, w, n, "h1", useInformerResync)
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		gen, err := w.Generate(GenConfig{Ops: 60, MaxInterval: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Sim().RunUntil(gen.Finished, time.Hour); err != nil {
			t.Fatal(err)
		}
		mustConverge(t, w)
		if h.Deliveries().Total() == 0 {
			t.Errorf("seed %d: h1 saw nothing", seed)
		}
	}
}

// Goal: constructors validate their input and never keep a bad configuration (style rule 17).
func TestWorldConfigValidation(t *testing.T) {
	got, err := Config{}.validate()
	if err != nil {
		t.Fatal(err)
	}
	want := Config{DefaultResource: pods, MinLatency: DefaultMinLatency, MaxLatency: DefaultMaxLatency, MaxInformers: DefaultMaxInformers,
		MaxHandlers: DefaultMaxHandlers, MaxInFlightEvents: DefaultMaxInFlightEvents, MaxRecordedNotifications: DefaultMaxRecordedNotifications}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("defaults (-got +want):\n%s", diff)
	}
	for _, bad := range []Config{{MinLatency: time.Second, MaxLatency: time.Millisecond}, {MinLatency: -1}, {MaxInformers: -1}} {
		if _, err := New(1, bad); err == nil {
			t.Errorf("New accepted %+v", bad)
		}
	}
	s, _ := sim.New(sim.Config{Seed: 1})
	other, _ := sim.New(sim.Config{Seed: 2})
	srv, _ := fakeapi.New(fakeapi.Config{Clock: other.ClockFor("apiserver")})
	if _, err := NewOn(s, srv, Config{}); err == nil {
		t.Error("NewOn accepted an apiserver on another sim's clock")
	}
	w, err := New(1, Config{MaxInformers: 1, MaxHandlers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddInformer("a/b", InformerSpec{}); err == nil {
		t.Error("AddInformer accepted a name with '/'")
	}
	if _, err := w.AddInformer("x", InformerSpec{Resource: pods, Namespace: "", Informer: informer.SharedIndexInformerOptions{Clock: s.Clock()}}); err == nil {
		t.Error("AddInformer accepted a Clock")
	}
	n, err := w.AddInformer("x", InformerSpec{Resource: pods, Namespace: "", Informer: informer.SharedIndexInformerOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddInformer("y", InformerSpec{Resource: pods, Namespace: "", Informer: informer.SharedIndexInformerOptions{}}); err == nil {
		t.Error("AddInformer went past MaxInformers")
	}
	mustAddHandler(t, w, n, "h", useInformerResync)
	if _, err := w.AddHandler(n, "h2", nil, handlerOpts(useInformerResync)); err == nil {
		t.Error("AddHandler went past MaxHandlers")
	}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	if err := n.Start(); err == nil {
		t.Error("second Start succeeded")
	}
	// A stopped informer no longer counts: a restarted controller builds its informers again.
	n.Stop()
	if _, err := w.AddInformer("y", InformerSpec{Resource: pods, Namespace: "", Informer: informer.SharedIndexInformerOptions{}}); err != nil {
		t.Errorf("AddInformer after the only informer stopped: %v", err)
	}
}

// Goal: the oracles hold under every queue mode, scheduling policy and start-up, and under extreme
// apiserver presets (style rule 11): lagging replicas behind random routing, a watch-cache
// history of 3 events, a per-watch buffer of 2 (slow-consumer closes), watches that end every
// few seconds, compaction every second, 410 answered from Watch() itself. Method: a swarm world
// with a late join and a resync period, 15 seeds per combination (1,890 runs), each informer in
// the start-up swarmWatchList draws from the seed (so every combination runs both); every run
// must converge, in the start-ups drawn.
func TestWorldSwarmPresets(t *testing.T) {
	seeds := uint64(15)
	if testing.Short() {
		seeds = 3
	}
	type preset struct {
		name string
		api  fakeapi.Config
		lag  func(*fakeapi.Server)
	}
	presets := []preset{
		{"default", fakeapi.Config{}, nil},
		{"replicas-random-lag", fakeapi.Config{Replicas: 3, Routing: fakeapi.RoutingRandom}, func(s *fakeapi.Server) {
			s.Replicas().SetLag(1, 2*time.Second)
			s.Replicas().SetLag(2, 300*time.Millisecond)
		}},
		{"history-3", fakeapi.Config{MaxCacheHistoryEvents: 3}, nil},
		{"watch-buffer-2", fakeapi.Config{MaxWatchEvents: 2}, nil},
		{"short-watches", fakeapi.Config{WatchTimeout: fakeapi.WatchTimeoutServer, MinRequestTimeout: 2 * time.Second, BookmarkInterval: 500 * time.Millisecond}, nil},
		{"compact-1s", fakeapi.Config{CompactionInterval: time.Second}, nil},
		{"expired-as-error", fakeapi.Config{ExpiredWatchAsError: true, MaxCacheHistoryEvents: 5}, nil},
	}
	run := func(seed uint64, p sim.Policy, pr preset, qm informer.QueueMode, batch bool) error {
		w, err := NewFromConfig(sim.Config{Seed: seed, Policy: p, Trace: sim.TraceHashOnly, FaultSiteProbability: 0.5}, pr.api, Config{})
		if err != nil {
			return err
		}
		if pr.lag != nil {
			pr.lag(w.Server())
		}
		opts := informer.SharedIndexInformerOptions{QueueMode: qm, DisableBatchPop: !batch}
		inf1, err := w.AddInformer("inf1", InformerSpec{Resource: pods, Namespace: "default", Informer: informer.SharedIndexInformerOptions{QueueMode: qm, DisableBatchPop: !batch, ResyncPeriod: 7 * time.Second}, WatchList: swarmWatchList(seed, 0)})
		if err != nil {
			return err
		}
		inf2, err := w.AddInformer("inf2", InformerSpec{Resource: pods, Namespace: "", Informer: opts, WatchList: swarmWatchList(seed, 1)})
		if err != nil {
			return err
		}
		for _, h := range []struct {
			n      *Informer
			name   string
			resync time.Duration
		}{{inf1, "h1", useInformerResync}, {inf1, "h2", 0}, {inf2, "h1", useInformerResync}} {
			if _, err := w.AddHandler(h.n, h.name, nil, handlerOpts(h.resync)); err != nil {
				return err
			}
		}
		if err := errors.Join(inf1.Start(), inf2.Start()); err != nil {
			return err
		}
		gen, err := w.Generate(GenConfig{Namespaces: []string{"default", "other"}, Ops: 80, MaxInterval: 500 * time.Millisecond, FaultOps: true, FaultPoints: true})
		if err != nil {
			return err
		}
		var joinErr error
		if _, err := w.After(3*time.Second, "test", "join", func() { _, joinErr = w.AddHandler(inf1, "late", nil, handlerOpts(useInformerResync)) }); err != nil {
			return err
		}
		if err := w.Sim().RunUntil(gen.Finished, time.Hour); err != nil {
			return err
		}
		w.Sim().SetFaultsEnabled(false)
		return errors.Join(joinErr, w.RunUntilConverged(time.Hour), checkStartModes(w, seed))
	}
	for _, pr := range presets {
		for _, qm := range []informer.QueueMode{informer.QueueRealFIFO, informer.QueueRealFIFONonAtomic, informer.QueueDeltaFIFO} {
			for _, batch := range []bool{true, false} {
				for _, p := range []sim.Policy{sim.PolicyRandom, sim.PolicyPCT, sim.PolicyFIFO} {
					for seed := uint64(1); seed <= seeds; seed++ {
						if err := run(seed, p, pr, qm, batch); err != nil {
							t.Fatalf("%s %v batch=%v %v seed %d: %v", pr.name, qm, batch, p, seed, err)
						}
					}
				}
			}
		}
	}
}

// Goal: a watch stream is TCP: with latencies from 1ms to 1s, events that leave the apiserver
// together still reach the Reflector in revision order, never before the WATCH response, and
// the stream's end after its last event. Method: watch the narration of inf1/reflector and
// inf1/net for 20 seeds of 40 writes issued at one instant; then 40 more followed at once by a
// clean close, which drops the undelivered events at the apiserver (a closed connection loses
// them): they arrive on the re-watch, in order, after the end of the old stream.
func TestWorldStreamKeepsOrder(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		w, err := New(seed, Config{MinLatency: time.Millisecond, MaxLatency: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		n, err := w.AddInformer("inf1", InformerSpec{Resource: pods, Namespace: "default", Informer: informer.SharedIndexInformerOptions{}})
		if err != nil {
			t.Fatal(err)
		}
		mustAddHandler(t, w, n, "h1", useInformerResync)
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		mustConverge(t, w)
		var got []string
		w.Sim().Subscribe(func(e sim.Event) {
			switch {
			case e.Actor == "inf1/net" && e.Kind == "WATCH-ok":
				got = append(got, "open")
			case e.Actor == "inf1/reflector" && (e.Kind == "ADDED" || e.Kind == "MODIFIED" || e.Kind == "DELETED"):
				got = append(got, e.Fields[1].Value)
			case e.Actor == "inf1/reflector" && e.Kind == "EOF":
				got = append(got, "eof")
			}
		})
		var want []string
		writes := func(from int) {
			for i := from; i < from+40; i++ {
				name := "p" + strconv.Itoa(i%7)
				op := create(pods, name)
				if i >= 7 {
					op = update(pods, name)
				}
				mustApply(t, w, op)
				want = append(want, strconv.FormatUint(w.Server().Revision(), 10))
			}
		}
		writes(0)
		mustConverge(t, w)
		want = append(want, "eof", "open") // the close below comes before any pull
		writes(40)
		mustApply(t, w, Op{Kind: OpCloseWatches})
		mustConverge(t, w)
		if diff := cmp.Diff(got, want); diff != "" {
			t.Fatalf("seed %d: arrivals (-got +want):\n%s", seed, diff)
		}
	}
}

// Goal: every public entry point of the world refuses bad input with an error that says what is
// wrong, and an op refused up front changes nothing: no trace event, no timer (design.md "Bad
// input"). Method: call each with input it must refuse, then check the trace and the engine's
// pending timers did not move. Writes the apiserver rejects (an empty name) come back as the
// apiserver's own error, narrated.
func TestWorldRefusesBadInput(t *testing.T) {
	w, err := New(1, Config{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := New(2, Config{})
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := other.AddInformer("inf1", InformerSpec{Resource: pods, Namespace: "", Informer: informer.SharedIndexInformerOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	n, err := w.AddInformer("inf1", InformerSpec{Resource: pods, Namespace: "default", Informer: informer.SharedIndexInformerOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	stopped, err := w.AddInformer("inf2", InformerSpec{Resource: pods, Namespace: "default", Informer: informer.SharedIndexInformerOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	stopped.Stop()
	before, pending := w.Sim().Trace().Len(), w.Sim().PendingTimers()
	for _, c := range []struct {
		call string
		err  error
		want string
	}{
		{"Apply(kind 0)", w.Apply(Op{}), "unknown op kind OpKind(0)"},
		{"Apply(kind 99)", w.Apply(Op{Kind: 99}), "unknown op kind OpKind(99)"},
		{"Apply(close code 200)", w.Apply(Op{Kind: OpCloseWatches, Code: 200}), "HTTP error code"},
		{"Apply(close code -1)", w.Apply(Op{Kind: OpCloseWatches, Code: -1}), "HTTP error code"},
		{"Apply(fail-next no verb)", w.Apply(Op{Kind: OpFailNext, Code: 500}), "needs a Verb"},
		{"Apply(fail-next verb 99)", w.Apply(Op{Kind: OpFailNext, Verb: 99, Code: 500}), "needs a Verb"},
		{"Apply(fail-next code 200)", w.Apply(Op{Kind: OpFailNext, Verb: fakeapi.VerbList, Code: 200}), "HTTP error Code"},
		{"Apply(sleep -1s)", w.Apply(Op{Kind: OpSleep, Duration: -time.Second}), "negative Duration"},
		{"AddHandler(nil)", errOf(w.AddHandler(nil, "h", nil, handlerOpts(useInformerResync))), "nil informer"},
		{"AddHandler(other world)", errOf(w.AddHandler(foreign, "h", nil, handlerOpts(useInformerResync))), "another world"},
		{"AddHandler(stopped)", errOf(w.AddHandler(stopped, "h", nil, handlerOpts(useInformerResync))), "informer inf2 is stopped"},
		{"AddHandler(resync -5s)", errOf(w.AddHandler(n, "h", nil, HandlerOptions{ResyncPeriod: ptrTo(-5 * time.Second)})), "negative ResyncPeriod -5s"},
		{"AddHandler(name a b)", errOf(w.AddHandler(n, "a b", nil, handlerOpts(useInformerResync))), `invalid name "a b"`},
		{"AddInformer(namespace a/b)", errOf(w.AddInformer("inf3", InformerSpec{Resource: pods, Namespace: "a/b", Informer: informer.SharedIndexInformerOptions{}})), `invalid namespace "a/b"`},
		{"AddInformer(resync -1s)", errOf(w.AddInformer("inf3", InformerSpec{Resource: pods, Namespace: "", Informer: informer.SharedIndexInformerOptions{ResyncPeriod: -time.Second}})), "negative ResyncPeriod"},
		{"Start(stopped)", stopped.Start(), "Start on a started or stopped informer"},
		{"RunUntilConverged(-1ns)", w.RunUntilConverged(-1), "negative budget"},
		{"After(-1s)", errOf(w.After(-time.Second, "test", "x", func() {})), "negative delay"},
		{"After(nil)", errOf(w.After(time.Second, "test", "x", nil)), "nil func"},
		{"After(no actor)", errOf(w.After(time.Second, "", "x", func() {})), "empty actor"},
		{"Script(-1s)", errOf(w.Script(-time.Second, create(pods, "a"))), "negative delay"},
		{"Script(bad op)", errOf(w.Script(0, create(pods, "a"), Op{Kind: OpSleep, Duration: -1})), "(Script op 1)"},
		{"Generate(namespace A)", errOf(w.Generate(GenConfig{Namespaces: []string{"A"}})), `invalid namespace "A"`},
		{"Generate(interval)", errOf(w.Generate(GenConfig{MinInterval: time.Second, MaxInterval: time.Millisecond})), "MinInterval <= MaxInterval"},
		{"Generate(ops -1)", errOf(w.Generate(GenConfig{Ops: -1})), "negative Ops -1"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) || !strings.HasPrefix(c.err.Error(), "world: ") {
			t.Errorf("%s = %v, want an error starting \"world: \" and containing %q", c.call, c.err, c.want)
		}
	}
	if got := w.Sim().Trace().Len(); got != before {
		t.Errorf("refused calls added %d trace events:\n%s", got-before, tail(w, int(got-before)))
	}
	if got := w.Sim().PendingTimers(); got != pending {
		t.Errorf("refused calls left %d timers pending, want %d", got, pending)
	}
	if w.Quiet() != true || len(w.Informers()) != 2 || len(n.Handlers()) != 0 {
		t.Errorf("refused calls changed the world: quiet %v, %d informers, %d handlers", w.Quiet(), len(w.Informers()), len(n.Handlers()))
	}
	for _, op := range []Op{create(pods, ""), update(pods, ""), del(pods, "")} {
		if err := w.Apply(op); err == nil {
			t.Errorf("Apply(%s) succeeded", op)
		}
	}
	if got := strings.Count(sim.Narrate(w.Sim().Trace().Events()), "apiserver: write-error"); got != 3 {
		t.Errorf("%d write-error events for three rejected writes, want 3", got)
	}
}

// errOf keeps the error of a call that returns a value and an error.
func errOf[T any](_ T, err error) error { return err }

// Goal: a DeliveryLog keeps the last MaxRecordedNotifications notifications, oldest first, across
// many wraps of its window, counts the dropped ones in Total, and Take empties the window and
// starts it again. Method: feed a DeliveryLog bounded at 3 with 3, then 8, then 2 updates of one
// object and compare its kept notifications with the last ones fed.
func TestWorldRecorderKeepsTheLastNotifications(t *testing.T) {
	w, err := New(1, Config{})
	if err != nil {
		t.Fatal(err)
	}
	obj := func(rv int) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetNamespace("default")
		u.SetName("a")
		u.SetResourceVersion(strconv.Itoa(rv))
		return u
	}
	r := newDeliveryLog(w, "t/h", nil, 3)
	feed := recFeed{r}
	feed.OnAdd(obj(1), true)
	rv := 1
	kept := func() []string {
		var out []string
		for _, n := range r.Notifications() {
			out = append(out, n.ResourceVersion)
		}
		return out
	}
	for _, c := range []struct {
		updates int
		want    []string
	}{
		{2, []string{"1", "2", "3"}},    // exactly full, not wrapped
		{8, []string{"9", "10", "11"}},  // wrapped twice and two thirds
		{2, []string{"11", "12", "13"}}, // the ring's head moves on
	} {
		for range c.updates {
			feed.OnUpdate(obj(rv), obj(rv+1))
			rv++
		}
		if got := kept(); !slices.Equal(got, c.want) {
			t.Fatalf("after rv %d: kept rvs %v, want %v", rv, got, c.want)
		}
		var want []string
		for _, n := range r.Notifications() {
			want = append(want, n.String())
		}
		if got := r.Strings(); !slices.Equal(got, want) {
			t.Fatalf("after rv %d: Strings %q, want %q", rv, got, want)
		}
	}
	if r.Total() != 13 {
		t.Fatalf("Total %d, want 13", r.Total())
	}
	if got := r.Take(); len(got) != 3 || len(r.Notifications()) != 0 {
		t.Fatalf("Take returned %d, then %d kept; want 3 then 0", len(got), len(r.Notifications()))
	}
	feed.OnUpdate(obj(rv), obj(rv+1))
	rv++
	if got := kept(); !slices.Equal(got, []string{"14"}) {
		t.Fatalf("after Take: kept rvs %v, want [14]", got)
	}
}
