package oracle_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/oracle"
)

// Every oracle attached to a world whose informer and handler do nothing wrong: each verdict is
// ok.
func ExampleAttach() {
	w, _ := world.NewFromConfig(sim.Config{Seed: 1, Repro: "informersim run example --seed 1"}, fakeapi.Config{}, world.Config{})
	h, _ := oracle.Attach(w)
	_ = w.Apply(world.Op{Kind: world.OpCreate, Name: "a"})
	inf, _ := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
	_, _ = w.AddHandler(inf, "h1", nil, world.HandlerOptions{})
	_ = inf.Start()
	_ = w.Apply(world.Op{Kind: world.OpUpdate, Name: "a"})
	fmt.Println("run:", h.RunUntilConverged(time.Minute))
	for _, v := range h.Verdicts() {
		fmt.Printf("%-20s %-8s %s\n", v.Name, v.Kind, strings.TrimPrefix(v.String(), v.Name+": "))
	}
	// Output:
	// run: <nil>
	// per-object-order     safety   ok
	// cache-before-notify  safety   ok
	// read-only-objects    safety   ok
	// eventual-consistency liveness ok
	// resync-alignment     safety   ok
	// late-join            safety   ok
	// tombstones           safety   ok
	// watch-guarantees     safety   ok
}

// A hand-built trace in the narration's form: a handler joins late, but the snapshot it is given
// lacks a cached object. CheckTrace names the oracle, what it saw and the event.
func ExampleCheckTrace() {
	var events []sim.Event
	for i, line := range []string{
		"apiserver ADDED obj=pods/default/a rv=2",
		"apiserver ADDED obj=pods/default/b rv=3",
		"inf1 start",
		"inf1/queue cache-add obj=default/a@2",
		"inf1/queue cache-add obj=default/b@3",
		"inf1/late join snapshot=2",
		"inf1/queue buffer to=late call=add obj=default/a@2 init=true",
		"inf1/late OnAdd obj=default/a rv=2 initial=true",
	} {
		f := strings.Fields(line)
		e := sim.Event{Step: int64(i + 1), Time: time.Second, Actor: f[0], Kind: f[1]}
		for _, kv := range f[2:] {
			k, v, _ := strings.Cut(kv, "=")
			e.Fields = append(e.Fields, sim.F(k, v))
		}
		events = append(events, e)
	}
	v, _ := oracle.CheckTrace(events)
	fmt.Println(v.Oracle)
	fmt.Println(v.Message)
	fmt.Println(strings.Join(strings.Fields(v.Event.String()), " "))
	// Output:
	// late-join
	// inf1/late joined, but 1 cached object(s) were not in its snapshot (first: default/b)
	// 8 +1.000s inf1/late OnAdd obj=default/a rv=2 initial=true
}
