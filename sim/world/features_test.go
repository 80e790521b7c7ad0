package world

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim"
)

// Goal (issue 8 item 2): registrations made on the informer itself, before and after Start, are
// the world's: stepped by an actor, narrated, order-checked, counted by Quiet, and a later
// World.AddHandler still works (it used to predict the registration ID and panic). Removing one
// on the informer is seen too.
func TestWorldDiscoversRegistrationsMadeOnTheInformer(t *testing.T) {
	for _, seed := range traceSeeds {
		w := newTraceWorld(t, seed)
		mustApply(t, w, create(configMaps, "a"), create(configMaps, "b"))
		n, err := w.AddInformer("inf1", InformerSpec{Resource: configMaps, Namespace: "default"})
		if err != nil {
			t.Fatal(err)
		}
		var early, late []string
		record := func(into *[]string) informer.ResourceEventHandlerFuncs {
			return informer.ResourceEventHandlerFuncs{
				AddFunc:    func(obj any) { *into = append(*into, "add "+obj.(*unstructured.Unstructured).GetName()) },
				UpdateFunc: func(_, obj any) { *into = append(*into, "upd "+obj.(*unstructured.Unstructured).GetName()) },
			}
		}
		if _, err := n.SharedIndexInformer().AddEventHandler(record(&early)); err != nil {
			t.Fatal(err)
		}
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		mustConverge(t, w)
		lateReg, err := n.SharedIndexInformer().AddEventHandler(record(&late)) // joins late, outside any step
		if err != nil {
			t.Fatal(err)
		}
		if w.Quiet() {
			t.Fatalf("seed %d: Quiet with a late registration's initial adds buffered", seed)
		}
		mine, err := w.AddHandler(n, "mine", nil, HandlerOptions{})
		if err != nil {
			t.Fatalf("seed %d: AddHandler after a registration made on the informer: %v", seed, err)
		}
		mustApply(t, w, update(configMaps, "a"))
		mustConverge(t, w)
		hs := n.Handlers()
		if len(hs) != 3 || hs[0].Name() != "h1" || hs[1].Name() != "h2" || hs[2] != mine || mine.ID() != 3 {
			t.Fatalf("seed %d: handlers %v", seed, hs)
		}
		slices.Sort(early[:2])
		if diff := cmp.Diff(early, []string{"add a", "add b", "upd a"}); diff != "" {
			t.Errorf("seed %d: the early registration's calls (-got +want):\n%s", seed, diff)
		}
		slices.Sort(late[:2])
		if diff := cmp.Diff(late, []string{"add a", "add b", "upd a"}); diff != "" {
			t.Errorf("seed %d: the late registration's calls (-got +want):\n%s", seed, diff)
		}
		for _, h := range hs {
			if got := len(h.Deliveries().Notifications()); got != 3 {
				t.Errorf("seed %d %s: %d notifications recorded, want 3", seed, h.Actor(), got)
			}
		}
		narration := sim.Narrate(w.Sim().Trace().Events())
		for _, want := range []string{"inf1/h1: register", "inf1/h2: join snapshot=2", "inf1/h2: OnAdd obj=default/a", "inf1/mine: join snapshot=2"} {
			if !strings.Contains(narration, want) {
				t.Errorf("seed %d: narration lacks %q", seed, want)
			}
		}
		if err := n.SharedIndexInformer().RemoveEventHandler(lateReg); err != nil {
			t.Fatal(err)
		}
		if !hs[1].Removed() {
			t.Errorf("seed %d: a registration removed on the informer is not Removed", seed)
		}
	}
}

