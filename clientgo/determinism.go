package clientgo

import (
	"fmt"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/informersim/informersim/internal/goseed"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// What makes a run replay from its seed beyond what the world decides: the deterministic mode
// (package internal/goseed), in which the test binary's Go runtime takes the run's seed, and
// what a binary built without it says about the runs it cannot promise.

// seededRuns lets one run at a time go on in a binary built in the deterministic mode.
var seededRuns sync.Mutex

// seedRuntime readies the runtime of a binary built in the deterministic mode for a run of seed,
// and returns what puts it back. The runtime holds one seed per process, so runs take turns.
// The run's goroutines share one processor (GOMAXPROCS 1), so that their order is the
// scheduler's, which the mode makes a function of what they did; and the collector does not run
// during the run (it collects before), since stopping goroutines to scan their stacks puts them
// back in its own order.
func seedRuntime(seed uint64) (restore func()) {
	seededRuns.Lock()
	goruntime.GC()
	gc := debug.SetGCPercent(-1)
	procs := goruntime.GOMAXPROCS(1)
	goseed.Begin(seed)
	detectorReports() // asked before the run, so that its report says which
	return func() {
		goseed.End()
		goruntime.GOMAXPROCS(procs)
		debug.SetGCPercent(gc)
		seededRuns.Unlock()
	}
}

// replayNote says, first in a failing run's report, whether its replay line is sure to
// reproduce it.
func replayNote(rep *Report) string {
	switch n := rep.MapOrdered(); {
	case rep.Seeded:
		return "Replay: guaranteed: this run was made in the deterministic mode, where the seed decides the Go runtime's map order and the controller's goroutines' turns.\n"
	case n > 0:
		return fmt.Sprintf("Replay: not guaranteed: client-go handed the controller's handlers objects in a Go map's order %d times in this run (%d unordered batches, %d resync wakes), which no seed decides outside the deterministic mode, so a replay of this seed may take another path from the first of them on. Run the test in the deterministic mode, where the seed decides them: %s\n", n, rep.UnorderedBatches, rep.ResyncWakes, DeterminismCommand)
	default:
		return fmt.Sprintf("Replay: likely, not guaranteed: nothing was counted in an order no seed decides, but outside the deterministic mode Go's scheduler and map order are not the seed's (%s).\n", DeterminismCommand)
	}
}

// DeterminismCommand is how a test runs in the deterministic mode, in which every run replays
// from its seed (package clientgo's contract).
const DeterminismCommand = "env $(informersim determinism) go test ..."

// unorderedTally counts, per go test function, the runs made outside the deterministic mode
// whose Report counted orders no seed decides, and says so once, when the test ends.
var unorderedTally = struct {
	sync.Mutex
	runs map[*testing.T]*tally
}{runs: map[*testing.T]*tally{}}

type tally struct{ runs, unordered int }

// noteReplay counts rep for t's summary, registering the summary with t's first run.
func noteReplay(t *testing.T, rep *Report) {
	if t == nil || rep == nil || rep.Seeded {
		return
	}
	unorderedTally.Lock()
	defer unorderedTally.Unlock()
	c, ok := unorderedTally.runs[t]
	if !ok {
		c = &tally{}
		unorderedTally.runs[t] = c
		t.Cleanup(func() {
			unorderedTally.Lock()
			defer unorderedTally.Unlock()
			delete(unorderedTally.runs, t)
			if c.unordered > 0 {
				t.Logf("clientgo: %d of %d runs of %s were handed objects in an order no seed decides (Report.MapOrdered): their seeds may not replay. In the deterministic mode the seed decides it: %s", c.unordered, c.runs, t.Name(), DeterminismCommand)
			}
		})
	}
	c.runs++
	if rep.MapOrdered() > 0 {
		c.unordered++
	}
}

// Read-only objects under Config.Main, in the deterministic mode: the overlay makes client-go's
// cache mutation detector report a changed object through utilruntime.HandleError during a run
// instead of panicking the process (package goseed), and the harness turns the detector on for
// the runs (the overlay makes every informer built during a run have one): the informers a
// controller's main builds keep a copy of each object they hand out and compare it every second
// of the bubble's clock. A report fails the run going on with the read-only-objects oracle's
// violation, at the driver's next turn.

// seededBubble is the run going on in the deterministic mode (one at a time).
var seededBubble atomic.Pointer[bubble]

// detectorProbe is set while detectorReports asks the detector.
var detectorProbe struct {
	sync.Mutex
	on, reported bool
}

// cacheModified takes an error the detector reported (false for any other error): it goes to
// the run going on, or to the probe.
func cacheModified(msg string) bool {
	if !strings.HasPrefix(msg, goseed.CacheModifiedPrefix) {
		return false
	}
	detectorProbe.Lock()
	probing := detectorProbe.on
	if probing {
		detectorProbe.reported = true
	}
	detectorProbe.Unlock()
	if b := seededBubble.Load(); b != nil && !probing {
		b.detectorMu.Lock()
		b.detectorReports = append(b.detectorReports, strings.TrimPrefix(msg, goseed.CacheModifiedPrefix))
		b.detectorMu.Unlock()
		b.woken.Store(true)
	}
	return true
}

var detectorOnce = sync.OnceValue(probeDetector)

// detectorReports reports whether the linked client-go's detector reports instead of panicking
// (its version was patched by the overlay), asking it once: a detector given an object changes
// it after, and compares. A run of a version left unpatched says so (Report.String).
func detectorReports() bool { return detectorOnce() }

func probeDetector() (reports bool) {
	d := cache.NewCacheMutationDetector("informersim-probe") // in a run: on when patched
	compare, ok := d.(interface{ CompareObjects() })
	if !ok {
		return false
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "probe", Name: "probe"}}
	d.AddObject(cm)
	cm.Data = map[string]string{"changed": "after it was handed out"}
	detectorProbe.Lock()
	detectorProbe.on, detectorProbe.reported = true, false
	detectorProbe.Unlock()
	// The detector prints the two versions of a changed object to standard output: not this one.
	stdout := os.Stdout
	if null, err := os.Open(os.DevNull); err == nil {
		os.Stdout = null
		defer null.Close()
	}
	defer func() {
		os.Stdout = stdout
		if recover() != nil {
			reports = false // an unpatched detector panics
		}
		detectorProbe.Lock()
		detectorProbe.on = false
		detectorProbe.Unlock()
	}()
	compare.CompareObjects()
	detectorProbe.Lock()
	defer detectorProbe.Unlock()
	return detectorProbe.reported
}

// takeDetectorReports turns what the detector reported since the last turn into the
// read-only-objects violation that ends the run (driver only).
func (b *bubble) takeDetectorReports() {
	b.detectorMu.Lock()
	reports := b.detectorReports
	b.detectorReports = nil
	b.detectorMu.Unlock()
	if len(reports) == 0 {
		return
	}
	r := reports[0]
	typ, keys, _ := strings.Cut(r, ": ")
	b.s.Emit(ControllerActor, "read-only-violation", sim.F("informer", typ), sim.F("key", keys), sim.F("by", "client-go's mutation detector"))
	msg := fmt.Sprintf("the controller changed %s %s, which an informer of %s it built handed out to its handlers or lister (client-go's cache mutation detector found it at %s, comparing its copy; its two versions are on standard output): copy an object before changing it (DeepCopy)",
		typ, keys, typ, sim.FormatSimTime(b.s.Now()))
	b.fail(b.violation(world.OracleReadOnlyObjects, msg))
}
