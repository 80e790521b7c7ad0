// Command informersim runs simulations. "run" runs a scenario file or a course scenario (the
// course is embedded, so the binary needs no source tree), "list" prints the course, "explain"
// prints a scenario's concept then its run. "demo" runs a short world: a fake apiserver and one
// informer with two handlers, a few writes, a clean watch drop (re-watch), a 410 while changes
// are missed (relist with a tombstone), a late handler join, and the convergence check; it
// prints the run header and the narrated trace.
//
//	informersim run FILE|NAME [--seed N] [--policy random|fifo|pct] [--json] [--html FILE] [--rewrite]
//	informersim shrink FILE|NAME [--seed N] [--policy random|fifo|pct] [--max-runs N] [-o OUT] [--html FILE]
//	informersim list
//	informersim explain NAME [--html FILE]
//	informersim course --html DIR
//	informersim demo [--seed N] [--policy random|fifo|pct] [--json]
//	informersim determinism [--go PATH]
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
)

func main() {
	// Run by the kube-apiserver or etcd script envtest-assets writes, the binary is that
	// stand-in.
	if code, ok := standIn(os.Args); ok {
		os.Exit(code)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage:
  informersim run FILE|NAME [--seed N] [--policy random|fifo|pct] [--guided] [--json] [--html FILE] [--rewrite]
  informersim shrink FILE|NAME [--seed N] [--policy random|fifo|pct] [--max-runs N] [-o OUT] [--html FILE]
  informersim sweep FILE|NAME --seeds A:B [--shard i/n] [--procs N] [--guided] [--json]
  informersim merge [--json] SHARD.jsonl...
  informersim perturb FILE|NAME [--kinds restart,stale,unobserved] [--max-runs N]
  informersim list
  informersim explain NAME [--seed N] [--policy random|fifo|pct] [--html FILE]
  informersim course --html DIR
  informersim demo [--seed N] [--policy random|fifo|pct] [--json]
  informersim serve [flags]
  informersim envtest-assets [-dir=DIR] [-kubectl=PATH]
  informersim determinism [--go PATH]

run      run a scenario file, or a course scenario by name, and print its narrated trace
         (--json: the run's complete record, docs/run.schema.json; --html FILE: also write
         its timeline, one self-contained page); exits 1 when an oracle is violated or an
         expected block of the file differs from the run (a diff on stderr; --rewrite renews
         a file's blocks instead; --seed and --policy skip the comparison)
shrink   shrink a failing run to a small scenario file failing the same way (on stdout, or
         -o OUT), with a comment saying what was removed; --html FILE draws its failing run;
         exit 1 if the run passes
sweep    run a scenario once per seed of [A, B) (or shard i of n of them): failing seeds, a
         summary by oracle and the hazards reached and never reached; exit 3 when a seed
         failed; a progress bar on a terminal
merge    merge the shards' sweep --json outputs into the unsharded sweep's
perturb  a Sieve-style campaign: the scenario run again once per op and perturbation (a
         restart there, a lagging replica from there, the delete there unobserved); the
         first perturbation that breaks an oracle or a check, its run shrunk on stdout;
         exit 3 when one breaks it
list     print the course, in order
explain  print a course scenario's concept, then its run with the captions (--html as run)
course   write the course as a site: one page per lesson and an index (--html DIR)
demo     run a short informer simulation and print its header and narrated trace
serve    serve a fake apiserver's Kubernetes API over HTTP (informersim serve -h; in a binary
         built with -tags serve, which links k8s.io/api)
envtest-assets  write the directory controller-runtime's envtest takes in KUBEBUILDER_ASSETS
         (informersim's kube-apiserver and etcd stand-ins, the machine's kubectl) and print
         its path: KUBEBUILDER_ASSETS=$(informersim envtest-assets) go test ./... (-tags serve)
determinism  write the Go runtime overlay of the deterministic mode for the installed Go and
         print the environment that builds tests in it: env $(informersim determinism) go test ./...
`

// run is main without the process: it returns the exit code (0 ok, 1 run failed, 2 bad usage).
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	switch args[0] {
	case "run":
		return runScenario("run", args[1:], stdout, stderr, false)
	case "sweep":
		return sweep(args[1:], stdout, stderr)
	case "merge":
		return merge(args[1:], stdout, stderr)
	case "shrink":
		return shrink(args[1:], stdout, stderr)
	case "perturb":
		return perturb(args[1:], stdout, stderr)
	case "list":
		return list(args[1:], stdout, stderr)
	case "explain":
		return runScenario("explain", args[1:], stdout, stderr, true)
	case "course":
		return course(args[1:], stdout, stderr)
	case "demo":
		return demo(args[1:], stdout, stderr)
	case "serve":
		return serve(args[1:], stdout, stderr)
	case "envtest-assets":
		return envtestAssets(args[1:], stdout, stderr)
	case "determinism":
		return determinism(args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "informersim: unknown command %q\n%s", args[0], usage)
		return 2
	}
}

func demo(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.Uint64("seed", 1, "the seed that determines the run")
	policyName := fs.String("policy", "random", "scheduling policy: random, fifo or pct")
	jsonOut := fs.Bool("json", false, "print the full trace as JSON Lines instead of the narration")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "informersim demo: unexpected arguments %q\n", fs.Args())
		return 2
	}
	policy, err := sim.ParsePolicy(*policyName)
	if err != nil {
		fmt.Fprintf(stderr, "informersim demo: -policy: %v\n", err)
		return 2
	}
	cfg := sim.Config{
		Seed:   *seed,
		Policy: policy,
		Repro:  fmt.Sprintf("cd cmd/informersim && go run . demo -seed=%d -policy=%s", *seed, policy),
	}
	w, hs, runErr := demoWorld(cfg)
	if w == nil {
		fmt.Fprintf(stderr, "informersim demo: %v\n", runErr)
		return 1
	}
	s := w.Sim()
	if *jsonOut {
		err = s.Trace().WriteJSON(stdout)
	} else {
		var b strings.Builder
		b.WriteString(s.Header())
		b.WriteString("\n")
		b.WriteString(sim.Narrate(s.Trace().Events()))
		b.WriteString("\n")
		for _, h := range hs {
			fmt.Fprintf(&b, "%s saw %s\n", h.Actor(), strings.Join(h.Deliveries().Strings(), " "))
		}
		if runErr == nil {
			fmt.Fprintf(&b, "converged: the cache and every handler's view equal the apiserver at rv=%d\n", w.Server().Revision())
		}
		fmt.Fprintf(&b, "%d steps, %d events, sim time %s\ntrace sha256 %s\n",
			s.StepCount(), s.Trace().Len(), sim.FormatSimTime(s.Now()), s.Trace().Hash())
		_, err = io.WriteString(stdout, b.String())
	}
	if err != nil {
		fmt.Fprintf(stderr, "informersim demo: %v\n", err)
		return 1
	}
	if runErr != nil {
		fmt.Fprintf(stderr, "informersim demo: %v\n", runErr)
		return 1
	}
	return 0
}

// demoWorld builds and runs the demo: pods a and b exist; informer inf1 with handlers h1 and h2
// syncs; at 1s a is updated and c created; at 2s every watch is closed cleanly (a re-watch, no
// list); at 3s b is updated; at 4s the watch gets a 410 while c is deleted and a updated (the
// relist delivers a tombstone for c); at 8s handler h3 joins late and gets the cache as initial
// adds; at 9s d is created. Then the world must converge.
func demoWorld(cfg sim.Config) (*world.World, []*world.Handler, error) {
	w, err := world.NewFromConfig(cfg, fakeapi.Config{}, world.Config{})
	if err != nil {
		return nil, nil, err
	}
	op := func(k world.OpKind, name string) world.Op { return world.Op{Kind: k, Name: name} }
	for _, name := range []string{"a", "b"} {
		if err := w.Apply(op(world.OpCreate, name)); err != nil {
			return nil, nil, err
		}
	}
	inf, err := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
	if err != nil {
		return nil, nil, err
	}
	var hs []*world.Handler
	for _, name := range []string{"h1", "h2"} {
		h, err := w.AddHandler(inf, name, nil, world.HandlerOptions{})
		if err != nil {
			return nil, nil, err
		}
		hs = append(hs, h)
	}
	if err := inf.Start(); err != nil {
		return nil, nil, err
	}
	sleep := func(d time.Duration) world.Op { return world.Op{Kind: world.OpSleep, Duration: d} }
	if _, err := w.Script(time.Second,
		op(world.OpUpdate, "a"), op(world.OpCreate, "c"), sleep(time.Second),
		world.Op{Kind: world.OpCloseWatches}, sleep(time.Second),
		op(world.OpUpdate, "b"), sleep(time.Second),
		world.Op{Kind: world.OpCloseWatches, Code: 410}, op(world.OpDelete, "c"), op(world.OpUpdate, "a"), sleep(5*time.Second),
		op(world.OpCreate, "d")); err != nil {
		return nil, nil, err
	}
	var joinErr error
	if _, err := w.After(8*time.Second, "test", "join", func() {
		h, err := w.AddHandler(inf, "h3", nil, world.HandlerOptions{})
		if err != nil {
			joinErr = err
			return
		}
		hs = append(hs, h)
	}); err != nil {
		return nil, nil, err
	}
	err = w.RunUntilConverged(time.Minute)
	return w, hs, errors.Join(joinErr, err)
}
