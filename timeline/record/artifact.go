package record

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/oracle"
)

// A failed run's timeline as a file, for the hosts that report failures: worldtest's matchers
// and clientgo's harness name it next to the replay line.

// ArtifactsEnv names the environment variable that gives the directory a failing spec writes
// its run's timeline to (created if missing); unset or empty, it is os.TempDir().
const ArtifactsEnv = "INFORMERSIM_ARTIFACTS"

// TimelineEnv names the environment variable that turns off the timeline a failing run writes
// by itself (WithTimeline, Explain: worldtest's matchers, clientgo's harness): "off" writes no
// page, and the failure's line says "timeline: not written (INFORMERSIM_TIMELINE=off)"; unset
// or empty, every failing run writes one. Long sweeps that fail on purpose set it, so the
// temporary directory does not fill with pages. WriteFile, asked directly, always writes.
const TimelineEnv = "INFORMERSIM_TIMELINE"

// timelineOff says whether TimelineEnv turns the automatic page off, or why its value is wrong.
func timelineOff() (bool, error) {
	switch v := os.Getenv(TimelineEnv); v {
	case "":
		return false, nil
	case "off":
		return true, nil
	default:
		return true, fmt.Errorf("%s=%q: want off, or unset to write it", TimelineEnv, v)
	}
}

// Path returns the file WriteFile writes w's run to: informersim-SEED-HASH.html in
// the artifacts directory (ArtifactsEnv), HASH the first 12 hex digits of the trace's hash, so
// two runs of one suite never share a file and the same run always gets the same one.
func Path(w *world.World) (string, error) {
	if w == nil {
		return "", errors.New("record: Path: nil *world.World")
	}
	dir := os.Getenv(ArtifactsEnv)
	if dir == "" {
		dir = os.TempDir()
	}
	s := w.Sim()
	hash := s.Trace().Hash()
	return filepath.Join(dir, fmt.Sprintf("informersim-%d-%s.html", s.Seed(), hash[:min(12, len(hash))])), nil
}

// WriteFile writes w's run as one self-contained HTML page (a lane
// per component, every kept trace event on simulated time, the event at which failure's
// *world.Violation was found marked, the verdicts of the attached oracles) to Path(w)
// and returns the path. The page is a pure function of the run: the same seed gives the same
// bytes.
func WriteFile(w *world.World, failure error, verdicts ...oracle.Verdict) (string, error) {
	return WriteFileFrom(w, Source{Verdicts: verdicts, Failure: failure})
}

// WriteFileFrom is WriteFile with the record's source given: its Scenario.Title names the page
// (a spec's name; "" is the test the replay command runs, TitleFromRepro), its Report is what the
// host printed for the failure.
func WriteFileFrom(w *world.World, src Source) (string, error) {
	path, err := Path(w)
	if err != nil {
		return "", err
	}
	if src.Scenario.Title == "" {
		src.Scenario.Title = TitleFromRepro(w.Sim().Config().Repro)
	}
	r, err := FromWorld(w, src)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := r.WriteHTML(&b); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return "", err
	}
	return path, nil
}

// runPattern finds the test a replay command runs: go test's -run pattern, and a Ginkgo focus.
var (
	runPattern   = regexp.MustCompile(`-run[= ]'?\^?([^'$\s]+)\$?'?`)
	regexQuoted  = regexp.MustCompile(`\\(.)`)
	focusPattern = regexp.MustCompile(`-ginkgo\.focus='\(\^\| \)(.*)\$'`)
)

// TitleFromRepro names a world's run from its replay command: the spec a Ginkgo focus selects,
// else the test go test's -run selects, else "a world's run".
func TitleFromRepro(repro string) string {
	if m := focusPattern.FindStringSubmatch(repro); m != nil {
		return regexQuoted.ReplaceAllString(strings.ReplaceAll(m[1], `'\''`, "'"), "$1")
	}
	if m := runPattern.FindStringSubmatch(repro); m != nil {
		return m[1]
	}
	return "a world's run"
}

// Explain is World.Explain(err) with the run's timeline written (WriteFile) and its path
// on the line after the replay command: what to print for a failed run outside an assertion,
// e.g. in a seed loop. A nil err renders "" and writes nothing.
func Explain(w *world.World, err error) string {
	if w == nil || err == nil {
		return ""
	}
	return WithTimeline(w.Explain(err), w, err, nil)
}

// WithTimeline writes the run's timeline and names it ("timeline: PATH") right after msg's
// replay line, or at its end when it has none. A timeline that cannot be written, or that
// TimelineEnv turns off, never fails the spec on its own: the line says why instead. The page's failure report is msg.
func WithTimeline(msg string, w *world.World, failure error, verdicts []oracle.Verdict) string {
	return WithTimelineFrom(msg, w, Source{Failure: failure, Verdicts: verdicts})
}

// WithTimelineFrom is WithTimeline with the record's source given (its title: the spec's name);
// an empty src.Report is msg.
func WithTimelineFrom(msg string, w *world.World, src Source) string {
	if src.Report == "" {
		src.Report = msg
	}
	line := ""
	if off, err := timelineOff(); off {
		why := TimelineEnv + "=off"
		if err != nil {
			why = err.Error()
		}
		line = fmt.Sprintf("timeline: not written (%s)\n", why)
	} else if path, err := WriteFileFrom(w, src); err != nil {
		line = fmt.Sprintf("timeline: not written (%v)\n", err)
	} else {
		line = "timeline: " + path + "\n"
	}
	at := len(msg)
	if i := strings.Index(msg, "\nreplay: "); i >= 0 {
		if j := strings.IndexByte(msg[i+1:], '\n'); j >= 0 {
			at = i + 1 + j + 1
		}
	} else if strings.HasPrefix(msg, "replay: ") {
		if j := strings.IndexByte(msg, '\n'); j >= 0 {
			at = j + 1
		}
	}
	if at == len(msg) && at > 0 && msg[at-1] != '\n' {
		line = "\n" + line
	}
	return msg[:at] + line + msg[at:]
}
