package worldtest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/oracle"
	"github.com/informersim/informersim/sim/world/worldtest"
)

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// newExampleWorld is a world on configmaps whose replay command is the one a scenario runner
// would print, so the examples' output does not depend on how the test binary was run.
func newExampleWorld(seed uint64) *world.World {
	w, _ := world.NewFromConfig(sim.Config{Seed: seed, Repro: fmt.Sprintf("informersim run example --seed %d", seed)},
		fakeapi.Config{}, world.Config{DefaultResource: configMaps})
	return w
}

// upTo prints a failure message up to (not including) its trace, the timeline's directory (the
// test's INFORMERSIM_ARTIFACTS, see TestMain) shown as $INFORMERSIM_ARTIFACTS.
func upTo(msg, marker string) {
	before, _, _ := strings.Cut(msg, marker)
	if dir := os.Getenv(worldtest.ArtifactsEnv); dir != "" {
		before = strings.ReplaceAll(before, "timeline: "+dir+string(filepath.Separator), "timeline: $"+worldtest.ArtifactsEnv+"/")
	}
	fmt.Print(before)
}

// A handler is told of a's creation, then of its update; the matcher compares what it was told
// for one key with what the spec expects, in informer.md §14's notation.
func ExampleHaveObservedInOrder() {
	w := newExampleWorld(1)
	_ = w.Apply(world.Op{Kind: world.OpCreate, Name: "a"})
	inf, _ := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
	h, _ := w.AddHandler(inf, "h1", nil, world.HandlerOptions{})
	_ = inf.Start()
	_ = w.RunUntilConverged(time.Minute)
	_ = w.Apply(world.Op{Kind: world.OpUpdate, Name: "a"})
	_ = w.RunUntilConverged(time.Minute)

	m := worldtest.HaveObservedInOrder("default/a", "add(default/a@2,true)", "upd(default/a@2->3)")
	ok, _ := m.Match(h)
	fmt.Println("observed in order:", ok)

	m = worldtest.HaveObservedInOrder("default/a", "add(default/a@2,true)", "del(default/a@3)")
	ok, _ = m.Match(h)
	fmt.Println("observed in order:", ok)
	upTo(m.FailureMessage(h), "trace around")
	// Output:
	// observed in order: true
	// observed in order: false
	// Expected inf1/h1 to have observed, for default/a, in order:
	//     add(default/a@2,true)
	//     del(default/a@3)
	// but it observed:
	//     add(default/a@2,true)
	//     upd(default/a@2->3)
	// first difference at #2: observed upd(default/a@2->3), expected del(default/a@3)
	// seed: 1
	// replay: informersim run example --seed 1
	// timeline: $INFORMERSIM_ARTIFACTS/informersim-1-6f02d60ed4a2.html
	// history of default/a (every event about it, oldest first):
	//        0        +0.000s  apiserver    ADDED         obj=configmaps/default/a rv=2
	//        4  +0.017110946s  inf1/queue   buffer        to=h1 call=add obj=default/a@2 init=true
	//        5  +0.017110946s  inf1/h1      OnAdd         obj=default/a rv=2 initial=true
	//        6  +0.038584089s  apiserver    MODIFIED      obj=configmaps/default/a rv=3
	//        8  +0.085806789s  inf1/reflector MODIFIED      obj=default/a rv=3
	//        9  +0.085806789s  inf1/queue   pop           delta=Updated obj=default/a@3
	//        9  +0.085806789s  inf1/queue   cache-update  obj=default/a@3
	//        9  +0.085806789s  inf1/queue   buffer        to=h1 call=update obj=default/a rv=2->3
	//       10  +0.085806789s  inf1/h1      OnUpdate      obj=default/a rv=2->3
}

// A spec rarely knows the resourceVersions the apiserver will assign: notes without them (and
// an add without its initial-list flag) match any, while the rest of each note must match.
func ExampleHaveObservedInOrder_withoutResourceVersions() {
	w := newExampleWorld(1)
	_ = w.Apply(world.Op{Kind: world.OpCreate, Name: "a"})
	inf, _ := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
	h, _ := w.AddHandler(inf, "h1", nil, world.HandlerOptions{})
	_ = inf.Start()
	_ = w.RunUntilConverged(time.Minute)
	_ = w.Apply(world.Op{Kind: world.OpUpdate, Name: "a"})
	_ = w.RunUntilConverged(time.Minute)
	_ = w.Apply(world.Op{Kind: world.OpDelete, Name: "a"})
	_ = w.RunUntilConverged(time.Minute)

	m := worldtest.HaveObservedInOrder("default/a", "add(default/a,true)", "upd(default/a)", "del(default/a)")
	ok, _ := m.Match(h)
	fmt.Println("observed in order:", ok)

	m = worldtest.HaveObservedInOrder("default/a", "add(default/a)", "upd(default/a)", "del(tomb default/a)")
	ok, _ = m.Match(h)
	fmt.Println("observed in order:", ok)
	upTo(m.FailureMessage(h), "seed:")

	_, err := worldtest.HaveObservedInOrder("default/a", "add(default/b)").Match(h)
	fmt.Println(err)
	// Output:
	// observed in order: true
	// observed in order: false
	// Expected inf1/h1 to have observed, for default/a, in order:
	//     add(default/a)
	//     upd(default/a)
	//     del(tomb default/a)
	// but it observed:
	//     add(default/a@2,true)
	//     upd(default/a@2->3)
	//     del(default/a@4)
	// first difference at #3: observed del(default/a@4), expected del(tomb default/a)
	// worldtest: HaveObservedInOrder: note "add(default/b)" is about default/b, not default/a
}

