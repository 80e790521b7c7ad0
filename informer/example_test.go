package informer

import (
	"fmt"
	"time"
)

// A handler registered before start sees the initial list as adds with isInInitialList=true,
// then the watch's changes; the informer and the registration report synced (informer.md §14 T1,
// T2). The example runs on the step driver with a fake clock over an in-memory apiserver.
func ExampleSharedInformer_AddEventHandler() {
	e := newInfStep(nil, SharedIndexInformerOptions{})
	e.lw.set("web") // rv 1
	e.lw.set("db")  // rv 2
	reg, _ := e.inf.AddEventHandler(ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, initial bool) { fmt.Println("add", infDescribe(obj), "initial:", initial) },
		UpdateFunc: func(old, cur any) { fmt.Println("update", infDescribe(old), "->", infDescribe(cur)) },
		DeleteFunc: func(obj any) { fmt.Println("delete", infDescribe(obj)) },
	})
	e.st.Start()
	e.quiesce()
	fmt.Println("synced:", e.inf.HasSynced(), reg.HasSynced())
	e.lw.set("web") // rv 3
	e.lw.del("db")  // rv 4
	e.quiesce()
	// Output:
	// add ns/db@2 initial: true
	// add ns/web@1 initial: true
	// synced: true true
	// update ns/web@1 -> ns/web@3
	// delete ns/db@4
}

// A handler added after the informer synced first receives the cache's contents as initial-list
// adds (in an order drawn from the informer's seed), then live changes (informer.md §3, §14 T7).
func ExampleSharedInformer_AddEventHandler_lateJoin() {
	e := newInfStep(nil, SharedIndexInformerOptions{})
	e.lw.set("a")
	e.lw.set("b")
	e.st.Start()
	e.quiesce()
	late := &infRec{}
	reg, _ := e.inf.AddEventHandler(late)
	fmt.Println("synced before delivery:", reg.HasSynced())
	e.lw.set("c")
	e.quiesce()
	fmt.Println("synced after delivery:", reg.HasSynced())
	for _, c := range late.take() {
		fmt.Println(c)
	}
	// Output:
	// synced before delivery: false
	// synced after delivery: true
	// add ns/a@1 init
	// add ns/b@2 init
	// add ns/c@3
}

// With informer ResyncPeriod 10s, a handler asking for 20s gets OnUpdate(obj, obj) for every
// cached object every 20s of fake time; a handler asking for 0 never does (informer.md §2, §14 T6).
func ExampleSharedInformer_AddEventHandlerWithResyncPeriod() {
	e := newInfStep(nil, SharedIndexInformerOptions{ResyncPeriod: 10 * time.Second})
	e.lw.set("cfg")
	for _, p := range []time.Duration{0, 20 * time.Second} {
		name := fmt.Sprintf("handler(%v)", p)
		e.inf.AddEventHandlerWithResyncPeriod(ResourceEventHandlerFuncs{
			UpdateFunc: func(old, cur any) {
				fmt.Printf("%s at %v: resync %s\n", name, e.clock.Since(infT0), infDescribe(cur))
			},
		}, p)
	}
	e.st.Start()
	e.quiesce()
	e.advance(time.Minute)
	// Output:
	// handler(20s) at 20s: resync ns/cfg@1
	// handler(20s) at 40s: resync ns/cfg@1
	// handler(20s) at 1m0s: resync ns/cfg@1
}

// The non-shared informer calls its one handler inside the pop, and every resync tick updates
// every cached object: there is no per-handler resync filter (informer.md §1.7). Step driver.
func ExampleNewInformerWithOptions() {
	handler := ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { fmt.Println("add", infDescribe(obj)) },
		UpdateFunc: func(old, cur any) { fmt.Println("update", infDescribe(old), "->", infDescribe(cur)) },
	}
	e, store, r := infRunnerStep(nil, handler, InformerOptions{ResyncPeriod: 10 * time.Second})
	e.lw.set("web")
	e.st.Start()
	e.quiesce()
	fmt.Println("synced:", r.HasSynced(), "cached:", store.ListKeys())
	e.advance(20 * time.Second)
	// Output:
	// add ns/web@1
	// synced: true cached: [ns/web]
	// update ns/web@1 -> ns/web@1
	// update ns/web@1 -> ns/web@1
}
