package timeline_test

import (
	"fmt"

	"github.com/informersim/informersim/scenarios"
	"github.com/informersim/informersim/timeline"
)

// A course lesson's run as a record: its lanes (one per component, by client-go's names) and
// how one object went through them.
func ExampleFromResult() {
	sc, _ := scenarios.Lookup("01-list-then-watch")
	res, err := scenarios.Run(sc.Name, sc.Text, scenarios.Options{Name: sc.Name})
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := timeline.FromResult(sc, res)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range r.Components {
		fmt.Printf("%-22s %s\n", c.Label, c.ClientGo)
	}
	lanes := map[string]bool{}
	for _, e := range r.Events {
		if e.Object == "default/a" {
			lanes[e.Lane] = true
		}
	}
	fmt.Println("passed:", r.Passed, "- default/a is seen in", len(lanes), "lanes")
	// Output:
	// apiserver              kube-apiserver
	// inf1 · informer        SharedIndexInformer (HasSynced)
	// inf1 · Reflector       Reflector
	// inf1 · network         ListerWatcher (LIST and WATCH over HTTP)
	// inf1 · RealFIFO        RealFIFO (Pop in processLoop)
	// inf1 · Indexer         Indexer (the cache, threadSafeMap)
	// inf1 · sharedProcessor sharedProcessor.distribute
	// inf1/h1 · handler      processorListener → ResourceEventHandler
	// passed: true - default/a is seen in 6 lanes
}

// A lesson names the parts of the pipeline it is about by client-go's names; CheckStages
// refuses any other name, and the page draws the named boxes highlighted.
func ExampleCheckStages() {
	fmt.Println(timeline.CheckStages([]string{"DeltaFIFO", "processorListener"}))
	fmt.Println(timeline.CheckStages([]string{"Informer"}) != nil)
	fmt.Println(timeline.LessonNumber("05-tombstone"), timeline.LessonNumber("12a-deltafifo-grouping"))
	// Output:
	// <nil>
	// true
	// 5 12a
}
