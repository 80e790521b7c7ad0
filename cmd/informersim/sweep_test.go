package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/informersim/informersim/sim/world"
)

// TestMain lets the sweep test run this test binary as the command itself, one process per
// shard: with INFORMERSIM_AS_COMMAND=1 it is informersim.
func TestMain(m *testing.M) {
	// Run by envtest-assets' kube-apiserver or etcd script (in a build with the serve tag), the
	// test binary is that stand-in, as the command is.
	if code, ok := standIn(os.Args); ok {
		os.Exit(code)
	}
	if os.Getenv("INFORMERSIM_AS_COMMAND") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// Goal: a sweep's shards, run as separate processes, merge into exactly the unsharded sweep's
// output (byte for byte, failures and summary with its hazards); failures exit 3, a passing
// sweep 0, bad usage 2; no progress bar when standard error is not a terminal.
func TestSweepShardsMergeIntoTheUnshardedSweep(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mutating.txt")
	text := "world seed=1\n----\n\ninformer name=inf1 ns=default\n----\n\nhandler informer=inf1 name=bad mutates\n----\n\n" +
		"start informer=inf1\n----\n\ngenerate ops=6 fault-ops max-interval=1s\n----\n\nrun until=converged\n----\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	command := func(args ...string) (string, string, int) {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "INFORMERSIM_AS_COMMAND=1")
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return o.String(), e.String(), code
	}
	whole, stderr, code := command("sweep", file, "--seeds", "1:31", "--json", "--procs", "2")
	if code != exitFailuresFound {
		t.Fatalf("sweep: exit %d, stderr %q", code, stderr)
	}
	if stderr != "" {
		t.Errorf("a sweep whose stderr is not a terminal wrote %q (no progress bar there)", stderr)
	}
	lines := strings.Split(strings.TrimSpace(whole), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], `{"seed":`) || !strings.Contains(lines[0], `"oracle":"oracle read-only-objects"`) ||
		!strings.Contains(lines[0], `"replay":"informersim run `+file+` --seed `) || !strings.HasPrefix(lines[len(lines)-1], `{"summary":{"scenario":"mutating","seeds":"1:31","shard":"0/1","runs":30,`) {
		t.Fatalf("sweep --json:\n%s", whole)
	}
	var shardFiles []string
	for i := range 3 {
		out, stderr, code := command("sweep", file, "--seeds", "1:31", "--json", "--shard", []string{"0/3", "1/3", "2/3"}[i])
		if code != exitFailuresFound && code != 0 {
			t.Fatalf("shard %d: exit %d, %s", i, code, stderr)
		}
		p := filepath.Join(dir, []string{"a", "b", "c"}[i]+".jsonl")
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		shardFiles = append(shardFiles, p)
	}
	merged, stderr, code := command(append([]string{"merge", "--json"}, shardFiles...)...)
	if code != exitFailuresFound || merged != whole {
		t.Errorf("merge: exit %d, stderr %q; merged:\n%s\nunsharded:\n%s", code, stderr, merged, whole)
	}
	if _, stderr, code := command("merge", "--json", shardFiles[0], shardFiles[1]); code != 2 || !strings.Contains(stderr, "2 shards given, the sweep has 3") {
		t.Errorf("merge of two shards of three: exit %d, %q", code, stderr)
	}
	var o, e strings.Builder
	if code := run([]string{"sweep", "01", "--seeds", "1:4"}, &o, &e); code != 0 || !strings.Contains(o.String(), "sweep 01-list-then-watch seeds 1:4 shard 0/1: 3 runs, 0 failed\n") || !strings.Contains(o.String(), "hazards: none; never: ") {
		t.Errorf("a passing sweep: exit %d, stdout %q, stderr %q", code, o.String(), e.String())
	}
	for _, args := range [][]string{{"sweep", "01"}, {"sweep", "01", "--seeds", "5:5"}, {"sweep", "01", "--seeds", "1:5", "--shard", "4/4"}, {"sweep", "01", "--seeds", "1:5", "--procs", "0"}, {"merge"}} {
		e.Reset()
		if code := run(args, &o, &e); code != 2 || e.Len() == 0 {
			t.Errorf("run(%q) = exit %d, stderr %q; want 2", args, code, e.String())
		}
	}
}

