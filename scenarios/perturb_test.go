package scenarios_test

import (
	"fmt"
	"slices"
	"strings"
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
	text := restartFile("restart informer=pods as=pods2\n----\n")
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

// restartFile is a world whose controller restarts between two creates, the restart written as
// restart: a restart directive, or a client directive and the op crash-restart aimed at it.
func restartFile(restart string) string {
	return `world seed=5
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

` + restart + `

create name=b
----

run for=1s
----

delete name=a
----

run for=1s
----
`
}

// Goal: a file's informer registered as a client (the client directive) restarts on the op
// crash-restart exactly as the restart directive restarts it: the same trace but the op's own
// event, the controller fed by the new informer; a second crash-restart names the next
// informer -restarted2; the client faults it does not take are narrated as not taken; a client
// of an informer the file does not have is an error of the file.
func TestClientCrashRestartIsTheRestartDirective(t *testing.T) {
	byDirective, err := scenarios.Run("restart", restartFile("restart informer=pods as=pods-restarted\n----\n"), scenarios.Options{})
	if err != nil || byDirective.Failure != nil {
		t.Fatalf("the restart directive's file: %v, %v", err, byDirective.Failure)
	}
	byOp, err := scenarios.Run("crash-restart", restartFile("client name=controller informer=pods\n----\n\ncrash-restart client=controller\n----\n"), scenarios.Options{})
	if err != nil || byOp.Failure != nil {
		t.Fatalf("the crash-restart's file: %v, %v", err, byOp.Failure)
	}
	events := func(res *scenarios.Result) (out []string, crashes int) {
		for _, e := range res.Env.World().Sim().Trace().Events() {
			if e.Actor == "controller" && e.Kind == world.OpCrashRestart.String() {
				crashes++
				continue
			}
			out = append(out, fmt.Sprint(e.Time, e.Actor, e.Kind, e.Fields))
		}
		return out, crashes
	}
	a, _ := events(byDirective)
	b, crashes := events(byOp)
	if crashes != 1 || !slices.Equal(a, b) {
		t.Errorf("the crash-restart's run (%d crash-restart events, want 1) is not the restart directive's: %d and %d other events", crashes, len(b), len(a))
	}
	var infs []string
	for _, n := range byOp.Env.World().Informers() {
		infs = append(infs, fmt.Sprintf("%s stopped=%v", n.Name(), n.Stopped()))
	}
	if want := []string{"pods stopped=true", "pods-restarted stopped=false"}; !slices.Equal(infs, want) {
		t.Errorf("informers %v, want %v", infs, want)
	}

	twice, err := scenarios.Run("twice", restartFile("client name=controller informer=pods\n----\n\ncrash-restart client=controller\n----\n\nconflict client=controller\n----\n\ncrash-restart client=controller\n----\n"), scenarios.Options{})
	if err != nil || twice.Failure != nil {
		t.Fatalf("two crash-restarts: %v, %v", err, twice.Failure)
	}
	infs = infs[:0]
	for _, n := range twice.Env.World().Informers() {
		infs = append(infs, fmt.Sprintf("%s stopped=%v", n.Name(), n.Stopped()))
	}
	if want := []string{"pods stopped=true", "pods-restarted stopped=true", "pods-restarted2 stopped=false"}; !slices.Equal(infs, want) {
		t.Errorf("after two crash-restarts: informers %v, want %v", infs, want)
	}
	notTaken := 0
	for _, e := range twice.Env.World().Sim().Trace().Events() {
		if e.Actor == "controller" && e.Kind == "not-taken" {
			notTaken++
		}
	}
	if notTaken != 1 {
		t.Errorf("the conflict aimed at the file's client: %d not-taken events, want 1", notTaken)
	}

	if _, err := scenarios.Run("no-informer", restartFile("client name=controller informer=nodes\n----\n"), scenarios.Options{}); err == nil || !strings.Contains(err.Error(), `no informer named "nodes"`) {
		t.Errorf("a client of an informer the file does not have: %v", err)
	}
}

// Goal: PerturbFile's restart is the op crash-restart client=controller (world.Perturbation's
// ops, as in every campaign), aimed at the file's first started informer registered as that
// client: on 24-controller it breaks the controller's check, and the shrunk file holds the
// client directive and the op, not a restart directive.
func TestPerturbFileRestartIsTheOp(t *testing.T) {
	var text string
	for _, sc := range scenarios.Course() {
		if sc.Name == "24-controller" {
			text = sc.Text
		}
	}
	if text == "" {
		t.Fatal("no course file 24-controller")
	}
	rep, err := scenarios.PerturbFile("24-controller", text, scenarios.PerturbOptions{Kinds: []string{scenarios.PerturbRestart}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Found == nil || rep.Found.Kind != scenarios.PerturbRestart || scenarios.FailureSignature(rep.Failure) != `check "controller mirror: one configmap per pod"` {
		t.Fatalf("found %v: %v", rep.Found, rep.Failure)
	}
	if rep.Shrunk == nil {
		t.Fatalf("not shrunk: %v", rep.ShrinkErr)
	}
	if !strings.Contains(rep.Shrunk.Text, "\nclient name=controller informer=pods\n") || !strings.Contains(rep.Shrunk.Text, "\ncrash-restart client=controller\n") ||
		strings.Contains(rep.Shrunk.Text, "\nrestart ") {
		t.Errorf("the shrunk file does not restart by the op:\n%s", rep.Shrunk.Text)
	}
	t.Logf("%v after %d runs (%d skipped); shrunk from %d ops to %d in %d runs:\n%s", rep.Found, rep.Tried, rep.Skipped, rep.Shrunk.Ops[0], rep.Shrunk.Ops[1], rep.Shrunk.Runs, rep.Shrunk.Text)
}
