package scenarios_test

import (
	"strings"
	"testing"

	"github.com/informersim/informersim/scenarios"
)

// Goal: Rewrite renews a scenario file from its run: every course file rewritten from its own
// run is byte for byte itself (blocks fenced by a doubled "----" included), and a file whose
// blocks were emptied or edited is rewritten back into the course file; Diff names each block
// that differs, with its lines.
func TestRewriteRenewsTheFile(t *testing.T) {
	for _, sc := range scenarios.Course() {
		res, err := scenarios.Run(sc.Name, sc.Text, scenarios.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := res.Rewrite(sc.Text)
		if err != nil {
			t.Fatalf("%s: %v", sc.Name, err)
		}
		if got != sc.Text {
			t.Errorf("%s: rewriting the file from its own run changed it", sc.Name)
		}
		if d := res.Diff(); d != "" {
			t.Errorf("%s: a passing file has a diff:\n%s", sc.Name, d)
		}
	}
	// A block fenced by a doubled "----" (datadriven's form for output with blank lines) is
	// replaced whole, fences included, and the text after it is kept.
	fencedText := "create name=a\n----\n----\nold\n\nlines\n----\n----\n\n# the end\nobjects\n----\n"
	res, err := scenarios.Run("fenced", fencedText, scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := res.Rewrite(fencedText)
	if want := "create name=a\n----\n+0.000s apiserver: ADDED obj=pods/default/a rv=2\n\n# the end\nobjects\n----\napiserver pods at rv=2: 1 objects\n  default/a@2\n"; err != nil || got != want {
		t.Errorf("fenced block rewritten to %q (%v), want %q", got, err, want)
	}

	sc, _ := scenarios.Lookup("05")
	right, err := scenarios.Run(sc.Name, sc.Text, scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var changed *scenarios.Step
	for i, s := range right.Steps {
		if strings.Contains(s.Expected, "tombstone=true") {
			changed = &right.Steps[i]
			break
		}
	}
	if changed == nil {
		t.Fatal("05 has no block with a tombstone")
	}
	wrong := rewriteBlock(t, sc.Text, *changed, func(e string) string {
		return strings.Replace(e, "tombstone=true", "tombstone=false", 1) + "a line the run does not print\n"
	})
	res, err = scenarios.Run(sc.Name, wrong, scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Diff()
	for _, want := range []string{changed.Pos + ": ", "\n-a line the run does not print\n", "tombstone=false", "+"} {
		if !strings.Contains(d, want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
	if strings.Count(d, "output differs") != 1 {
		t.Errorf("diff names %d blocks, want 1:\n%s", strings.Count(d, "output differs"), d)
	}
	for _, l := range strings.Split(d, "\n") {
		if strings.HasPrefix(l, "-") && strings.Contains(l, "tombstone=true") {
			t.Errorf("the unchanged part is reported as removed: %q", l)
		}
	}
	fixed, err := res.Rewrite(wrong)
	if err != nil {
		t.Fatal(err)
	}
	if fixed != sc.Text {
		t.Errorf("rewriting the edited file did not give back the course file")
	}
	if _, err := res.Rewrite("world seed=5\n----\n"); err == nil {
		t.Error("rewriting a text the run did not read succeeded")
	}
}
