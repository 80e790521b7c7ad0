package world

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// A seed sweep of a user's own Go test, as informersim sweep runs one of a scenario file: the
// environment chooses the seeds (SweepSeedsEnv, sharded by SweepShardEnv), and a SweepLog writes
// the failing seeds and a summary as JSON Lines (SweepJSONEnv), the lines informersim sweep
// --json prints, so informersim merge merges the shards of a Go test as it merges a file's.

// The environment variables of a Go test's sweep.
const (
	// SweepSeedsEnv gives the seeds, A:B for A up to B-1 (SweepSeeds).
	SweepSeedsEnv = "INFORMERSIM_SEEDS"
	// SweepShardEnv gives the shard, i/n: the seeds whose offset from A is i modulo n.
	SweepShardEnv = "INFORMERSIM_SHARD"
	// SweepJSONEnv names the file SweepLog.WriteEnv writes the JSON Lines to.
	SweepJSONEnv = "INFORMERSIM_SWEEP_JSON"
)

// SweepSeeds returns the seeds a test's sweep runs: $INFORMERSIM_SEED's one seed (a replay);
// else, when $INFORMERSIM_SEEDS=A:B is set, the seeds of [A, B) of shard i of n
// ($INFORMERSIM_SHARD=i/n, default 0/1); else first to first+n-1 (Seeds). It also returns the
// range ("A:B") and the shard ("i/n") for the SweepLog. A malformed variable is an error.
func SweepSeeds(first, n uint64) (seeds []uint64, rng, shard string, err error) {
	if os.Getenv(SeedEnv) != "" || os.Getenv(SweepSeedsEnv) == "" {
		seeds, err := Seeds(first, n)
		if err != nil {
			return nil, "", "", err
		}
		return seeds, fmt.Sprintf("%d:%d", seeds[0], seeds[len(seeds)-1]+1), "0/1", nil
	}
	v := os.Getenv(SweepSeedsEnv)
	as, bs, ok := strings.Cut(v, ":")
	a, errA := strconv.ParseUint(as, 10, 64)
	b, errB := strconv.ParseUint(bs, 10, 64)
	if !ok || errA != nil || errB != nil || b <= a {
		return nil, "", "", fmt.Errorf("world: SweepSeeds: %s=%q: expected A:B with A < B, two decimal seeds", SweepSeedsEnv, v)
	}
	shard = os.Getenv(SweepShardEnv)
	if shard == "" {
		shard = "0/1"
	}
	is, ns, ok := strings.Cut(shard, "/")
	i, errI := strconv.ParseUint(is, 10, 64)
	m, errM := strconv.ParseUint(ns, 10, 64)
	if !ok || errI != nil || errM != nil || m == 0 || i >= m {
		return nil, "", "", fmt.Errorf("world: SweepSeeds: %s=%q: expected i/n with 0 <= i < n", SweepShardEnv, shard)
	}
	for s := a + i; s < b && s >= a; s += m {
		seeds = append(seeds, s)
	}
	if len(seeds) == 0 {
		return nil, "", "", fmt.Errorf("world: SweepSeeds: shard %s of %s holds no seed: a sweep of no seeds checks nothing", shard, v)
	}
	return seeds, v, shard, nil
}

// FailureSignature is what makes two failures the same failure: the oracle a violation is of
// ("oracle tombstones"), the user's check that failed ("check \"name\""), or else the
// failure's message without the seed and replay line after it and without digits (a run that
// did not converge in its budget). A sweep groups its failing seeds by it; a shrink keeps a
// change only while the run still fails with the same one.
func FailureSignature(err error) string {
	if err == nil {
		return ""
	}
	var v *Violation
	if errors.As(err, &v) {
		return "oracle " + v.Oracle
	}
	msg := err.Error()
	if i := strings.Index(msg, "check \""); i >= 0 {
		if j := strings.Index(msg[i+7:], "\""); j >= 0 {
			return msg[i : i+7+j+1]
		}
	}
	// The seed and the replay line that follow the message name the run, not the failure.
	for _, sep := range []string{" (seed ", "; seed "} {
		if i := strings.Index(msg, sep); i >= 0 {
			msg = msg[:i]
		}
	}
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return -1
		}
		return r
	}, msg)
}

// SweepFailure is one failing seed of a sweep: a line of the JSON Lines.
type SweepFailure struct {
	Seed    uint64 `json:"seed"`
	Oracle  string `json:"oracle"`
	Message string `json:"message"`
	Replay  string `json:"replay"`
}

// SweepSummary is the last line of a sweep's JSON Lines, which shards' merge adds up.
type SweepSummary struct {
	Scenario string         `json:"scenario"`
	Seeds    string         `json:"seeds"`
	Shard    string         `json:"shard"`
	Runs     int            `json:"runs"`
	Failures int            `json:"failures"`
	ByOracle map[string]int `json:"by_oracle"`
	Hazards  Hazards        `json:"hazards"`
	Never    []string       `json:"never"`
	// SeedsReaching counts, for each hazard, the seeds whose run reached it.
	SeedsReaching map[string]int `json:"seeds_reaching"`
	// Combinations are the distinct sets of hazards the runs reached ("relist+tombstone",
	// "none"), sorted: a sweep that reaches more of them explores more.
	Combinations []string `json:"combinations"`
	// Guided says each seed's generators drew their fault ops from a subset of the fault
	// kinds the seed picks (swarm testing).
	Guided bool `json:"guided,omitempty"`
}

