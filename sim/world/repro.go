package world

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// SeedEnv is the environment variable that replays one seed: when it is set, Seeds returns only
// that seed, so a failing seed of a sweep runs alone, with the same trace. Every failing run's
// repro line (Repro) sets it.
const SeedEnv = "INFORMERSIM_SEED"

// Seeds returns the seeds a sweep should run: first, first+1, ..., first+n-1; or, when
// $INFORMERSIM_SEED is set and not empty, that one seed alone (the replay of a failure). A value
// that is not a decimal uint64 is an error.
func Seeds(first, n uint64) ([]uint64, error) {
	if v := os.Getenv(SeedEnv); v != "" {
		seed, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("world: Seeds: %s=%q is not a seed (a decimal uint64)", SeedEnv, v)
		}
		return []uint64{seed}, nil
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = first + uint64(i)
	}
	return out, nil
}

// Repro returns the one line that replays a run of seed, printed with every error of the run
// (sim.Config.Repro): under go test it is
//
//	INFORMERSIM_SEED=42 go test -run '^TestX$' ./pkg/dir
//
// with the -run pattern (and Ginkgo's -ginkgo.focus) of the current test binary and the package
// directory relative to the module root; a test that takes its seeds from Seeds then runs that
// seed alone. Outside go test it names the seed: "world.New(42, ...) (INFORMERSIM_SEED=42)".
func Repro(seed uint64) string {
	env := SeedEnv + "=" + strconv.FormatUint(seed, 10)
	run := flag.Lookup("test.run")
	if run == nil {
		return fmt.Sprintf("world.New(%d, ...) (%s)", seed, env)
	}
	var b strings.Builder
	b.WriteString(env + " go test")
	if p := run.Value.String(); p != "" {
		b.WriteString(" -run " + shellQuote(p))
	}
	if f := flag.Lookup("ginkgo.focus"); f != nil {
		if v := f.Value.String(); v != "" && v != "[]" {
			b.WriteString(" -ginkgo.focus " + shellQuote(strings.Trim(v, "[]")))
		}
	}
	b.WriteString(" " + packageDir())
	return b.String()
}

// packageDir is the test's working directory (its package) relative to the module root, "./x/y",
// or "." when it cannot tell.
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil || rel == "." {
				return "."
			}
			return "./" + filepath.ToSlash(rel)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "."
		}
		dir = parent
	}
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