// Goal: a sweep's summary says, per hazard, how many seeds reached it and which never, and the
// hazard combinations reached; --guided (swarm testing: the seed picks the fault kinds of each
// generator) reaches more combinations than the same seeds unguided on the generated-workload
// lesson, its replay lines carry --guided and replay the same run, its shards merge into the
// unsharded sweep, and a scenario with nothing to swarm is refused.
func TestSweepHazardsAndGuided(t *testing.T) {
	summary := func(args ...string) world.SweepSummary {
		t.Helper()
		var o, e strings.Builder
		if code := run(append([]string{"sweep", "27-generated-workload", "--seeds", "0:60", "--json"}, args...), &o, &e); code != 0 && code != exitFailuresFound {
			t.Fatalf("sweep %q: exit %d, %s", args, code, e.String())
		}
		lines := strings.Split(strings.TrimSpace(o.String()), "\n")
		var l struct{ Summary world.SweepSummary }
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &l); err != nil {
			t.Fatal(err)
		}
		return l.Summary
	}
	plain, guided := summary(), summary("--guided")
	t.Logf("60 seeds: %d combinations unguided, %d guided; never: %v, guided %v", len(plain.Combinations), len(guided.Combinations), plain.Never, guided.Never)
	if len(guided.Combinations) <= len(plain.Combinations) || !guided.Guided || plain.Guided {
		t.Errorf("guided reached %d hazard combinations, unguided %d: want more", len(guided.Combinations), len(plain.Combinations))
	}
	for _, s := range []world.SweepSummary{plain, guided} {
		for _, k := range world.HazardNames() {
			if n := s.SeedsReaching[k]; n > s.Runs || (n == 0) != slices.Contains(s.Never, k) || (n > 0) != (s.Hazards[k] > 0) {
				t.Errorf("%s: %d seeds reached, %d events, never %v", k, n, s.Hazards[k], s.Never)
			}
		}
	}
	// Guided shards merge into the guided sweep; a guided and an unguided shard do not merge.
	dir := t.TempDir()
	var files []string
	for i, shard := range []string{"0/2", "1/2"} {
		var o, e strings.Builder
		run([]string{"sweep", "27-generated-workload", "--seeds", "0:60", "--json", "--guided", "--shard", shard}, &o, &e)
		p := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(p, []byte(o.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	var m, e strings.Builder
	run(append([]string{"merge", "--json"}, files...), &m, &e)
	var whole strings.Builder
	run([]string{"sweep", "27-generated-workload", "--seeds", "0:60", "--json", "--guided"}, &whole, &e)
	if m.String() != whole.String() {
		t.Errorf("merged guided shards:\n%s\nthe guided sweep:\n%s", m.String(), whole.String())
	}
	// A guided run replays with run --guided: the same trace.
	var a, b strings.Builder
	run([]string{"run", "27-generated-workload", "--seed", "7", "--guided"}, &a, &e)
	run([]string{"run", "27-generated-workload", "--seed", "7"}, &b, &e)
	hash := func(s string) string { _, h, _ := strings.Cut(s, "trace sha256 "); return h[:64] }
	if hash(a.String()) == hash(b.String()) {
		t.Error("run --guided gives the unguided run's trace: the seed's fault kinds changed nothing")
	}
	e.Reset()
	if code := run([]string{"sweep", "05", "--seeds", "0:3", "--guided"}, &m, &e); code != 2 || strings.Count(e.String(), "no generate directive with fault-ops") != 1 {
		t.Errorf("sweep --guided of a scenario without a generator: exit %d, %q", code, e.String())
	}
}

// Goal: informersim merge merges the shards of a Go test's sweep (world.SweepLog's JSON Lines)
// as it merges a scenario's: the failures in seed order, the summaries added up, exit 3.
func TestMergeOfAGoTestsSweep(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i, shard := range []string{"0/2", "1/2"} {
		log := world.NewSweepLog("TestMine", "0:6", shard)
		for s := uint64(i); s < 6; s += 2 {
			var err error
			if s == 3 {
				err = fmt.Errorf("world: check \"mine\" failed: seed %d", s)
			}
			log.Add(s, nil, err)
		}
		p := filepath.Join(dir, fmt.Sprint(i))
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := log.WriteJSON(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
		files = append(files, p)
	}
	var o, e strings.Builder
	if code := run(append([]string{"merge"}, files...), &o, &e); code != exitFailuresFound || !strings.Contains(o.String(), "seed 3: check \"mine\": ") ||
		!strings.Contains(o.String(), "sweep TestMine seeds 0:6 shard 0/1: 6 runs, 1 failed") {
		t.Errorf("merge of a Go test's shards: exit %d\n%s%s", code, o.String(), e.String())
	}
}