// NewSweepSummary is the empty summary of a sweep of scenario (a file, a course lesson, a Go
// test) over the seeds rng ("A:B"), shard ("i/n").
func NewSweepSummary(scenario, rng, shard string, guided bool) *SweepSummary {
	return &SweepSummary{Scenario: scenario, Seeds: rng, Shard: shard, ByOracle: map[string]int{}, Hazards: Hazards{},
		Never: HazardNames(), SeedsReaching: map[string]int{}, Combinations: []string{}, Guided: guided}
}

// AddRun counts one run: its hazards, and its failure's signature when failed.
func (s *SweepSummary) AddRun(h Hazards, failed *SweepFailure) {
	s.Runs++
	s.Hazards.Add(h)
	var fired []string
	for _, k := range HazardNames() {
		if h[k] > 0 {
			fired = append(fired, k)
			s.SeedsReaching[k]++
		}
	}
	combo := strings.Join(fired, "+")
	if combo == "" {
		combo = "none"
	}
	s.addCombinations(combo)
	if failed != nil {
		s.Failures++
		s.ByOracle[failed.Oracle]++
	}
	s.Never = s.Hazards.Never()
}

func (s *SweepSummary) addCombinations(cs ...string) {
	for _, c := range cs {
		if i, found := slices.BinarySearch(s.Combinations, c); !found {
			s.Combinations = slices.Insert(s.Combinations, i, c)
		}
	}
}

// Merge adds another shard's summary of the same sweep (the same scenario, seeds and guidance;
// an error otherwise): the counts added up, the combinations united.
func (s *SweepSummary) Merge(o *SweepSummary) error {
	if o.Scenario != s.Scenario || o.Seeds != s.Seeds || o.Guided != s.Guided {
		return fmt.Errorf("a sweep of %s seeds %s (guided %v), the others of %s seeds %s (guided %v)", o.Scenario, o.Seeds, o.Guided, s.Scenario, s.Seeds, s.Guided)
	}
	s.Runs += o.Runs
	s.Failures += o.Failures
	for k, v := range o.ByOracle {
		s.ByOracle[k] += v
	}
	s.Hazards.Add(o.Hazards)
	for k, v := range o.SeedsReaching {
		s.SeedsReaching[k] += v
	}
	s.addCombinations(o.Combinations...)
	s.Never = s.Hazards.Never()
	return nil
}

// SweepLog collects a Go test's sweep (a run per seed of SweepSeeds) for its JSON Lines.
type SweepLog struct {
	failures []*SweepFailure
	summary  *SweepSummary
}

// NewSweepLog starts the log of a sweep of test (its name, as the summary's scenario) over the
// range and shard SweepSeeds returned.
func NewSweepLog(test, rng, shard string) *SweepLog {
	return &SweepLog{summary: NewSweepSummary(test, rng, shard, false)}
}

// Add records the run of seed: w's hazards (CountHazards; w may be nil when the run failed
// before it had a world) and its failure, nil when it passed.
func (l *SweepLog) Add(seed uint64, w *World, failure error) {
	h := Hazards{}
	if w != nil {
		h = CountHazards(w.Sim().Trace().Events())
	}
	var f *SweepFailure
	if failure != nil {
		msg, _, _ := strings.Cut(failure.Error(), "\n")
		f = &SweepFailure{Seed: seed, Oracle: FailureSignature(failure), Message: msg, Replay: Repro(seed)}
		l.failures = append(l.failures, f)
	}
	l.summary.AddRun(h, f)
}

// Summary is the summary so far.
func (l *SweepLog) Summary() *SweepSummary { return l.summary }

// WriteJSON writes the failing seeds, in the order added, then {"summary": ...}, one JSON
// object a line: informersim sweep --json's lines, which informersim merge reads.
func (l *SweepLog) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, f := range l.failures {
		if err := enc.Encode(f); err != nil {
			return err
		}
	}
	return enc.Encode(struct {
		Summary *SweepSummary `json:"summary"`
	}{l.summary})
}

// WriteEnv writes the JSON Lines to the file $INFORMERSIM_SWEEP_JSON names, when it is set,
// and returns its path ("" when unset).
func (l *SweepLog) WriteEnv() (string, error) {
	path := os.Getenv(SweepJSONEnv)
	if path == "" {
		return "", nil
	}
	f, err := os.Create(path)
	if err != nil {
		return "", fmt.Errorf("world: SweepLog: %w", err)
	}
	if err := l.WriteJSON(f); err != nil {
		f.Close()
		return "", fmt.Errorf("world: SweepLog: %w", err)
	}
	return path, f.Close()
}
