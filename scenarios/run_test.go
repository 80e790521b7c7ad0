package scenarios_test

import (
	"strings"
	"testing"

	"github.com/informersim/informersim/scenarios"
)

// Goal: Result.Mismatches counts every block that differs from the run's output, an empty
// expected block included (a directive that starts printing where the file expects nothing is a
// mismatch), and counts nothing on the right file.
func TestMismatchesAgainstAWrongFile(t *testing.T) {
	sc, ok := scenarios.Lookup("01")
	if !ok {
		t.Fatal("no course scenario 01")
	}
	right, err := scenarios.Run(sc.Name, sc.Text, scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m := right.Mismatches(); len(m) != 0 {
		t.Fatalf("the course file itself has %d mismatches, first at %s", len(m), m[0].Pos)
	}
	// The first directive that prints nothing, and the first that prints something: the wrong
	// files below edit their blocks.
	empty, full := -1, -1
	for i, s := range right.Steps {
		if s.Directive.Cmd == "caption" {
			continue
		}
		if strings.TrimSpace(s.Expected) == "" && empty < 0 {
			empty = i
		}
		if strings.TrimSpace(s.Expected) != "" && full < 0 {
			full = i
		}
	}
	if empty < 0 || full < 0 {
		t.Fatalf("course file 01 needs a directive with an empty block and one with output (%d, %d)", empty, full)
	}

	cases := []struct {
		name string
		step int
		edit func(expected string) string
	}{
		{"the file expects text where the run prints nothing", empty, func(string) string { return "FAIL: something printed\n" }},
		{"the run prints text where the file expects an empty block", full, func(string) string { return "" }},
		{"a changed line", full, func(e string) string { return strings.Replace(e, "\n", " changed\n", 1) }},
		{"one line more", full, func(e string) string { return e + "an extra line\n" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wrong := rewriteBlock(t, sc.Text, right.Steps[c.step], c.edit)
			res, err := scenarios.Run(sc.Name, wrong, scenarios.Options{})
			if err != nil {
				t.Fatal(err)
			}
			m := res.Mismatches()
			if len(m) != 1 {
				t.Fatalf("%d mismatches, want exactly 1 (at %s)", len(m), right.Steps[c.step].Pos)
			}
			if m[0].Pos != right.Steps[c.step].Pos {
				t.Errorf("mismatch at %s, want %s", m[0].Pos, right.Steps[c.step].Pos)
			}
		})
	}
}

// rewriteBlock returns text with the expected block of step s replaced by edit(block).
func rewriteBlock(t *testing.T, text string, s scenarios.Step, edit func(string) string) string {
	t.Helper()
	lines := strings.SplitAfter(text, "\n")
	_, num, _ := strings.Cut(s.Pos, ":")
	n := 0
	for _, c := range num {
		n = n*10 + int(c-'0')
	}
	// Line n (1-based) is the directive, n+1 the "----" separator, then the block up to the
	// blank line that ends it.
	if n < 1 || n+1 > len(lines) || strings.TrimSpace(lines[n]) != "----" {
		t.Fatalf("no separator after the directive at %s", s.Pos)
	}
	end := n + 1
	for end < len(lines) && strings.TrimSpace(lines[end]) != "" {
		end++
	}
	block := strings.Join(lines[n+1:end], "")
	var b strings.Builder
	b.WriteString(strings.Join(lines[:n+1], ""))
	b.WriteString(edit(block))
	b.WriteString(strings.Join(lines[end:], ""))
	return b.String()
}

// Goal: run until=event stops at a matching event of the named actor only. In this run both
// informers are active and inf1's reflector starts watching before inf2's: the run must go on
// to inf2's.
func TestRunUntilEventWaitsForTheNamedActor(t *testing.T) {
	text := `world seed=1
----

create name=a
----

informer name=inf1 ns=default
----

informer name=inf2 ns=default
----

start informer=inf1
----

start informer=inf2
----

run until=event event=inf2/reflector:watching
----
`
	res, err := scenarios.Run("until-event", text, scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure != nil {
		t.Fatalf("the run failed: %v", res.Failure)
	}
	out := strings.Split(strings.TrimSpace(res.Steps[len(res.Steps)-1].Output), "\n")
	// The other informer's matching event comes first, so the wait really had to tell them apart.
	if !strings.Contains(strings.Join(out, "\n"), "inf1/reflector: watching") {
		t.Fatalf("inf1 does not start watching before inf2 in this run any more; pick a seed where it does:\n%s", strings.Join(out, "\n"))
	}
	if last := out[len(out)-1]; !strings.Contains(last, "inf2/reflector: watching") {
		t.Errorf("the run stopped at %q, want inf2's reflector watching:\n%s", last, strings.Join(out, "\n"))
	}
}

// Goal: files that cannot make a run are errors naming the file and what is wrong, never a
// passing run: an empty file (no world, no hash), a directive naming an informer when there is
// none yet (the message says so rather than listing nothing).
func TestRunRefusesFilesThatMakeNoRun(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"", "scenarios: bad: no directive in the file"},
		{"# a title and nothing else\n", "scenarios: bad: no directive in the file"},
		{"start informer=nope\n----\n", `scenarios: bad:1: directive "start": no informer named "nope": the scenario has no informer yet (add one with: informer name=nope)`},
		{"informer name=inf1\n----\n\nstart informer=nope\n----\n", `scenarios: bad:4: directive "start": no informer named "nope" (expected one of: inf1)`},
	} {
		res, err := scenarios.Run("bad", c.text, scenarios.Options{})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Run(%q) = %v, %v; want an error starting %q", c.text, res, err, c.want)
		}
	}
}
