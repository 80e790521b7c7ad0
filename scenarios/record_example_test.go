package scenarios_test

import (
	"fmt"

	"github.com/informersim/informersim/scenarios"
)

// A course lesson's run as a record: its lanes (one per component, by client-go's names) and
// how one object went through them.
func ExampleRunRecord() {
	sc, _ := scenarios.Lookup("01-list-then-watch")
	res, err := scenarios.Run(sc.Name, sc.Text, scenarios.Options{Name: sc.Name})
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := scenarios.RunRecord(sc, res)
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
