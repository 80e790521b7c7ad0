package scenarios_test

import (
	"testing"

	"github.com/informersim/informersim/scenarios"
	"github.com/informersim/informersim/sim/world"
)

// Goal: CountHazards finds in the course's runs the hazards each lesson is about (05-tombstone:
// a 410, a relist, one tombstone delivered, a watch ended; 16-stale-replica: a restart...) and
// none in the first lesson: a hazard the narration stops showing, or a counter that stops
// counting, fails this test.
func TestHazardsOfTheCourse(t *testing.T) {
	// The hazards each of these lessons is about.
	lessons := map[string][]string{
		"05-tombstone":             {world.HazardWatchExpired, world.HazardRelist, world.HazardTombstone, world.HazardWatchEnd},
		"07-bookmarks":             {world.HazardBookmark, world.HazardCompaction},
		"08-resync":                {world.HazardResync},
		"10-late-join":             {world.HazardLateJoin},
		"11-slow-handler":          {world.HazardSlowHandler},
		"16-stale-replica":         {world.HazardRestart, world.HazardStaleList},
		"32-shrinking-and-hazards": {world.HazardWatchExpired, world.HazardRelist, world.HazardTombstone, world.HazardWatchEnd},
		"03-clean-watch-close":     {world.HazardWatchEnd},
	}
	total := world.Hazards{}
	for _, sc := range scenarios.Course() {
		res, err := scenarios.Run(sc.Name, sc.Text, scenarios.Options{})
		if err != nil {
			t.Fatal(err)
		}
		h := world.CountHazards(res.Env.World().Sim().Trace().Events())
		total.Add(h)
		t.Logf("%-34s %s", sc.Name, h)
		for _, k := range lessons[sc.Name] {
			if h[k] == 0 {
				t.Errorf("%s: no %s counted: %s", sc.Name, k, h)
			}
		}
		if sc.Name == "05-tombstone" && h[world.HazardTombstone] != 1 {
			t.Errorf("05-tombstone delivers one tombstone, counted %d", h[world.HazardTombstone])
		}
		if sc.Name == "01-list-then-watch" && len(h) != 0 {
			t.Errorf("01-list-then-watch has no hazard, counted %s", h)
		}
	}
	t.Logf("course: %s", total)
}
