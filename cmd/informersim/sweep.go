package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/informersim/informersim/scenarios"
	"github.com/informersim/informersim/sim/world"
)

// exitFailuresFound is sweep's exit code when a seed failed (1 is an error of the sweep itself).
const exitFailuresFound = 3

type sweepLine struct {
	*world.SweepFailure
	Summary *world.SweepSummary `json:"summary,omitempty"`
}

// sweep is "informersim sweep FILE|NAME --seeds A:B [--shard i/n] [--procs N] [--guided]
// [--json]": the scenario run once per seed of [A, B) (of the shard's: the seeds whose offset
// from A is i modulo n), each failure with its oracle and replay line, a summary with the
// hazards reached (how often, by how many seeds, in which combinations) and never reached.
// --guided is swarm testing: each seed's generate directives with fault-ops draw from a subset
// of the fault kinds the seed picks (scenarios.Options.Swarm), so runs without some faults
// reach what the others mask; a scenario with no such directive is refused. Results depend only on the version, the scenario and the seed, so shards
// merge (informersim merge) into exactly the unsharded result.
func sweep(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seedsFlag := fs.String("seeds", "", "the seeds A:B, from A up to B-1")
	shardFlag := fs.String("shard", "0/1", "run shard i of n: the seeds A+i, A+i+n, ... (i from 0)")
	procs := fs.Int("procs", 1, "how many seeds to run at once")
	jsonOut := fs.Bool("json", false, "JSON Lines: one object per failing seed, then {\"summary\": ...}")
	guided := fs.Bool("guided", false, "swarm testing: each seed's generated fault ops draw from a subset of the fault kinds the seed picks")
	pos, code := parseInterleaved(fs, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "informersim sweep: expected one scenario (a file or a course name), got %d\n", len(pos))
		return 2
	}
	a, b, err := parseRange(*seedsFlag)
	if err != nil {
		fmt.Fprintf(stderr, "informersim sweep: --seeds: %v\n", err)
		return 2
	}
	shard, shards, err := parseShard(*shardFlag)
	if err != nil {
		fmt.Fprintf(stderr, "informersim sweep: --shard: %v\n", err)
		return 2
	}
	if *procs < 1 {
		fmt.Fprintf(stderr, "informersim sweep: --procs %d: expected at least 1\n", *procs)
		return 2
	}
	sc, isFile, err := findScenario(pos[0], false)
	if err != nil {
		fmt.Fprintf(stderr, "informersim sweep: %v\n", err)
		return 2
	}
	name := sc.Name
	if isFile {
		name = pos[0]
	}
	var seeds []uint64
	for s := a + shard; s < b && s >= a; s += shards {
		seeds = append(seeds, s)
	}
	results := make([]*world.SweepFailure, len(seeds))
	hazards := make([]world.Hazards, len(seeds))
	errs := make([]error, len(seeds))
	bar := newProgress(stderr, len(seeds))
	var wg sync.WaitGroup
	next := make(chan int)
	for range *procs {
		wg.Go(func() {
			for i := range next {
				seed := seeds[i]
				res, err := scenarios.Run(sc.Name, sc.Text, scenarios.Options{Seed: &seed, Name: name, Swarm: *guided})
				switch {
				case err != nil:
					errs[i] = err
				case *guided && len(res.Env.SwarmKinds()) == 0:
					errs[i] = fmt.Errorf("--guided: %s has no generate directive with fault-ops: there are no fault kinds to vary", sc.Name)
				default:
					hazards[i] = world.CountHazards(res.Env.World().Sim().Trace().Events())
					if res.Failure != nil {
						msg, _, _ := strings.Cut(res.Failure.Error(), "\n")
						results[i] = &world.SweepFailure{Seed: seed, Oracle: scenarios.FailureSignature(res.Failure), Message: msg, Replay: res.Env.ReplayCommand()}
					}
				}
				bar.done()
			}
		})
	}
	for i := range seeds {
		next <- i
	}
	close(next)
	wg.Wait()
	bar.finish()
	if failed := slices.DeleteFunc(slices.Clone(errs), func(err error) bool { return err == nil }); len(failed) > 0 {
		// One message, once: the same mistake fails every seed.
		fmt.Fprintf(stderr, "informersim sweep: %v (%d of %d seeds could not run)\n", failed[0], len(failed), len(seeds))
		return 2
	}
	sum := world.NewSweepSummary(sc.Name, fmt.Sprintf("%d:%d", a, b), *shardFlag, *guided)
	var failures []*world.SweepFailure
	for i, f := range results {
		sum.AddRun(hazards[i], f)
		if f != nil {
			failures = append(failures, f)
		}
	}
	if err := writeSweep(stdout, *jsonOut, failures, sum); err != nil {
		fmt.Fprintf(stderr, "informersim sweep: %v\n", err)
		return 1
	}
	if sum.Failures > 0 {
		return exitFailuresFound
	}
	return 0
}

