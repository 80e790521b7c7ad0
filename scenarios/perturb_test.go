package scenarios_test

import (
	"slices"
	"testing"
	"time"

	"github.com/informersim/informersim/scenarios"
	"github.com/informersim/informersim/sim/world"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// referenceOps is a plain workload with no fault: three objects created, updated and two of
// them deleted, 50ms apart.
func referenceOps() []world.GeneratedOp {
	var out []world.GeneratedOp
	for i, op := range []world.Op{
		{Kind: world.OpCreate, Name: "a"}, {Kind: world.OpCreate, Name: "b"}, {Kind: world.OpCreate, Name: "c"},
		{Kind: world.OpUpdate, Name: "a", Labels: map[string]string{"v": "1"}}, {Kind: world.OpDelete, Name: "b"},
		{Kind: world.OpUpdate, Name: "c", Labels: map[string]string{"v": "2"}}, {Kind: world.OpDelete, Name: "a"},
		{Kind: world.OpCreate, Name: "d"},
	} {
		out = append(out, world.GeneratedOp{Time: time.Duration(i+1) * 50 * time.Millisecond, Op: op})
	}
	return out
}

// trackerTarget is the perturbation target of the tracker with plant: its world, and its
// restart (the campaign's runs are one at a time, so the last world built is the one restarted).
func trackerTarget(plant string) scenarios.PerturbTarget {
	var restart func(*world.World) error
	return scenarios.PerturbTarget{
		World: func(seed uint64) (*world.World, error) {
			w, r, err := trackerWorld(seed, "", plant)
			restart = r
			return w, err
		},
		Restart: func(w *world.World) error { return restart(w) },
	}
}

// Goal: a perturbation campaign over a passing reference run finds each planted bug with the
// pattern that exposes it (a tombstone dropped: a delete unobserved; a status from a stale read:
// a lagging replica; an object mutated: a relist's unchanged object, after an unobserved
// delete; the initial list skipped: a restart), reports the first breaking
// perturbation with its oracle or check, and shrinks its run to a handful of ops; the correct
// controller survives every perturbation; a reference run that fails is an error.
func TestPerturbFindsThePlantedBugs(t *testing.T) {
	ops := referenceOps()
	rep, err := scenarios.Perturb(1, ops, trackerTarget(""), scenarios.PerturbOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Found != nil || rep.Tried < 2*len(ops) {
		t.Fatalf("the correct controller: %d perturbations tried, found %v: %v", rep.Tried, rep.Found, rep.Failure)
	}
	t.Logf("correct controller: %d points, %d perturbations tried, %d skipped, none broke it", rep.Points, rep.Tried, rep.Skipped)
	for _, c := range []struct{ plant, kind, sig string }{
		{plantTombstone, scenarios.PerturbUnobserved, `check "tracker keys"`},
		{plantStaleRead, scenarios.PerturbStale, `check "tracker status"`},
		{plantMutate, scenarios.PerturbUnobserved, "oracle " + world.OracleReadOnlyObjects},
		{plantInitialList, scenarios.PerturbRestart, `check "tracker keys"`},
	} {
		start := time.Now()
		rep, err := scenarios.Perturb(1, ops, trackerTarget(c.plant), scenarios.PerturbOptions{Shrink: scenarios.OpsShrinkOptions{Controller: "the tracker, " + c.plant}})
		if err != nil {
			t.Fatalf("%s: %v", c.plant, err)
		}
		if rep.Found == nil {
			t.Errorf("%s: no perturbation of %d broke it", c.plant, rep.Tried)
			continue
		}
		if rep.Found.Kind != c.kind || scenarios.FailureSignature(rep.Failure) != c.sig {
			t.Errorf("%s: found %v failing with %v; want %s failing with %s", c.plant, rep.Found, rep.Failure, c.kind, c.sig)
		}
		if rep.Shrunk == nil || rep.Shrunk.Ops[1] > 6 {
			t.Errorf("%s: shrunk %+v (%v)", c.plant, rep.Shrunk, rep.ShrinkErr)
			continue
		}
		t.Logf("%s: %v after %d runs (%v): %v; shrunk from %d ops to %d:\n%s", c.plant, rep.Found, rep.Tried, time.Since(start), rep.Failure, rep.Shrunk.Ops[0], rep.Shrunk.Ops[1], rep.Shrunk.Text)
	}
	if _, err := scenarios.Perturb(1, ops, trackerTarget(plantMutate), scenarios.PerturbOptions{Kinds: []string{"sideways"}}); err == nil {
		t.Error("Perturb took an unknown kind")
	}
	if _, err := scenarios.Perturb(1, ops, scenarios.PerturbTarget{}, scenarios.PerturbOptions{}); err == nil {
		t.Error("Perturb took a target with no World")
	}
	failing := append(referenceOps(), world.GeneratedOp{Time: time.Second, Op: world.Op{Kind: world.OpCloseWatches, Code: 410}},
		world.GeneratedOp{Time: time.Second, Op: world.Op{Kind: world.OpDelete, Name: "c"}})
	if _, err := scenarios.Perturb(1, failing, trackerTarget(plantTombstone), scenarios.PerturbOptions{}); err == nil {
		t.Error("Perturb took a reference run that fails already")
	}
}

// Goal: the restart directive moves a controller directive's handler and workqueue to the new
// informer: a pod created after the restart gets its configmap (the controller's check), and
// the controller reads the new informer's cache. (Before, the handler came back as a
// recording-only one and the workqueue stayed on the stopped informer: the check failed.)
func TestRestartKeepsTheController(t *testing.T) {
	text := `world seed=5
----

informer name=pods ns=default
----

controller name=mirror informer=pods workers=1 work=10ms
----

start informer=pods
----

create name=a
----

run for=1s
----

restart informer=pods as=pods2
----

create name=b
----

run for=1s
----

delete name=a
----

run for=1s
----
`
	res, err := scenarios.Run("restart-controller", text, scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure != nil {
		t.Fatalf("the controller did not survive its informer's restart: %v", res.Failure)
	}
	cms, err := res.Env.World().Server().Snapshot(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "default", metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range cms.Items {
		names = append(names, it.GetName())
	}
	if !slices.Equal(names, []string{"b-cm"}) {
		t.Errorf("configmaps %v after the restart, want [b-cm] (a's deleted with a)", names)
	}
}
