package compare

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim/world"
)

// hostFactory builds a step-driven SharedInformerFactory whose informers a world hosts: the
// integration the informer package documents (WithStepDriver). Each resource gets a world
// Source (the world's ListerWatcher, clock and random stream; the factory's tweak becomes the
// Source's selectors, since the world performs the requests itself), each informer is adopted
// with HostInformer, and the factory's Start starts it through the world.
func hostFactory(w *world.World, namespace string, tweak informer.TweakListOptionsFunc, watchList bool) (informer.SharedInformerFactory, error) {
	sources := map[schema.GroupVersionResource]*world.Source{}
	var sel metav1.ListOptions
	if tweak != nil {
		tweak(&sel)
	}
	client := informer.ClientFunc(func(gvr schema.GroupVersionResource, ns string) informer.ListerWatcher {
		src, err := w.NewSource("f-"+gvr.Resource, world.InformerSpec{Resource: gvr, Namespace: ns,
			LabelSelector: sel.LabelSelector, FieldSelector: sel.FieldSelector, WatchList: watchList})
		if err != nil {
			return nil // ForResource reports "no ListerWatcher"
		}
		sources[gvr] = src
		return src.ListerWatcher()
	})
	opts := []informer.SharedInformerOption{
		informer.WithNamespace(namespace),
		informer.WithInformerOptions(func(gvr schema.GroupVersionResource, o *informer.SharedIndexInformerOptions) {
			*o = sources[gvr].Options(*o)
		}),
		informer.WithStepDriver(func(fi informer.FactoryInformer) (func() error, error) {
			n, err := w.HostInformer(sources[fi.GVR], fi.Informer)
			if err != nil {
				return nil, err
			}
			return n.Start, nil
		}),
	}
	if tweak != nil {
		opts = append(opts, informer.WithTweakListOptions(tweak))
	}
	return informer.NewSharedInformerFactoryWithOptions(client, 0, opts...)
}

// TestFactoryHostedByWorld: a step-driven factory with two resources runs inside a world, in
// both start-up modes, deterministically: the world's informers are the factory's (each handler
// registered on them is discovered), the world's oracles check them, and after writes and a 410
// close of every watch both caches converge to the apiserver's state. The same seed gives the
// same trace hash twice.
func TestFactoryHostedByWorld(t *testing.T) {
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	for _, watchList := range []bool{false, true} {
		t.Run(fmt.Sprintf("watchList=%v", watchList), func(t *testing.T) {
			run := func() (string, []string) {
				w, err := world.New(7, world.Config{})
				if err != nil {
					t.Fatal(err)
				}
				_ = w.Apply(world.Op{Kind: world.OpCreate, Name: "web", Labels: map[string]string{"app": "web"}})
				_ = w.Apply(world.Op{Kind: world.OpCreate, Name: "db", Labels: map[string]string{"app": "db"}})
				_ = w.Apply(world.Op{Kind: world.OpCreate, Resource: cms, Name: "settings", Labels: map[string]string{"app": "web"}})
				f, err := hostFactory(w, "default", func(o *metav1.ListOptions) { o.LabelSelector = "app=web" }, watchList)
				if err != nil {
					t.Fatal(err)
				}
				var seen []string
				for _, gvr := range []schema.GroupVersionResource{podsGVR, cms} {
					gi, err := f.ForResource(gvr)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := gi.Informer().AddEventHandler(informer.ResourceEventHandlerFuncs{
						AddFunc: func(obj any) { seen = append(seen, gvr.Resource+" add "+obj.(metav1.Object).GetName()) },
					}); err != nil {
						t.Fatal(err)
					}
				}
				f.Start(nil)
				w.Script(time.Second,
					world.Op{Kind: world.OpCreate, Name: "api", Labels: map[string]string{"app": "web"}},
					world.Op{Kind: world.OpCloseWatches, Code: 410},
					world.Op{Kind: world.OpDelete, Name: "web"})
				if err := w.RunUntilConverged(time.Minute); err != nil {
					t.Fatal(err)
				}
				if res := f.WaitForCacheSync(nil); !res[podsGVR] || !res[cms] {
					t.Fatalf("WaitForCacheSync = %v", res)
				}
				pods, _ := f.ForResource(podsGVR)
				if got := pods.Informer().GetStore().ListKeys(); strings.Join(got, ",") != "default/api" {
					t.Errorf("pods cached %v, want [default/api]", got)
				}
				var reqs []string
				for _, rq := range w.Server().Requests() {
					if rq.Client != "" {
						wl := rq.Options.SendInitialEvents != nil && *rq.Options.SendInitialEvents
						reqs = append(reqs, fmt.Sprintf("%s %s wl=%v sel=%s", rq.Client, rq.Verb, wl, rq.Options.LabelSelector))
					}
				}
				return w.Sim().Trace().Hash(), append(seen, reqs...)
			}
			h1, seen := run()
			h2, _ := run()
			if h1 != h2 {
				t.Errorf("trace hashes differ: %s vs %s", h1, h2)
			}
			want := "list wl=false"
			if watchList {
				want = "wl=true"
			}
			if joined := strings.Join(seen, "\n"); !strings.Contains(joined, want) || !strings.Contains(joined, "sel=app=web") ||
				!strings.Contains(joined, "pods add web") || !strings.Contains(joined, "configmaps add settings") {
				t.Errorf("notifications and requests:\n%s", joined)
			}
		})
	}
}
