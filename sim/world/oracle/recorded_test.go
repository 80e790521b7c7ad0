package oracle_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/oracle"
)

// The tombstones oracle over recorded runs, a second test beside the hand-built traces: a real
// world's run (a 410 while a is deleted, so the relist hands the handler a tombstone) passes,
// and the same trace changed as a broken informer would have written it fails, in each way a
// tombstone can go missing or wrong.
func TestTombstonesOverRecordedRuns(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4, 5} {
		w, err := world.New(seed, world.Config{DefaultResource: configMaps})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"a", "b"} {
			if err := w.Apply(world.Op{Kind: world.OpCreate, Name: n}); err != nil {
				t.Fatal(err)
			}
		}
		inf, err := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.AddHandler(inf, "h1", nil, world.HandlerOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := inf.Start(); err != nil {
			t.Fatal(err)
		}
		if err := w.RunUntilConverged(time.Minute); err != nil {
			t.Fatal(err)
		}
		for _, op := range []world.Op{{Kind: world.OpCloseWatches, Code: 410}, {Kind: world.OpDelete, Name: "a"}} {
			if err := w.Apply(op); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.RunUntilConverged(time.Minute); err != nil {
			t.Fatal(err)
		}
		evs := w.Sim().Trace().Events()
		if v, err := oracle.CheckTrace(evs, oracle.Tombstones); err != nil || v != nil {
			t.Fatalf("seed %d: the recorded run: %v, %v", seed, v, err)
		}
		// The relist's tombstone for a, as the queue buffered it.
		at := slices.IndexFunc(evs, func(e sim.Event) bool {
			return e.Actor == "inf1/queue" && e.Kind == "buffer" && strings.Contains(e.String(), "obj=tomb(default/a@")
		})
		if at < 0 {
			t.Fatalf("seed %d: the run has no tombstone for default/a:\n%s", seed, sim.Narrate(evs))
		}
		for _, c := range []struct {
			name string
			edit func(e sim.Event) []sim.Event
			want string
		}{
			{"a plain delete instead of the tombstone", func(e sim.Event) []sim.Event {
				return []sim.Event{withObj(e, strings.TrimSuffix(strings.TrimPrefix(obj(e), "tomb("), ")"))}
			}, "the relist deleted default/a@"},
			{"no delete at all", func(sim.Event) []sim.Event { return nil }, "dropped default/a@"},
			{"a tombstone of another state", func(e sim.Event) []sim.Event {
				return []sim.Event{withObj(e, "tomb(default/a@999)")}
			}, "but the last state the cache held was rv="},
			{"two tombstones", func(e sim.Event) []sim.Event { return []sim.Event{e, e} }, "second tombstone for default/a in one relist"},
		} {
			broken := append(append(slices.Clone(evs[:at]), c.edit(evs[at])...), evs[at+1:]...)
			v, err := oracle.CheckTrace(broken, oracle.Tombstones)
			if err != nil || v == nil || !strings.Contains(v.Message, c.want) {
				t.Errorf("seed %d, %s: got %v, %v; want a violation containing %q", seed, c.name, v, err, c.want)
			}
		}
	}
}

func obj(e sim.Event) string {
	for _, f := range e.Fields {
		if f.Key == "obj" {
			return f.Value
		}
	}
	return ""
}

// withObj returns e with its obj field set to v (a copy: the trace's events are not changed).
func withObj(e sim.Event, v string) sim.Event {
	e.Fields = slices.Clone(e.Fields)
	for i := range e.Fields {
		if e.Fields[i].Key == "obj" {
			e.Fields[i].Value = v
		}
	}
	return e
}
