package clientgo

import (
	"fmt"
	"strings"
	"time"

	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/sim"
)

// Report is what a run did: whether it replays, what it cost, what the harness did to the
// controller, and how it failed. What the harness counted along the way, to tell a run that
// replays from one that may not, is in Diagnostics.
type Report struct {
	Seed uint64
	// Hash is the SHA-256 of the trace's canonical text: the same seed gives the same hash.
	Hash string
	// Steps and SimTime are the sim's at the end.
	Steps   int64
	SimTime time.Duration
	// Seeded says whether the run was made in the deterministic mode (a test binary built with
	// the overlay `informersim determinism` prints): the Go runtime's map order, select choices
	// and the scheduling of the controller's goroutines were then the seed's, so the seed replays
	// the run, and Diagnostics.UnorderedBatches and ResyncWakes count nothing. Outside it, a run
	// with MapOrdered zero replays as far as the world can tell.
	Seeded bool
	// Hazards counts, for each hazard configured (Config.Hazards), how often it was armed and
	// how often it fired: a hazard armed but never fired is there with Fired 0.
	Hazards []HazardCount
	// Diagnostics are the harness's counters of the run.
	Diagnostics Diagnostics
	// Reconciles counts the controller's reconcile errors and requeues per key and names its
	// hot loops (Checks.HotLoop, reconciles.go), which envtest cannot see.
	Reconciles *ReconcileReport
	// Trace is the run's narrated trace (sim.Narrate): how two runs were compared (Hash is its
	// canonical text's), and what to read when a run surprises.
	Trace string
	// Failure is Run's error told for a person (world.World.Explain), "" when the run passed:
	// the seed and replay command once, and for an oracle's violation the history of the object
	// concerned (every event about it, from the apiserver to each handler) and the trace before
	// it; otherwise the end of the trace. Print it rather than the one-line error:
	// t.Fatal(rep.Failure). Its line after the replay command names the run's HTML timeline
	// (package timeline/record, written by record.Explain: a lane per component, the
	// violating event marked), in $INFORMERSIM_ARTIFACTS or the system's temporary directory.
	Failure string
}

// Diagnostics are what the harness counted in a run: the controller's calls, the watches it was
// served, what client-go handed over in an order no seed decides, what the control plane did.
type Diagnostics struct {
	// Calls is the number of calls of the controller served (requests, informer starts,
	// registrations).
	Calls int
	// ConcurrentCalls is the number of instants at which two or more goroutines of the
	// controller were blocked in calls at once (MaxConcurrent at most): their order was drawn
	// from the seed after sorting them by content. Ties counts identical calls among them, whose
	// callers the order cannot tell apart: a controller whose goroutines differ in more than
	// their work (a per-worker state) could then behave differently across runs of one seed.
	ConcurrentCalls, MaxConcurrent, Ties int
	// Streams counts the watches the world served to the controller's own informers (those it
	// built from the rest.Config: client-go's, generated, dynamic, metadata), by resource and
	// form, with the events delivered on them; WatchesServed() sums them up.
	Streams []StreamKind
	// WatchTimeoutsRedrawn counts the watches whose timeoutSeconds, drawn by client-go's
	// reflector from the process-wide math/rand, the world drew again from the seed.
	WatchTimeoutsRedrawn int
	// StaticRequests counts the discovery, version, OpenAPI and health requests, answered at
	// once with the front's fixed documents rather than at a step (static.go): not traced.
	StaticRequests int
	// UnorderedBatches counts what client-go handed the controller's handlers in an order no
	// seed decides, a Go map's: the watch-list starts that gave a reflector two objects or more
	// (see Config.WatchList), and the relists that found two objects or more of its cache gone
	// (their tombstones). A run with none replays from its seed as far as the world can tell;
	// one with some may differ between runs of the seed.
	UnorderedBatches int
	// ResyncWakes counts the instants at which the controller, woken by a timer of its own
	// (nothing of the world woke it), called the world a whole number of milliseconds after the
	// response to the last LIST of one of its informers holding two objects or more: the instants
	// of a reflector's resync (its timer starts with the LIST and fires every resync period). A
	// resync hands every object of the informer's cache to its handlers in the order of a Go
	// map, which no seed decides, and the world cannot see inside client-go's informers: it
	// counts the wakes that can be one (a workqueue's retry falls on such an instant only by
	// chance: the responses it follows arrive after latencies drawn to the nanosecond). A resync
	// whose workers were all busy starts no call at its instant and is not counted.
	ResyncWakes int
	// ClientGoMutationDetector says whether client-go's cache mutation detector was on for the
	// informers the controller built itself under a Main (client-go reads
	// KUBE_CACHE_MUTATION_DETECTOR=true once, at the process's start). Their objects are
	// client-go's, which the harness's read-only check cannot see (detector.go): off, a
	// controller that writes into a lister's object is caught only by what the change leads to;
	// on, client-go panics the process at the first changed object, and the harness has written
	// the run's seed and replay line to standard error as it started.
	ClientGoMutationDetector bool
	// DetectorSnapshotAnswers counts the detector's comparisons the harness answered from
	// snapshots of the objects' memory in the deterministic mode, with reflect.DeepEqual's
	// answer at a fraction of its cost (INFORMERSIM_PLAIN=detector-snapshots: none, each is
	// DeepEqual's). Zero with the detector on under a Main means the detector compared by itself.
	DetectorSnapshotAnswers int64
	// AddressKeyedRanges counts, in the deterministic mode, the ranges the run's goroutines made
	// over maps whose order follows the addresses of their keys (more than eight entries, keyed
	// by pointers, channels, interfaces or structs holding one), which no seed decides;
	// AddressKeyedMaps names the first of their types. A run with some replays only as far as
	// those orders did not matter (Report.ReplayGuaranteed is false).
	AddressKeyedRanges int
	AddressKeyedMaps   []string
	// MissingNamespaceWrites counts the world's own writes (Setup's Apply, Script and Generate
	// ops) that the apiserver refused because their namespace does not exist (kube-apiserver's
	// 404, see Cluster). Each is narrated in the trace, but a workload written into a namespace
	// nobody created does nothing, and a Checks.Outcome can pass on the empty world it leaves:
	// Setup creates the namespaces its ops write in (fakerest.EnsureNamespaces).
	MissingNamespaceWrites int
	// Webhooks is what the admission webhooks met (Cluster.Webhooks), nil without them: each
	// webhook fault with whether it fired.
	Webhooks *WebhookReport
	// ControlPlane is what kube-controller-manager's stand-ins did in the run (each component's
	// counters: the collector's deletes, the workload status writes...), nil when none ran
	// (Cluster.ControlPlane.Off).
	ControlPlane *ControlPlaneReport
}

