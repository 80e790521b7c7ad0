package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/informersim/informersim/scenarios"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
)

// runScenario is "informersim run FILE|NAME [--seed N] [--policy P] [--guided] [--json] [--html FILE]"
// and, with explain set, "informersim explain NAME": the scenario's concept text, then its run.
// --json prints the run's complete record (package timeline, docs/run.schema.json) instead of
// the narration; --html also writes the run's timeline to FILE.
func runScenario(cmd string, args []string, stdout, stderr io.Writer, explain bool) int {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.Uint64("seed", 0, "replace the scenario's seed (default: the file's own)")
	policy := fs.String("policy", "", "replace the scheduling policy: random, fifo or pct")
	jsonOut := fs.Bool("json", false, "print the run's complete record as JSON (docs/run.schema.json) instead of the narration")
	htmlOut := fs.String("html", "", "also write the run's timeline, one self-contained HTML page, to this file")
	guided := fs.Bool("guided", false, "swarm the generate directives' fault ops as sweep --guided does (the seed picks the fault kinds)")
	rewrite := false
	if !explain {
		fs.BoolVar(&rewrite, "rewrite", false, "rewrite the file's expected blocks with this run's output (a scenario file, not a course name)")
	}
	// Flags may come before or after the scenario's name.
	pos, code := parseInterleaved(fs, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "informersim %s: expected one scenario (a file or a course name, see informersim list), got %d\n", cmd, len(pos))
		return 2
	}
	if *policy != "" {
		if _, err := sim.ParsePolicy(*policy); err != nil {
			fmt.Fprintf(stderr, "informersim %s: --policy: %v\n", cmd, err)
			return 2
		}
	}
	sc, isFile, err := findScenario(pos[0], explain)
	if err != nil {
		fmt.Fprintf(stderr, "informersim %s: %v\n", cmd, err)
		return 2
	}
	// The replay line names what the user typed: a file's path, or the course name.
	opts := scenarios.Options{Name: sc.Name, Policy: *policy, Swarm: *guided}
	if isFile {
		opts.Name = pos[0]
	}
	seedSet := false
	fs.Visit(func(f *flag.Flag) { seedSet = seedSet || f.Name == "seed" })
	if seedSet {
		opts.Seed = seed
	}
	// The expected blocks are the output of the file's own seed and policy: a run that replaces
	// either is not compared with them (and cannot rewrite them).
	replaced := seedSet || *policy != "" || *guided
	if rewrite && (!isFile || replaced) {
		fmt.Fprintf(stderr, "informersim %s: --rewrite rewrites a scenario file's expected blocks with its own seed and policy: give a file, without --seed or --policy\n", cmd)
		return 2
	}
	res, err := scenarios.Run(sc.Name, sc.Text, opts)
	if err != nil {
		fmt.Fprintf(stderr, "informersim %s: %v\n", cmd, err)
		return 2
	}
	if *jsonOut || *htmlOut != "" {
		if code := writeRecord(cmd, sc, res, replaced, *jsonOut, *htmlOut, stdout, stderr); code != 0 {
			return code
		}
	}
	if !*jsonOut {
		if err := writeNarration(stdout, sc, res, explain); err != nil {
			return 1
		}
	}
	code = 0
	switch {
	case rewrite:
		text, err := res.Rewrite(sc.Text)
		if err == nil && text != sc.Text {
			err = os.WriteFile(pos[0], []byte(text), 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "informersim %s: --rewrite: %v\n", cmd, err)
			return 1
		}
		fmt.Fprintf(stderr, "informersim %s: rewrote %s: %d of %d expected blocks changed\n", cmd, pos[0], len(res.Mismatches()), len(res.Steps))
	case replaced:
		fmt.Fprintf(stderr, "informersim %s: expected blocks not compared: --seed or --policy replaces the file's own\n", cmd)
	default:
		if m := res.Mismatches(); len(m) > 0 {
			fmt.Fprintf(stderr, "informersim %s: %s: %d of %d expected blocks differ from this run (renew them with: informersim run %s --rewrite)\n%s",
				cmd, opts.Name, len(m), len(res.Steps), opts.Name, res.Diff())
			code = 1
		}
	}
	if res.Failure != nil {
		fmt.Fprintf(stderr, "informersim %s: %s failed: %v\nreplay: %s\n", cmd, sc.Name, res.Failure, res.Env.ReplayCommand())
		return 1
	}
	return code
}

