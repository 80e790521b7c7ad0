package main

import (
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/informersim/informersim/scenarios"
	"github.com/informersim/informersim/timeline/record"
)

// Goal: the demo prints the header and trace, replays byte for byte, and bad input exits 2 with
// a message.
func TestDemo(t *testing.T) {
	var out1, out2, errb strings.Builder
	if code := run([]string{"demo", "-seed=3", "-policy=pct"}, &out1, &errb); code != 0 {
		t.Fatalf("demo exit %d, stderr %q", code, errb.String())
	}
	run([]string{"demo", "-seed=3", "-policy=pct"}, &out2, &errb)
	if out1.String() != out2.String() {
		t.Errorf("two runs of seed 3 printed different output")
	}
	for _, want := range []string{"seed=3\npolicy=pct\n", "inf1/h3: OnAdd", "converged: ", "trace sha256 "} {
		if !strings.Contains(out1.String(), want) {
			t.Errorf("demo output does not contain %q:\n%s", want, out1.String())
		}
	}
	var js strings.Builder
	if code := run([]string{"demo", "-json"}, &js, &errb); code != 0 || !strings.HasPrefix(js.String(), `{"step":`) {
		t.Errorf("demo -json exit %d, output starts %q", code, js.String()[:min(40, len(js.String()))])
	}
	for _, args := range [][]string{{}, {"bogus"}, {"demo", "-policy=lifo"}, {"demo", "-seed=-1"}, {"demo", "extra"}} {
		var o, e strings.Builder
		if code := run(args, &o, &e); code != 2 || e.Len() == 0 {
			t.Errorf("run(%q) = exit %d, stderr %q; want exit 2 with a message", args, code, e.String())
		}
	}
}

// Goal: list prints the whole course in order; run prints a course scenario's narration and its
// trace hash, the same twice, and honours --seed and --json; explain prints the concept first;
// the course is embedded, so all of it works outside the source tree.
func TestScenarioCommands(t *testing.T) {
	t.Chdir(t.TempDir()) // no source tree here: the course must come from the binary
	var lst, errb strings.Builder
	if code := run([]string{"list"}, &lst, &errb); code != 0 {
		t.Fatalf("list exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(lst.String()), "\n")
	if len(lines) < 20 || !strings.HasPrefix(lines[0], "01-list-then-watch ") {
		t.Fatalf("list printed %d lines:\n%s", len(lines), lst.String())
	}
	var a, b strings.Builder
	if code := run([]string{"run", "05-tombstone"}, &a, &errb); code != 0 {
		t.Fatalf("run exit %d: %s", code, errb.String())
	}
	run([]string{"run", "tombstone"}, &b, &errb)
	if a.String() != b.String() {
		t.Error("two runs of 05-tombstone printed different output")
	}
	for _, want := range []string{"scenario 05-tombstone seed=5\n", "> close-watches code=410\n", "OnDelete obj=default/b rv=4 tombstone=true", "\ntrace sha256 ",
		"\nhazards: watch-expired-410=1 relist=1 tombstone=1 watch-end=1; never: stale-list, bookmark,"} {
		if !strings.Contains(a.String(), want) {
			t.Errorf("run output lacks %q:\n%s", want, a.String())
		}
	}
	var s9 strings.Builder
	if code := run([]string{"run", "05", "--seed", "9", "--policy", "fifo"}, &s9, &errb); code != 0 || !strings.Contains(s9.String(), "seed=9") || s9.String() == a.String() {
		t.Errorf("run --seed 9 --policy fifo: exit %d, output:\n%s", code, s9.String())
	}
	// The file's own seed is echoed; the run must say that --seed replaced it.
	if want := "> world seed=5   (seed replaced: this run uses seed=9)\n"; !strings.Contains(s9.String(), want) {
		t.Errorf("run --seed 9 does not say the file's seed was replaced (want %q):\n%s", want, s9.String())
	}
	if strings.Contains(a.String(), "seed replaced") {
		t.Errorf("a run with the file's own seed says the seed was replaced:\n%s", a.String())
	}
	var js strings.Builder
	if code := run([]string{"run", "--json", "01"}, &js, &errb); code != 0 {
		t.Fatalf("run --json exit %d: %s", code, errb.String())
	}
	var doc struct {
		Schema     string
		Passed     bool
		Trace      struct{ Hash string }
		Directives []struct{ Cmd string }
		Events     []struct{ Fields map[string]any }
		Verdicts   []struct{ Oracle string }
	}
	if err := json.Unmarshal([]byte(js.String()), &doc); err != nil || doc.Schema != "informersim.run/v1" || !doc.Passed ||
		doc.Trace.Hash == "" || len(doc.Directives) == 0 || len(doc.Events) == 0 || len(doc.Verdicts) == 0 {
		t.Errorf("run --json: %v, document %+v", err, doc)
	}
	// The record carries the run's hazards: 05-tombstone's one tombstone, and what it never reached.
	var js5 strings.Builder
	var hz struct {
		Hazards struct {
			Counts map[string]int
			Never  []string
		}
	}
	if code := run([]string{"run", "--json", "05"}, &js5, &errb); code != 0 {
		t.Fatalf("run --json 05 exit %d: %s", code, errb.String())
	}
	if err := json.Unmarshal([]byte(js5.String()), &hz); err != nil || hz.Hazards.Counts["tombstone"] != 1 || hz.Hazards.Counts["relist"] != 1 ||
		!slices.Contains(hz.Hazards.Never, "bookmark") || slices.Contains(hz.Hazards.Never, "tombstone") {
		t.Errorf("run --json 05: hazards %+v (%v)", hz.Hazards, err)
	}
	page := t.TempDir() + "/run.html"
	var narr strings.Builder
	if code := run([]string{"explain", "05", "--html", page}, &narr, &errb); code != 0 || !strings.HasPrefix(narr.String(), "05-tombstone: ") {
		t.Errorf("explain --html exit %d, stdout %q", code, narr.String())
	}
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), `<script id="run-data" type="application/json">{"schema":"informersim.run/v1"`) {
		t.Errorf("explain --html wrote no timeline page: %v", err)
	}
	var ex strings.Builder
	if code := run([]string{"explain", "10-late-join"}, &ex, &errb); code != 0 ||
		!strings.HasPrefix(ex.String(), "10-late-join: A late handler join\n\nA handler added after the informer started joins late") ||
		!strings.Contains(ex.String(), "\n== h2 joins now") {
		t.Errorf("explain exit %d, output:\n%s", code, ex.String())
	}
}

