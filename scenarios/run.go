package scenarios

import (
	"embed"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// courseFS holds the course, so the command line needs no source tree.
//
//go:embed testdata/*.txt
var courseFS embed.FS

// Scenario is one scenario file: its name (the file name without .txt), its title and concept
// text (the comment lines that open it), its labels, the parts of the informer's pipeline it is
// about, and its text.
type Scenario struct {
	Name    string
	Title   string
	Concept string
	Labels  []string
	// Pipeline names the parts of client-go's pipeline the lesson is about, by client-go's
	// names ("Reflector", "DeltaFIFO", "Indexer", ...): the header line "pipeline: a, b".
	Pipeline []string
	Text     string
}

// Course returns the course's scenarios in order.
func Course() []Scenario {
	entries, err := fs.Glob(courseFS, "testdata/*.txt")
	if err != nil {
		return nil
	}
	slices.Sort(entries)
	var out []Scenario
	for _, p := range entries {
		b, err := courseFS.ReadFile(p)
		if err != nil {
			continue
		}
		out = append(out, NewScenario(strings.TrimSuffix(path.Base(p), ".txt"), string(b)))
	}
	return out
}

// Lookup finds a course scenario by its full name ("04-relist-410"), its number ("04" or "4")
// or the part after the number ("relist-410").
func Lookup(name string) (Scenario, bool) {
	name = strings.TrimSuffix(name, ".txt")
	for _, s := range Course() {
		num, rest, _ := strings.Cut(s.Name, "-")
		if name == s.Name || name == num || name == rest || "0"+name == num {
			return s, true
		}
	}
	return Scenario{}, false
}

// NewScenario reads a scenario's header: the comment lines before its first directive. The first
// is the title; a line "labels: a, b" gives its labels, a line "pipeline: a, b" the parts of
// the pipeline it is about; the others are the concept text.
func NewScenario(name, text string) Scenario {
	sc := Scenario{Name: name, Text: text}
	var concept []string
	first := true
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if t == "" && first {
			continue
		}
		if !strings.HasPrefix(t, "#") {
			break
		}
		t = strings.TrimPrefix(strings.TrimPrefix(t, "#"), " ")
		switch {
		case first:
			sc.Title = t
			first = false
		case strings.HasPrefix(t, "labels:"):
			sc.Labels = append(sc.Labels, splitList(strings.TrimPrefix(t, "labels:"))...)
		case strings.HasPrefix(t, "pipeline:"):
			sc.Pipeline = append(sc.Pipeline, splitList(strings.TrimPrefix(t, "pipeline:"))...)
		default:
			concept = append(concept, t)
		}
	}
	sc.Concept = strings.TrimSpace(strings.Join(concept, "\n"))
	return sc
}

