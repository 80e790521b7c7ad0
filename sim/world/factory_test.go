package world

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim"
)

// Goal: a SharedInformerFactory's informers are the world's (NewFactory): ForResource hosts each
// one, handlers a controller registers on them are discovered, the factory's own Start starts
// them, and the world converges with every cache, lister and handler right, in watch-list mode
// too, on every trace seed.
func TestWorldHostsAFactory(t *testing.T) {
	for _, watchList := range []bool{false, true} {
		for _, seed := range traceSeeds {
			w := newTraceWorld(t, seed)
			mustApply(t, w, create(pods, "p1"), create(configMaps, "c1"),
				Op{Kind: OpCreate, Resource: configMaps, Namespace: "other", Name: "c2"})
			fac, err := w.NewFactory(FactoryOptions{Prefix: "ctrl", Namespace: "default", WatchList: watchList, DefaultResync: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			var seen []string
			for _, gvr := range []schema.GroupVersionResource{pods, configMaps} {
				gi, err := fac.ForResource(gvr)
				if err != nil {
					t.Fatal(err)
				}
				again, err := fac.ForResource(gvr)
				if err != nil || again.Informer() != gi.Informer() {
					t.Fatalf("seed %d: ForResource(%v) twice: %v", seed, gvr, err)
				}
				res := gvr.Resource
				if _, err := gi.Informer().AddEventHandler(informer.ResourceEventHandlerFuncs{
					AddFunc: func(obj any) { k, _ := informer.MetaNamespaceKeyFunc(obj); seen = append(seen, res+" "+k) },
				}); err != nil {
					t.Fatal(err)
				}
			}
			fac.Start(nil)
			mustConverge(t, w)
			mustApply(t, w, create(configMaps, "c3"), Op{Kind: OpCloseWatches, Code: 410}, del(pods, "p1"))
			mustConverge(t, w)
			slices.Sort(seen)
			if want := []string{"configmaps default/c1", "configmaps default/c3", "pods default/p1"}; !slices.Equal(seen, want) {
				t.Errorf("seed %d watchList %v: the controller saw %v, want %v", seed, watchList, seen, want)
			}
			names := []string{}
			for _, n := range w.Informers() {
				names = append(names, n.Name())
				if !n.Started() || len(n.Handlers()) != 1 {
					t.Errorf("seed %d: %s started %v with %d handlers", seed, n.Name(), n.Started(), len(n.Handlers()))
				}
			}
			if !slices.Equal(names, []string{"ctrl-pods", "ctrl-configmaps"}) {
				t.Errorf("seed %d: informers %v", seed, names)
			}
			narration := sim.Narrate(w.Sim().Trace().Events())
			if !strings.Contains(narration, "ctrl-configmaps: start") || !strings.Contains(narration, "ctrl-pods/h1: OnAdd obj=default/p1") {
				t.Errorf("seed %d: the factory's informers are not narrated:\n%s", seed, narration)
			}
		}
	}
	w := newTraceWorld(t, 1)
	fac, err := w.NewFactory(FactoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fac.ForResource(schema.GroupVersionResource{Version: "v1", Resource: "widgets"}); err == nil ||
		!strings.HasPrefix(err.Error(), "world: factory ForResource") || !strings.Contains(err.Error(), "does not serve") {
		t.Errorf("ForResource of an unserved resource: %v", err)
	}
	if _, err := w.NewFactory(FactoryOptions{Prefix: "a b"}); err == nil || !strings.HasPrefix(err.Error(), "world: NewFactory") {
		t.Errorf("NewFactory with a bad prefix: %v", err)
	}
}
