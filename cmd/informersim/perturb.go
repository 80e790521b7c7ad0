package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/informersim/informersim/scenarios"
)

// perturb is "informersim perturb FILE|NAME [--kinds K,...] [--max-runs N]": a perturbation
// campaign in the style of Sieve over the scenario (scenarios.PerturbFile): its run must pass;
// then, before each of its ops, each perturbation once (the first informer restarted, a replica
// lagging from there on, the delete there unobserved), each a run of its own. The first that
// breaks an oracle or a check is reported on standard error and its run, shrunk, printed on
// standard output: exit 3. None: a summary and exit 0.
func perturb(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("perturb", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kinds := fs.String("kinds", strings.Join(scenarios.PerturbKinds(), ","), "the perturbations to try, comma-separated")
	maxRuns := fs.Int("max-runs", 0, "the most runs the shrink of a breaking run may spend (default 5000)")
	pos, code := parseInterleaved(fs, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "informersim perturb: expected one scenario (a file or a course name), got %d\n", len(pos))
		return 2
	}
	if *maxRuns < 0 {
		fmt.Fprintf(stderr, "informersim perturb: --max-runs %d: expected a positive number\n", *maxRuns)
		return 2
	}
	sc, isFile, err := findScenario(pos[0], false)
	if err != nil {
		fmt.Fprintf(stderr, "informersim perturb: %v\n", err)
		return 2
	}
	name := sc.Name
	if isFile {
		name = pos[0]
	}
	start := time.Now()
	rep, err := scenarios.PerturbFile(name, sc.Text, scenarios.PerturbOptions{Kinds: strings.Split(*kinds, ","),
		Shrink: scenarios.OpsShrinkOptions{MaxRuns: *maxRuns}})
	if err != nil {
		fmt.Fprintf(stderr, "informersim perturb: %v\n", err)
		return 2
	}
	took := time.Since(start).Round(time.Millisecond)
	if rep.Found == nil {
		fmt.Fprintf(stdout, "perturb %s: %d ops, %d perturbed runs (%d perturbations did not apply), none broke an oracle or a check (%v)\n",
			name, rep.Points, rep.Tried, rep.Skipped, took)
		return 0
	}
	msg, _, _ := strings.Cut(rep.Failure.Error(), "\n")
	fmt.Fprintf(stderr, "perturb %s: %s breaks it, after %d perturbed runs (%v): %s\n", name, rep.Found, rep.Tried, took, msg)
	if rep.Shrunk == nil {
		fmt.Fprintf(stderr, "not shrunk: %v\n", rep.ShrinkErr)
		return exitFailuresFound
	}
	fmt.Fprintf(stderr, "shrunk from %d ops to %d in %d runs\n", rep.Shrunk.Ops[0], rep.Shrunk.Ops[1], rep.Shrunk.Runs)
	if _, err := io.WriteString(stdout, rep.Shrunk.Text); err != nil {
		return 1
	}
	return exitFailuresFound
}