func splitList(s string) []string {
	var out []string
	for _, l := range strings.Split(s, ",") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// Step is one directive of a run and what it printed.
type Step struct {
	// Pos is "<file>:<line>".
	Pos       string
	Directive Directive
	// Output is what the directive printed in this run; Expected is the file's block.
	Output   string
	Expected string
	// TraceEnd is the trace's length (sim.Trace.Len) when the directive finished: its events
	// are those from the previous step's TraceEnd up to this one.
	TraceEnd int64
}

// Result is a finished run of a scenario.
type Result struct {
	Name  string
	Steps []Step
	// Seed and Hash identify the run: the world's seed and the SHA-256 of its trace.
	Seed uint64
	Hash string
	// Failure is what stopped the run (an oracle violation, a run error, no convergence), nil
	// when the run passed.
	Failure error
	// Env is the environment the run used: its world, trace and handlers.
	Env *Env
}

// Mismatches returns the steps whose output differs from the file's expected block.
func (r *Result) Mismatches() []Step {
	var out []Step
	for _, s := range r.Steps {
		if normalize(s.Output) != normalize(s.Expected) {
			out = append(out, s)
		}
	}
	return out
}

func normalize(s string) string { return strings.TrimRight(s, "\n") }

// Narration renders the run as the command line prints it: each directive, then its output;
// captions print as "== caption ==" lines.
func (r *Result) Narration() string {
	var b strings.Builder
	for _, s := range r.Steps {
		if s.Directive.Cmd == "caption" {
			fmt.Fprintf(&b, "\n== %s ==\n", s.Directive.text())
			continue
		}
		fmt.Fprintf(&b, "> %s", s.Directive.Line())
		// A seed given on the command line replaces the file's: say so where the file's seed is
		// echoed, so the line below it (the world's own header) does not read as a contradiction.
		if seed, ok := s.Directive.arg("seed"); ok && s.Directive.Cmd == "world" && seed != strconv.FormatUint(r.Seed, 10) {
			fmt.Fprintf(&b, "   (seed replaced: this run uses seed=%d)", r.Seed)
		}
		b.WriteByte('\n')
		if out := normalize(s.Output); out != "" {
			b.WriteString(out)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Run runs the scenario text (named name in errors) with opts. A malformed file or a directive
// that does not fit the scenario returns an error naming the file, the line, the directive and
// what was expected, and so is a file with no directive at all; a run that fails an oracle
// returns a Result whose Failure says so.
func Run(name, text string, opts Options) (*Result, error) {
	if opts.Name == "" {
		opts.Name = name
	}
	// datadriven consults testing.Verbose(), which needs parsed flags; a test binary has them,
	// a command has not, and parsing no arguments changes nothing else.
	if !flag.Parsed() {
		_ = flag.CommandLine.Parse(nil)
	}
	env := NewEnv(opts)
	res := &Result{Name: name, Env: env}
	tb := &runTB{name: name}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(tbAbort); !ok {
					panic(r)
				}
			}
		}()
		datadriven.RunTestFromStringAny(tb, text, func(t testing.TB, td *datadriven.TestData) string {
			out, err := env.HandleTestData(name, td)
			if err != nil {
				t.Fatalf("%v", err)
			}
			d, _ := newDirective(td.Cmd, td.CmdArgs, td.Input)
			step := Step{Pos: position(name, td.Pos), Directive: d, Output: out, Expected: td.Expected}
			if w := env.World(); w != nil {
				step.TraceEnd = w.Sim().Trace().Len()
			}
			res.Steps = append(res.Steps, step)
			// The run is checked against the file by the caller (Mismatches); datadriven compares
			// its own copy, so it is handed the expected block.
			return td.Expected
		})
	}()
	if tb.err != nil {
		return nil, tb.err
	}
	if len(res.Steps) == 0 {
		// Nothing ran, so there is no world, no seed and no trace to hash: not a passing run.
		return nil, fmt.Errorf("scenarios: %s: no directive in the file (each directive is a line such as \"world seed=1\", then a line \"----\", then its expected output)", name)
	}
	res.Seed, res.Hash, res.Failure = env.Seed(), env.Hash(), env.Failure()
	return res, nil
}

// HandleTestData parses and runs one datadriven case; its error names the file (name), the line,
// the directive and what was expected.
func (e *Env) HandleTestData(name string, td *datadriven.TestData) (string, error) {
	pos := position(name, td.Pos)
	d, err := newDirective(td.Cmd, td.CmdArgs, td.Input)
	if err != nil {
		return "", fmt.Errorf("scenarios: %s: %s", pos, strings.TrimPrefix(err.Error(), "scenarios: "))
	}
	out, err := e.Handle(d)
	if err != nil {
		return "", fmt.Errorf("scenarios: %s: directive %q: %v", pos, d.Cmd, err)
	}
	return out, nil
}

// position turns datadriven's "<string>:12" (or "path/to/file:12") into "name:12".
func position(name, pos string) string {
	i := strings.LastIndexByte(pos, ':')
	if i < 0 {
		return name
	}
	return name + pos[i:]
}

// runTB is the testing.TB datadriven reads a scenario through outside a test: Fatal stops the
// run with the message as its error. Only the methods datadriven calls are implemented; the
// embedded interface is nil.
type runTB struct {
	testing.TB
	name   string
	err    error
	failed bool
}

type tbAbort struct{}

func (t *runTB) Helper()             {}
func (t *runTB) Failed() bool        { return t.failed }
func (t *runTB) Skipped() bool       { return false }
func (t *runTB) Log(...any)          {}
func (t *runTB) Logf(string, ...any) {}
func (t *runTB) Name() string        { return "scenario" }
func (t *runTB) FailNow()            { t.failed = true; panic(tbAbort{}) }
func (t *runTB) Fatal(args ...any)   { t.fail(fmt.Sprint(args...)); panic(tbAbort{}) }
func (t *runTB) Fatalf(format string, args ...any) {
	t.fail(fmt.Sprintf(format, args...))
	panic(tbAbort{})
}
func (t *runTB) Error(args ...any)                 { t.fail(fmt.Sprint(args...)) }
func (t *runTB) Errorf(format string, args ...any) { t.fail(fmt.Sprintf(format, args...)) }
func (t *runTB) Run(_ string, f func(testing.TB))  { f(t) }

func (t *runTB) fail(msg string) {
	t.failed = true
	if t.err != nil {
		return
	}
	msg = strings.TrimSpace(msg)
	if strings.HasPrefix(msg, "<string>:") {
		// datadriven's own framing errors: "<string>:3: cannot parse directive at column 5: ..."
		msg = "scenarios: " + t.name + strings.TrimPrefix(msg, "<string>")
	}
	t.err = errors.New(msg)
}
