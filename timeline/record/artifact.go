package record

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/oracle"
)

// A failed run's timeline as a file, for the hosts that report failures: worldtest's matchers
// and clientgo's harness name it next to the replay line.

// ArtifactsEnv names the environment variable that gives the directory a failing spec writes
// its run's timeline to (created if missing); unset or empty, it is os.TempDir().
const ArtifactsEnv = "INFORMERSIM_ARTIFACTS"

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
	path, err := Path(w)
	if err != nil {
		return "", err
	}
	r, err := FromWorld(w, Source{Scenario: Scenario{Title: "a spec's run, drawn by worldtest"}, Verdicts: verdicts, Failure: failure})
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
// replay line, or at its end when it has none. A timeline that cannot be written never fails
// the spec on its own: the line says why instead.
func WithTimeline(msg string, w *world.World, failure error, verdicts []oracle.Verdict) string {
	line := ""
	if path, err := WriteFile(w, failure, verdicts...); err != nil {
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