// Every oracle attached; the apiserver then re-sends a DELETED it already sent (an invalid
// server, fakeapi F-11): the watch-guarantees oracle stops the run at that event.
func ExampleSatisfyEveryOracle() {
	w := newExampleWorld(1)
	h, _ := oracle.Attach(w)
	_ = w.Apply(world.Op{Kind: world.OpCreate, Name: "a"})
	inf, _ := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
	_, _ = w.AddHandler(inf, "h1", nil, world.HandlerOptions{})
	_ = inf.Start()
	_ = h.RunUntilConverged(time.Minute)
	m := worldtest.SatisfyEveryOracle()
	ok, _ := m.Match(h)
	fmt.Println("every oracle holds:", ok)

	_ = w.Apply(world.Op{Kind: world.OpDelete, Name: "a"})
	_ = w.Sim().RunUntil(func() bool { return len(inf.SharedIndexInformer().GetStore().ListKeys()) == 0 }, time.Minute)
	_ = w.Server().Faults().DuplicateEvent(w.Server().Faults().Watchers()[0])
	w.Settle()
	_ = h.RunUntilConverged(time.Minute)
	ok, _ = m.Match(h)
	fmt.Println("every oracle holds:", ok)
	upTo(m.FailureMessage(h), "trace before")
	// Output:
	// every oracle holds: true
	// every oracle holds: false
	// Expected every oracle to hold, but:
	// oracle watch-guarantees violated: watch 1: DELETED default/a@3 after rv=3 (out of order or duplicate)
	// seed: 1
	// replay: informersim run example --seed 1
	// timeline: $INFORMERSIM_ARTIFACTS/informersim-1-9698d5c79fcc.html
	// history of default/a (every event about it, oldest first):
	//        0        +0.000s  apiserver    ADDED         obj=configmaps/default/a rv=2
	//        4  +0.017110946s  inf1/queue   buffer        to=h1 call=add obj=default/a@2 init=true
	//        5  +0.017110946s  inf1/h1      OnAdd         obj=default/a rv=2 initial=true
	//        6  +0.038584089s  apiserver    DELETED       obj=configmaps/default/a rv=3
	//        8  +0.085806789s  inf1/reflector DELETED       obj=default/a rv=3
	//        9  +0.085806789s  inf1/queue   pop           delta=Deleted obj=default/a@3
	//        9  +0.085806789s  inf1/queue   cache-delete  obj=default/a@3
	//        9  +0.085806789s  inf1/queue   buffer        to=h1 call=delete obj=default/a@3
	//       10  +0.085806789s  inf1/h1      OnDelete      obj=default/a rv=3
	// >     11  +0.085806789s  apiserver    watch-event   watch=1 type=DELETED obj=default/a rv=3
}

// HaveConverged runs the world (here, with its oracles) in simulated time until it is quiet,
// then compares every cache and handler view with the apiserver.
func ExampleHaveConverged() {
	w := newExampleWorld(1)
	h, _ := oracle.Attach(w)
	_ = w.Apply(world.Op{Kind: world.OpCreate, Name: "a"})
	inf, _ := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
	_ = inf.Start()
	ok, _ := worldtest.HaveConverged(time.Minute).Match(h)
	fmt.Println("converged:", ok, "keys:", inf.SharedIndexInformer().GetStore().ListKeys())
	// Output:
	// converged: true keys: [default/a]
}

// WriteTimeline writes a run's timeline where a failing matcher would (INFORMERSIM_ARTIFACTS, or
// the system's temporary directory), named after the seed and the trace's hash.
func ExampleWriteTimeline() {
	w := newExampleWorld(1)
	_ = w.Apply(world.Op{Kind: world.OpCreate, Name: "a"})
	inf, _ := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
	_ = inf.Start()
	err := w.RunUntilConverged(time.Minute)
	path, werr := worldtest.WriteTimeline(w, err)
	fmt.Println(filepath.Base(path), werr)
	page, _ := os.ReadFile(path)
	fmt.Println(strings.Contains(string(page), `<script id="run-data" type="application/json">`))
	// Output:
	// informersim-1-96ee8fd84e7f.html <nil>
	// true
}
