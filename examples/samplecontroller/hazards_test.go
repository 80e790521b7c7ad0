package samplecontroller_test

import (
	"testing"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/examples/samplecontroller"
	"github.com/informersim/informersim/fakeapi"
)

// hazardSpec is sample-controller wired by its main under every hazard of the harness at once:
// two crash-restarts, two stale reads from a replica 10s behind, two changes hidden in a relist,
// three conflicts and three slow calls, over a workload of Foo writes.
var hazardSpec = spec{
	name:     "hazards",
	workload: workload{n: 30},
	api:      func(c *fakeapi.Config) { c.Replicas = 3 },
}

var allHazards = clientgo.Hazards{Restarts: 2, StaleReads: 2, HiddenChanges: 2, Conflicts: 3, SlowCalls: 3}

func hazardConfig(t *testing.T, seed uint64, bugs samplecontroller.Bugs) clientgo.Config {
	cfg := mainConfig(t, hazardSpec, seed, bugs, nil)
	cfg.Hazards = allHazards
	return cfg
}

// TestHazardsConverge: under every hazard, sample-controller's main converges on each seed, each
// seed replays (equal trace hashes on two runs, or a counted map-order batch), and over the sweep
// every hazard fired at least once (a hazard that never fired would make the sweep a lie).
func TestHazardsConverge(t *testing.T) {
	seeds := mainSeeds(t)
	fired := map[string]int{}
	for _, seed := range seeds {
		rep, err := clientgo.Run(t, hazardConfig(t, seed, samplecontroller.Bugs{}))
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, rep.Failure)
		}
		for _, h := range rep.Hazards {
			fired[h.Name] += h.Fired
		}
		again, err := clientgo.Run(t, hazardConfig(t, seed, samplecontroller.Bugs{}))
		if err != nil {
			t.Fatalf("seed %d, second run: %v", seed, err)
		}
		if again.Hash != rep.Hash && rep.UnorderedBatches+rep.ResyncWakes+again.UnorderedBatches+again.ResyncWakes == 0 {
			t.Errorf("seed %d: trace hashes differ (%s, %s) with nothing counted", seed, rep.Hash[:16], again.Hash[:16])
		}
		t.Logf("%v", rep)
	}
	for _, name := range []string{clientgo.HazardRestart, clientgo.HazardStaleRead, clientgo.HazardHiddenChange, clientgo.HazardConflict, clientgo.HazardSlowCall} {
		if fired[name] == 0 {
			t.Errorf("hazard %s never fired over %d seeds", name, len(seeds))
		}
	}
	t.Logf("fired over %d seeds: %v", len(seeds), fired)
}
