package clientgo

import (
	"fmt"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo/internal/introspect"
	"github.com/informersim/informersim/clientgo/internal/readonly"
	"github.com/informersim/informersim/internal/fastpath"
	"github.com/informersim/informersim/internal/goseed"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
)

// What makes a run replay from its seed beyond what the world decides: the deterministic mode
// (package internal/goseed), in which the test binary's Go runtime takes the run's seed, and
// what a binary built without it says about the runs it cannot promise.

// seededRuns lets one run at a time go on in a binary built in the deterministic mode.
var seededRuns sync.Mutex

// A seededRun is what the deterministic mode gives one run: the reports of client-go's
// mutation detector (nil when the detector is off) and the harness's answers to the detector's
// comparisons (nil when it compares by itself).
type seededRun struct {
	reports     *goseed.Reports
	comparisons *readonly.DetectorComparisons
}

// seedRuntime readies the runtime of a binary built in the deterministic mode for a run of seed
// and returns what the mode gives the run and what puts the runtime back. The runtime holds one seed per
// process, so runs take turns. The run's goroutines share one processor (GOMAXPROCS 1), so that
// their order is the scheduler's, which the mode makes a function of what they did. The
// collector must not run during a run (it stops goroutines to scan their stacks and puts them
// back in its own order), so it is held off from the first run of a go test function to its end
// (t's cleanup), and a full collection, which is over when it returns, is made before a run once
// the heap has doubled since the last.
func seedRuntime(t *testing.T, seed uint64) (mode *seededRun, restore func()) {
	seededRuns.Lock()
	holdCollector(t)
	procs := goruntime.GOMAXPROCS(1)
	reports, err := runReports()
	if err != nil {
		reports = nil // the detector stays as it was: off, or panicking
	}
	detector := introspect.MutationDetectionEnabled()
	introspect.SetMutationDetectionEnabled(reports != nil && os.Getenv(EnvMutationDetector) != "off")
	mode = &seededRun{reports: reports}
	if introspect.MutationDetectionEnabled() && fastpath.Use(fastpath.DetectorSnapshots) {
		mode.comparisons = readonly.NewDetectorComparisons()
		goseed.AnswerDeepEqual(mode.comparisons.DeepEqual)
	}
	goseed.Begin(seed, reports)
	return mode, func() {
		goseed.End()
		goseed.AnswerDeepEqual(nil)
		introspect.SetMutationDetectionEnabled(detector)
		goruntime.GOMAXPROCS(procs)
		seededRuns.Unlock()
	}
}

// collector is the state of holdCollector (under seededRuns).
var collector struct {
	held    bool
	percent int    // the GC percent before it was held off
	nextGC  uint64 // the heap's size that makes the next run collect first
}

// minCollectEvery is the least the heap grows between two collections while runs go on.
const minCollectEvery = 64 << 20

func holdCollector(t *testing.T) {
	if !collector.held {
		collector.held = true
		collector.percent = debug.SetGCPercent(-1)
		t.Cleanup(func() {
			seededRuns.Lock()
			defer seededRuns.Unlock()
			if collector.held {
				collector.held = false
				debug.SetGCPercent(collector.percent)
			}
		})
	} else if heapBytes() < collector.nextGC {
		return
	}
	goruntime.GC()
	live := heapBytes()
	collector.nextGC = max(2*live, live+minCollectEvery)
}

// heapBytes is the memory the heap's objects take, live or not yet collected.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// EnvMutationDetector set to "off" keeps client-go's cache mutation detector off for the runs in
// the deterministic mode (it is on by default there): the detector deep-copies every object an
// informer hands out and compares them every second, which is most of the mode's cost
// (docs/determinism.md); off, a controller that changes a cached object is not caught.
const EnvMutationDetector = "INFORMERSIM_MUTATION_DETECTOR"

// runReports is the process's file of the detector's reports, shared by its runs (one at a
// time), made at the first run in the mode.
var runReports = sync.OnceValues(goseed.NewReports)

