package worldtest

import (
	"github.com/onsi/ginkgo/v2"

	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/oracle"
	"github.com/informersim/informersim/timeline/record"
)

// ArtifactsEnv names the environment variable that gives the directory a failing spec writes
// its run's timeline to (created if missing); unset or empty, it is os.TempDir().
const ArtifactsEnv = record.ArtifactsEnv

// TimelinePath returns the file WriteTimeline writes w's run to: informersim-SEED-HASH.html in
// the artifacts directory (ArtifactsEnv), HASH the first 12 hex digits of the trace's hash, so
// two runs of one suite never share a file and the same run always gets the same one.
func TimelinePath(w *world.World) (string, error) { return record.Path(w) }

// WriteTimeline writes w's run as one self-contained HTML page (package timeline/record: a lane
// per component, every kept trace event on simulated time, the event at which failure's
// *world.Violation was found marked, the verdicts of the attached oracles) to TimelinePath(w)
// and returns the path. The page is a pure function of the run: the same seed gives the same
// bytes.
func WriteTimeline(w *world.World, failure error, verdicts ...oracle.Verdict) (string, error) {
	return record.WriteFileFrom(w, source(failure, verdicts))
}

// Explain is World.Explain(err) with the run's timeline written (WriteTimeline) and its path
// on the line after the replay command: what to print for a failed run outside an assertion,
// e.g. in a seed loop. A nil err renders "" and writes nothing.
func Explain(w *world.World, err error) string {
	if w == nil || err == nil {
		return ""
	}
	return withTimeline(w.Explain(err), w, err, nil)
}

// withTimeline is record.WithTimeline: msg with the run's timeline written and named after its
// replay line.
func withTimeline(msg string, w *world.World, failure error, verdicts []oracle.Verdict) string {
	return record.WithTimelineFrom(msg, w, source(failure, verdicts))
}

// source is what a spec's page is drawn from besides the world: the page is titled with the
// current Ginkgo spec's full text (outside a spec, the test its replay command runs).
func source(failure error, verdicts []oracle.Verdict) record.Source {
	return record.Source{Scenario: record.Scenario{Title: ginkgo.CurrentSpecReport().FullText()}, Failure: failure, Verdicts: verdicts}
}
