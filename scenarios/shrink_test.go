package scenarios_test

import (
	"strings"
	"testing"

	"github.com/informersim/informersim/scenarios"
)

// noisyMutating is a failing run with much around its bug: two informers, three handlers, a
// generated workload of thirty ops with faults, inspections; one handler changes the objects it
// is handed (the read-only-objects oracle).
const noisyMutating = `# a noisy failing run
world seed=7
----

create name=zeta label:app=web
----

informer name=inf1 ns=default
----

informer name=inf2 ns=default
----

handler informer=inf1 name=good resync=10s
----

handler informer=inf2 name=other
----

handler informer=inf1 name=bad mutates
----

start informer=inf1
----

start informer=inf2
----

generate ops=30 fault-ops max-interval=1s
----

run for=40s
----

cache informer=inf1
----

run until=converged
----
`

// Goal: Shrink cuts a noisy failing run down to a file of a handful of directives that fails
// with the same oracle, 1-minimal (removing any one directive makes it pass or fail otherwise),
// whose expected blocks match its run, with a header saying what was removed; a passing run and
// a malformed file are errors.
func TestShrinkToAMinimalFile(t *testing.T) {
	orig, err := scenarios.Run("noisy", noisyMutating, scenarios.Options{})
	if err != nil || orig.Failure == nil {
		t.Fatalf("the noisy run must fail: %v, failure %v", err, orig.Failure)
	}
	sh, err := scenarios.Shrink("noisy", noisyMutating, scenarios.ShrinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("directives %d -> %d, ops %d -> %d, %d runs\n%s", sh.Directives[0], sh.Directives[1], sh.Ops[0], sh.Ops[1], sh.Runs, sh.Text)
	if sh.Failure != "oracle read-only-objects" || !sh.Minimal {
		t.Errorf("failure %q, minimal %v", sh.Failure, sh.Minimal)
	}
	// The run stops at its first failure, so the generator issued only the ops before it. The
	// failure is about a generated object an update reveals changed, and a candidate must fail
	// about it too (not about another object the convergence check finds changed): the world,
	// informer, handler, start, create, a run and the update are left.
	if sh.Directives[0] <= 13 || sh.Ops[0] < 3 || sh.Directives[1] > 7 || sh.Ops[1] > 2 {
		t.Errorf("directives %d -> %d, ops %d -> %d: want the generator's ops expanded and at most 7 directives, 2 ops left", sh.Directives[0], sh.Directives[1], sh.Ops[0], sh.Ops[1])
	}
	for _, want := range []string{"# noisy, shrunk: fails with oracle read-only-objects\n", "# Removed: ", "\nworld seed=7\n", "mutates", "FAIL: oracle read-only-objects violated"} {
		if !strings.Contains(sh.Text, want) {
			t.Errorf("shrunk file lacks %q", want)
		}
	}
	res, err := scenarios.Run("noisy-shrunk", sh.Text, scenarios.Options{})
	if err != nil || scenarios.FailureSignature(res.Failure) != sh.Failure {
		t.Fatalf("the shrunk file: %v, failure %v", err, res.Failure)
	}
	if d := res.Diff(); d != "" {
		t.Errorf("the shrunk file's blocks differ from its run:\n%s", d)
	}
	// 1-minimal, checked here by hand: no single directive (but the world) can go.
	for i := 1; i < len(res.Steps); i++ {
		var ds []scenarios.Directive
		for j, st := range res.Steps {
			if j != i {
				ds = append(ds, st.Directive)
			}
		}
		r, err := scenarios.Run("less", scenarios.Format("", ds, nil), scenarios.Options{})
		if err == nil && r.Failure != nil && scenarios.FailureSignature(r.Failure) == sh.Failure {
			t.Errorf("without %q the file still fails with %s: not minimal", res.Steps[i].Directive.Line(), sh.Failure)
		}
	}
	if _, err := scenarios.Shrink("pass", "create name=a\n----\n", scenarios.ShrinkOptions{}); err == nil || !strings.Contains(err.Error(), "passes") {
		t.Errorf("shrinking a passing run: %v", err)
	}
	if _, err := scenarios.Shrink("bad", "run for=soon\n----\n", scenarios.ShrinkOptions{}); err == nil {
		t.Error("shrinking a malformed file succeeded")
	}
	if _, err := scenarios.Shrink("noisy", noisyMutating, scenarios.ShrinkOptions{MaxRuns: -1}); err == nil {
		t.Error("a negative MaxRuns was accepted")
	}
}

// Goal: a write directive that reveals a handler changed an object it was lent fails the run
// with the read-only-objects oracle (the world raises it outside any step; it crashed the run).
func TestWriteAfterAMutatingHandlerFailsTheRun(t *testing.T) {
	text := "world seed=28\n----\n\ncreate name=a\n----\n\ninformer name=inf1 ns=default\n----\n\nhandler informer=inf1 name=bad mutates\n----\n\nstart informer=inf1\n----\n\nrun for=2s\n----\n\nupdate name=a\n----\n"
	res, err := scenarios.Run("upd", text, scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := scenarios.FailureSignature(res.Failure); got != "oracle read-only-objects" {
		t.Errorf("failure %v (%q), want the read-only-objects oracle", res.Failure, got)
	}
}