// Goal: run takes a file; a failing run exits 1 with the replay command; a malformed file or
// bad flags exit 2 with a message naming the problem.
func TestScenarioFailures(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := write("ok.txt", "create name=a\n----\n+0.000s apiserver: ADDED obj=pods/default/a rv=2\n\ninformer name=i ns=default\n----\n\nstart informer=i\n----\n\nrun until=converged\n----\n")
	var o, e strings.Builder
	if code := run([]string{"run", ok, "--rewrite"}, &o, &e); code != 0 {
		t.Errorf("run --rewrite of a file with empty blocks: exit %d, stderr %q", code, e.String())
	}
	o.Reset()
	if code := run([]string{"run", ok}, &o, &e); code != 0 || !strings.Contains(o.String(), "scenario ok seed=1") {
		t.Errorf("run of a file: exit %d, stdout %q, stderr %q", code, o.String(), e.String())
	}
	stuck := write("stuck.txt", "create name=a\n----\n\ninformer name=i ns=default\n----\n\nhandler informer=i name=h slow=1h\n----\n\nstart informer=i\n----\n\nrun until=converged budget=1m\n----\n")
	o.Reset()
	e.Reset()
	// The replay line names the file's path, so it replays from where the user stands.
	if code := run([]string{"run", stuck, "--seed", "4"}, &o, &e); code != 1 || !strings.Contains(e.String(), "replay: informersim run "+stuck+" --seed 4\n") {
		t.Errorf("a run that does not converge: exit %d, stderr %q", code, e.String())
	}
	bad := write("bad.txt", "run for=soon\n----\n")
	for _, args := range [][]string{{"run", bad}, {"run"}, {"run", "no-such-scenario"}, {"run", "01", "--policy", "lifo"}, {"explain", bad}, {"list", "x"}} {
		var o, e strings.Builder
		if code := run(args, &o, &e); code != 2 || e.Len() == 0 {
			t.Errorf("run(%q) = exit %d, stderr %q; want exit 2 with a message", args, code, e.String())
		}
	}
	o.Reset()
	e.Reset()
	run([]string{"run", bad}, &o, &e)
	if want := `bad:1: directive "run": argument "for": expected a non-negative duration`; !strings.Contains(e.String(), want) {
		t.Errorf("malformed file: stderr %q, want %q", e.String(), want)
	}
}

// Goal: course --html writes an index and one page per lesson; without a directory it is bad
// usage.
func TestCourseSite(t *testing.T) {
	dir := t.TempDir()
	var o, e strings.Builder
	if code := run([]string{"course", "--html", dir}, &o, &e); code != 0 {
		t.Fatalf("course exit %d: %s", code, e.String())
	}
	pages, _ := filepath.Glob(filepath.Join(dir, "*.html"))
	if len(pages) < 28 {
		t.Errorf("course wrote %d pages", len(pages))
	}
	index, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil || !strings.Contains(string(index), `href="01-list-then-watch.html"`) {
		t.Errorf("index.html: %v", err)
	}
	for _, args := range [][]string{{"course"}, {"course", "--html", dir, "extra"}} {
		if code := run(args, &o, &e); code != 2 {
			t.Errorf("run(%q) = exit %d, want 2", args, code)
		}
	}
}

