package world

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// SeedEnv is the environment variable that replays one seed: when it is set, Seeds returns only
// that seed, so a failing seed of a sweep runs alone, with the same trace. Every failing run's
// repro line (Repro) sets it.
const SeedEnv = "INFORMERSIM_SEED"

// Seeds returns the seeds a sweep should run: first, first+1, ..., first+n-1; or, when
// $INFORMERSIM_SEED is set and not empty, that one seed alone (the replay of a failure). A value
// that is not a decimal uint64 is an error, and so is n == 0: a sweep of no seeds would pass
// without checking anything.
func Seeds(first, n uint64) ([]uint64, error) {
	if v := os.Getenv(SeedEnv); v != "" {
		seed, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("world: Seeds: %s=%q is not a seed (a decimal uint64)", SeedEnv, v)
		}
		return []uint64{seed}, nil
	}
	if n == 0 {
		return nil, fmt.Errorf("world: Seeds: n is 0; a sweep of no seeds checks nothing")
	}
	if first+n-1 < first {
		return nil, fmt.Errorf("world: Seeds: %d seeds from %d run past the largest uint64", n, first)
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
// with the -run pattern of the current test binary and the package directory relative to the
// module root, then, when the binary was given Ginkgo focus flags, "-args -ginkgo.focus='...'"
// with each of them; a test that takes its seeds from Seeds then runs that seed alone. (Without a
// focus, a Ginkgo suite's replay runs every spec of the suite: those that take their seeds from
// Seeds run the one seed.) Outside go test it names the seed: "world.New(42, ...) (INFORMERSIM_SEED=42)".
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
	b.WriteString(" " + packageDir())
	if focus := ginkgoFocus(os.Args[1:]); len(focus) > 0 {
		// After -args, so that go test hands them to the test binary as they are: before the
		// package, go test would take a flag it does not know for one without a value.
		b.WriteString(" -args")
		for _, f := range focus {
			b.WriteString(" -ginkgo.focus=" + shellQuote(f))
		}
	}
	return b.String()
}

// TestRepro is Repro for the test or subtest named name (a *testing.T's Name(), e.g.
// "TestSweep/seed_42"): its -run pattern anchors each element of the name,
//
//	INFORMERSIM_SEED=42 go test -run '^TestSweep$/^seed_42$' ./pkg/dir
//
// so the replay runs the one subtest that failed, where Repro's pattern (the binary's own -run)
// runs every subtest it matched at that seed. Outside go test, or with an empty name, it is
// Repro(seed). Give it as sim.Config.Repro (world.NewFromConfig) or clientgo.Config.Repro.
func TestRepro(name string, seed uint64) string {
	if name == "" || flag.Lookup("test.run") == nil {
		return Repro(seed)
	}
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return SeedEnv + "=" + strconv.FormatUint(seed, 10) + " go test -run " + shellQuote(strings.Join(parts, "/")) + " " + packageDir()
}

// ginkgoFocus returns the values of every -ginkgo.focus flag among args, the test binary's
// arguments. It reads them from the arguments, not from flag.Lookup, because Ginkgo's flag
// value for a repeatable string flag prints as "" (its String method returns nothing).
func ginkgoFocus(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "ginkgo.focus" {
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				break
			}
			i++
			value = args[i]
		}
		if value != "" {
			out = append(out, value)
		}
	}
	return out
}

// packageDir is the test's working directory (its package) relative to the module root, "./x/y",
// or "." when it cannot tell. Every world asks (for its repro line), so the answer for the last
// working directory is kept: a sweep builds thousands of worlds in one directory, and finding
// the module root takes a file lookup per level. The working directory is read with
// syscall.Getwd, one system call: os.Getwd also looks up "." and $PWD (two more), about 20 µs a
// world, a fiftieth of a sweep's run.
func packageDir() string {
	wd, err := syscall.Getwd()
	if err != nil {
		return "."
	}
	lastPackageDir.Lock()
	defer lastPackageDir.Unlock()
	if lastPackageDir.wd != wd {
		lastPackageDir.wd, lastPackageDir.dir = wd, findPackageDir(wd)
	}
	return lastPackageDir.dir
}

// lastPackageDir is packageDir's last answer, for the working directory wd.
var lastPackageDir struct {
	sync.Mutex
	wd, dir string
}

// findPackageDir is wd relative to the root of the module it lies in, as packageDir says it.
func findPackageDir(wd string) string {
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
