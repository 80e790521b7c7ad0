package worldtest_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/oracle"
	"github.com/informersim/informersim/sim/world/worldtest"
)

// converged returns a converged world on configmaps holding a, with one informer and handler h1,
// every oracle attached.
func converged(t *testing.T, seed uint64) (*world.World, *world.Informer, *world.Handler, *oracle.Handle) {
	t.Helper()
	w := newExampleWorld(seed)
	h, err := oracle.Attach(w)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Apply(world.Op{Kind: world.OpCreate, Name: "a"}); err != nil {
		t.Fatal(err)
	}
	inf, err := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	hd, err := w.AddHandler(inf, "h1", nil, world.HandlerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := inf.Start(); err != nil {
		t.Fatal(err)
	}
	if err := h.RunUntilConverged(time.Minute); err != nil {
		t.Fatal(err)
	}
	return w, inf, hd, h
}

func contains(t *testing.T, what, msg string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("%s lacks %q:\n%s", what, p, msg)
		}
	}
}

// ghost slips an object into inf's cache behind its back.
func ghost(t *testing.T, inf *world.Informer) {
	t.Helper()
	g := &unstructured.Unstructured{}
	g.SetNamespace("default")
	g.SetName("ghost")
	g.SetResourceVersion("1")
	if err := inf.SharedIndexInformer().GetStore().Add(g); err != nil {
		t.Fatal(err)
	}
}

// Goal: HaveConverged succeeds on a converged world or handle, and its failure names the
// diverging key (or the violated oracle), the seed, the replay command and the trace.
func TestHaveConverged(t *testing.T) {
	w, inf, _, h := converged(t, 2)
	for _, actual := range []any{w, h} {
		m := worldtest.HaveConverged()
		if ok, err := m.Match(actual); !ok || err != nil {
			t.Fatalf("%T: Match = %v, %v", actual, ok, err)
		}
		contains(t, "negated message", m.NegatedFailureMessage(actual), "not to converge", "seed: 2", "replay: informersim run example --seed 2")
	}
	ghost(t, inf)
	m := worldtest.HaveConverged(time.Minute)
	if ok, err := m.Match(w); ok || err != nil {
		t.Fatalf("Match = %v, %v on a corrupted cache", ok, err)
	}
	contains(t, "failure message", m.FailureMessage(w), "within 1m0s", "oracle eventual-consistency violated",
		"key default/ghost: present at rv=1, apiserver has none", "seed: 2", "replay: informersim run example --seed 2", "trace before the violation:", "> ")
	if _, err := worldtest.HaveConverged().Match("a world"); err == nil {
		t.Error("Match(string): no error")
	}
	if _, err := worldtest.HaveConverged().Match((*world.World)(nil)); err == nil {
		t.Error("Match(nil world): no error")
	}
}

// Goal: HaveConverged's failure message states each fact once, whatever stopped the run (a
// user's check, an oracle, a panicking handler, a world that never quiesces, an informer never
// started): the error without the seed and replay command it carries, then one "seed:" line and
// one "replay:" line (and for a panic, its stack). Method: make each failure; count the seed and
// the replay command in the message before its trace.
func TestHaveConvergedSaysEachFactOnce(t *testing.T) {
	const seed = 5
	repro := "informersim run example --seed 5"
	start := func(w *world.World, n *world.Informer) {
		t.Helper()
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name  string
		setup func(w *world.World, n *world.Informer)
		want  []string
	}{
		{"a failing check", func(w *world.World, n *world.Informer) {
			start(w, n)
			_ = w.AddCheck("my check", func() error { return errors.New("the controller knows nothing") })
		}, []string{`world: check "my check" failed: the controller knows nothing` + "\nseed: 5\n"}},
		{"an oracle", func(w *world.World, n *world.Informer) {
			start(w, n)
			_ = w.RunUntilConverged(time.Minute)
			ghost(t, n)
		}, []string{"oracle eventual-consistency violated: inf1: cache diverges", "> "}},
		{"a panicking handler", func(w *world.World, n *world.Informer) {
			_, _ = w.AddHandler(n, "bad", informer.ResourceEventHandlerFuncs{AddFunc: func(any) { panic("boom") }}, world.HandlerOptions{})
			start(w, n)
		}, []string{"actor inf1/bad action deliver (policy random): boom\nseed: 5\n", "stack of the panic, from the panicking call to the engine's step:\n  github.com/informersim/informersim/sim/world/worldtest_test.TestHaveConvergedSaysEachFactOnce.func", "matchers_test.go:"}},
		{"a world that never quiesces", func(w *world.World, n *world.Informer) {
			start(w, n)
			_ = w.AddQuietCondition("never", func() bool { return false })
		}, []string{"the world did not quiesce: sim: condition still false when the budget ran out", "(5 in this call)\nseed: 5\n"}},
	} {
		w := newExampleWorld(seed)
		if err := w.Apply(world.Op{Kind: world.OpCreate, Name: "a"}); err != nil {
			t.Fatal(err)
		}
		n, err := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
		if err != nil {
			t.Fatal(err)
		}
		c.setup(w, n)
		m := worldtest.HaveConverged(time.Minute)
		if ok, err := m.Match(w); ok || err != nil {
			t.Fatalf("%s: Match = %v, %v", c.name, ok, err)
		}
		msg := m.FailureMessage(w)
		head, _, _ := strings.Cut(msg, "trace before")
		head, _, _ = strings.Cut(head, "stack of the panic")
		if n := strings.Count(head, repro); n != 1 {
			t.Errorf("%s: the replay command appears %d times:\n%s", c.name, n, msg)
		}
		if n := strings.Count(strings.ReplaceAll(head, repro, ""), "seed"); n != 1 {
			t.Errorf("%s: the seed appears %d times:\n%s", c.name, n, msg)
		}
		contains(t, c.name, msg, append(c.want, "seed: 5\nreplay: "+repro+"\n")...)
	}
}

