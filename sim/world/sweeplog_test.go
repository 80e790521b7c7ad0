package world_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/sim/world"
)

// sweepRun is a user's seeded test in miniature: a world of seed with an informer, a create,
// then a 410 and a delete; its check fails on the seeds divisible by 4 (at once: the run stops
// before its hazards).
func sweepRun(seed uint64) (*world.World, error) {
	w, err := world.New(seed, world.Config{})
	if err != nil {
		return nil, err
	}
	inf, err := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
	if err != nil {
		return w, err
	}
	if err := w.AddCheck("not a multiple of 4", func() error {
		if seed%4 == 0 {
			return errors.New("the seed is a multiple of 4")
		}
		return nil
	}); err != nil {
		return w, err
	}
	if err := inf.Start(); err != nil {
		return w, err
	}
	if _, err := w.Script(10*time.Millisecond, world.Op{Kind: world.OpCreate, Name: "a"}, world.Op{Kind: world.OpSleep, Duration: 20 * time.Millisecond},
		world.Op{Kind: world.OpCloseWatches, Code: 410}, world.Op{Kind: world.OpDelete, Name: "a"}); err != nil {
		return w, err
	}
	return w, w.RunUntilConverged(time.Hour)
}

// Goal: a Go test's sweep takes its seeds from INFORMERSIM_SEEDS and INFORMERSIM_SHARD (and
// INFORMERSIM_SEED first), refuses malformed ones, and logs the failing seeds and the summary
// as informersim sweep --json's lines; the shards' summaries merge into the unsharded one.
func TestSweepSeedsAndLog(t *testing.T) {
	t.Setenv(world.SweepSeedsEnv, "10:20")
	t.Setenv(world.SweepShardEnv, "1/3")
	t.Setenv(world.SeedEnv, "")
	seeds, rng, shard, err := world.SweepSeeds(1, 5)
	if err != nil || !slices.Equal(seeds, []uint64{11, 14, 17}) || rng != "10:20" || shard != "1/3" {
		t.Fatalf("SweepSeeds = %v %q %q, %v", seeds, rng, shard, err)
	}
	for _, bad := range [][2]string{{"20:10", "0/1"}, {"x", "0/1"}, {"10:20", "3/3"}, {"10:20", "1"}, {"10:12", "5/9"}} {
		t.Setenv(world.SweepSeedsEnv, bad[0])
		t.Setenv(world.SweepShardEnv, bad[1])
		if _, _, _, err := world.SweepSeeds(1, 5); err == nil {
			t.Errorf("SweepSeeds took %s=%q %s=%q", world.SweepSeedsEnv, bad[0], world.SweepShardEnv, bad[1])
		}
	}
	t.Setenv(world.SeedEnv, "7")
	if seeds, _, _, err := world.SweepSeeds(1, 5); err != nil || !slices.Equal(seeds, []uint64{7}) {
		t.Errorf("with %s=7: %v, %v", world.SeedEnv, seeds, err)
	}
	t.Setenv(world.SeedEnv, "")

	sweep := func(rng, shard string) (*world.SweepSummary, []string) {
		t.Setenv(world.SweepSeedsEnv, rng)
		t.Setenv(world.SweepShardEnv, shard)
		seeds, rng, shard, err := world.SweepSeeds(1, 5)
		if err != nil {
			t.Fatal(err)
		}
		log := world.NewSweepLog("TestX", rng, shard)
		for _, seed := range seeds {
			w, err := sweepRun(seed)
			log.Add(seed, w, err)
		}
		path := filepath.Join(t.TempDir(), "sweep.jsonl")
		t.Setenv(world.SweepJSONEnv, path)
		if got, err := log.WriteEnv(); err != nil || got != path {
			t.Fatalf("WriteEnv: %q, %v", got, err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var lines []string
		for sc := bufio.NewScanner(f); sc.Scan(); {
			lines = append(lines, sc.Text())
		}
		return log.Summary(), lines
	}
	whole, lines := sweep("0:12", "0/1")
	if whole.Runs != 12 || whole.Failures != 3 || whole.ByOracle[`check "not a multiple of 4"`] != 3 || len(lines) != 4 ||
		whole.SeedsReaching[world.HazardRelist] != 9 || slices.Contains(whole.Never, world.HazardRelist) || !slices.Contains(whole.Never, world.HazardCompaction) ||
		!slices.Equal(whole.Combinations, []string{"none", "watch-expired-410+relist+watch-end"}) {
		t.Fatalf("summary %+v, lines %q", whole, lines)
	}
	var first world.SweepFailure
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.Seed != 0 || !strings.Contains(first.Replay, "INFORMERSIM_SEED=0") {
		t.Errorf("first line %s: %+v, %v", lines[0], first, err)
	}
	if !strings.HasPrefix(lines[3], `{"summary":{"scenario":"TestX","seeds":"0:12","shard":"0/1","runs":12,"failures":3,`) {
		t.Errorf("summary line %s", lines[3])
	}
	merged := world.NewSweepSummary("TestX", "0:12", "0/1", false)
	for _, shard := range []string{"0/2", "1/2"} {
		s, _ := sweep("0:12", shard)
		if err := merged.Merge(s); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := json.Marshal(merged)
	b, _ := json.Marshal(whole)
	if string(a) != string(b) {
		t.Errorf("merged shards:\n%s\nunsharded:\n%s", a, b)
	}
	if err := merged.Merge(world.NewSweepSummary("TestY", "0:12", "0/1", false)); err == nil {
		t.Error("Merge took another test's sweep")
	}
}
