package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/informersim/informersim/internal/goseed"
)

// determinism writes the overlay of the deterministic mode for the Go toolchain that builds the
// tests and prints the environment assignments that put the go command into it, one a line, so
// that `env $(informersim determinism) go test ./...` runs a suite in the mode.
func determinism(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("determinism", flag.ContinueOnError)
	fs.SetOutput(stderr)
	goCmd := fs.String("go", "go", "the go command whose toolchain the overlay is written for")
	dir := fs.String("dir", "", "where to write the overlay (default: INFORMERSIM_OVERLAY_DIR, else the user's cache directory)")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: informersim determinism [--go PATH] [--dir DIR]

Writes the overlay of the Go standard library that puts the Go runtime's own random choices (map
order, select, the scheduling of goroutines during a run) under each run's seed, for the
toolchain of the go command, and prints the environment that builds tests with it:

  env $(informersim determinism) go test ./...

The first build of a test binary in the mode compiles the standard library and every dependency
again (minutes); later builds are cached.
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "informersim determinism: unexpected arguments %q\n", fs.Args())
		return 2
	}
	tc, err := goseed.FindToolchain(*goCmd)
	if err != nil {
		fmt.Fprintf(stderr, "informersim determinism: %v\n", err)
		return 1
	}
	if *dir == "" {
		if *dir, err = goseed.DefaultDir(); err != nil {
			fmt.Fprintf(stderr, "informersim determinism: %v\n", err)
			return 1
		}
	}
	overlay, err := goseed.Write(tc, *dir)
	if err != nil {
		fmt.Fprintf(stderr, "informersim determinism: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "GOFLAGS=-overlay=%s\n", overlay)
	return 0
}