// Every spelling of help prints the usage and succeeds; no arguments is bad usage.
func TestHelp(t *testing.T) {
	for _, arg := range []string{"-h", "-help", "--help", "help"} {
		var stdout, stderr strings.Builder
		if code := run([]string{arg}, &stdout, &stderr); code != 0 || !strings.Contains(stderr.String(), "usage:") {
			t.Errorf("informersim %s: exit %d, stderr %q; want 0 and the usage", arg, code, stderr.String())
		}
	}
	var stdout, stderr strings.Builder
	if code := run(nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "usage:") {
		t.Errorf("informersim with no command: exit %d, stderr %q; want 2 and the usage", code, stderr.String())
	}
}

// Goal: a scenario file is a regression test. A block that differs from the run exits 1 with a
// diff naming the line; --rewrite renews the file (then it passes) and is refused for a course
// name or a replaced seed; --seed skips the comparison and says so; a safety violation the
// oracles directive shows exits 1 even when nothing ran after it.
func TestScenarioFileAsRegressionTest(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "reg.txt")
	text := "world seed=2\n----\nworld seed=2 policy=random replicas=1\n\ncreate name=a\n----\n+0.000s apiserver: ADDED obj=pods/default/a rv=99\n\n# a comment kept by --rewrite\nobjects\n----\n"
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var o, e strings.Builder
	if code := run([]string{"run", p}, &o, &e); code != 1 {
		t.Fatalf("a file with a wrong block: exit %d, stderr %q", code, e.String())
	}
	for _, want := range []string{"2 of 3 expected blocks differ", "reg:5: create name=a: output differs",
		"\n-+0.000s apiserver: ADDED obj=pods/default/a rv=99\n++0.000s apiserver: ADDED obj=pods/default/a rv=2\n",
		"+apiserver pods at rv=2: 1 objects\n", "informersim run " + p + " --rewrite"} {
		if !strings.Contains(e.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, e.String())
		}
	}
	o.Reset()
	e.Reset()
	if code := run([]string{"run", p, "--seed", "3"}, &o, &e); code != 0 || !strings.Contains(e.String(), "expected blocks not compared") {
		t.Errorf("--seed 3: exit %d, stderr %q; want 0 and a note that nothing was compared", code, e.String())
	}
	for _, args := range [][]string{{"run", "01", "--rewrite"}, {"run", p, "--rewrite", "--seed", "3"}, {"run", p, "--rewrite", "--policy", "fifo"}, {"explain", "01", "--rewrite"}} {
		o.Reset()
		e.Reset()
		if code := run(args, &o, &e); code != 2 || e.Len() == 0 {
			t.Errorf("run(%q) = exit %d, stderr %q; want exit 2 with a message", args, code, e.String())
		}
	}
	e.Reset()
	if code := run([]string{"run", p, "--rewrite"}, &o, &e); code != 0 || !strings.Contains(e.String(), "rewrote "+p+": 2 of 3 expected blocks changed") {
		t.Fatalf("--rewrite: exit %d, stderr %q", code, e.String())
	}
	b, _ := os.ReadFile(p)
	if want := "world seed=2\n----\nworld seed=2 policy=random replicas=1\n\ncreate name=a\n----\n+0.000s apiserver: ADDED obj=pods/default/a rv=2\n\n# a comment kept by --rewrite\nobjects\n----\napiserver pods at rv=2: 1 objects\n  default/a@2\n"; string(b) != want {
		t.Errorf("rewritten file:\n%s\nwant:\n%s", b, want)
	}
	e.Reset()
	if code := run([]string{"run", p}, &o, &e); code != 0 {
		t.Errorf("the rewritten file: exit %d, stderr %q", code, e.String())
	}

	ro := filepath.Join(dir, "ro.txt")
	if err := os.WriteFile(ro, []byte("world seed=28\n----\n\ncreate name=a\n----\n\ninformer name=inf1 ns=default\n----\n\nhandler informer=inf1 name=bad mutates\n----\n\nstart informer=inf1\n----\n\nrun for=2s\n----\n\noracles\n----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := run([]string{"run", ro, "--rewrite"}, &o, &e); code != 1 {
		t.Errorf("a run whose oracles directive shows a read-only-objects violation: exit %d, want 1", code)
	}
	b, _ = os.ReadFile(ro)
	if !strings.Contains(string(b), "read-only-objects: violated") || !strings.Contains(string(b), "FAIL: oracle read-only-objects violated") {
		t.Errorf("the oracles block does not show the violation:\n%s", b)
	}
}

