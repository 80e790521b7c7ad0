package scenarios

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/timeline/record"
)

// A failing run of a controller hosted in Go (a fuzz input's, a generated workload's) cannot
// be a scenario file that runs the controller: the scenario language knows its own handlers,
// not the user's code. What it can be is the run's ops as a file (world seed=N, then each op
// after a run for the time since the previous one), which the user's own test replays against
// its controller (OpsOfFile), and which shrinks like any scenario file: ShrinkOps runs the
// shrinker's passes with the user's replay in place of Run.

// OpsReplay runs ops again against the controller the caller hosts: a fresh world of seed with
// the controller, the ops scheduled from time 0 (world.World.Script: each OpSleep moves the
// ones after it later), then run to convergence. It returns the run's failure, nil when it
// passes; the shrinker compares failures by FailureSignature.
type OpsReplay func(seed uint64, ops []world.Op) error

// OpsShrinkOptions describe a Go-hosted failing run for ShrinkOps.
type OpsShrinkOptions struct {
	// Name names the run in the file's header, e.g. the fuzz target and its input's hash.
	Name string
	// Controller says, in the header, which code the ops must run against (the file holds
	// only the world's ops), e.g. "FuzzUserController's keyTracker (INFORMERSIM_PLANT=tombstone)".
	Controller string
	// Replay is the line that replays the original failure (world.FuzzRepro's), for the header.
	Replay string
	// MaxRuns bounds the replays the shrink may spend (default 5000); see ShrinkOptions.
	MaxRuns int
}

// OpsFile writes the ops a generator issued (world.Generator.Ops, the Time of each counted
// from time 0) as a scenario file: header (a comment), "world seed=N", then each op after a
// "run for" for the time since the previous one, each with the expected block the file's own
// run prints (the ops without the Go controller: informersim run FILE passes on it). OpsOfFile
// reads it back.
func OpsFile(header string, seed uint64, ops []world.GeneratedOp) string {
	wd := Directive{Cmd: "world", Args: []datadriven.CmdArg{argOf("seed", strconv.FormatUint(seed, 10))}}
	for _, g := range ops {
		if g.Op.Client != "" { // a client fault: the file names its client, a stand-in when it runs alone
			wd.Args = append(wd.Args, argOf("client", g.Op.Client))
			break
		}
	}
	return withOutputs(header, append([]Directive{wd}, GeneratedDirectives(0, ops)...))
}

// withOutputs formats ds with header and, as expected blocks, what each directive prints when
// the file runs under informersim (the world's ops, without the Go controller), so that
// informersim run FILE passes on it and shows what the ops did; blocks stay empty if it does
// not run.
func withOutputs(header string, ds []Directive) string {
	var outputs []string
	if res, err := Run("ops", Format("", ds, nil), Options{}); err == nil && len(res.Steps) == len(ds) {
		for _, st := range res.Steps {
			outputs = append(outputs, st.Output)
		}
	}
	return Format(header, ds, outputs)
}

// OpsOfFile reads a file OpsFile or ShrinkOps wrote (or one written by hand in that form): its
// seed and its ops, with an OpSleep for each "run for", ready for OpsReplay. Any other
// directive is an error naming it: the file must say nothing the replay would not do.
func OpsOfFile(name, text string) (uint64, []world.Op, error) {
	ds, err := parseFile(name, text)
	if err != nil {
		return 0, nil, err
	}
	return opsOf(name, ds)
}

// parseFile reads a scenario file's directives without running them.
func parseFile(name, text string) ([]Directive, error) {
	var ds []Directive
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
			d, err := newDirective(td.Cmd, td.CmdArgs, td.Input)
			if err != nil {
				t.Fatalf("scenarios: %s: %s", position(name, td.Pos), strings.TrimPrefix(err.Error(), "scenarios: "))
			}
			ds = append(ds, d)
			return td.Expected
		})
	}()
	if tb.err != nil {
		return nil, tb.err
	}
	return ds, nil
}

