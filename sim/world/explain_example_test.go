package world_test

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim/world"
)

// A seed sweep that counts the seeds catching a bug, with no assertion library: a handler that
// labels the objects it is given in place (objects from an informer are shared and read-only).
// RunUntilConverged's error is one line; Explain tells the failure for a person: the seed and
// replay command, the history of the object concerned and the trace before the failure.
func ExampleWorld_Explain() {
	caught, first := 0, ""
	for seed := uint64(1); seed <= 3; seed++ {
		w, _ := world.New(seed, world.Config{})
		inf, _ := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
		_, _ = w.AddHandler(inf, "labeller", informer.ResourceEventHandlerFuncs{UpdateFunc: func(_, obj any) {
			obj.(*unstructured.Unstructured).SetLabels(map[string]string{"seen": "yes"}) // the bug
		}}, world.HandlerOptions{})
		_ = inf.Start()
		_ = w.Apply(world.Op{Kind: world.OpCreate, Name: "a"})
		w.Script(time.Second, world.Op{Kind: world.OpUpdate, Name: "a"})
		if err := w.RunUntilConverged(time.Minute); err != nil {
			caught++
			if first == "" {
				first = w.Explain(err)
			}
		}
	}
	fmt.Printf("caught on %d of 3 seeds\n", caught)
	report, _, _ := strings.Cut(first, "trace before the violation:")
	for _, line := range strings.Split(report, "\n") {
		if !strings.HasPrefix(line, "oracle ") && !strings.HasPrefix(line, "replay:") { // long lines
			fmt.Println(strings.TrimRight(line, " "))
		}
	}
	// Output:
	// caught on 3 of 3 seeds
	// seed: 1
	// history of default/a (every event about it, oldest first):
	//        0        +0.000s  apiserver    ADDED         obj=pods/default/a rv=2
	//        4  +0.017110946s  inf1/queue   buffer        to=labeller call=add obj=default/a@2 init=true
	//        5  +0.017110946s  inf1/labeller OnAdd         obj=default/a rv=2 initial=true
	//        7        +1.000s  apiserver    MODIFIED      obj=pods/default/a rv=3
	//        9    +1.0472227s  inf1/reflector MODIFIED      obj=default/a rv=3
	//       10    +1.0472227s  inf1/queue   pop           delta=Updated obj=default/a@3
	//       10    +1.0472227s  inf1/queue   cache-update  obj=default/a@3
	//       10    +1.0472227s  inf1/queue   buffer        to=labeller call=update obj=default/a rv=2->3
	//       11    +1.0472227s  inf1/labeller OnUpdate      obj=default/a rv=2->3
}