// Goal: a run whose --seed (or --policy) replaces the file's own is not compared with the
// file's expected blocks (the command says so and exits 0), and its page says the same: the
// header and the record say passed, and that the blocks were not compared, rather than
// "failed" over blocks that belong to another seed. This failed before the record knew a
// comparison could be skipped: the header said failed while the command exited 0.
func TestRunWithSeedPageSaysPassed(t *testing.T) {
	page := filepath.Join(t.TempDir(), "run.html")
	var o, e strings.Builder
	if code := run([]string{"run", "05-tombstone", "--seed", "7", "--html", page}, &o, &e); code != 0 {
		t.Fatalf("run --seed 7 --html: exit %d, stderr %q", code, e.String())
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	_, header, _ := strings.Cut(html, `<p class="meta">scenario `)
	header, _, _ = strings.Cut(header, "</p>")
	if !strings.Contains(header, `<span class="verdict-ok">passed</span>`) || strings.Contains(header, "failed") {
		t.Errorf("the page of a passing run with --seed 7 says, in its header: %s", header)
	}
	if !strings.Contains(header, "expected blocks not compared") {
		t.Errorf("the header does not say the expected blocks were not compared: %s", header)
	}
	_, data, _ := strings.Cut(html, `<script id="run-data" type="application/json">`)
	data, _, _ = strings.Cut(data, "</script>")
	var doc struct {
		Passed     bool     `json:"passed"`
		Compared   *bool    `json:"compared"`
		Mismatches []string `json:"mismatches"`
	}
	if err := json.Unmarshal([]byte(data), &doc); err != nil {
		t.Fatal(err)
	}
	if !doc.Passed || doc.Compared == nil || *doc.Compared || len(doc.Mismatches) != 0 {
		t.Errorf("the record of run --seed 7: passed %v, compared %v, mismatches %q; want passed, not compared, none", doc.Passed, doc.Compared, doc.Mismatches)
	}
}

// Goal: the commands a lesson page prints under "Try it" work as printed from the root of a
// fresh clone: each is `go run -C cmd/informersim . ARGS` (the command is that nested module),
// and its ARGS, run here, exit 0 and write what they say (the page, the record); explain
// --html writes the lesson's concept text on its page.
func TestTryItCommandsAsPrinted(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "go run -C cmd/informersim . "
	if _, err := os.Stat(filepath.Join(root, "cmd/informersim/go.mod")); err != nil {
		t.Fatalf("-C cmd/informersim from the repository's root: %v", err)
	}
	pwd := t.TempDir()
	sc, ok := scenarios.Lookup("24-controller")
	if !ok {
		t.Fatal("no lesson 24-controller")
	}
	for _, line := range record.TryIt(sc.Name) {
		rest, ok := strings.CutPrefix(line, prefix)
		if !ok {
			t.Errorf("%q does not start with %q", line, prefix)
			continue
		}
		// The shell's part: $PWD, quotes and a redirection.
		rest, redirect, _ := strings.Cut(strings.ReplaceAll(rest, `"$PWD/`, `"`+pwd+"/"), " > ")
		var args []string
		for _, f := range strings.Fields(rest) {
			args = append(args, strings.Trim(f, `"`))
		}
		var o, e strings.Builder
		if code := run(args, &o, &e); code != 0 {
			t.Errorf("%s: exit %d, stderr %q", line, code, e.String())
			continue
		}
		if redirect != "" && !strings.HasPrefix(o.String(), `{`) {
			t.Errorf("%s: prints %.40q, not the record", line, o.String())
		}
	}
	page, err := os.ReadFile(filepath.Join(pwd, "run.html"))
	if err != nil {
		t.Fatalf("the Try it --html command wrote no page: %v", err)
	}
	if !strings.Contains(string(page), `<span class="verdict-ok">passed</span>`) {
		t.Errorf("the Try it page (--seed 7) does not say passed")
	}
	// explain --html: the concept text is on the page.
	explained := filepath.Join(pwd, "explain.html")
	var o, e strings.Builder
	if code := run([]string{"explain", sc.Name, "--html", explained}, &o, &e); code != 0 {
		t.Fatalf("explain --html: exit %d, %s", code, e.String())
	}
	b, err := os.ReadFile(explained)
	if err != nil {
		t.Fatal(err)
	}
	first := strings.Join(strings.Fields(strings.SplitN(sc.Concept, ".", 2)[0]), " ")
	if !strings.Contains(html.UnescapeString(string(b)), first) {
		t.Errorf("explain --html wrote no concept text (want %q on the page)", first)
	}
}
