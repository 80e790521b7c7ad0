// Command informersim runs simulations. Until the informer world exists, "demo" runs the engine's
// toy world (producers, consumers, timers and a ticker racing over a shared buffer) and prints
// the run header and the narrated trace.
//
//	informersim demo [-seed=N] [-policy=random|fifo|pct] [-json]
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/simtest"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: informersim demo [-seed=N] [-policy=random|fifo|pct] [-json]

demo   run a short toy simulation and print its header and narrated trace
`

// run is main without the process: it returns the exit code (0 ok, 1 run failed, 2 bad usage).
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	switch args[0] {
	case "demo":
		return demo(args[1:], stdout, stderr)
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
	jsonOut := fs.Bool("json", false, "print the trace as JSON Lines instead of text")
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
		Repro:  fmt.Sprintf("go run ./cmd/informersim demo -seed=%d -policy=%s", *seed, policy),
	}
	toy := simtest.ToyConfig{
		Producers: 2, Consumers: 2, Timers: 2, MaxBufferItems: 3, ItemsPerProducer: 3,
		FiresPerTimer: 2, MaxTimerDelay: 50 * time.Millisecond, TickerPeriod: 40 * time.Millisecond,
		Ticks: 2, Narrate: true,
	}
	s, _, runErr := simtest.Run(cfg, toy)
	if s == nil {
		fmt.Fprintf(stderr, "informersim demo: %v\n", runErr)
		return 1
	}
	if *jsonOut {
		err = s.Trace().WriteJSON(stdout)
	} else {
		fmt.Fprint(stdout, s.Header(), "\n")
		err = s.Trace().WriteText(stdout)
		if err == nil {
			_, err = fmt.Fprintf(stdout, "\n%d steps, %d events, sim time %s\ntrace sha256 %s\n",
				s.StepCount(), s.Trace().Len(), sim.FormatSimTime(s.Now()), s.Trace().Hash())
		}
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
