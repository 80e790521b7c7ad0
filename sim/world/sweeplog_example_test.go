package world_test

import (
	"fmt"
	"os"

	"github.com/informersim/informersim/sim/world"
)

// A user's test sweeps the seeds the environment gives (INFORMERSIM_SEEDS=A:B, sharded by
// INFORMERSIM_SHARD=i/n; otherwise the test's own first and count), logs each run, and writes
// informersim sweep --json's lines where INFORMERSIM_SWEEP_JSON says, for informersim merge.
func ExampleSweepLog() {
	os.Setenv(world.SweepSeedsEnv, "100:106")
	os.Setenv(world.SweepShardEnv, "0/2")
	defer os.Unsetenv(world.SweepSeedsEnv)
	defer os.Unsetenv(world.SweepShardEnv)
	seeds, rng, shard, err := world.SweepSeeds(1, 20)
	if err != nil {
		panic(err)
	}
	log := world.NewSweepLog("TestMyController", rng, shard)
	for _, seed := range seeds {
		w, err := sweepRun(seed) // the test's own run of seed: its world and its failure
		log.Add(seed, w, err)
	}
	s := log.Summary()
	fmt.Println(seeds, s.Runs, s.Failures, s.ByOracle)
	fmt.Println(s.Combinations)
	// Output:
	// [100 102 104] 3 2 map[check "not a multiple of 4":2]
	// [none watch-expired-410+relist+watch-end]
}
