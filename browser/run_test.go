package browser

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/informersim/informersim/scenarios"
	"github.com/informersim/informersim/sim/world"
	rec "github.com/informersim/informersim/timeline/record"
)

// failingScenario is a run that fails on purpose (a handler that changes the cache's objects),
// kept with package timeline's tests.
const failingScenario = "../scenarios/testdata/record/mutating-handler.txt"

// record runs a scenario and returns its record and topology.
func record(t *testing.T, sc scenarios.Scenario) (*rec.Run, world.Topology) {
	t.Helper()
	res, err := scenarios.Run(sc.Name, sc.Text, scenarios.Options{Name: sc.Name})
	if err != nil {
		t.Fatalf("%s: %v", sc.Name, err)
	}
	r, err := scenarios.RunRecord(sc, res)
	if err != nil {
		t.Fatalf("%s: %v", sc.Name, err)
	}
	return r, res.Env.Topology()
}

func lesson(t *testing.T, name string) scenarios.Scenario {
	t.Helper()
	sc, ok := scenarios.Lookup(name)
	if !ok {
		t.Fatalf("no lesson %s", name)
	}
	return sc
}

func failing(t *testing.T) scenarios.Scenario {
	t.Helper()
	b, err := os.ReadFile(failingScenario)
	if err != nil {
		t.Fatal(err)
	}
	return scenarios.NewScenario("mutating-handler", string(b))
}

// failingAtDelivery is the failing run with the apiserver checking each delivery: the violation
// is then found at the bad handler's own call, an event of the trace.
func failingAtDelivery(t *testing.T) scenarios.Scenario {
	t.Helper()
	sc := failing(t)
	text := strings.Replace(sc.Text, "world seed=3\n", "world seed=3 check-each-delivery\n", 1)
	if text == sc.Text {
		t.Fatalf("%s: no world seed=3 line to add check-each-delivery to", failingScenario)
	}
	return scenarios.NewScenario("mutating-handler-at-delivery", text)
}

// artifacts is where the browser test leaves its screenshots and pages (gitignored), or
// $INFORMERSIM_ARTIFACTS.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("INFORMERSIM_ARTIFACTS")
	if dir == "" {
		dir = "artifacts"
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

type timelineRun = rec.Run

// decodeRecord returns the record a page embeds (its run-data script).
func decodeRecord(t *testing.T, page string) *rec.Run {
	t.Helper()
	_, rest, _ := strings.Cut(page, `<script id="run-data" type="application/json">`)
	embedded, _, ok := strings.Cut(rest, "</script>")
	if !ok {
		t.Fatal("the page embeds no record")
	}
	var r rec.Run
	if err := json.Unmarshal([]byte(embedded), &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// chromedpEval runs a script in the page for its effect.
func chromedpEval(js string) chromedp.Action { return chromedp.Evaluate(js, nil) }
