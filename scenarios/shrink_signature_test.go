package scenarios_test

import (
	"strings"
	"testing"

	"github.com/informersim/informersim/scenarios"
)

// twoFailures fails with the read-only-objects oracle about beta/second: a handler changes
// every object it is handed, and the update of second reveals it. Without that update the run
// still fails, with the same oracle about alpha/first (the convergence check finds first
// changed): a shrinker that keeps any failing candidate, or any of the same oracle, drops the
// update or second's create and hands back a file about another object. The namespaces tell
// the objects apart after the shrink renamed them a, b, c.
const twoFailures = `world seed=3
----

create name=first ns=alpha
----

create name=second ns=beta
----

informer name=inf1
----

handler informer=inf1 name=bad mutates
----

start informer=inf1
----

run for=2s
----

update name=second ns=beta
----

run until=converged
----
`

// Goal: the shrinker keeps only candidates that fail with the original's signature, the oracle
// and the object it is about: shrinking twoFailures gives a file failing with read-only-objects
// about second (renamed with the rest), never the smaller file failing about first.
func TestShrinkKeepsTheFailuresObject(t *testing.T) {
	orig, err := scenarios.Run("two", twoFailures, scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sig, obj := scenarios.FailureSignature(orig.Failure), scenarios.FailureObject(orig.Failure); sig != "oracle read-only-objects" || obj != "beta/second" {
		t.Fatalf("the original fails with %q about %q (%v), want read-only-objects about beta/second", sig, obj, orig.Failure)
	}
	// The trap is set: the same file without the update fails with the same oracle about
	// another object.
	without, err := scenarios.Run("two-no-update", strings.Replace(twoFailures, "update name=second ns=beta\n----\n", "", 1), scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sig, obj := scenarios.FailureSignature(without.Failure), scenarios.FailureObject(without.Failure); sig != "oracle read-only-objects" || obj == "" || obj == "beta/second" {
		t.Fatalf("without the update the run fails with %q about %q (%v): the test needs it to fail the same oracle about another object", sig, obj, without.Failure)
	}
	sh, err := scenarios.Shrink("two", twoFailures, scenarios.ShrinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d -> %d directives, object %s\n%s", sh.Directives[0], sh.Directives[1], sh.Object, sh.Text)
	res, err := scenarios.Run("two-shrunk", sh.Text, scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sig := scenarios.FailureSignature(res.Failure); sig != "oracle read-only-objects" || sh.Failure != sig {
		t.Errorf("the shrunk file fails with %q (Shrunk.Failure %q), want oracle read-only-objects", sig, sh.Failure)
	}
	if obj := scenarios.FailureObject(res.Failure); obj != sh.Object || sh.Object == "" {
		t.Errorf("the shrunk file fails about %q, Shrunk.Object says %q", obj, sh.Object)
	}
	// The shrink renames objects but keeps namespaces: the object must still be beta's.
	if !strings.HasPrefix(sh.Object, "beta/") {
		t.Errorf("the shrunk file fails about %s, not about the original's beta/second (renamed): the shrinker kept a candidate failing about another object\n%s", sh.Object, sh.Text)
	}
}