// replayNote says, first in a failing run's report, whether its replay line is sure to
// reproduce it.
func replayNote(rep *Report) string {
	// The notes never say "seed": the report states it once, on its own line.
	switch n := rep.MapOrdered(); {
	case rep.Seeded && rep.Diagnostics.AddressKeyedRanges > 0:
		return fmt.Sprintf("Replay: likely, not guaranteed: this run was made in the deterministic mode, but its goroutines ranged %d times over maps whose order follows their keys' addresses (%s), which no seed decides; a replay may take another path if that order mattered.\n", rep.Diagnostics.AddressKeyedRanges, strings.Join(rep.Diagnostics.AddressKeyedMaps, ", "))
	case rep.Seeded:
		return "Replay: guaranteed: this run was made in the deterministic mode, where the run decides the Go runtime's map order and the controller's goroutines' turns.\n"
	case n > 0:
		return fmt.Sprintf("Replay: not guaranteed: client-go handed the controller's handlers objects in a Go map's order %d times in this run (%d unordered batches, %d resync wakes), which the run cannot decide outside the deterministic mode, so a replay may take another path from the first of them on. Run the test in the deterministic mode, where the run decides them: %s\n", n, rep.Diagnostics.UnorderedBatches, rep.Diagnostics.ResyncWakes, DeterminismCommand)
	default:
		return fmt.Sprintf("Replay: likely, not guaranteed: nothing was counted that the run could not decide, but outside the deterministic mode Go's scheduler and map order are not the run's to decide (%s).\n", DeterminismCommand)
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

type tally struct {
	runs, unordered int
	// batches and resyncs sum the runs' Diagnostics.UnorderedBatches and ResyncWakes; asked is
	// what INFORMERSIM_SEED asked for, and otherSeeds the first seeds run that were not it.
	batches, resyncs int
	asked            string
	otherSeeds       []uint64
}

// noteReplay counts rep for t's summary, registering the summary with t's first run. The summary
// says what no seed decided, and the runs whose seed was not the one INFORMERSIM_SEED asked for
// (a test with seeds of its own, whose replay line would not run the failing seed alone).
func noteReplay(t *testing.T, rep *Report) {
	if t == nil || rep == nil {
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
				t.Logf("clientgo: %d of %d runs of %s were handed objects in an order no seed decides (Report.MapOrdered: %d resync wakes, which an informer's resync period other than 0 makes, and %d unordered batches of watch-list starts and relists): their seeds may not replay. In the deterministic mode the seed decides it: %s",
					c.unordered, c.runs, t.Name(), c.resyncs, c.batches, DeterminismCommand)
			}
			if len(c.otherSeeds) > 0 {
				t.Logf("clientgo: %s=%s asks for one seed, but %s ran seeds %v too: a replay line runs only its seed when the test takes its seeds from world.Seeds",
					world.SeedEnv, c.asked, t.Name(), c.otherSeeds)
			}
		})
	}
	if !rep.Seeded {
		c.runs++
		if rep.MapOrdered() > 0 {
			c.unordered++
		}
	}
	c.batches += rep.Diagnostics.UnorderedBatches
	c.resyncs += rep.Diagnostics.ResyncWakes
	if asked := os.Getenv(world.SeedEnv); asked != "" && asked != strconv.FormatUint(rep.Seed, 10) && len(c.otherSeeds) < 10 {
		c.asked = asked
		c.otherSeeds = append(c.otherSeeds, rep.Seed)
	}
}

// Read-only objects under a Main, in the deterministic mode: the harness turns client-go's
// cache mutation detector on for the run (the informers a controller's main builds keep a copy
// of each object they hand out and compare it every second of the bubble's clock), and the
// overlay's runtime turns the detector's panic, which would end the test process, into a line in
// the run's reports and the end of the detector's goroutine. The driver reads the reports once a
// second of the bubble's clock and fails the run with the read-only-objects oracle's violation.

// detectorCheckEvery is how often the driver reads the reports: as often as the detector compares.
const detectorCheckEvery = time.Second

// takeDetectorReports turns what the detector reported into the read-only-objects violation
// that ends the run (driver only).
func (b *bubble) takeDetectorReports(now time.Duration) {
	if b.mode == nil || b.mode.reports == nil || now-b.reportsReadAt < detectorCheckEvery {
		return
	}
	b.reportsReadAt = now
	lines := b.mode.reports.Take()
	if len(lines) == 0 {
		return
	}
	typ := strings.TrimSuffix(strings.TrimPrefix(lines[0], "cache "), " modified")
	b.s.Emit(ControllerActor, "read-only-violation", sim.F("informer", typ), sim.F("by", "client-go's mutation detector"))
	msg := fmt.Sprintf("the controller changed an object of type %s which an informer it built handed out to its handlers or lister: client-go's cache mutation detector found it differing from its copy (the two versions, 'CACHE %s[i] ALTERED!', are on standard output); copy an object before changing it (DeepCopy)",
		typ, typ)
	b.fail(b.violation(world.OracleReadOnlyObjects, msg))
}

// fired is how often the hazard named name fired in the run.
func (r *Report) fired(name string) int {
	for _, h := range r.Hazards {
		if h.Name == name {
			return h.Fired
		}
	}
	return 0
}

// ReplayGuaranteed reports whether the run's seed replays it: the run was made in the
// deterministic mode (docs/determinism.md) and ranged over no map ordered by addresses.
func (r *Report) ReplayGuaranteed() bool { return r.Seeded && r.Diagnostics.AddressKeyedRanges == 0 }

// addressKeyedRanges reads, at the end of a run in the deterministic mode, the ranges the run
// made over maps ordered by addresses (nothing outside the mode), leaving out those whose order
// reaches nothing: when every map type ranged is one of orderFree (and the runtime named them
// all), there were none that count.
func (m *seededRun) addressKeyedRanges() (int, []string) {
	if m == nil {
		return 0, nil
	}
	n, types, _ := goseed.AddressKeyedRanges()
	if len(types) < goseed.AddressKeyedTypesNamed {
		free := true
		for _, t := range types {
			if orderFree[t] == "" {
				free = false
			}
		}
		if free {
			return 0, nil
		}
	}
	return int(n), types
}

// orderFree are the map types ordered by addresses whose ranges, read in their source at the
// pinned versions, let no order out: each is a cache filled once per type in a process (so the
// first run of a process ranges over it, later runs not), or sorted before use.
var orderFree = map[string]string{
	"map[reflect.Type]*kube.typePlan":       "kube's plans from unstructured: a build's new plans stored one by one in a sync.Map",
	"map[reflect.Type]*kube.toPlan":         "kube's plans to unstructured: the same",
	"map[reflect.Type]*readonly.memPlan":    "readonly's memory plans: the same",
	"map[unsafe.Pointer]fakeapi.lentRecord": "fakeapi's lent objects: sorted by when they were lent before they are checked",
	"value.reflectCacheMap":                 "structured-merge-diff v6 value's reflect cache: copied into a new map on a write",
	"runtime.fieldsCacheMap":                "apimachinery runtime's converter field cache: copied into a new map on a write",
}

// snapshotAnswers is how many of the detector's comparisons the harness answered (nil: none).
func (m *seededRun) snapshotAnswers() int64 {
	if m == nil || m.comparisons == nil {
		return 0
	}
	return m.comparisons.Answered()
}
