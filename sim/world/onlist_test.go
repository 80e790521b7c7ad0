package world

import (
	"testing"
	"time"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Goal: OnListRequest runs in the step of the informer's LIST, before the apiserver serves it,
// so a hook routing the LIST to a replica frozen in the past gets the informer a stale list:
// the informer starts from an object fewer than the apiserver holds (a harness's stale read).
func TestOnListRequestRoutesTheList(t *testing.T) {
	for _, route := range []bool{false, true} {
		w, err := NewFromConfig(sim.Config{Seed: 1}, fakeapi.Config{Replicas: 2}, Config{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Apply(Op{Kind: OpCreate, Name: "a"}); err != nil {
			t.Fatal(err)
		}
		if err := w.Server().Replicas().Freeze(1); err != nil {
			t.Fatal(err)
		}
		if err := w.Apply(Op{Kind: OpCreate, Name: "b"}); err != nil {
			t.Fatal(err)
		}
		n, err := w.AddInformer("pods", InformerSpec{})
		if err != nil {
			t.Fatal(err)
		}
		var seen []string
		n.OnListRequest(func(o metav1.ListOptions) {
			seen = append(seen, o.ResourceVersion)
			if route {
				if err := w.Server().Replicas().RouteNext(1); err != nil {
					t.Error(err)
				}
			}
		})
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		if err := w.Sim().RunUntil(func() bool { return n.SharedIndexInformer().HasSynced() }, time.Minute); err != nil {
			t.Fatal(err)
		}
		want := 2
		if route {
			want = 1 // replica 1 froze before b
		}
		if got := len(n.SharedIndexInformer().GetStore().List()); got != want {
			t.Errorf("route=%v: the informer started with %d objects, want %d", route, got, want)
		}
		if len(seen) != 1 || seen[0] != "0" {
			t.Errorf("route=%v: the hook saw LISTs at resourceVersions %q, want one at \"0\"", route, seen)
		}
	}
}
