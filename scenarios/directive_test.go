package scenarios_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/scenarios"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
)

// Goal: every directive of every course file prints in a form that parses back to the same
// directive (same line, same input).
func TestDirectivesRoundTrip(t *testing.T) {
	n := 0
	for _, sc := range scenarios.Course() {
		res, err := scenarios.Run(sc.Name, sc.Text, scenarios.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range res.Steps {
			d := st.Directive
			line, input, _ := strings.Cut(d.String(), "\n")
			back, err := scenarios.ParseDirective(line, input)
			if err != nil {
				t.Fatalf("%s: %q does not parse back: %v", st.Pos, d.String(), err)
			}
			if back.String() != d.String() {
				t.Errorf("%s: round trip changed %q into %q", st.Pos, d.String(), back.String())
			}
			n++
		}
	}
	if n < 200 {
		t.Errorf("only %d directives in the course", n)
	}
}

// Goal: a generated run written out as a scenario file runs again and issues the same ops, and
// the file runs identically twice (same narration, same hash); the writer's file parses back.
// Twice: with the historical fault ops, and with every kind a generator can draw (every fault
// kind a scenario's world takes, on three replicas), so a written file holds every kind of op
// a file can hold (a file's world calls no admission webhook, and refuses their faults).
func TestGeneratedRunWrittenOut(t *testing.T) {
	every := append(scenarioFaultKinds(t), world.OpPatch)
	t.Run("fault-ops", func(t *testing.T) { testGeneratedRunWrittenOut(t, 40, 1, nil) })
	// About ten fault ops of each kind (one op in ten is a fault op).
	t.Run("every-kind", func(t *testing.T) { testGeneratedRunWrittenOut(t, 100*len(every), 3, every) })
}

// scenarioFaultKinds are the fault kinds a scenario's world with the control plane and a
// client takes (world.World.FaultKinds).
func scenarioFaultKinds(t *testing.T) []world.OpKind {
	res, err := scenarios.Run("kinds", "world seed=1 controllers client=controller\n----\n", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Env.World().FaultKinds()
}

func testGeneratedRunWrittenOut(t *testing.T, ops, replicas int, kinds []world.OpKind) {
	// The control plane runs (world controllers), so that its fault ops apply.
	w, err := world.NewFromConfig(sim.Config{Seed: 7}, fakeapi.Config{Replicas: replicas}, world.Config{ControlPlane: &controlplane.Config{}})
	if err != nil {
		t.Fatal(err)
	}
	// A client, so that the client faults apply; the file's world directive names it (a
	// stand-in).
	if err := w.AddClient("controller", func(world.Op) error { return nil }); err != nil {
		t.Fatal(err)
	}
	gen, err := w.Generate(world.GenConfig{Ops: ops, FaultOps: true, FaultOpKinds: kinds})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Sim().RunUntil(gen.Finished, time.Hour); err != nil {
		t.Fatal(err)
	}
	drawn := map[world.OpKind]bool{}
	for _, g := range gen.Ops() {
		drawn[g.Op.Kind] = true
	}
	for _, k := range kinds {
		if !drawn[k] {
			t.Fatalf("the generator drew no %s op: the written file would not hold every kind", k)
		}
	}
	head := []scenarios.Directive{}
	for _, l := range []string{fmt.Sprintf("world seed=7 replicas=%d controllers client=controller", replicas), "informer name=inf1 ns=default", "handler informer=inf1 name=h1", "start informer=inf1"} {
		d, err := scenarios.ParseDirective(l, "")
		if err != nil {
			t.Fatal(err)
		}
		head = append(head, d)
	}
	tail, _ := scenarios.ParseDirective("run until=converged", "")
	ds := append(append(head, scenarios.GeneratedDirectives(0, gen.Ops())...), tail)
	text := scenarios.Format("a generated run\nlabels: generated", ds, nil)

	res, err := scenarios.Run("generated", text, scenarios.Options{})
	if err != nil {
		t.Fatalf("the written file does not run: %v\n%s", err, text)
	}
	if res.Failure != nil {
		t.Fatalf("the written run failed: %v", res.Failure)
	}
	// Fill in the expected blocks and run again: nothing differs.
	var outs []string
	for _, s := range res.Steps {
		outs = append(outs, s.Output)
	}
	golden := scenarios.Format("a generated run\nlabels: generated", ds, outs)
	again, err := scenarios.Run("generated", golden, scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m := again.Mismatches(); len(m) > 0 {
		t.Fatalf("%d blocks differ on the second run, first at %s:\n%s\nwant:\n%s", len(m), m[0].Pos, m[0].Output, m[0].Expected)
	}
	if again.Hash != res.Hash {
		t.Errorf("hash %s then %s", res.Hash, again.Hash)
	}
	// The ops the file applied are the generator's, in order.
	var want, got []string
	for _, g := range gen.Ops() {
		if g.Op.Kind != world.OpSleep {
			want = append(want, g.Op.String())
		}
	}
	for _, s := range again.Steps {
		if s.Directive.Op != nil {
			got = append(got, s.Directive.Op.String())
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("the file applied %d ops, the generator issued %d:\n%v\n%v", len(got), len(want), got, want)
	}
}

// Goal: a malformed file gets an error naming the file, the line, the directive and what was
// expected; nothing panics.
func TestMalformedFiles(t *testing.T) {
	cases := []struct{ text, want string }{
		{"informer name=inf1\n----\n\nrun for=abc\n----\n", `bad:4: directive "run": argument "for": expected a non-negative duration such as 1s or 250ms, got "abc"`},
		{"frobnicate x=1\n----\n", `bad:1: unknown directive "frobnicate" (expected one of:`},
		{"start informer=nope\n----\n", `bad:1: directive "start": no informer named "nope"`},
		{"informer\n----\n", `bad:1: directive "informer": missing argument name=`},
		{"create name=a bogus=1\n----\n", `bad:1: directive "create": world: Parse "create name=a bogus=1": field "bogus": unknown field`},
		{"run for=(1s\n----\n", `bad:1: cannot parse directive at column`},
		{"informer name=a queue=lifo\n----\n", `bad:1: directive "informer": argument "queue": expected one of realfifo, realfifo-nonatomic, deltafifo, got "lifo"`},
		{"log handler=x/y\n----\n", `bad:1: directive "log": no handler "x/y"`},
		{"cache informer=a\ninput\n----\n", `bad:1: directive "cache" takes no input lines`},
	}
	for _, c := range cases {
		_, err := scenarios.Run("bad", c.text, scenarios.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("file %q: error %v, want it to contain %q", c.text, err, c.want)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "scenarios: ") {
			t.Errorf("error %q does not start with the package name", err)
		}
	}
}

// courseDocHead opens docs/course.md; the list follows, one line a scenario.
const courseDocHead = `# The course

Each file of ` + "`scenarios/testdata/`" + ` teaches one concept of client-go's informer: comment lines that
explain it, then a story of directives whose expected blocks are the simulator's own narration.
Read one with ` + "`go run -C cmd/informersim . explain NAME`" + ` from the repository's root (or open
the file; ` + "`informersim explain NAME`" + ` once ` + "`cd cmd/informersim && go install .`" + ` put the command on
your PATH), replay it with ` + "`go run -C cmd/informersim . run NAME --seed N`" + `, and regenerate the
expected blocks with ` + "`make rewrite`" + ` (which rewrites this list too). The directives are listed in the documentation of package
` + "`scenarios`" + ` (` + "`go doc ./scenarios`" + `). ` + "`informersim course --html DIR`" + ` (or ` + "`make course`" + `)
writes the course as a site: a page per lesson with its concept, the pipeline picture with the
parts the lesson is about highlighted, the run's timeline and its narration (docs/timeline.md).

The narration uses short names; client-go's are these:

| narration | client-go |
|---|---|
| ` + "`apiserver`" + ` | kube-apiserver (and its watch cache, per replica) |
| ` + "`inf1/reflector`" + ` | the Reflector: ListAndWatch, relist, resync |
| ` + "`inf1/net`" + `, ` + "`inf1/watch`" + ` | the ListerWatcher's LIST responses and watch stream (watch.Interface) |
| ` + "`inf1/queue: pop`" + ` | processLoop popping the DeltaFIFO or RealFIFO |
| ` + "`inf1/queue: cache-*`" + ` | the Indexer (the informer's store, what a lister reads) |
| ` + "`inf1/queue: buffer`" + ` | sharedProcessor.distribute, to each listener's buffer |
| ` + "`inf1/h1`" + ` | a processorListener (its pendingNotifications buffer and run loop) and the ResourceEventHandler it calls |
| ` + "`inf1: synced`" + ` | the informer's HasSynced, what cache.WaitForCacheSync waits for |
| ` + "`tomb(ns/name@rv)`" + ` | cache.DeletedFinalStateUnknown |
| ` + "`q`" + `, ` + "`q/w1`" + ` | a rate-limited workqueue and its workers |

Four misconceptions have a lesson each: a resync is not a relist (28); synced does not mean your
write is visible (29); a handler added late gets an add for everything cached (10); a delete may
arrive as a tombstone that must be unwrapped (05).

`

// Goal: docs/course.md lists every course file, in order, one line each; make rewrite
// (datadriven's -rewrite) regenerates it.
func TestCourseDoc(t *testing.T) {
	path := filepath.Join("..", "docs", "course.md")
	if f := flag.Lookup("rewrite"); f != nil && f.Value.String() == "true" {
		var b strings.Builder
		b.WriteString(courseDocHead)
		for _, sc := range scenarios.Course() {
			fmt.Fprintf(&b, "1. [`%s`](../scenarios/testdata/%s.txt): %s\n", sc.Name, sc.Name, sc.Title)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "1. [`") {
			name, _, _ := strings.Cut(strings.TrimPrefix(l, "1. [`"), "`")
			listed = append(listed, name)
		}
	}
	var files []string
	for _, sc := range scenarios.Course() {
		files = append(files, sc.Name)
		if sc.Title == "" || sc.Concept == "" || len(sc.Labels) == 0 {
			t.Errorf("%s: missing title, concept or labels", sc.Name)
		}
	}
	if !slices.Equal(listed, files) {
		t.Errorf("docs/course.md lists %v\nthe course has %v", listed, files)
	}
	if len(files) < 20 {
		t.Errorf("the course has %d files, want at least 20", len(files))
	}
}

// Goal: a run whose world does not converge fails, prints FAIL with the replay command, and
// skips what follows.
func TestFailureStopsTheRun(t *testing.T) {
	text := "informer name=inf1 ns=default\n----\n\nstart informer=inf1\n----\n\nrun until=converged budget=1us\n----\n\ncreate name=a\n----\n"
	res, err := scenarios.Run("stuck", text, scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure == nil {
		t.Fatal("converging within 1us did not fail")
	}
	if out := res.Steps[2].Output; !strings.Contains(out, "FAIL: ") || !strings.Contains(out, "replay: informersim run stuck --seed 1") {
		t.Errorf("the failing directive printed %q", out)
	}
	if out := res.Steps[3].Output; !strings.HasPrefix(out, "skipped") {
		t.Errorf("the directive after the failure printed %q", out)
	}
}

// Goal: converging with an informer the file never starts is the file's mistake, not a failed
// run: an error naming the line, with no replay line (replaying would repeat the mistake).
func TestConvergingWithoutStartIsAFileError(t *testing.T) {
	text := "informer name=inf1 ns=default\n----\n\nrun until=converged\n----\n"
	_, err := scenarios.Run("unstarted", text, scenarios.Options{})
	want := `scenarios: unstarted:4: directive "run": world: RunUntilConverged: informer inf1 was never started`
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "replay") {
		t.Errorf("got %v, want an error starting %q", err, want)
	}
}

// Goal: a violation of a named oracle stops the run and is reported with the oracle's name, the
// first violating event with the trace before it, the seed and the replay command. The bug is
// planted by hand: an object is removed from the informer's cache behind its back.
func TestOracleViolationReported(t *testing.T) {
	env := scenarios.NewEnv(scenarios.Options{Name: "planted"})
	do := func(line string) string {
		t.Helper()
		d, err := scenarios.ParseDirective(line, "")
		if err != nil {
			t.Fatal(err)
		}
		out, err := env.Handle(d)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, l := range []string{"world seed=3", "create name=a", "create name=b", "informer name=inf1 ns=default", "start informer=inf1", "run until=converged"} {
		do(l)
	}
	if env.Failure() != nil {
		t.Fatalf("the run failed before the bug was planted: %v", env.Failure())
	}
	cache := env.World().Informers()[0].SharedIndexInformer().GetIndexer()
	obj, ok, err := cache.GetByKey("default/a")
	if err != nil || !ok {
		t.Fatalf("default/a not cached: %v", err)
	}
	if err := cache.Delete(obj); err != nil {
		t.Fatal(err)
	}
	out := do("run until=converged")
	v := env.Violation()
	if v == nil || v.Oracle != "eventual-consistency" {
		t.Fatalf("violation %v, failure %v", v, env.Failure())
	}
	// The report tells default/a's story (issue 23 item 5), not only the last events.
	for _, want := range []string{"FAIL: oracle eventual-consistency violated", "default/a", "replay: informersim run planted --seed 3",
		"history of default/a (every event about it, oldest first):", "apiserver    ADDED         obj=pods/default/a rv=2"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if out := do("oracles"); !strings.HasPrefix(out, "skipped") {
		t.Errorf("a directive after the violation printed %q", out)
	}
}

// Goal: a handler that changes the object it is given (handler ... mutates) fails the run with
// the read-only-objects oracle, naming the object, the version lent and the informer; a handler
// that only reads does not.
func TestMutatingHandlerFailsTheRun(t *testing.T) {
	for _, mutates := range []bool{false, true} {
		env := scenarios.NewEnv(scenarios.Options{Name: "mutating"})
		var out string
		lines := []string{"world seed=28", "create name=a label:app=web", "informer name=inf1 ns=default", "handler informer=inf1 name=good"}
		if mutates {
			lines = append(lines, "handler informer=inf1 name=bad mutates")
		}
		lines = append(lines, "start informer=inf1", "run until=converged", "update name=a label:app=db", "run until=converged")
		for _, l := range lines {
			d, err := scenarios.ParseDirective(l, "")
			if err != nil {
				t.Fatal(err)
			}
			if out, err = env.Handle(d); err != nil {
				t.Fatal(err)
			}
			if env.Failure() != nil {
				break
			}
		}
		v := env.Violation()
		if !mutates {
			if env.Failure() != nil {
				t.Fatalf("a reading handler failed the run: %v", env.Failure())
			}
			continue
		}
		if v == nil || v.Oracle != "read-only-objects" {
			t.Fatalf("violation %v, failure %v", v, env.Failure())
		}
		for _, want := range []string{"FAIL: oracle read-only-objects violated", `pods default/a at resourceVersion 2, lent read-only to "inf1"`, "replay: informersim run mutating --seed 28"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	}
	if _, err := scenarios.ParseDirective("handler informer=inf1 name=x mutates=yes", ""); err == nil {
		t.Error("mutates took a value")
	}
}

// Goal: the world directive's check-each-delivery switch (world.Config.CheckReadOnlyEachDelivery)
// stops the run at the delivery of the handler that changed an object it was lent; without it
// the change is caught later (here by the convergence check).
// Method: the same mutating-handler scenario with and without the switch; note the directive at
// which the run fails and the actor of the violating event.
func TestCheckEachDeliverySwitch(t *testing.T) {
	failedAt := func(world string) (int, *world.Violation) {
		env := scenarios.NewEnv(scenarios.Options{Name: "each-delivery"})
		lines := []string{world, "create name=a label:app=web", "informer name=inf1 ns=default", "handler informer=inf1 name=bad mutates",
			"start informer=inf1", "run until=converged", "update name=a label:app=db", "run until=converged"}
		for i, l := range lines {
			d, err := scenarios.ParseDirective(l, "")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := env.Handle(d); err != nil {
				t.Fatal(err)
			}
			if env.Failure() != nil {
				return i, env.Violation()
			}
		}
		return -1, nil
	}
	at, v := failedAt("world seed=28 check-each-delivery")
	if at != 5 || v == nil || v.Oracle != "read-only-objects" || v.Event.Actor != "inf1/bad" {
		t.Errorf("with check-each-delivery: failed at directive %d with %v, want directive 5 (the first run) at inf1/bad's delivery", at, v)
	}
	if at, v := failedAt("world seed=28"); v == nil || v.Oracle != "read-only-objects" || v.Event.Actor == "inf1/bad" {
		t.Errorf("without check-each-delivery: failed at directive %d with %v, want a violation noticed after the delivery (by the convergence check)", at, v)
	}
}

// Goal: every directive of the language is one row holding its arguments and its handler: every
// row has a handler, no name is given twice, there is no handler outside the rows (a directive
// without a row is unknown to Handle too), and the package documentation lists every directive.
func TestEveryDirectiveHasAHandler(t *testing.T) {
	rows, unique := scenarios.DirectiveRows()
	if rows != unique {
		t.Errorf("%d directive rows for %d names: a name is given twice", rows, unique)
	}
	for _, name := range scenarios.DirectiveNames() {
		if !scenarios.DirectiveHasHandler(name) {
			t.Errorf("directive %q has no handler", name)
		}
	}
	env := scenarios.NewEnv(scenarios.Options{})
	if _, err := env.Handle(scenarios.Directive{Cmd: "explode"}); err == nil || !strings.Contains(err.Error(), `unknown directive "explode"`) {
		t.Errorf("a directive without a row: %v", err)
	}
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	block := string(doc)[strings.Index(string(doc), "# The directives"):strings.Index(string(doc), "# Implementation notes")]
	words := map[string]bool{}
	for _, l := range strings.Split(block, "\n") {
		if !strings.HasPrefix(l, "//\t") {
			continue
		}
		for _, f := range strings.FieldsFunc(l[3:], func(r rune) bool { return r == ' ' || r == '|' || r == '[' || r == ']' }) {
			words[f] = true
		}
	}
	for _, name := range scenarios.DirectiveNames() {
		if !words[name] {
			t.Errorf("doc.go's list of directives lacks %q", name)
		}
	}
}

// Goal: any run, not only a generator's, can be written out as a scenario file: a world with
// Config.RecordOps records the ops of Apply, Script and a Generator, every kind among them, and
// the file GeneratedDirectives writes from them replays them in order, at their times, without a
// failure. Without RecordOps, Ops is an error rather than an empty record.
// Method: writes and a few faults applied now and scripted a second apart, and a generator's
// fault ops of every kind World.FaultKinds lists (derived from the op table, not listed here);
// write the file, run it, compare the ops its directives applied with the record.
func TestRecordedRunWrittenOut(t *testing.T) {
	w, err := world.NewFromConfig(sim.Config{Seed: 9}, fakeapi.Config{Replicas: 3}, world.Config{RecordOps: true, ControlPlane: &controlplane.Config{}})
	if err != nil {
		t.Fatal(err)
	}
	// A client, so that the client faults apply and are drawn; the file names it (a stand-in).
	if err := w.AddClient("controller", func(world.Op) error { return nil }); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"create name=a label:app=web", "lag-replica replica=1 by=2s", "burn-revisions n=5"} {
		op, err := world.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Apply(op); err != nil {
			t.Fatal(err)
		}
	}
	var script []world.Op
	for _, s := range []string{"update name=a label:app=db", "patch name=a patchType=merge patch={}", "close-watches code=410", "compact",
		"fail-next verb=list code=500", "slow-consumer", "trigger-bookmarks", "freeze-replica replica=2", "resume-replica replica=2",
		"reinit-replica replica=0 not-ready=1s", "route-next replica=1", "delete name=a",
		"slow-controller name=garbage-collector by=2s", "stop-controller name=workload-status", "start-controller name=workload-status"} {
		op, err := world.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		script = append(script, op, world.Op{Kind: world.OpSleep, Duration: time.Second})
	}
	if _, err := w.Script(time.Second, script...); err != nil {
		t.Fatal(err)
	}
	// The generator draws every fault kind the world takes (about ten of each: one op in ten is
	// a fault op), so a kind added to the op table is in the record without a line here.
	faults := w.FaultKinds()
	gen, err := w.Generate(world.GenConfig{Ops: 100 * len(faults), FaultOps: true, FaultOpKinds: faults})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Sim().RunUntil(gen.Finished, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := w.Sim().RunFor(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	ops, err := w.Ops()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[world.OpKind]bool{}
	var want []string
	for _, o := range ops {
		kinds[o.Op.Kind] = true
		want = append(want, o.Op.String())
	}
	for _, k := range world.OpKinds() {
		if k != world.OpSleep && !kinds[k] && (!k.Fault() || slices.Contains(scenarioFaultKinds(t), k)) {
			t.Errorf("the record holds no %s op", k)
		}
	}
	head, _ := scenarios.ParseDirective("world seed=9 replicas=3 controllers client=controller", "")
	text := scenarios.Format("a recorded run", append([]scenarios.Directive{head}, scenarios.GeneratedDirectives(0, ops)...), nil)
	res, err := scenarios.Run("recorded", text, scenarios.Options{})
	if err != nil || res.Failure != nil {
		t.Fatalf("the written run: %v, %v\n%s", err, res.Failure, text)
	}
	var got []string
	for _, s := range res.Steps {
		if s.Directive.Op != nil {
			got = append(got, s.Directive.Op.String())
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("the file applied %d ops, the world recorded %d:\n%v\n%v", len(got), len(want), got, want)
	}

	plain, err := world.New(1, world.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if ops, err := plain.Ops(); err == nil || ops != nil || !strings.Contains(err.Error(), "RecordOps") {
		t.Errorf("Ops without RecordOps = %v, %v; want an error naming RecordOps", ops, err)
	}
}
