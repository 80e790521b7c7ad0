package clientgo

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/informersim/informersim/clientgo/internal/crhooks"
	"k8s.io/client-go/rest"
)

// TestHarnessDoesNotLinkControllerRuntime: a module testing client-go controllers only must not
// require controller-runtime, so package clientgo must not import it (clientgo/controllerruntime
// does).
func TestHarnessDoesNotLinkControllerRuntime(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "sigs.k8s.io/controller-runtime") {
			t.Errorf("package clientgo depends on %s", pkg)
		}
	}
}

// TestNameCollisionHint: a refused controller name says what to do, with and without
// clientgo/controllerruntime in the process.
func TestNameCollisionHint(t *testing.T) {
	saved := crhooks.ControllerNames
	defer func() { crhooks.ControllerNames = saved }()

	crhooks.ControllerNames = nil
	if hint := nameCollisionHint(); !strings.Contains(hint, `_ "github.com/informersim/informersim/clientgo/controllerruntime"`) {
		t.Errorf("without the package: hint %q does not name the import", hint)
	}
	crhooks.ControllerNames = fakeNames{}
	if hint := nameCollisionHint(); hint != "" {
		t.Errorf("with the package, one run: hint %q, want none", hint)
	}
	runsActive.Add(2)
	defer runsActive.Add(-2)
	if hint := nameCollisionHint(); !strings.Contains(hint, "SkipNameValidation") {
		t.Errorf("with the package, runs in parallel: hint %q does not name SkipNameValidation", hint)
	}
}

type fakeNames struct{}

func (fakeNames) Taken() map[string]bool  { return nil }
func (fakeNames) Release(map[string]bool) {}

// TestMissingControllerRuntimeImport: in a binary that links controller-runtime, Run without
// clientgo/controllerruntime fails at once, naming the import (this test binary links both: the
// hook is taken away for the test).
func TestMissingControllerRuntimeImport(t *testing.T) {
	if controllerRuntimeLinked() != crPresent {
		t.Fatal("this test binary links controller-runtime (the manager tests), and the scan did not see it")
	}
	saved := crhooks.ControllerNames
	defer func() { crhooks.ControllerNames = saved }()
	crhooks.ControllerNames = nil
	_, err := Run(t, Config{Seed: 1, Controller: Main(func(context.Context, *rest.Config) error { return nil })})
	if err == nil || !strings.Contains(err.Error(), `import _ "github.com/informersim/informersim/clientgo/controllerruntime"`) {
		t.Fatalf("Run: %v", err)
	}
}
