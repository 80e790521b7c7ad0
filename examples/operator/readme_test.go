package operator_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	_ "github.com/informersim/informersim/clientgo/controllerruntime" // managers run again and again in this process
	"github.com/informersim/informersim/examples/operator"
	webappv1 "github.com/informersim/informersim/examples/operator/api/v1"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim/world"
)

// readmeRun is docs/controllers.md's controller-runtime block: the operator's Main, unchanged, in the world
// of one seed.
func readmeRun(t *testing.T, seed uint64) (*clientgo.Report, error) {
	return clientgo.Run(t, clientgo.Config{
		Seed:    seed,
		Cluster: clientgo.Cluster{API: fakeapi.Config{Resources: []fakeapi.Resource{clientgo.CustomResource(webappv1.GroupVersion.WithKind("WebApp"), "webapps", true, true)}}},
		Setup: func(w *world.World) error { // the workload and its faults, as world ops
			_, err := w.Script(100*time.Millisecond,
				webappOp(world.OpCreate, "web", 3, "nginx:1.27"), webappOp(world.OpCreate, "api", 1, "nginx:1.27"),
				world.Op{Kind: world.OpSleep, Duration: 2 * time.Second},
				world.Op{Kind: world.OpCloseWatches, Code: 410},
				world.Op{Kind: world.OpDelete, Resource: webappsGVR, Name: "api"}) // the collector deletes its Deployment
			return err
		},
		Controller: clientgo.Main(operator.Main), // ctrl.NewManager(cfg, ...), SetupWithManager, mgr.Start(ctx)
		Hazards:    clientgo.Hazards{Restarts: 1, Conflicts: 1},
		Phases:     clientgo.Phases{FaultsFor: time.Minute}, // then faults stop, and the run must converge:
		Checks: clientgo.Checks{
			Outcome: converged,              // every WebApp owns its Deployment; status says so
			OnWrite: generationsNeverGoBack, // checked on every write while it runs
		},
	})
}

// TestREADMEControllerRuntime runs docs/controllers.md's block (the controller-runtime guide,
// once the README's), and checks it is readmeRun's body verbatim, and that the guide's manager block is the operator's Main verbatim.
func TestREADMEControllerRuntime(t *testing.T) {
	rep, err := readmeRun(t, 1)
	if err != nil {
		t.Fatalf("%v\n%s", err, rep.Failure)
	}
	t.Logf("%v; hazards %v", rep, rep.Hazards)
	readme, err := os.ReadFile("../../docs/controllers.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ marker, file, before string }{
		{"<!-- controller-runtime-run -->", "readme_test.go", "func readmeRun(t *testing.T, seed uint64) (*clientgo.Report, error) {\n"},
		{"<!-- controller-runtime-main -->", "main.go", "func (o Options) Main(ctx context.Context, cfg *rest.Config) error {\n"},
	} {
		_, block, ok := strings.Cut(string(readme), c.marker+"\n```go\n")
		if !ok {
			t.Fatalf("docs/controllers.md has no %s block", c.marker)
		}
		block, _, ok = strings.Cut(block, "```")
		if !ok || strings.TrimSpace(block) == "" {
			t.Fatalf("docs/controllers.md's %s block does not end", c.marker)
		}
		src, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), c.before+block+"}\n") {
			t.Fatalf("docs/controllers.md's %s block is not the body of %s in %s:\n%s", c.marker, strings.TrimSpace(c.before), c.file, block)
		}
	}
}
