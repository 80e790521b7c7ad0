package browser

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/oracle"
	"github.com/informersim/informersim/sim/world/worldtest"
	rec "github.com/informersim/informersim/timeline/record"
)

// failingSpecTimeline runs what a user's failing spec runs (a world with its oracles attached
// whose cache is set back behind the informer's back, so cache-before-notify fails at the
// handler's call) through worldtest.HaveConverged, and returns the page its failure message
// names, the record embedded in it and the world's topology.
func failingSpecTimeline(t *testing.T) (string, *rec.Run, world.Topology) {
	t.Helper()
	// The page stays with the screenshots, as a test artifact.
	t.Setenv(worldtest.ArtifactsEnv, artifacts(t))
	w, err := world.NewFromConfig(sim.Config{Seed: 2, Repro: "informersim run failing-spec --seed 2"}, fakeapi.Config{},
		world.Config{DefaultResource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := oracle.Attach(w)
	if err != nil {
		t.Fatal(err)
	}
	_ = w.Apply(world.Op{Kind: world.OpCreate, Name: "a"})
	inf, _ := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
	hd, err := w.AddHandler(inf, "h1", nil, world.HandlerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = inf.Start()
	if err := w.RunUntilConverged(time.Minute); err != nil {
		t.Fatal(err)
	}
	store := inf.SharedIndexInformer().GetStore()
	old, _, _ := store.GetByKey("default/a")
	_ = w.Apply(world.Op{Kind: world.OpUpdate, Name: "a"})
	if err := w.Sim().RunUntil(func() bool { return hd.Buffered() > 0 }, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := store.Update(old); err != nil {
		t.Fatal(err)
	}
	m := worldtest.HaveConverged(time.Minute)
	if ok, err := m.Match(h); ok || err != nil {
		t.Fatalf("Match = %v, %v; want a violation", ok, err)
	}
	msg := m.FailureMessage(h)
	found := regexp.MustCompile(`(?m)^replay: [^\n]*\ntimeline: (\S+)\n`).FindStringSubmatch(msg)
	if found == nil {
		t.Fatalf("the failure message names no timeline after its replay line:\n%s", msg)
	}
	page, err := os.ReadFile(found[1])
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(page), `<script id="run-data" type="application/json">`)
	embedded, _, ok := strings.Cut(rest, "</script>")
	if !ok {
		t.Fatalf("%s embeds no record", found[1])
	}
	var r rec.Run
	if err := json.Unmarshal([]byte(embedded), &r); err != nil {
		t.Fatal(err)
	}
	return found[1], &r, w.Topology()
}

// Goal: the timeline a failing spec writes (a world run: no directives) is a record the schema
// accepts, event by event, and a page that works in Chromium as a scenario's does: nothing
// loaded, no console error, a lane per component, every event drawn with its mark, the
// violating event among them, one object followed, the violation labelled.
func TestFailingSpecTimeline(t *testing.T) {
	path, r, topo := failingSpecTimeline(t)
	if len(r.Directives) != 0 || r.Failure == nil || r.Failure.Event == nil {
		t.Fatalf("record: %d directives, failure %+v; want a world run's, its violating event marked", len(r.Directives), r.Failure)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(b), `<script id="run-data" type="application/json">`)
	embedded, _, _ := strings.Cut(rest, "</script>")
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(embedded))
	if err != nil {
		t.Fatal(err)
	}
	if err := compileSchema(t, "").Validate(inst); err != nil {
		t.Errorf("the failing spec's record does not match the schema: %v", err)
	}
	event := compileSchema(t, "#/$defs/event")
	for i, e := range inst.(map[string]any)["events"].([]any) {
		if err := event.Validate(e); err != nil {
			t.Errorf("event %d: %v", i, err)
		}
	}

	br := newBrowser(t)
	br.open(t, path, "svg.tl-svg rect.ev")
	br.screenshot(t, "timeline-failing-spec")
	checkTimeline(t, br, r, topo, "default/a")
	br.screenshot(t, "timeline-failing-spec-following")
	// The violating event is drawn with its mark, in the handler's lane.
	marked := eval[[]string](t, br, `Array.from(document.querySelectorAll('rect.ev.mark-violation')).map(r => r.parentNode.dataset.lane + ' ' + r.dataset.seq)`)
	if len(marked) != 1 || marked[0] != fmt.Sprintf("inf1/h1 %d", *r.Failure.Event) {
		t.Errorf("violation marks %q, want inf1/h1's event %d", marked, *r.Failure.Event)
	}
}
