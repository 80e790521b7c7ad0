package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain lets the sweep test run this test binary as the command itself, one process per
// shard: with INFORMERSIM_AS_COMMAND=1 it is informersim.
func TestMain(m *testing.M) {
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