// Goal (item 2, oracle side): a registration made on the informer is order-checked: a delivery
// that breaks per-object order fails the run. Method: feed the discovered handler's DeliveryLog a
// stale update right after a real delivery and expect the violation.
func TestWorldDiscoveredRegistrationsAreOrderChecked(t *testing.T) {
	w := newTraceWorld(t, 1)
	mustApply(t, w, create(configMaps, "a"))
	n, err := w.AddInformer("inf1", InformerSpec{Resource: configMaps, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.SharedIndexInformer().AddEventHandler(informer.ResourceEventHandlerFuncs{}); err != nil {
		t.Fatal(err)
	}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	mustConverge(t, w)
	h := n.Handlers()[0]
	obj := func(rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetNamespace("default")
		u.SetName("a")
		u.SetResourceVersion(rv)
		return u
	}
	msg := violation(t, func() { recFeed{h.Deliveries()}.OnUpdate(obj("2"), obj("1")) })
	if !strings.Contains(msg, "rv went from 2 to 1") {
		t.Errorf("violation %q", msg)
	}
}

// worker is a controller's worker as a user actor: handlers enqueue keys, "work" takes one key
// per step, takes WorkTime of simulated time (a retry timer for a failed key), and records the
// derived state: the label "app" of each object it has seen.
type worker struct {
	w       *World
	queue   []string
	derived map[string]string
	busy    bool
	retries int
}

func (k *worker) Name() string { return "ctrl/worker" }

func (k *worker) Actions(add func(sim.Action)) {
	if len(k.queue) > 0 && !k.busy {
		add(sim.Action{Name: "work", Run: k.work})
	}
}

func (k *worker) work() {
	key := k.queue[0]
	k.queue = k.queue[1:]
	k.busy = true
	// The work takes 2s of simulated time; the first attempt of each key fails and is retried
	// 5s later: the controller stays busy long after the informer is quiet.
	_, _ = k.w.After(2*time.Second, "ctrl/worker", "done", func() {
		k.busy = false
		list, err := k.w.Server().Snapshot(configMaps, "default", metav1.ListOptions{})
		if err != nil {
			panic(err)
		}
		k.derived = map[string]string{}
		for _, u := range list.Items {
			k.derived[u.GetName()] = u.GetLabels()["app"]
		}
		if k.retries < 1 {
			k.retries++
			_, _ = k.w.After(5*time.Second, "ctrl/worker", "retry", func() { k.queue = append(k.queue, key) })
		}
	})
}

// Goal (item 3): user actors, timers, quiet conditions and named checks count: RunUntilConverged
// returns only once the worker has drained its queue and its timers have fired, and a named
// check of the worker's derived state runs and is reported like an oracle.
func TestWorldUserWorkCountsForQuiet(t *testing.T) {
	for _, seed := range traceSeeds {
		w := newTraceWorld(t, seed)
		n, err := w.AddInformer("inf1", InformerSpec{Resource: configMaps, Namespace: "default"})
		if err != nil {
			t.Fatal(err)
		}
		k := &worker{w: w}
		enqueue := func(obj any) {
			key, _ := informer.DeletionHandlingMetaNamespaceKeyFunc(obj)
			k.queue = append(k.queue, key)
		}
		if _, err := w.AddHandler(n, "ctrl", informer.ResourceEventHandlerFuncs{
			AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue,
		}, HandlerOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := w.AddActor(k); err != nil {
			t.Fatal(err)
		}
		if err := w.AddCheck("derived labels", func() error {
			list, err := w.Server().Snapshot(configMaps, "default", metav1.ListOptions{})
			if err != nil {
				return err
			}
			want := map[string]string{}
			for _, u := range list.Items {
				want[u.GetName()] = u.GetLabels()["app"]
			}
			if diff := cmp.Diff(k.derived, want); diff != "" {
				return fmt.Errorf("derived state (-got +want):\n%s", diff)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		settledAt := time.Duration(0)
		if err := w.AddQuietCondition("settled 30s in", func() bool { return w.Sim().Now() >= settledAt }); err != nil {
			t.Fatal(err)
		}
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		mustApply(t, w, Op{Kind: OpCreate, Resource: configMaps, Name: "a", Labels: map[string]string{"app": "web"}})
		mustConverge(t, w)
		if len(k.queue) != 0 || k.busy || k.derived["a"] != "web" || k.retries != 1 {
			t.Fatalf("seed %d: converged with the worker not done: queue %v busy %v derived %v retries %d", seed, k.queue, k.busy, k.derived, k.retries)
		}
		// A quiet condition holds the world until it is true.
		settledAt = w.Sim().Now() + 30*time.Second
		mustConverge(t, w)
		if w.Sim().Now() < settledAt {
			t.Errorf("seed %d: converged at %v before the quiet condition's %v", seed, w.Sim().Now(), settledAt)
		}
		// A check that fails is reported by name, with the seed and the repro line.
		k.derived["ghost"] = "x"
		err = w.CheckConverged()
		if err == nil || !strings.Contains(err.Error(), `world: check "derived labels" failed`) ||
			!strings.Contains(err.Error(), fmt.Sprintf("seed %d", seed)) || !strings.Contains(err.Error(), SeedEnv) {
			t.Errorf("seed %d: CheckConverged with a broken derived state: %v", seed, err)
		}
	}
}

// Goal (item 3): a handler given a CallDuration takes that much simulated time per call: its
// notifications queue up behind it, each delivered at least CallDuration after the previous,
// and the world is not Quiet until the last call is over.
func TestWorldSlowHandler(t *testing.T) {
	for _, seed := range traceSeeds {
		w := newTraceWorld(t, seed)
		n, err := w.AddInformer("inf1", InformerSpec{Resource: configMaps, Namespace: "default"})
		if err != nil {
			t.Fatal(err)
		}
		slow, err := w.AddHandler(n, "slow", nil, HandlerOptions{CallDuration: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		fast := mustAddHandler(t, w, n, "fast", useInformerResync)
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		mustConverge(t, w)
		start := w.Sim().Now()
		for _, name := range []string{"a", "b", "c", "d", "e"} {
			mustApply(t, w, create(configMaps, name))
		}
		mustConverge(t, w)
		if w.Sim().Now()-start < 5*time.Second {
			t.Errorf("seed %d: five 1s calls converged after %v", seed, w.Sim().Now()-start)
		}
		notes := slow.Deliveries().Notifications()
		for i := 1; i < len(notes); i++ {
			if gap := notes[i].Time - notes[i-1].Time; gap < time.Second {
				t.Errorf("seed %d: slow handler calls %d and %d only %v apart", seed, i-1, i, gap)
			}
		}
		if last := fast.Deliveries().Notifications(); last[len(last)-1].Time-start > time.Second {
			t.Errorf("seed %d: the fast handler was held up by the slow one", seed)
		}
	}
}

// Goal (item 4): observation changes nothing: a run that checks convergence (CheckConverged and
// a user check reading the apiserver) every 100ms of simulated time has the same trace hash as
// the run that never checks, with random replica routing, lagging replicas and injected
// failures on.
func TestWorldObservationChangesNothing(t *testing.T) {
	run := func(seed uint64, observe bool) string {
		w, err := NewFromConfig(sim.Config{Seed: seed, Trace: sim.TraceHashOnly, FaultSiteProbability: 1, FaultHitProbability: 0.5},
			fakeapi.Config{Replicas: 3, Routing: fakeapi.RoutingRandom}, Config{})
		if err != nil {
			t.Fatal(err)
		}
		w.Server().Replicas().SetLag(1, 300*time.Millisecond)
		n, err := w.AddInformer("inf1", InformerSpec{Namespace: "default"})
		if err != nil {
			t.Fatal(err)
		}
		mustAddHandler(t, w, n, "h1", useInformerResync)
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		if observe {
			if err := w.AddCheck("snapshot", func() error {
				_, err := w.Server().Snapshot(pods, "", metav1.ListOptions{})
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		gen, err := w.Generate(GenConfig{Ops: 40, FaultOps: true, FaultPoints: true})
		if err != nil {
			t.Fatal(err)
		}
		for !gen.Finished() {
			if err := w.Sim().RunFor(100 * time.Millisecond); err != nil {
				t.Fatal(err)
			}
			if observe {
				_ = w.CheckConverged() // mid-run: may well not hold; it must change nothing
				_ = w.Quiet()
			}
		}
		w.Sim().SetFaultsEnabled(false)
		if err := w.RunUntilConverged(time.Hour); err != nil {
			t.Fatalf("seed %d observe=%v: %v", seed, observe, err)
		}
		return w.Sim().Trace().Hash()
	}
	for seed := uint64(1); seed <= 10; seed++ {
		if a, b := run(seed, false), run(seed, true); a != b {
			t.Errorf("seed %d: the run with checks hashed %s, without %s", seed, b, a)
		}
	}
}

// Goal (item 5): fault decisions come from the "faults" stream only: turning faults off (in the
// engine, or in the generator) leaves the workload's ops, and their times, unchanged; and the
// generator records the ops it issued, fault ops marked.
func TestWorldFaultsDoNotShiftTheWorkload(t *testing.T) {
	workload := func(seed uint64, engineFaults, genFaults bool) (ops []GeneratedOp, faults int) {
		w, err := NewFromConfig(sim.Config{Seed: seed, DisableFaults: !engineFaults, FaultSiteProbability: 1, FaultHitProbability: 0.5}, fakeapi.Config{}, Config{})
		if err != nil {
			t.Fatal(err)
		}
		n, err := w.AddInformer("inf1", InformerSpec{})
		if err != nil {
			t.Fatal(err)
		}
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		gen, err := w.Generate(GenConfig{Namespaces: []string{"default", "other"}, Ops: 60, FaultOps: true, FaultPoints: genFaults})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Sim().RunUntil(gen.Finished, time.Hour); err != nil {
			t.Fatal(err)
		}
		for _, g := range gen.Ops() {
			if g.FaultPoint {
				faults++
				continue
			}
			ops = append(ops, g)
		}
		return ops, faults
	}
	for seed := uint64(1); seed <= 20; seed++ {
		with, nf := workload(seed, true, true)
		if nf == 0 {
			t.Fatalf("seed %d: no fault op issued with faults on", seed)
		}
		if len(with) != 60 {
			t.Fatalf("seed %d: %d workload ops recorded, want 60", seed, len(with))
		}
		for _, off := range []struct {
			name           string
			engine, genCfg bool
		}{{"engine faults off", false, true}, {"generator faults off", true, false}} {
			without, nf := workload(seed, off.engine, off.genCfg)
			if nf != 0 {
				t.Errorf("seed %d %s: %d fault ops", seed, off.name, nf)
			}
			if diff := cmp.Diff(without, with); diff != "" {
				t.Errorf("seed %d %s: the workload changed (-off +on):\n%s", seed, off.name, diff)
			}
		}
	}
}

// Goal (item 7): selectors and transforms: an informer with a label selector and one with a field
// selector cache only what matches, including objects that stop or start matching, and converge
// against the apiserver's state for their selector; a transform to a typed object converges
// when the world knows the transform (or is given Equal), and the oracle catches a cache
// transformed behind its back.
func TestWorldSelectorsAndTransforms(t *testing.T) {
	for _, seed := range traceSeeds {
		w := newTraceWorld(t, seed)
		web, err := w.AddInformer("web", InformerSpec{Resource: configMaps, LabelSelector: "app=web"})
		if err != nil {
			t.Fatal(err)
		}
		named, err := w.AddInformer("named", InformerSpec{Resource: configMaps, FieldSelector: "metadata.name=b"})
		if err != nil {
			t.Fatal(err)
		}
		slimInf, err := w.AddInformer("slim", InformerSpec{Resource: configMaps, Transform: toSlim})
		if err != nil {
			t.Fatal(err)
		}
		eq, err := w.AddInformer("eq", InformerSpec{Resource: configMaps, Transform: toSlim,
			Equal: func(got, want any) bool { return got.(*slim).Name == want.(*slim).Name }})
		if err != nil {
			t.Fatal(err)
		}
		hs := map[string]*Handler{}
		for _, n := range []*Informer{web, named, slimInf, eq} {
			hs[n.Name()] = mustAddHandler(t, w, n, "h", useInformerResync)
			if err := n.Start(); err != nil {
				t.Fatal(err)
			}
		}
		label := func(v string) map[string]string { return map[string]string{"app": v} }
		mustApply(t, w,
			Op{Kind: OpCreate, Resource: configMaps, Name: "a", Labels: label("web")},
			Op{Kind: OpCreate, Resource: configMaps, Name: "b", Labels: label("db")},
			Op{Kind: OpCreate, Resource: configMaps, Name: "c", Labels: label("web")})
		mustConverge(t, w)
		keys := func(n *Informer) []string {
			var out []string
			for _, o := range n.SharedIndexInformer().GetStore().List() {
				k, _ := describe(o)
				out = append(out, k)
			}
			slices.Sort(out)
			return out
		}
		if got := keys(web); !slices.Equal(got, []string{"default/a", "default/c"}) {
			t.Errorf("seed %d: label-selected cache %v", seed, got)
		}
		if got := keys(named); !slices.Equal(got, []string{"default/b"}) {
			t.Errorf("seed %d: field-selected cache %v", seed, got)
		}
		// a stops matching, b starts: the watch says so, and the oracle agrees.
		mustApply(t, w, Op{Kind: OpUpdate, Resource: configMaps, Name: "a", Labels: label("db")},
			Op{Kind: OpUpdate, Resource: configMaps, Name: "b", Labels: label("web")})
		mustConverge(t, w)
		if got := keys(web); !slices.Equal(got, []string{"default/b", "default/c"}) {
			t.Errorf("seed %d: label-selected cache after relabelling %v", seed, got)
		}
		if _, ok := hs["slim"].Deliveries().View()["default/a"].(*slim); !ok {
			t.Errorf("seed %d: the transformed informer's handler did not get typed objects", seed)
		}
	}
	// A transform the world does not know about: the oracle sees typed objects where the
	// apiserver has unstructured ones, and says so.
	w := newTraceWorld(t, 1)
	src, err := w.NewSource("hidden", InformerSpec{Resource: configMaps})
	if err != nil {
		t.Fatal(err)
	}
	inf := informer.NewSharedIndexInformerWithOptions(src.ListerWatcher(), src.ExampleObject(), src.Options(informer.SharedIndexInformerOptions{}))
	if err := inf.SetTransform(toSlim); err != nil {
		t.Fatal(err)
	}
	n, err := w.HostInformer(src, inf)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	mustApply(t, w, create(configMaps, "a"))
	if err := w.RunUntilConverged(time.Minute); err == nil || !strings.Contains(err.Error(), "key default/a: same rv=2 but different content") {
		t.Errorf("a transform hidden from the oracle: %v", err)
	}
}

// slim is a typed object an informer's transform makes of a configmap.
type slim struct {
	metav1.ObjectMeta
}

func toSlim(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil // tombstones and the like pass through
	}
	return &slim{ObjectMeta: metav1.ObjectMeta{Namespace: u.GetNamespace(), Name: u.GetName(), ResourceVersion: u.GetResourceVersion(), Labels: u.GetLabels()}}, nil
}

// Goal (item 8): converging with an informer that was never started is an error that says so,
// and the new entry points refuse bad input with an error naming them.
func TestWorldClearErrors(t *testing.T) {
	w := newTraceWorld(t, 1)
	n, err := w.AddInformer("inf1", InformerSpec{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.RunUntilConverged(time.Minute); err == nil || !strings.Contains(err.Error(), "informer inf1 was never started") {
		t.Errorf("RunUntilConverged with an unstarted informer: %v", err)
	}
	other := newTraceWorld(t, 2)
	otherSrc, err := other.NewSource("o", InformerSpec{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := w.NewSource("s", InformerSpec{})
	if err != nil {
		t.Fatal(err)
	}
	h := mustAddHandler(t, w, n, "h", useInformerResync)
	t.Setenv(SeedEnv, "forty-two")
	for _, c := range []struct {
		call string
		err  error
		want string
	}{
		{"AddActor(nil)", w.AddActor(nil), "nil actor"},
		{"AddActor(inf1/queue)", w.AddActor(&funcActor{name: "inf1/queue", ready: func() bool { return false }}), "already in use"},
		{"AddActor(bad name)", w.AddActor(&funcActor{name: "a b", ready: func() bool { return false }}), "invalid name"},
		{"AddCheck(no name)", w.AddCheck("", func() error { return nil }), "empty name"},
		{"AddCheck(nil)", w.AddCheck("x", nil), `AddCheck "x": nil check`},
		{"AddQuietCondition(no name)", w.AddQuietCondition("", func() bool { return true }), "empty name"},
		{"AddQuietCondition(nil)", w.AddQuietCondition("x", nil), `AddQuietCondition "x": nil condition`},
		{"RunUntilConverged(-1s)", w.RunUntilConverged(-time.Second), "negative budget"},
		{"NewSource(bad selector)", errOf(w.NewSource("x", InformerSpec{LabelSelector: "a in ("})), "selectors"},
		{"NewSource(bad field)", errOf(w.NewSource("x", InformerSpec{FieldSelector: "spec.colour=red"})), "field label not supported"},
		{"NewSource(cluster-scoped with namespace)", errOf(w.NewSource("x", InformerSpec{Resource: nodesGVR, Namespace: "default"})), "cluster-scoped"},
		{"NewSource(unserved)", errOf(w.NewSource("x", InformerSpec{Resource: nodesGVR.GroupVersion().WithResource("widgets")})), "does not serve"},
		{"HostInformer(nil)", errOf(w.HostInformer(nil, nil)), "nil Source"},
		{"HostInformer(other world)", errOf(w.HostInformer(otherSrc, n.SharedIndexInformer())), "another world"},
		{"HostInformer(driven informer)", errOf(w.HostInformer(src, n.SharedIndexInformer())), "informer"},
		{"AddHandler(CallDuration -1s)", errOf(w.AddHandler(n, "x", nil, HandlerOptions{CallDuration: -time.Second})), "negative CallDuration"},
		{"SetCallDuration(-1s)", h.SetCallDuration(-time.Second), "negative duration"},
		{"Apply(patch on create)", w.Apply(Op{Kind: OpCreate, Name: "a", Patch: "{}"}), "only for patch"},
		{"Apply(content with metadata)", w.Apply(Op{Kind: OpCreate, Name: "a", Content: map[string]any{"metadata": map[string]any{}}}), `must not hold "metadata"`},
		{"Apply(content not JSON)", w.Apply(Op{Kind: OpCreate, Name: "a", Content: map[string]any{"data": make(chan int)}}), `Content["data"]: chan int cannot be a JSON value`},
		{"Config(DefaultResource unserved)", errOf(New(1, Config{DefaultResource: nodesGVR.GroupVersion().WithResource("widgets")})), "does not serve DefaultResource"},
		{"Seeds(bad env)", errOf(Seeds(1, 10)), "is not a seed"},
		{"NewOn(a Sim that hosts a world)", errOf(NewOn(w.Sim(), w.Server(), Config{})), "already hosts a world"},
	} {
		if c.err == nil || !strings.HasPrefix(c.err.Error(), "world: ") || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s = %v, want an error starting \"world: \" and containing %q", c.call, c.err, c.want)
		}
	}
}

var nodesGVR = fakeapi.BuiltinResources()[4].GVR

// Goal (item 9): a failing run prints one line that replays it under go test: the seed in
// INFORMERSIM_SEED, this test binary's -run pattern and the package directory; and Seeds
// honours the variable, so a sweep replays that one seed.
func TestWorldReproLine(t *testing.T) {
	t.Setenv(SeedEnv, "")
	line := Repro(42)
	if !strings.HasPrefix(line, "INFORMERSIM_SEED=42 go test") || !strings.HasSuffix(line, " ./sim/world") {
		t.Errorf("Repro(42) = %q", line)
	}
	w, err := New(42, Config{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := w.AddInformer("inf1", InformerSpec{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddHandler(n, "bad", informer.ResourceEventHandlerFuncs{AddFunc: func(any) { panic("boom") }}, HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	mustApply(t, w, create(pods, "a"))
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	err = w.RunUntilConverged(time.Minute)
	var re *sim.RunError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "repro: "+line) {
		t.Errorf("a failing run's error %v does not end with the repro line %q", err, line)
	}
	t.Setenv(SeedEnv, "42")
	if got, err := Seeds(1, 100); err != nil || !slices.Equal(got, []uint64{42}) {
		t.Errorf("Seeds with %s=42: %v %v", SeedEnv, got, err)
	}
	t.Setenv(SeedEnv, "")
	if got, err := Seeds(1, 3); err != nil || !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Errorf("Seeds with %s empty: %v %v", SeedEnv, got, err)
	}
}
