package clientgo_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/internal/goseed"
	"github.com/informersim/informersim/sim/world"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// These tests hold the deterministic mode to its promise with client-go's own informers, whose
// orders come from Go maps. Outside the mode (a test binary built without the overlay) they are
// skipped with the command that runs them: make test runs them in the mode.

func requireSeeded(t *testing.T) {
	t.Helper()
	if !goseed.Active() {
		t.Skipf("runs in the deterministic mode only: %s", clientgo.DeterminismCommand)
	}
}

// resyncOrder runs a main whose client-go informer over eight ConfigMaps resyncs every 10s, and
// returns the order in which its first resync handed them to the handler: the order of a Go map,
// client-go's cache.
func resyncOrder(t *testing.T, seed uint64) ([]string, *clientgo.Report) {
	t.Helper()
	var mu sync.Mutex
	var order []string
	cfg := clientgo.Config{
		Seed: seed,
		Setup: func(w *world.World) error {
			for i := range 8 {
				if err := w.Apply(world.Op{Kind: world.OpCreate, Name: fmt.Sprintf("c%d", i)}); err != nil {
					return err
				}
			}
			return nil
		},
		Cluster: clientgo.Cluster{World: world.Config{DefaultResource: cmsGVR}},
		Controller: clientgo.Main(func(ctx context.Context, c *rest.Config) error {
			client, err := kubernetes.NewForConfig(c)
			if err != nil {
				return err
			}
			factory := informers.NewSharedInformerFactory(client, 10*time.Second)
			_, err = factory.Core().V1().ConfigMaps().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
				UpdateFunc: func(old, new any) {
					o, n := old.(*corev1.ConfigMap), new.(*corev1.ConfigMap)
					mu.Lock()
					defer mu.Unlock()
					if o.ResourceVersion == n.ResourceVersion && len(order) < 8 { // a resync
						order = append(order, n.Name)
					}
				},
			})
			if err != nil {
				return err
			}
			factory.Start(ctx.Done())
			<-ctx.Done()
			factory.Shutdown()
			return nil
		}),
		Phases: clientgo.Phases{FaultsFor: 15 * time.Second},
	}
	rep, err := clientgo.Run(t, cfg)
	if err != nil {
		t.Fatalf("seed %d: %v\n%s", seed, err, rep.Failure)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(order) != 8 {
		t.Fatalf("seed %d: the first resync handed %d ConfigMaps, want 8: %v", seed, len(order), order)
	}
	return order, rep
}

// TestSeededResyncOrder: in the deterministic mode, the order of a resync of client-go's cache is
// the seed's: the same for one seed run twice, another for another seed, and nothing is counted
// as unordered.
func TestSeededResyncOrder(t *testing.T) {
	requireSeeded(t)
	first, rep := resyncOrder(t, 1)
	again, _ := resyncOrder(t, 1)
	if !slices.Equal(first, again) {
		t.Fatalf("seed 1 resynced in two orders: %v, %v", first, again)
	}
	if rep.MapOrdered() != 0 || !rep.Seeded {
		t.Fatalf("seed 1: %d orders counted as no seed's, Seeded %v", rep.MapOrdered(), rep.Seeded)
	}
	for seed := uint64(2); seed <= 10; seed++ {
		if other, _ := resyncOrder(t, seed); !slices.Equal(other, first) {
			t.Logf("seed 1 resynced in the order %v, seed %d in %v", first, seed, other)
			return
		}
	}
	t.Fatalf("seeds 1 to 10 all resynced in the order %v: the seed does not decide it", first)
}

// parentFirst is a main with an order-dependent bug: its handler takes a ConfigMap labelled as a
// child for an orphan, and deletes it, unless it has seen the child's parent before. A watch-list
// start hands the informer's initial objects over in a Go map's order, so on some seeds a child
// comes before its parent.
func parentFirst(ctx context.Context, c *rest.Config) error {
	client, err := kubernetes.NewForConfig(c)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	seen := map[string]bool{}
	_, err = factory.Core().V1().ConfigMaps().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			cm := obj.(*corev1.ConfigMap)
			switch cm.Labels["role"] {
			case "parent":
				seen[cm.Name] = true
			case "child":
				if !seen[cm.Data["parent"]] {
					_ = client.CoreV1().ConfigMaps(cm.Namespace).Delete(ctx, cm.Name, metav1.DeleteOptions{})
				}
			}
		},
	})
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	<-ctx.Done()
	factory.Shutdown()
	return nil
}

