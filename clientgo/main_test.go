package clientgo_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/informersim/informersim/internal/invariant"
)

// TestMain runs the tests with the thorough checks of the simulation (invariant.Thorough: the
// engine verifies its cached actors at every step), benchmarks without.
func TestMain(m *testing.M) {
	invariant.ThoroughUnlessBenchmarking()
	m.Run()
}

// failsInChild runs t's test again in a child process of the test binary, with env=1 in its
// environment (the test's child branch, which ends the process), and fails t unless the child
// failed with every one of want in its output.
func failsInChild(t *testing.T, env string, want ...string) {
	t.Helper()
	failsInChildWith(t, env, "1", want...)
}

// failsInChildWith is failsInChild with env set to value.
func failsInChildWith(t *testing.T, env, value string, want ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.timeout=120s")
	cmd.Env = append(os.Environ(), env+"="+value)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the child process passed:\n%s", out)
	}
	for _, w := range want {
		if !strings.Contains(string(out), w) {
			t.Fatalf("the child process's output lacks %q:\n%s", w, out)
		}
	}
}
