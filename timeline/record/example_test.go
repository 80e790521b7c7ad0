package record_test

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/timeline/record"
)

// FromWorld draws any world's run: its lanes come from the world's informers and handlers.
func ExampleFromWorld() {
	w, _ := world.New(1, world.Config{DefaultResource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}})
	_ = w.Apply(world.Op{Kind: world.OpCreate, Name: "a"})
	inf, _ := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
	_, _ = w.AddHandler(inf, "h1", nil, world.HandlerOptions{})
	_ = inf.Start()
	err := w.RunUntilConverged(time.Minute)
	r, _ := record.FromWorld(w, record.Source{Failure: err})
	fmt.Println(r.Scenario.Name, r.Passed, len(r.Directives), int64(len(r.Events)) == r.Trace.Len)
	for _, c := range r.Components {
		fmt.Printf("%s (%s)\n", c.Label, c.ClientGo)
	}
	// Output:
	// world true 0 true
	// apiserver (kube-apiserver)
	// inf1 · informer (SharedIndexInformer (HasSynced))
	// inf1 · Reflector (Reflector)
	// inf1 · network (ListerWatcher (LIST and WATCH over HTTP))
	// inf1 · RealFIFO (RealFIFO (Pop in processLoop))
	// inf1 · Indexer (Indexer (the cache, threadSafeMap))
	// inf1 · sharedProcessor (sharedProcessor.distribute)
	// inf1/h1 · handler (processorListener → ResourceEventHandler)
}

// A lesson names the parts of the pipeline it is about by client-go's names; CheckStages
// refuses any other name, and the page draws the named boxes highlighted.
func ExampleCheckStages() {
	fmt.Println(record.CheckStages([]string{"DeltaFIFO", "processorListener"}))
	fmt.Println(record.CheckStages([]string{"Informer"}) != nil)
	fmt.Println(record.LessonNumber("05-tombstone"), record.LessonNumber("12a-deltafifo-grouping"))
	// Output:
	// <nil>
	// true
	// 5 12a
}