// writeRecord writes the run's complete record: as a timeline page to htmlOut if set, as JSON to
// stdout if jsonOut. A run whose seed or policy replaced the file's own is recorded as not
// compared with the file's expected blocks, which belong to its own. It returns the exit code:
// 0, or 1 with the error on stderr.
func writeRecord(cmd string, sc scenarios.Scenario, res *scenarios.Result, replaced, jsonOut bool, htmlOut string, stdout, stderr io.Writer) int {
	rec, err := scenarios.RunRecord(sc, res)
	if err != nil {
		fmt.Fprintf(stderr, "informersim %s: %v\n", cmd, err)
		return 1
	}
	if replaced {
		rec.NotCompared()
	}
	if htmlOut != "" {
		if err := writeFile(htmlOut, rec.WriteHTML); err != nil {
			fmt.Fprintf(stderr, "informersim %s: --html: %v\n", cmd, err)
			return 1
		}
	}
	if jsonOut {
		if err := rec.WriteJSON(stdout); err != nil {
			fmt.Fprintf(stderr, "informersim %s: %v\n", cmd, err)
			return 1
		}
	}
	return 0
}

// writeNarration prints the run as text, in one write: the concept first when explaining, then
// the narration, the trace's hash and the hazards the run met.
func writeNarration(stdout io.Writer, sc scenarios.Scenario, res *scenarios.Result, explain bool) error {
	var b strings.Builder
	if explain {
		fmt.Fprintf(&b, "%s: %s\n\n%s\n\n", sc.Name, sc.Title, sc.Concept)
	}
	fmt.Fprintf(&b, "scenario %s seed=%d\n", sc.Name, res.Seed)
	b.WriteString(res.Narration())
	fmt.Fprintf(&b, "\ntrace sha256 %s\n", res.Hash)
	if w := res.Env.World(); w != nil {
		fmt.Fprintf(&b, "hazards: %s\n", world.CountHazards(w.Sim().Trace().Events()))
	}
	_, err := io.WriteString(stdout, b.String())
	return err
}

// writeFile writes a file through write, and reports the first error of writing or closing it.
func writeFile(name string, write func(io.Writer) error) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// course is "informersim course --html DIR": the course as a site, one page per lesson and an
// index.
func course(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("course", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("html", "", "write the course as a site into this directory (index.html and one page per lesson)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 || *dir == "" {
		fmt.Fprintf(stderr, "informersim course: expected --html DIR and nothing else, got %q\n", args)
		return 2
	}
	files, err := scenarios.WriteCourse(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "informersim course: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %d pages into %s; open %s\n", len(files), *dir, filepath.Join(*dir, "index.html"))
	return 0
}

// findScenario reads a scenario file (isFile), or finds a course scenario by name (explain:
// course only).
func findScenario(arg string, courseOnly bool) (sc scenarios.Scenario, isFile bool, err error) {
	if !courseOnly {
		if b, err := os.ReadFile(arg); err == nil {
			name := strings.TrimSuffix(filepath.Base(arg), filepath.Ext(arg))
			return scenarios.NewScenario(name, string(b)), true, nil
		}
	}
	if sc, ok := scenarios.Lookup(arg); ok {
		return sc, false, nil
	}
	return scenarios.Scenario{}, false, fmt.Errorf("no scenario %q: not a readable file, nor a course name (see informersim list)", arg)
}

// list prints the course, one scenario a line.
func list(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "informersim list: unexpected arguments %q\n", args)
		return 2
	}
	var b strings.Builder
	for _, sc := range scenarios.Course() {
		fmt.Fprintf(&b, "%-34s %s\n", sc.Name, sc.Title)
	}
	_, err := io.WriteString(stdout, b.String())
	if err != nil {
		return 1
	}
	return 0
}
