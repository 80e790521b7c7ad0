package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// budgetFile converges within 500ms of its last op, which a stale perturbation breaks: its
// dropped connection alone (the watch ends within a second of its start, so the Reflector waits
// about a second before it relists, as client-go's does), which is what the shrink keeps.
const budgetFile = "world seed=3 replicas=2\n----\n\ninformer name=inf1 ns=default\n----\n\nhandler informer=inf1 name=h1\n----\n\n" +
	"start informer=inf1\n----\n\nrun until=converged\n----\n\ncreate name=a\n----\n\ncreate name=b\n----\n\ndelete name=a\n----\n\n" +
	"run until=converged budget=500ms\n----\n"

// Goal: informersim perturb tries each perturbation before each op of a passing run: a course
// lesson survives them all (exit 0, the counts), a file that must converge within 500ms is
// broken by a stale view (exit 3, the perturbation on stderr, the shrunk file on stdout,
// which fails when run); a failing reference run, an unknown kind and no scenario are usage
// errors (exit 2).
func TestPerturbCommand(t *testing.T) {
	var o, e strings.Builder
	if code := run([]string{"perturb", "05"}, &o, &e); code != 0 || !strings.HasPrefix(o.String(), "perturb 05-tombstone: 5 ops, ") || !strings.Contains(o.String(), "none broke an oracle or a check") {
		t.Errorf("perturb 05: exit %d, %q, %q", code, o.String(), e.String())
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "budget.txt")
	if err := os.WriteFile(file, []byte(budgetFile), 0o644); err != nil {
		t.Fatal(err)
	}
	o.Reset()
	e.Reset()
	if code := run([]string{"perturb", file}, &o, &e); code != exitFailuresFound || !strings.Contains(e.String(), "stale (replica ") || !strings.Contains(e.String(), "breaks it") ||
		!strings.HasPrefix(o.String(), "# "+file+", shrunk: fails with world: the world did not quiesce") || !strings.Contains(o.String(), "\nclose-watches\n") {
		t.Fatalf("perturb of a file a lag breaks: exit %d\nstderr: %s\nstdout: %s", code, e.String(), o.String())
	}
	shrunk := filepath.Join(dir, "shrunk.txt")
	if err := os.WriteFile(shrunk, []byte(o.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var r strings.Builder
	if code := run([]string{"run", shrunk}, &r, &e); code != 1 || !strings.Contains(r.String(), "did not quiesce") {
		t.Errorf("the shrunk file passes: exit %d\n%s", code, r.String())
	}
	mutating := filepath.Join(dir, "mutating.txt")
	if err := os.WriteFile(mutating, []byte("world seed=1\n----\n\ncreate name=a\n----\n\ninformer name=inf1 ns=default\n----\n\nhandler informer=inf1 name=bad mutates\n----\n\nstart informer=inf1\n----\n\nrun until=converged\n----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"perturb", mutating}, {"perturb", "05", "--kinds", "sideways"}, {"perturb"}, {"perturb", "05", "--max-runs", "-1"}} {
		e.Reset()
		if code := run(args, &o, &e); code != 2 || e.Len() == 0 {
			t.Errorf("run(%q) = exit %d, stderr %q; want 2", args, code, e.String())
		}
	}
}