// Goal: HaveObservedInOrder compares one key's notifications exactly; its failure lists both
// sides, the first difference, the seed, the replay command and the trace around that call.
func TestHaveObservedInOrder(t *testing.T) {
	w, _, hd, _ := converged(t, 3)
	if err := w.Apply(world.Op{Kind: world.OpUpdate, Name: "a"}); err != nil {
		t.Fatal(err)
	}
	if err := w.RunUntilConverged(time.Minute); err != nil {
		t.Fatal(err)
	}
	m := worldtest.HaveObservedInOrder("default/a", "add(default/a@2,true)", "upd(default/a@2->3)")
	if ok, err := m.Match(hd); !ok || err != nil {
		t.Fatalf("Match = %v, %v", ok, err)
	}
	contains(t, "negated message", m.NegatedFailureMessage(hd), "not to have observed", "seed: 3")
	if ok, _ := worldtest.HaveObservedInOrder("default/b").Match(hd); !ok {
		t.Error("a key never heard of does not match an empty list")
	}
	for _, c := range []struct {
		want  []string
		parts []string
	}{
		{[]string{"add(default/a@2,true)", "upd(default/a@2->4)"}, []string{"first difference at #2: observed upd(default/a@2->3), expected upd(default/a@2->4)", "> "}},
		{[]string{"add(default/a@2,true)"}, []string{"first difference at #2: observed upd(default/a@2->3), expected nothing more"}},
		{[]string{"add(default/a@2,true)", "upd(default/a@2->3)", "del(default/a@4)"}, []string{"first difference at #3: expected del(default/a@4), observed nothing more"}},
	} {
		m := worldtest.HaveObservedInOrder("default/a", c.want...)
		if ok, err := m.Match(hd); ok || err != nil {
			t.Fatalf("Match(%v) = %v, %v", c.want, ok, err)
		}
		msg := m.FailureMessage(hd)
		contains(t, "failure message", msg, append(c.parts, "Expected inf1/h1 to have observed, for default/a", "seed: 3",
			"replay: informersim run example --seed 3", "trace around the difference:", "inf1/h1      OnUpdate")...)
	}
	if _, err := worldtest.HaveObservedInOrder("default/a").Match(w); err == nil {
		t.Error("Match(world): no error")
	}
	if _, err := worldtest.HaveObservedInOrder("").Match(hd); err == nil {
		t.Error("empty key: no error")
	}
}