// opsOf turns an ops file's directives into its seed and ops.
func opsOf(name string, ds []Directive) (uint64, []world.Op, error) {
	if len(ds) == 0 || ds[0].Cmd != "world" {
		return 0, nil, fmt.Errorf("scenarios: %s: an ops file starts with a world directive giving its seed", name)
	}
	v, ok := ds[0].arg("seed")
	seed, err := strconv.ParseUint(v, 10, 64)
	if !ok || err != nil {
		return 0, nil, fmt.Errorf("scenarios: %s: the world directive has no seed=N", name)
	}
	var ops []world.Op
	for _, d := range ds[1:] {
		switch {
		case d.Op != nil:
			ops = append(ops, *d.Op)
		case d.Cmd == "run" && len(d.Args) == 1 && d.Args[0].Key == "for" && len(d.Args[0].Vals) == 1:
			dur, err := time.ParseDuration(d.Args[0].Vals[0])
			if err != nil || dur < 0 {
				return 0, nil, fmt.Errorf("scenarios: %s: %q: not a duration", name, d.Line())
			}
			ops = append(ops, world.Op{Kind: world.OpSleep, Duration: dur})
		default:
			return 0, nil, fmt.Errorf("scenarios: %s: %q: an ops file holds only its world directive, ops and \"run for=D\" (the controller is the Go test's)", name, d.Line())
		}
	}
	return seed, ops, nil
}

// ShrinkOps shrinks a failing run of a Go-hosted controller, given as the seed of its world and
// the ops its generator issued (world.Generator.Ops, Time counted from time 0), to a small ops
// file failing the same way (FailureSignature) when replay runs it: the passes of Shrink (delta
// debugging over the ops, arguments dropped, pauses halved, objects renamed a, b, c...), each
// candidate run by replay. It is an error when replay of the ops as they are does not fail
// (the ops, replayed by world.Script, need not schedule exactly as the generator did: the
// error says so, and the original input still replays the failure), or fails otherwise than
// failure, the original run's failure.
func ShrinkOps(seed uint64, ops []world.GeneratedOp, failure error, replay OpsReplay, opts OpsShrinkOptions) (*Shrunk, error) {
	switch {
	case replay == nil:
		return nil, errors.New("scenarios: ShrinkOps: nil replay")
	case failure == nil:
		return nil, errors.New("scenarios: ShrinkOps: no failure to shrink to (the run passed)")
	case opts.MaxRuns < 0:
		return nil, fmt.Errorf("scenarios: ShrinkOps: MaxRuns %d is negative", opts.MaxRuns)
	}
	name := cmpOrString(opts.Name, "a Go-hosted run")
	s := &shrinker{name: name, sig: FailureSignature(failure), key: FailureObject(failure), maxRuns: cmpOr(opts.MaxRuns, defaultShrinkRuns)}
	s.replay = func(ds []Directive) error {
		seed, ops, err := opsOf(name, ds)
		if err != nil {
			return nil // a candidate that is no ops file (a dropped seed) does not fail
		}
		return replay(seed, ops)
	}
	parsed, err := parseFile(name, OpsFile("", seed, ops))
	if err != nil {
		return nil, err
	}
	out := &Shrunk{Failure: s.sig, Object: s.key}
	out.Directives[0], out.Ops[0] = len(parsed), countOps(parsed)
	first := replay(seed, opsOnly(parsed))
	if !s.same(first) {
		return nil, fmt.Errorf("scenarios: ShrinkOps %s: its %d ops, replayed, give %v, not %s: a generator's run and the same ops scheduled as a script may interleave differently; replay the original input instead", name, out.Ops[0], first, s.sig)
	}
	s.runs++
	ds, err := s.passes(parsed, out)
	if err != nil {
		return nil, err
	}
	out.Runs = s.runs
	out.Object = s.key
	if last := s.replay(ds); !s.same(last) {
		// Every accepted step was a failing replay, so only a replay that is not deterministic
		// gets here: say so rather than hand back a file that passes.
		return nil, fmt.Errorf("scenarios: ShrinkOps %s: the shrunk ops do not fail as their last accepted replay did (%v): the replay is not deterministic", name, last)
	}
	minimal := "no single op or argument can be removed, no pause halved, and it still fails so"
	if !out.Minimal {
		minimal = fmt.Sprintf("NOT minimal: the shrink stopped after %d runs (its budget)", s.runs)
	}
	header := fmt.Sprintf("%s, shrunk: fails with %s\n\nThe ops of a failing run of %s, which this file does not hold: replay them against it\n(scenarios.OpsOfFile, then the test's own world and world.Script). The original failure replays with:\n%s\nShrunk from %d ops to %d in %d runs; %s.\nRemoved: %s.",
		name, s.sig, cmpOrString(opts.Controller, "a controller hosted in Go"), cmpOrString(opts.Replay, "(no replay line given)"),
		out.Ops[0], out.Ops[1], s.runs, minimal, strings.Join(cmpOrSlice(out.Removed, []string{"nothing"}), ", "))
	out.Text = withOutputs(header, ds)
	return out, nil
}

