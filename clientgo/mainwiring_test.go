package clientgo_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/informersim/informersim/clientgo"
	"k8s.io/client-go/rest"
)

// mirrorMain is the mirror controller's main as written for a cluster: its clientset and
// client-go's own informer factory built from the *rest.Config, started, then Run.
var mirrorMain = mirrorMainWith(false)

// TestMainWiringIsServedByTheWorld: the mirror controller wired by its own main (client-go's
// reflector, protobuf) converges under a generated workload with watch closes, 410s,
// compactions and failed requests; the world served its watches (the Report counts them,
// rewatches included), and the same seed twice gives the same trace hash.
func TestMainWiringIsServedByTheWorld(t *testing.T) {
	watches := 0
	for seed := uint64(1); seed <= 4; seed++ {
		cfg := mirrorConfig(seed, 2, nil)
		cfg.Controller = clientgo.Main(mirrorMain)
		rep, err := clientgo.Run(t, cfg)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, rep.Failure)
		}
		again, err := clientgo.Run(t, cfg)
		if err != nil {
			t.Fatalf("seed %d, second run: %v", seed, err)
		}
		if rep.Hash != again.Hash {
			t.Errorf("seed %d: trace hashes differ: %s, %s", seed, rep.Hash, again.Hash)
		}
		if len(rep.Diagnostics.Streams) != 1 || rep.Diagnostics.Streams[0].String() != "configmaps/v1 (protobuf)" || rep.Diagnostics.Streams[0].Events == 0 || rep.Diagnostics.UnorderedBatches != 0 {
			t.Fatalf("seed %d: streams %+v", seed, rep.Diagnostics.Streams)
		}
		if !strings.Contains(rep.Trace, "controller: watch-open stream=1 request=\"GET /api/v1/configmaps?allowWatchBookmarks=true&resourceVersion=") {
			t.Fatalf("seed %d: the first stream did not deliver c0:\n%s", seed, rep.Trace)
		}
		watches += rep.Diagnostics.WatchesServed()
		t.Logf("%v; streams %v; timeouts redrawn %d", rep, rep.Diagnostics.Streams, rep.Diagnostics.WatchTimeoutsRedrawn)
	}
	if watches <= 4 {
		t.Errorf("%d watches over 4 seeds: the faults never made a reflector watch again", watches)
	}
}

// TestMainWiringWatchList: with Config.WatchList the reflector starts with the streaming
// watch-list, served by the world (initial events, then the end bookmark); its three initial
// objects reach the handlers in an order no seed decides, and the Report says so.
func TestMainWiringWatchList(t *testing.T) {
	cfg := mirrorConfig(1, 2, nil)
	cfg.Controller, cfg.WatchList = clientgo.Main(mirrorMain), true
	rep, err := clientgo.Run(t, cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, rep.Failure)
	}
	if len(rep.Diagnostics.Streams) == 0 || rep.Diagnostics.Streams[0].String() != "configmaps/v1 (protobuf, watch-list)" || rep.Diagnostics.UnorderedBatches == 0 {
		t.Fatalf("streams %v, unordered batches %d", rep.Diagnostics.Streams, rep.Diagnostics.UnorderedBatches)
	}
	// c0 is the first write after the four system namespaces (rv 2 to 5) the run starts with.
	for _, want := range []string{"controller: watch-event stream=1 type=ADDED key=default/c0 rv=6", "controller: watch-event stream=1 type=BOOKMARK"} {
		if !strings.Contains(rep.Trace, want) {
			t.Fatalf("the trace lacks %q:\n%s", want, rep.Trace)
		}
	}
}

// TestMainWiringForeignHost: a controller that points a client at an address of its own (here a
// copy of the configuration with another host) fails the run with an error naming the request:
// the world could neither serve nor order it.
func TestMainWiringForeignHost(t *testing.T) {
	cfg := mirrorConfig(1, 2, nil)
	cfg.Controller = clientgo.Main(func(ctx context.Context, c *rest.Config) error {
		c = rest.CopyConfig(c)
		c.Host = "https://10.0.0.1:6443"
		return mirrorMain(ctx, c)
	})
	_, err := clientgo.Run(t, cfg)
	if err == nil || !strings.Contains(err.Error(), `a request to "10.0.0.1:6443", not the world's apiserver`) || !strings.Contains(err.Error(), "GET https://10.0.0.1:6443/api/v1/configmaps") {
		t.Fatalf("got %v", err)
	}
}

// TestParallelSeeds runs seeds in parallel subtests (no lock is held across a run; under -race
// this checks the harness shares nothing between runs): each gives the hash it gave alone.
// INFORMERSIM_PARALLEL_SEEDS sets the number of seeds (default 4); with -parallel 1 and 2 the
// sweep's wall time measures what a second core buys.
func TestParallelSeeds(t *testing.T) {
	n := 4
	if v := os.Getenv("INFORMERSIM_PARALLEL_SEEDS"); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil {
			t.Fatalf("INFORMERSIM_PARALLEL_SEEDS=%q: %v", v, err)
		}
	}
	config := func(seed uint64) clientgo.Config {
		cfg := mirrorConfig(seed, 2, nil)
		cfg.Controller = clientgo.Main(mirrorMain)
		return cfg
	}
	alone := map[uint64]string{}
	for seed := uint64(1); seed <= 2; seed++ {
		rep, err := clientgo.Run(t, config(seed))
		if err != nil {
			t.Fatal(err)
		}
		alone[seed] = rep.Hash
	}
	t.Run("sweep", func(t *testing.T) {
		for seed := uint64(1); seed <= uint64(n); seed++ {
			t.Run(fmt.Sprint(seed), func(t *testing.T) {
				t.Parallel()
				rep, err := clientgo.Run(t, config(seed))
				if err != nil {
					t.Fatal(err)
				}
				if want, ok := alone[seed]; ok && rep.Hash != want {
					t.Errorf("seed %d: hash %s in parallel, %s alone", seed, rep.Hash, want)
				}
			})
		}
	})
}
