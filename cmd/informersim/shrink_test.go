package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Goal: shrink writes a small file failing with the same oracle (stdout, or -o OUT whose replay
// line names OUT, so the file runs as a regression test with no differing block) and a summary
// on stderr; a passing run exits 1, bad usage 2.
func TestShrinkCommand(t *testing.T) {
	dir := t.TempDir()
	noisy := filepath.Join(dir, "noisy.txt")
	text := "world seed=28\n----\n\ncreate name=zeta\n----\n\ncreate name=other label:app=x\n----\n\ninformer name=inf1 ns=default\n----\n\n" +
		"handler informer=inf1 name=good\n----\n\nhandler informer=inf1 name=bad mutates\n----\n\nstart informer=inf1\n----\n\nrun for=5s\n----\n\n" +
		"delete name=other\n----\n\nrun for=3s\n----\n\nupdate name=zeta\n----\n\nrun until=converged\n----\n"
	if err := os.WriteFile(noisy, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var o, e strings.Builder
	if code := run([]string{"shrink", noisy}, &o, &e); code != 0 {
		t.Fatalf("shrink: exit %d, stderr %q", code, e.String())
	}
	if !strings.HasPrefix(o.String(), "# noisy, shrunk: fails with oracle read-only-objects\n") || !strings.Contains(e.String(), "noisy fails with oracle read-only-objects: 12 -> ") {
		t.Errorf("shrink: stdout %q\nstderr %q", o.String(), e.String())
	}
	if strings.Contains(o.String(), "name=other") || strings.Contains(o.String(), "name=good") {
		t.Errorf("the shrunk file keeps what the failure does not need:\n%s", o.String())
	}
	out := filepath.Join(dir, "min.txt")
	e.Reset()
	if code := run([]string{"shrink", "-o", out, noisy}, &o, &e); code != 0 {
		t.Fatalf("shrink -o: exit %d, stderr %q", code, e.String())
	}
	e.Reset()
	if code := run([]string{"run", out}, &o, &e); code != 1 || !strings.Contains(e.String(), "failed: world: oracle read-only-objects violated") ||
		strings.Contains(e.String(), "differ") || !strings.Contains(e.String(), "replay: informersim run "+out+" --seed 28") {
		t.Errorf("run of the shrunk file: exit %d, stderr %q", code, e.String())
	}
	page := filepath.Join(dir, "min.html")
	e.Reset()
	if code := run([]string{"shrink", "-o", out, "--html", page, noisy}, &o, &e); code != 0 {
		t.Fatalf("shrink --html: exit %d, stderr %q", code, e.String())
	}
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "<html") ||
		!strings.Contains(string(b), "oracle read-only-objects violated") || strings.Contains(string(b), "name=good") {
		t.Errorf("shrink --html did not write the shrunk run's failing timeline (%v)", err)
	}
	e.Reset()
	if code := run([]string{"shrink", "01"}, &o, &e); code != 1 || !strings.Contains(e.String(), "the run passes") {
		t.Errorf("shrink of a passing course scenario: exit %d, stderr %q", code, e.String())
	}
	for _, args := range [][]string{{"shrink"}, {"shrink", noisy, "--max-runs", "-3"}, {"shrink", noisy, "--policy", "lifo"}, {"shrink", "no-such"}, {"shrink", noisy, out}} {
		e.Reset()
		if code := run(args, &o, &e); code != 2 || e.Len() == 0 {
			t.Errorf("run(%q) = exit %d, stderr %q; want 2 with a message", args, code, e.String())
		}
	}
}
