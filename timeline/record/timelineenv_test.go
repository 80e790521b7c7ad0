package record_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/timeline/record"
)

// Goal: INFORMERSIM_TIMELINE=off stops a failing run from writing its page (the line says so),
// a wrong value is named with the values it takes and writes nothing either, and unset the page
// is written as before. Method: a run whose user check fails, explained three ways, each into an
// artifacts directory of its own.
func TestTimelineEnvTurnsThePageOff(t *testing.T) {
	failing := func() (*world.World, error) {
		w, err := world.New(1, world.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AddCheck("never", func() error { return os.ErrInvalid }); err != nil {
			t.Fatal(err)
		}
		return w, w.RunUntilConverged(time.Minute)
	}
	for _, c := range []struct {
		value, line string
		written     bool
	}{
		{"off", "timeline: not written (INFORMERSIM_TIMELINE=off)\n", false},
		{"no", "timeline: not written (INFORMERSIM_TIMELINE=\"no\": want off, or unset to write it)\n", false},
		{"", "timeline: ", true},
	} {
		dir := t.TempDir()
		t.Setenv(record.ArtifactsEnv, dir)
		t.Setenv(record.TimelineEnv, c.value)
		w, err := failing()
		if err == nil {
			t.Fatal("the run with a failing check passed")
		}
		msg := record.Explain(w, err)
		if !strings.Contains(msg, c.line) {
			t.Errorf("%s=%q: the explanation lacks %q:\n%s", record.TimelineEnv, c.value, c.line, msg)
		}
		entries, _ := os.ReadDir(dir)
		if written := len(entries) > 0; written != c.written {
			t.Errorf("%s=%q: a page written: %v, want %v (%s)", record.TimelineEnv, c.value, written, c.written, msg)
		}
	}
}
