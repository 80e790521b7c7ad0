package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/informersim/informersim/scenarios"
	"github.com/informersim/informersim/sim"
)

// shrink is "informersim shrink FILE|NAME [--seed N] [--policy P] [--max-runs N] [-o OUT]
// [--html FILE]": the failing run shrunk to a small scenario file failing the same way
// (scenarios.Shrink), written to standard output (or OUT); a summary (directives and ops before
// and after, runs, time) on standard error; with --html, the shrunk file's failing run drawn as
// a timeline (package timeline). A run that passes has nothing to shrink: exit 1.
func shrink(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("shrink", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.Uint64("seed", 0, "replace the scenario's seed (default: the file's own)")
	policy := fs.String("policy", "", "replace the scheduling policy: random, fifo or pct")
	maxRuns := fs.Int("max-runs", 0, "the most runs the shrink may spend (default 5000)")
	out := fs.String("o", "", "write the shrunk file here instead of standard output (its replay line names it)")
	htmlOut := fs.String("html", "", "also write the shrunk file's failing run as a timeline, one self-contained HTML page, to this file")
	pos, code := parseInterleaved(fs, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "informersim shrink: expected one scenario (a file or a course name), got %d\n", len(pos))
		return 2
	}
	if *policy != "" {
		if _, err := sim.ParsePolicy(*policy); err != nil {
			fmt.Fprintf(stderr, "informersim shrink: --policy: %v\n", err)
			return 2
		}
	}
	if *maxRuns < 0 {
		fmt.Fprintf(stderr, "informersim shrink: --max-runs %d: expected a positive number\n", *maxRuns)
		return 2
	}
	sc, isFile, err := findScenario(pos[0], false)
	if err != nil {
		fmt.Fprintf(stderr, "informersim shrink: %v\n", err)
		return 2
	}
	opts := scenarios.ShrinkOptions{Options: scenarios.Options{Name: sc.Name, Policy: *policy}, MaxRuns: *maxRuns, OutName: *out}
	if isFile {
		opts.Name = pos[0]
	}
	if opts.OutName == "" {
		opts.OutName = sc.Name + "-shrunk.txt"
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "seed" {
			opts.Seed = seed
		}
	})
	start := time.Now()
	sh, err := scenarios.Shrink(sc.Name, sc.Text, opts)
	if err != nil {
		fmt.Fprintf(stderr, "informersim shrink: %v\n", err)
		if strings.Contains(err.Error(), "the run passes") {
			return 1
		}
		return 2
	}
	if *out != "" {
		err = os.WriteFile(*out, []byte(sh.Text), 0o644)
	} else {
		_, err = io.WriteString(stdout, sh.Text)
	}
	if err != nil {
		fmt.Fprintf(stderr, "informersim shrink: %v\n", err)
		return 1
	}
	if *htmlOut != "" {
		if err := writeShrunkTimeline(*htmlOut, opts, sh.Text); err != nil {
			fmt.Fprintf(stderr, "informersim shrink: --html: %v\n", err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "informersim shrink: %s fails with %s: %d -> %d directives, %d -> %d ops, %d runs in %s",
		sc.Name, sh.Failure, sh.Directives[0], sh.Directives[1], sh.Ops[0], sh.Ops[1], sh.Runs, time.Since(start).Round(time.Millisecond))
	if !sh.Minimal {
		fmt.Fprint(stderr, " (NOT minimal: out of runs; raise --max-runs)")
	}
	fmt.Fprintln(stderr)
	return 0
}

// parseInterleaved parses flags that may come before or after the positional arguments; code
// is -1 to go on, else the exit code (0 for -h, 2 for a bad flag).
func parseInterleaved(fs *flag.FlagSet, args []string) (pos []string, code int) {
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, 0
			}
			return nil, 2
		}
		if fs.NArg() == 0 {
			return pos, -1
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// writeShrunkTimeline runs the shrunk file as its replay line would (its own seed and the
// shrink's policy) and writes that run's timeline to path. The run must fail again: a shrunk
// file that passes would be a shrinker's bug, reported rather than drawn.
func writeShrunkTimeline(path string, opts scenarios.ShrinkOptions, text string) error {
	sc := scenarios.NewScenario(strings.TrimSuffix(filepath.Base(opts.OutName), ".txt"), text)
	res, err := scenarios.Run(sc.Name, sc.Text, scenarios.Options{Name: opts.OutName, Policy: opts.Policy, Seed: opts.Seed})
	if err != nil {
		return err
	}
	if res.Failure == nil {
		return errors.New("the shrunk file's run passes: nothing to draw")
	}
	rec, err := scenarios.RunRecord(sc, res)
	if err != nil {
		return err
	}
	return writeFile(path, rec.WriteHTML)
}