// writeSweep prints failures and the summary: JSON Lines, or a table.
func writeSweep(w io.Writer, jsonOut bool, failures []*world.SweepFailure, sum *world.SweepSummary) error {
	bw := bufio.NewWriter(w)
	if jsonOut {
		enc := json.NewEncoder(bw)
		for _, f := range failures {
			if err := enc.Encode(f); err != nil {
				return err
			}
		}
		if err := enc.Encode(sweepLine{Summary: sum}); err != nil {
			return err
		}
		return bw.Flush()
	}
	for _, f := range failures {
		fmt.Fprintf(bw, "seed %d: %s: %s\n", f.Seed, f.Oracle, f.Message)
	}
	fmt.Fprintf(bw, "\nsweep %s seeds %s shard %s: %d runs, %d failed\n", sum.Scenario, sum.Seeds, sum.Shard, sum.Runs, sum.Failures)
	for _, o := range slices.Sorted(mapsKeys(sum.ByOracle)) {
		fmt.Fprintf(bw, "  %-40s %d\n", o, sum.ByOracle[o])
	}
	fmt.Fprintf(bw, "hazards: %s\n", sum.Hazards)
	fmt.Fprintf(bw, "  %-20s %10s %10s\n", "hazard", "events", "seeds")
	for _, k := range world.HazardNames() {
		fmt.Fprintf(bw, "  %-20s %10d %10d\n", k, sum.Hazards[k], sum.SeedsReaching[k])
	}
	never := "none"
	if len(sum.Never) > 0 {
		never = strings.Join(sum.Never, ", ")
	}
	fmt.Fprintf(bw, "never reached: %s\n", never)
	guided := ""
	if sum.Guided {
		guided = " (guided: swarmed fault kinds)"
	}
	fmt.Fprintf(bw, "hazard combinations reached: %d%s\n", len(sum.Combinations), guided)
	if len(failures) > 0 {
		fmt.Fprintf(bw, "first failing seed: replay: %s\n", failures[0].Replay)
	}
	return bw.Flush()
}

func mapsKeys(m map[string]int) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// merge is "informersim merge [--json] FILE...": the shards' sweep --json outputs merged into
// the output of the unsharded sweep (failures in seed order, summaries added up).
func merge(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonOut := fs.Bool("json", false, "print JSON Lines, as sweep --json")
	files, code := parseInterleaved(fs, args)
	if code >= 0 {
		return code
	}
	if len(files) == 0 {
		fmt.Fprintln(stderr, "informersim merge: expected the shards' sweep --json outputs")
		return 2
	}
	var failures []*world.SweepFailure
	var total *world.SweepSummary
	shards := map[string]bool{}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			fmt.Fprintf(stderr, "informersim merge: %v\n", err)
			return 2
		}
		var sum *world.SweepSummary
		for n, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var l struct {
				world.SweepFailure
				Summary *world.SweepSummary `json:"summary"`
			}
			if err := json.Unmarshal([]byte(line), &l); err != nil {
				fmt.Fprintf(stderr, "informersim merge: %s:%d: %v\n", name, n+1, err)
				return 2
			}
			if l.Summary != nil {
				sum = l.Summary
				continue
			}
			f := l.SweepFailure
			failures = append(failures, &f)
		}
		if sum == nil {
			fmt.Fprintf(stderr, "informersim merge: %s: no summary line (a shard cut short?)\n", name)
			return 2
		}
		if shards[sum.Shard] {
			fmt.Fprintf(stderr, "informersim merge: %s: shard %s given twice\n", name, sum.Shard)
			return 2
		}
		shards[sum.Shard] = true
		if total == nil {
			total = world.NewSweepSummary(sum.Scenario, sum.Seeds, "0/1", sum.Guided)
		}
		if err := total.Merge(sum); err != nil {
			fmt.Fprintf(stderr, "informersim merge: %s: %v\n", name, err)
			return 2
		}
	}
	// Every shard of n must be there, or the merge is not the sweep.
	_, n, err := parseShard(func() string {
		for s := range shards {
			return s
		}
		return ""
	}())
	if err != nil || uint64(len(shards)) != n {
		fmt.Fprintf(stderr, "informersim merge: %d shards given, the sweep has %d\n", len(shards), n)
		return 2
	}
	slices.SortFunc(failures, func(x, y *world.SweepFailure) int {
		switch {
		case x.Seed < y.Seed:
			return -1
		case x.Seed > y.Seed:
			return 1
		}
		return 0
	})
	if err := writeSweep(stdout, *jsonOut, failures, total); err != nil {
		fmt.Fprintf(stderr, "informersim merge: %v\n", err)
		return 1
	}
	if total.Failures > 0 {
		return exitFailuresFound
	}
	return 0
}

func parseRange(s string) (a, b uint64, err error) {
	as, bs, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, fmt.Errorf("%q: expected A:B, e.g. 1:1000", s)
	}
	if a, err = strconv.ParseUint(as, 10, 64); err == nil {
		b, err = strconv.ParseUint(bs, 10, 64)
	}
	if err != nil || b <= a {
		return 0, 0, fmt.Errorf("%q: expected A:B with A < B, two decimal seeds", s)
	}
	return a, b, nil
}

func parseShard(s string) (i, n uint64, err error) {
	is, ns, ok := strings.Cut(s, "/")
	if ok {
		if i, err = strconv.ParseUint(is, 10, 64); err == nil {
			n, err = strconv.ParseUint(ns, 10, 64)
		}
	}
	if !ok || err != nil || n == 0 || i >= n {
		return 0, 0, fmt.Errorf("%q: expected i/n with 0 <= i < n, e.g. 0/4", s)
	}
	return i, n, nil
}

// progress is a one-line progress bar on standard error, drawn only when it is a terminal (a
// few lines of our own rather than a library: a count, a bar and a carriage return).
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	total int
	n     int
	on    bool
}

func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w, total: total}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.on = true
		}
	}
	return p
}

func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if !p.on || (p.n%100 != 0 && p.n != p.total) {
		return
	}
	const width = 40
	fill := width * p.n / max(p.total, 1)
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d seeds", strings.Repeat("#", fill), strings.Repeat(".", width-fill), p.n, p.total)
}

func (p *progress) finish() {
	if p.on {
		fmt.Fprintln(p.w)
	}
}
