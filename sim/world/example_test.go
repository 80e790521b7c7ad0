package world_test

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
)

// A tiny world for seed 1: the apiserver holds one pod, an informer with one handler syncs, the
// pod is updated, the watch is cut with a 410 while the pod is deleted, and the relist tells the
// handler with a tombstone. The narration is the same on every machine, every time.
//
// The example stays on pods, deletes and all: the apiserver deletes a pod gracefully
// (fakeapi.md §5.3), so the unscheduled pod's delete is two writes, MODIFIED rv=4 with its
// deletionTimestamp and grace 0, then DELETED rv=5. The informer misses both while its watch is
// down; the relist at rv=5 finds the pod gone, and the tombstone carries the last state the cache
// held (rv=3), not the terminating one.
func ExampleNew() {
	w, _ := world.New(1, world.Config{})
	_ = w.Apply(world.Op{Kind: world.OpCreate, Name: "a"})
	inf, _ := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
	h, _ := w.AddHandler(inf, "h1", nil, world.HandlerOptions{})
	_ = inf.Start()
	w.Script(time.Second,
		world.Op{Kind: world.OpUpdate, Name: "a"},
		world.Op{Kind: world.OpSleep, Duration: time.Second},
		world.Op{Kind: world.OpCloseWatches, Code: 410},
		world.Op{Kind: world.OpDelete, Name: "a"})
	if err := w.RunUntilConverged(time.Minute); err != nil {
		fmt.Println(err)
	}
	fmt.Print(sim.Narrate(w.Sim().Trace().Events()))
	fmt.Println(h.Deliveries().Strings())
	// Output:
	// +0.000s apiserver: ADDED obj=pods/default/a rv=2
	// +0.000s inf1/h1: register
	// +0.000s inf1: start
	// +0.000s inf1/reflector: LIST rv=0 limit=500
	// +0.017110946s inf1/net: LIST-ok items=1 rv=2
	// +0.017110946s inf1/reflector: listed items=1 rv=2
	// +0.017110946s inf1/reflector: WATCH rv=2 bookmarks=true timeout=9m40s
	// +0.017110946s inf1/queue: pop delta=ReplacedAll rv=2 n=1 init=true
	// +0.017110946s inf1/queue: cache-replace n=1 rv=2
	// +0.017110946s inf1/queue: buffer to=h1 call=add obj=default/a@2 init=true
	// +0.017110946s inf1: synced
	// +0.017110946s inf1/h1: OnAdd obj=default/a rv=2 initial=true
	// +0.017110946s inf1/h1: synced
	// +0.038584089s inf1/net: WATCH-ok watch=1
	// +0.038584089s inf1/reflector: watching rv=2
	// +1.000s apiserver: MODIFIED obj=pods/default/a rv=3
	// +1.0472227s inf1/reflector: MODIFIED obj=default/a rv=3
	// +1.0472227s inf1/queue: pop delta=Updated obj=default/a@3
	// +1.0472227s inf1/queue: cache-update obj=default/a@3
	// +1.0472227s inf1/queue: buffer to=h1 call=update obj=default/a rv=2->3
	// +1.0472227s inf1/h1: OnUpdate obj=default/a rv=2->3
	// +2.000s apiserver: close-watches watches=1 code=410
	// +2.000s apiserver: MODIFIED obj=pods/default/a rv=4
	// +2.000s apiserver: DELETED obj=pods/default/a rv=5
	// +2.000s inf1/watch: end reason=Fault
	// +2.014523401s inf1/reflector: ERROR code=410 reason=Expired
	// +2.014523401s inf1/reflector: relist-after delay=802.271538ms err="too old resource version"
	// +2.014523401s inf1/watch: drop why="stream ended by ERROR" lost=1
	// +2.816794939s inf1/reflector: LIST rv=3
	// +2.843925628s inf1/net: LIST-ok items=0 rv=5
	// +2.843925628s inf1/reflector: listed items=0 rv=5
	// +2.843925628s inf1/queue: pop delta=ReplacedAll rv=5 n=0
	// +2.843925628s inf1/queue: cache-replace n=0 rv=5
	// +2.843925628s inf1/queue: buffer to=h1 call=delete obj=tomb(default/a@3)
	// +2.843925628s inf1/h1: OnDelete obj=default/a rv=3 tombstone=true
	// +2.843925628s inf1/reflector: WATCH rv=5 bookmarks=true timeout=5m12s
	// +2.880756515s inf1/net: WATCH-ok watch=2
	// +2.880756515s inf1/reflector: watching rv=5
	// [add(default/a@2,true) upd(default/a@2->3) del(tomb default/a@3)]
}

// An op's Content takes the Go values a spec writes: maps of strings, ints, nested maps and
// slices. The object holds them in unstructured's form; what cannot be JSON is refused, naming
// where it is, and nothing is written.
func ExampleOp_content() {
	w, _ := world.New(1, world.Config{DefaultResource: world.DefaultResource().GroupVersion().WithResource("configmaps")})
	err := w.Apply(world.Op{Kind: world.OpCreate, Name: "settings", Content: map[string]any{
		"data": map[string]string{"mode": "fast"},
		"spec": map[string]any{"replicas": 3, "ports": []int32{80, 443}},
	}})
	fmt.Println("create:", err)
	u, _ := w.Server().Resource(w.Config().DefaultResource).Namespace("default").Get(context.Background(), "settings", metav1.GetOptions{})
	fmt.Printf("data: %v\nspec: %v (replicas %T)\n", u.Object["data"], u.Object["spec"], u.Object["spec"].(map[string]any)["replicas"])

	err = w.Apply(world.Op{Kind: world.OpUpdate, Name: "settings", Content: map[string]any{
		"spec": map[string]any{"ports": []any{80, make(chan int)}},
	}})
	fmt.Println("update:", err)
	fmt.Println("revision:", w.Server().Revision())
	// Output:
	// create: <nil>
	// data: map[mode:fast]
	// spec: map[ports:[80 443] replicas:3] (replicas int64)
	// update: world: op update: Content["spec"]["ports"][1]: chan int cannot be a JSON value
	// revision: 2
}