// MapOrdered is the number of times client-go handed the controller's handlers several objects
// in a Go map's order (Diagnostics.UnorderedBatches plus ResyncWakes): zero means the run
// replays from its seed as far as the world can tell.
func (r *Report) MapOrdered() int { return r.Diagnostics.UnorderedBatches + r.Diagnostics.ResyncWakes }

// ControlPlaneReport is what the control plane's components did in a run.
type ControlPlaneReport struct {
	GarbageCollector, NamespaceController, WorkloadStatus, JobController controlplane.Stats
}

// String summarises it: "collector 2 deletes of 3 writes, namespace controller 0 deletes of 0
// writes, workload status 5 writes", with the refused writes when there were some, and the job
// controller's writes when it made some.
func (c *ControlPlaneReport) String() string {
	part := func(name string, s controlplane.Stats, deletes bool) string {
		out := fmt.Sprintf("%s %d writes", name, s.Writes)
		if deletes {
			out = fmt.Sprintf("%s %d deletes of %d writes", name, s.Deletes, s.Writes)
		}
		if s.Errors > 0 {
			out += fmt.Sprintf(" (%d refused)", s.Errors)
		}
		return out
	}
	s := part("collector", c.GarbageCollector, true) + ", " + part("namespace controller", c.NamespaceController, true) +
		", " + part("workload status", c.WorkloadStatus, false)
	if c.JobController.Scans > 0 {
		s += ", " + part("job controller", c.JobController, false)
	}
	return s
}

// String summarises the report on one line.
func (r *Report) String() string {
	d := &r.Diagnostics
	s := fmt.Sprintf("seed %d: %d steps, sim time %s, %d controller calls, %d instants with concurrent calls (max %d, %d ties), trace %s",
		r.Seed, r.Steps, sim.FormatSimTime(r.SimTime), d.Calls, d.ConcurrentCalls, d.MaxConcurrent, d.Ties, r.Hash[:16])
	if len(d.Streams) > 0 {
		s += fmt.Sprintf(", %d watches served over %d kinds, %d unordered batches, %d resync wakes", d.WatchesServed(), len(d.Streams), d.UnorderedBatches, d.ResyncWakes)
		if r.MapOrdered() > 0 {
			s += " (objects handed over in a Go map's order: a rerun of this seed may differ)"
		}
	}
	if len(r.Hazards) > 0 {
		s += fmt.Sprintf(", hazards fired/armed %v", r.Hazards)
	}
	if rc := r.Reconciles; rc != nil && (rc.Errors > 0 || rc.Requeues > 0 || rc.Unobserved != "") {
		s += ", reconciles: " + rc.String()
	}
	if d.Webhooks != nil {
		s += ", webhooks: " + d.Webhooks.String()
	}
	if d.ControlPlane == nil {
		s += ", no control plane"
	} else {
		s += ", control plane: " + d.ControlPlane.String()
	}
	if len(d.Streams) > 0 {
		if d.ClientGoMutationDetector {
			s += ", client-go's cache mutation detector on"
		} else {
			s += ", objects of client-go's informers not checked read-only (KUBE_CACHE_MUTATION_DETECTOR off)"
		}
	}
	if d.AddressKeyedRanges > 0 {
		s += fmt.Sprintf(", %d ranges over maps ordered by their keys' addresses (%s): a rerun of this seed may differ", d.AddressKeyedRanges, strings.Join(d.AddressKeyedMaps, ", "))
	}
	if d.MissingNamespaceWrites > 0 {
		s += fmt.Sprintf(", %d world writes refused: their namespace does not exist", d.MissingNamespaceWrites)
	}
	return s
}