// opsOnly is opsOf for a file known to be an ops file.
func opsOnly(ds []Directive) []world.Op {
	_, ops, _ := opsOf("", ds)
	return ops
}

func cmpOrString(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// WriteOpsFailure writes a failing Go-hosted run (a fuzz input's: seed, the generator's ops,
// the failure) as two files in the artifacts directory (record.ArtifactsEnv, where failed runs'
// timelines go; os.TempDir() when unset): the run's ops
// (OpsFile), and the ops shrunk by ShrinkOps with replay; their names are
// informersim-<opts.Name>.txt and informersim-<opts.Name>-shrunk.txt. It returns lines to add
// to the failure's message: both paths, and the shrink's ratio (ops before and after), or why
// there is no shrunk file. An error is one of writing the files.
func WriteOpsFailure(seed uint64, ops []world.GeneratedOp, failure error, replay OpsReplay, opts OpsShrinkOptions) (string, error) {
	dir := os.Getenv(record.ArtifactsEnv)
	if dir == "" {
		dir = os.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("scenarios: WriteOpsFailure: %w", err)
	}
	base := filepath.Join(dir, "informersim-"+fileSafe(cmpOrString(opts.Name, "ops")))
	header := fmt.Sprintf("%s: fails with %s\n\nThe ops of a failing run of %s, which this file does not hold: replay them against it\n(scenarios.OpsOfFile, then the test's own world and world.Script). The failure replays with:\n%s",
		cmpOrString(opts.Name, "a Go-hosted run"), FailureSignature(failure), cmpOrString(opts.Controller, "a controller hosted in Go"), cmpOrString(opts.Replay, "(no replay line given)"))
	if err := os.WriteFile(base+".txt", []byte(OpsFile(header, seed, ops)), 0o644); err != nil {
		return "", fmt.Errorf("scenarios: WriteOpsFailure: %w", err)
	}
	msg := fmt.Sprintf("the run's ops as a scenario file: %s", base+".txt")
	shrunk, err := ShrinkOps(seed, ops, failure, replay, opts)
	if err != nil {
		return msg + "\nnot shrunk: " + err.Error(), nil
	}
	if err := os.WriteFile(base+"-shrunk.txt", []byte(shrunk.Text), 0o644); err != nil {
		return "", fmt.Errorf("scenarios: WriteOpsFailure: %w", err)
	}
	return msg + fmt.Sprintf("\nshrunk from %d ops to %d (%d runs): %s", shrunk.Ops[0], shrunk.Ops[1], shrunk.Runs, base+"-shrunk.txt"), nil
}

// fileSafe keeps letters, digits, '-', '_' and '.' of s, and makes anything else '-'.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '-'
	}, s)
}