// Goal: a note of HaveObservedInOrder may leave out the resourceVersions and an add's
// initial-list flag, which then match any value, while what it gives must match (a delete is not
// a tombstone); the exact form keeps working, mixed with the short one; a note not in the
// notation, or about another key, is an error. Method: a handler hears a's add, an update, a
// tombstone (a delete during a 410) and a re-creation; match short, exact and mixed notes, and
// wrong ones.
func TestHaveObservedInOrderWithoutResourceVersions(t *testing.T) {
	w, _, hd, _ := converged(t, 3)
	for _, ops := range [][]world.Op{
		{{Kind: world.OpUpdate, Name: "a"}},
		{{Kind: world.OpCloseWatches, Code: 410}, {Kind: world.OpDelete, Name: "a"}},
		{{Kind: world.OpCreate, Name: "a"}},
	} {
		for _, op := range ops {
			if err := w.Apply(op); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.RunUntilConverged(time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	observed := hd.Deliveries().Strings()
	for _, notes := range [][]string{
		{"add(default/a,true)", "upd(default/a)", "del(tomb default/a)", "add(default/a,false)"},
		{"add(default/a)", "upd(default/a)", "del(tomb default/a)", "add(default/a)"},
		{"add(default/a@2,true)", "upd(default/a@2->3)", "del(tomb default/a)", "add(default/a@5)"},
		{"add(default/a@2,true)", "upd(default/a@2->3)", "del(tomb default/a@3)", "add(default/a@5,false)"},
	} {
		if ok, err := worldtest.HaveObservedInOrder("default/a", notes...).Match(hd); !ok || err != nil {
			t.Errorf("notes %q: Match = %v, %v; the handler observed %q", notes, ok, err, observed)
		}
	}
	for _, c := range []struct {
		notes []string
		diff  string
	}{
		{[]string{"add(default/a,false)"}, "first difference at #1: observed add(default/a@2,true), expected add(default/a,false)"},
		{[]string{"add(default/a)", "upd(default/a)", "del(default/a)", "add(default/a)"}, "first difference at #3: observed del(tomb default/a@3), expected del(default/a)"},
		{[]string{"add(default/a)", "upd(default/a@2->4)"}, "first difference at #2: observed upd(default/a@2->3), expected upd(default/a@2->4)"},
		{[]string{"add(default/a)", "upd(default/a)", "del(tomb default/a)"}, "first difference at #4: observed add(default/a@5,false), expected nothing more"},
		{[]string{"add(default/a)", "upd(default/a)", "del(tomb default/a)", "add(default/a)", "upd(default/a)"}, "first difference at #5: expected upd(default/a), observed nothing more"},
	} {
		m := worldtest.HaveObservedInOrder("default/a", c.notes...)
		if ok, err := m.Match(hd); ok || err != nil {
			t.Fatalf("notes %q: Match = %v, %v", c.notes, ok, err)
		}
		contains(t, "failure message", m.FailureMessage(hd), c.diff)
	}
	for _, c := range []struct{ note, want string }{
		{"add(default/b)", `note "add(default/b)" is about default/b, not default/a`},
		{"add default/a", "not in informer.md §14's notation"},
		{"", "not in informer.md §14's notation"},
		{"upd(default/a@2)", "not in informer.md §14's notation"},
		{"upd(default/a@->3)", "not in informer.md §14's notation"},
		{"add(default/a,maybe)", "not in informer.md §14's notation"},
		{"del(default/a@)", "not in informer.md §14's notation"},
		{"sync(default/a)", "not in informer.md §14's notation"},
		{"add(default/a", "not in informer.md §14's notation"},
		{"add(default/a@2@3)", "not in informer.md §14's notation"},
		{"upd(default/a@1->2,true)", "not in informer.md §14's notation"},
	} {
		_, err := worldtest.HaveObservedInOrder("default/a", c.note).Match(hd)
		if err == nil || !strings.HasPrefix(err.Error(), "worldtest: HaveObservedInOrder: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("note %q: %v, want an error containing %q", c.note, err, c.want)
		}
	}
}

// Goal: SatisfyEveryOracle holds on a correct run and reports a violation with its report and
// every verdict.
func TestSatisfyEveryOracle(t *testing.T) {
	w, _, _, h := converged(t, 4)
	m := worldtest.SatisfyEveryOracle()
	if ok, err := m.Match(h); !ok || err != nil {
		t.Fatalf("Match = %v, %v", ok, err)
	}
	contains(t, "negated message", m.NegatedFailureMessage(h), "all of "+strings.Join(oracle.Names(), ", ")+" hold", "seed: 4")
	if err := w.Apply(world.Op{Kind: world.OpDelete, Name: "a"}); err != nil {
		t.Fatal(err)
	}
	if err := w.RunUntilConverged(time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := w.Server().Faults().DuplicateEvent(w.Server().Faults().Watchers()[0]); err != nil {
		t.Fatal(err)
	}
	w.Settle()
	_ = w.RunUntilConverged(time.Minute)
	if ok, err := m.Match(h); ok || err != nil {
		t.Fatalf("Match = %v, %v after a duplicated event", ok, err)
	}
	contains(t, "failure message", m.FailureMessage(h), "oracle watch-guarantees violated: watch 1: DELETED default/a@3 after rv=3",
		"seed: 4", "replay: informersim run example --seed 4", "trace before the violation:", "> ", "verdicts:", "  watch-guarantees: violated", "  late-join: ok")
	if _, err := worldtest.SatisfyEveryOracle().Match(w); err == nil {
		t.Error("Match(world): no error")
	}
}