func parentFirstConfig(seed uint64) clientgo.Config {
	return clientgo.Config{
		Seed:      seed,
		WatchList: true,
		Setup: func(w *world.World) error {
			for i := range 3 {
				for _, op := range []world.Op{
					{Kind: world.OpCreate, Name: fmt.Sprintf("parent-%d", i), Labels: map[string]string{"role": "parent"}},
					{Kind: world.OpCreate, Name: fmt.Sprintf("child-%d", i), Labels: map[string]string{"role": "child"},
						Content: map[string]any{"data": map[string]any{"parent": fmt.Sprintf("parent-%d", i)}}},
				} {
					if err := w.Apply(op); err != nil {
						return err
					}
				}
			}
			return nil
		},
		Cluster:    clientgo.Cluster{World: world.Config{DefaultResource: cmsGVR}},
		Controller: clientgo.Main(parentFirst),
		Phases:     clientgo.Phases{FaultsFor: 5 * time.Second, Budget: time.Minute},
		Checks: clientgo.Checks{Outcome: func(srv *fakeapi.Server) error {
			l, err := srv.Snapshot(cmsGVR, "", metav1.ListOptions{LabelSelector: "role=child"})
			if err != nil {
				return err
			}
			if len(l.Items) != 3 {
				return fmt.Errorf("%d children left of 3: the controller deleted a child whose parent exists", len(l.Items))
			}
			return nil
		}},
	}
}

// TestSeededOrderDependentBugFound: in the deterministic mode a sweep finds the seeds on which
// the watch-list hands parentFirst a child before its parent, and the first of them fails ten
// times out of ten when replayed, with the same message and trace.
func TestSeededOrderDependentBugFound(t *testing.T) {
	requireSeeded(t)
	var failing, passing []uint64
	for seed := uint64(1); seed <= 20; seed++ {
		if _, err := clientgo.Run(t, parentFirstConfig(seed)); err != nil {
			failing = append(failing, seed)
		} else {
			passing = append(passing, seed)
		}
	}
	t.Logf("parentFirst over seeds 1 to 20: fails on %v", failing)
	if len(failing) == 0 || len(passing) == 0 {
		t.Fatalf("the order-dependent bug failed on %d of 20 seeds: the seed does not decide the order", len(failing))
	}
	seed := failing[0]
	first, firstErr := clientgo.Run(t, parentFirstConfig(seed))
	if firstErr == nil || !strings.Contains(first.Failure, "Replay: guaranteed") {
		t.Fatalf("seed %d: %v; the report does not promise the replay:\n%s", seed, firstErr, first.Failure)
	}
	for i := range 10 {
		rep, err := clientgo.Run(t, parentFirstConfig(seed))
		if err == nil || err.Error() != firstErr.Error() || rep.Hash != first.Hash {
			t.Fatalf("replay %d of seed %d: %v (hash %.16s), first %v (hash %.16s)", i+1, seed, err, rep.Hash, firstErr, first.Hash)
		}
	}
}

// TestSeededAddressKeyedRangeCounted: in the deterministic mode, a controller that ranges over a
// map of more than eight entries keyed by pointers (an order of addresses, which no seed decides)
// has the range counted and the map's type named, and its run is not guaranteed to replay; the
// caches the harness and its libraries fill by such ranges are not counted.
func TestSeededAddressKeyedRangeCounted(t *testing.T) {
	requireSeeded(t)
	run := func(rangeOverPointers bool) *clientgo.Report {
		cfg := clientgo.Config{
			Seed:    1,
			Cluster: clientgo.Cluster{World: world.Config{DefaultResource: cmsGVR}},
			Controller: clientgo.Main(func(ctx context.Context, c *rest.Config) error {
				if rangeOverPointers {
					byPointer := map[*int]int{}
					for i := range 20 {
						byPointer[new(int)] = i
					}
					sum := 0
					for _, v := range byPointer {
						sum += v
					}
					_ = sum
				}
				<-ctx.Done()
				return nil
			}),
			Phases: clientgo.Phases{FaultsFor: time.Second},
		}
		rep, err := clientgo.Run(t, cfg)
		if err != nil {
			t.Fatalf("%v\n%s", err, rep.Failure)
		}
		return rep
	}
	run(false) // the process's first run fills the caches
	if rep := run(false); rep.Diagnostics.AddressKeyedRanges != 0 || !rep.ReplayGuaranteed() {
		t.Fatalf("a controller that ranges over no such map: %d ranges counted (%v)", rep.Diagnostics.AddressKeyedRanges, rep.Diagnostics.AddressKeyedMaps)
	}
	rep := run(true)
	if rep.Diagnostics.AddressKeyedRanges != 1 || !slices.Contains(rep.Diagnostics.AddressKeyedMaps, "map[*int]int") || rep.ReplayGuaranteed() {
		t.Fatalf("the range over a pointer-keyed map: %d counted, types %v, replay guaranteed %v", rep.Diagnostics.AddressKeyedRanges, rep.Diagnostics.AddressKeyedMaps, rep.ReplayGuaranteed())
	}
	if !strings.Contains(rep.String(), "ranges over maps ordered by their keys' addresses (map[*int]int") {
		t.Errorf("the Report does not name the range: %s", rep)
	}
}
