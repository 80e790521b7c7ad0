package samplecontroller_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/examples/samplecontroller"
	"github.com/informersim/informersim/examples/samplecontroller/clientset"
	"github.com/informersim/informersim/examples/samplecontroller/informers"
	"github.com/informersim/informersim/sim/world"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// sampleMain is kubernetes/sample-controller's main.go from the *rest.Config on, as it is there:
// both clientsets, client-go's informer factory and the generated one with a 30s resync, the
// controller, both factories started, Run with two workers. Nothing of informersim.
func sampleMain(bugs samplecontroller.Bugs) func(ctx context.Context, cfg *rest.Config) error {
	return func(ctx context.Context, cfg *rest.Config) error {
		kubeClient, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		exampleClient, err := clientset.NewForConfig(cfg)
		if err != nil {
			return err
		}
		kubeInformerFactory := kubeinformers.NewSharedInformerFactory(kubeClient, 30*time.Second)
		exampleInformerFactory := informers.NewSharedInformerFactory(exampleClient, 30*time.Second)
		controller, err := samplecontroller.NewController(ctx, kubeClient, exampleClient,
			kubeInformerFactory.Apps().V1().Deployments(),
			exampleInformerFactory.Samplecontroller().V1alpha1().Foos(), bugs)
		if err != nil {
			return err
		}
		kubeInformerFactory.Start(ctx.Done())
		exampleInformerFactory.Start(ctx.Done())
		return controller.Run(ctx, 2)
	}
}

// mainConfig is runConfig with the controller wired by sampleMain instead of the Env.
func mainConfig(t *testing.T, s spec, seed uint64, bugs samplecontroller.Bugs, w **world.World) clientgo.Config {
	cfg := runConfig(t, s, seed, 2, bugs, w)
	cfg.Controller = clientgo.Main(sampleMain(bugs))
	return cfg
}

// mainSeeds is the number of seeds of the main-wiring sweeps: INFORMERSIM_MAIN_SEEDS, default 4.
func mainSeeds(t *testing.T) []uint64 { return envSeeds(t, "INFORMERSIM_MAIN_SEEDS", 4) }

// envSeeds is seeds 1..n of a sweep, n read from the environment variable name (a sweep sized
// for CI by default, larger when measured), def when it is unset.
func envSeeds(t *testing.T, name string, def uint64) []uint64 {
	t.Helper()
	n := def
	if v := os.Getenv(name); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil {
			t.Fatalf("%s=%q: %v", name, v, err)
		}
	}
	seeds, err := world.Seeds(1, n)
	if err != nil {
		t.Fatal(err)
	}
	return seeds
}

// TestMainWiringConverges runs sample-controller wired exactly as its main.go under each
// condition (watch drops, 410 relists, compaction, stale replica routing, a slow worker, status
// conflicts): it converges, the run shows the condition happened, the world served both
// factories' informers (Report.Diagnostics.Streams: Deployments in protobuf, Foos in JSON), and each seed
// run twice gives the same trace hash, unless the Report counted what client-go hands the
// handlers in a Go map's order: a relist that found several Deployments gone
// (Report.Diagnostics.UnorderedBatches) or a resync of several Foos, every 30s in main.go
// (Report.Diagnostics.ResyncWakes). A difference with nothing counted fails.
func TestMainWiringConverges(t *testing.T) {
	seeds := mainSeeds(t)
	for _, s := range specs {
		t.Run(strings.ReplaceAll(s.name, " ", "_"), func(t *testing.T) {
			equal, counted, exposed := 0, 0, 0
			for _, seed := range seeds {
				var w *world.World
				rep, err := clientgo.Run(t, mainConfig(t, s, seed, samplecontroller.Bugs{}, &w))
				if err != nil {
					t.Fatalf("%s: %v\n%s", s.name, err, rep.Failure)
				}
				if err := s.evidence(w.Server()); err != nil {
					t.Errorf("seed %d: the run did not exercise %q: %v", seed, s.name, err)
				}
				kinds := map[string]bool{}
				for _, k := range rep.Diagnostics.Streams {
					kinds[k.String()] = true
				}
				if !kinds["deployments.apps/v1 (protobuf)"] || !kinds["foos.samplecontroller.k8s.io/v1alpha1 (json)"] {
					t.Errorf("seed %d: streams %v, unordered batches %d", seed, rep.Diagnostics.Streams, rep.Diagnostics.UnorderedBatches)
				}
				again, err := clientgo.Run(t, mainConfig(t, s, seed, samplecontroller.Bugs{}, nil))
				if err != nil {
					t.Fatalf("seed %d, second run: %v", seed, err)
				}
				unordered := rep.MapOrdered() + again.MapOrdered()
				if unordered > 0 {
					exposed++
				}
				switch {
				case again.Hash == rep.Hash:
					equal++
				case unordered > 0:
					counted++
				default:
					t.Errorf("seed %d: trace hashes differ (%s, %s) with nothing counted in the Report: nondeterminism the harness does not see", seed, rep.Hash[:16], again.Hash[:16])
				}
				t.Logf("%v; %d watches served: %v", rep, rep.Diagnostics.WatchesServed(), rep.Diagnostics.Streams)
			}
			t.Logf("%s: %d of %d seeds gave equal hashes on 2 runs, %d differed after a counted map-order batch or resync; %d seeds had one counted", s.name, equal, len(seeds), counted, exposed)
		})
	}
}

// TestREADMEMainWiring: README's main-wiring block is sampleMain's body, verbatim, so the
// snippet a reader copies is the code this package compiles and runs.
func TestREADMEMainWiring(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "<!-- main-wiring -->\n```go\n")
	if !ok {
		t.Fatal("README.md has no main-wiring block")
	}
	block, _, ok = strings.Cut(block, "```")
	if !ok || strings.TrimSpace(block) == "" {
		t.Fatal("README.md's main-wiring block does not end")
	}
	src, err := os.ReadFile("main_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "return func(ctx context.Context, cfg *rest.Config) error {\n"+block+"\t}\n") {
		t.Fatalf("README.md's main-wiring block is not sampleMain's body:\n%s", block)
	}
}
