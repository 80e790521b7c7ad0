package clientgo

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing/synctest"
	"time"

	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Hazards are what the harness does to the controller during the safety phase (Phases.FaultsFor),
// besides the faults the world's Setup scripts: each count is how many times, at instants drawn
// from the seed (the "hazards" stream) in the safety phase, the hazard is armed. Each hazard is
// a client fault of the world (world.OpCrashRestart to OpHiddenChange, aimed at the client
// "controller", which the harness registers with world.World.AddClient): the harness scripts
// it as an op at its instant, so it is narrated in the trace, recorded among the world's ops
// (world.World.Ops), written out with a failing run's ops and dropped by the shrink when the
// failure does not need it; a Setup may script the same ops itself (a replayed file does). An
// armed hazard fires on the next occasion (a restart at once, a conflict at the controller's
// next update); Report.Hazards counts, for each hazard, how often it was armed and how often it
// actually fired, so a sweep that never exercised one shows it.
type Hazards struct {
	// Restarts crash-restarts the controller (crash-restart): its context is cancelled, its
	// requests fail from then on (a crashed process's connections are gone: "connection
	// refused"), its watches end, and under Constructor.New every informer its Env handed out
	// is stopped in the world (its handlers removed, never to run again: a process's caches
	// die with it). Once its goroutines have returned (Main's main; New's constructor, Run and
	// the goroutines its factories started), the harness calls Main again with a new
	// *rest.Config, or New with a new Env whose informers are new (named "deployments.apps~1"
	// after the first restart), and starts its factories and calls Run: a process starting
	// afresh, with empty caches and no memory, while the world went on (Sieve's intermediate
	// states, world.PerturbRestart: a restart mid-reconcile sees the half of a reconcile that
	// was written). A crashed life whose goroutines have not all returned restartGrace
	// (simulated) after its crash ends the process with a panic naming them, as the watchdog
	// does for a stuck run: they can never end, and the test could not. RestartAt adds restarts
	// at chosen instants (since the run's start), besides the Restarts drawn ones.
	Restarts  int
	RestartAt []time.Duration
	// StaleReads sends that many of the controller's LISTs served from a watch cache
	// (resourceVersion=0, as every informer's first LIST after a start) to the last replica
	// (stale-read), which lags StaleLag behind the others from the run's start (a lag-replica
	// op; zero means 10s): the informer starts from a past state of the world (time travel for
	// a controller that restarted), then its watch and later reads are routed as
	// Cluster.API.Routing says. A cluster of fewer than two replicas gets a second, the
	// lagging one (which RoutingPrimary, the default, never routes to; RoutingRoundRobin and
	// RoutingRandom do). Under Constructor.New the Env's informers' LISTs take them too (at the
	// step their Reflector sends one), besides those of the controller's clientsets.
	StaleReads int
	StaleLag   time.Duration
	// HiddenChanges deletes or updates (a draw) an object one of the controller's informers
	// holds (those its main built, or its current Env's) out of their sight (hidden-change):
	// Sieve's unobserved state, world.PerturbUnobserved, the change wrapped in a clean close of
	// every watch and a compaction, so the informer's re-watch gets 410 and its relist finds the
	// change, whose event it never saw.
	HiddenChanges int
	// Conflicts answers that many of the controller's updates (PUT or PATCH) 409 Conflict,
	// without serving them, though they would have succeeded (conflict).
	Conflicts int
	// SlowCalls delays the response to that many of the controller's calls by SlowBy (zero
	// means 5s) on top of its latency (slow-call).
	SlowCalls int
	SlowBy    time.Duration
}

// The hazards by name, in Report.Hazards' order: the names of their client faults' op kinds.
const (
	HazardRestart      = "crash-restart"
	HazardStaleRead    = "stale-read"
	HazardHiddenChange = "hidden-change"
	HazardConflict     = "conflict"
	HazardSlowCall     = "slow-call"
)

var hazardNames = []string{HazardRestart, HazardStaleRead, HazardHiddenChange, HazardConflict, HazardSlowCall}

// HazardCount is one hazard in a Report: how many times it was armed, and how many times it
// fired (a conflict armed when the controller made no more updates never fires).
type HazardCount struct {
	Name         string
	Armed, Fired int
}

func (h HazardCount) String() string { return fmt.Sprintf("%s %d/%d", h.Name, h.Fired, h.Armed) }

// StreamHazards is the random stream hazard instants are drawn from, StreamHiddenChanges the one
// a hidden change draws its object and its write from when it happens: apart, so that a
// hidden change draws the same whether the run drew the instants (Config.Hazards) or replays
// recorded ops that hold them (a written-out run).
const (
	StreamHazards       = "hazards"
	StreamHiddenChanges = "hidden-changes"
)

// any reports whether a hazard is configured.
func (h Hazards) any() bool {
	return h.Restarts+h.StaleReads+h.HiddenChanges+h.Conflicts+h.SlowCalls+len(h.RestartAt) > 0
}

// validate checks the hazards against the rest of the configuration.
func (h Hazards) validate() error {
	if h.Restarts < 0 || h.StaleReads < 0 || h.HiddenChanges < 0 || h.Conflicts < 0 || h.SlowCalls < 0 || h.StaleLag < 0 || h.SlowBy < 0 {
		return fmt.Errorf("clientgo: Run: negative Hazards count or duration: %+v", h)
	}
	for _, at := range h.RestartAt {
		if at < 0 {
			return fmt.Errorf("clientgo: Run: Hazards.RestartAt %v is negative", at)
		}
	}
	return nil
}

// ops are the hazards as the client faults the harness scripts, each at its instant (Time,
// from now: the controller's start), drawn from r within the safety phase: a lag-replica of the
// last of replicas replicas at once when there are stale reads, then each hazard's draws in
// hazardNames' order (and RestartAt's restarts).
func (h Hazards) ops(r *rand.Rand, within time.Duration, replicas int) []world.GeneratedOp {
	lag, slowBy := cmp.Or(h.StaleLag, 10*time.Second), cmp.Or(h.SlowBy, 5*time.Second)
	var out []world.GeneratedOp
	if h.StaleReads > 0 {
		out = append(out, world.GeneratedOp{Op: world.Op{Kind: world.OpLagReplica, Replica: replicas - 1, Duration: lag}})
	}
	counts := map[string]int{HazardRestart: h.Restarts, HazardStaleRead: h.StaleReads, HazardHiddenChange: h.HiddenChanges,
		HazardConflict: h.Conflicts, HazardSlowCall: h.SlowCalls}
	for _, name := range hazardNames {
		kind, _ := world.ParseOpKind(name) // TestHazardsAreClientFaults: every name is one
		op := world.Op{Kind: kind, Client: ControllerActor}
		switch kind {
		case world.OpStaleRead:
			op.Replica = replicas - 1
		case world.OpSlowCall:
			op.Duration = slowBy
		}
		var at []time.Duration
		for range counts[name] {
			at = append(at, time.Duration(r.Int64N(int64(within))))
		}
		if name == HazardRestart {
			at = append(at, h.RestartAt...)
		}
		for _, d := range at {
			out = append(out, world.GeneratedOp{Time: d, Op: op})
		}
	}
	return out
}

// scriptHazards scripts the hazards' ops in w from now, drawn from the run's hazards stream, in
// the order of their instants, as a written-out run's replay scripts them (world.World.Script,
// each op after a sleep for the time since the previous), and returns them.
func scriptHazards(w *world.World, h Hazards, within time.Duration) ([]world.GeneratedOp, error) {
	ops := h.ops(w.Sim().Rand(StreamHazards), within, w.Server().Replicas().Len())
	slices.SortStableFunc(ops, func(a, b world.GeneratedOp) int { return cmp.Compare(a.Time, b.Time) })
	var script []world.Op
	var at time.Duration
	for _, g := range ops {
		if g.Time > at {
			script = append(script, world.Op{Kind: world.OpSleep, Duration: g.Time - at})
			at = g.Time
		}
		script = append(script, g.Op)
	}
	_, err := w.Script(0, script...)
	return ops, err
}

// hazards is the run's hazard state, the driver's alone: the client faults the world handed the
// controller (take), armed until their occasion.
type hazards struct {
	b *bubble
	// armed are, by name, the hazards armed and not fired yet, in the order they were armed;
	// total and fired are the report's counts.
	armed        map[string][]world.Op
	total, fired map[string]int
	// restartDue is set by an armed restart; run's lifecycle takes it at the next turn.
	restartDue bool
	// env is the current life's Env (Constructor.New), whose informers a hidden change may pick.
	env *Env
}

func newHazards(b *bubble) *hazards {
	return &hazards{b: b, armed: map[string][]world.Op{}, total: map[string]int{}, fired: map[string]int{}}
}

// takeFault takes a client fault the world aims at the controller (world.TakeClientFault),
// inside its step: a restart is due at the driver's next turn, a hidden change happens at once,
// the others wait for their occasion.
func (h *hazards) takeFault(op world.Op) error {
	name := op.Kind.String()
	h.total[name]++
	switch op.Kind {
	case world.OpCrashRestart:
		h.restartDue = true
	case world.OpHiddenChange:
		h.hiddenChange()
	case world.OpConflict, world.OpSlowCall, world.OpStaleRead:
		h.armed[name] = append(h.armed[name], op)
	default:
		return fmt.Errorf("clientgo: the harness's controller does not take %s", op.Kind)
	}
	return nil
}

// take fires the first armed hazard of name if there is one, and returns its op.
func (h *hazards) take(name string, fields ...sim.Field) (world.Op, bool) {
	if len(h.armed[name]) == 0 {
		return world.Op{}, false
	}
	op := h.armed[name][0]
	h.armed[name] = h.armed[name][1:]
	h.fire(name, fields...)
	return op, true
}

func (h *hazards) fire(name string, fields ...sim.Field) {
	h.fired[name]++
	h.b.s.Emit(ControllerActor, "hazard-fired", append([]sim.Field{sim.F("hazard", name)}, fields...)...)
}

// hiddenChange deletes or updates an object an informer of the controller holds, out of their
// sight (world.PerturbUnobserved's ops around the write): the change reaches the informer only
// through its relist. The informers are those the controller built itself (Main: as far as the
// world served them) and those the current life's Env handed out (Constructor.New: their
// caches). With no object held, it does nothing (and does not count as fired).
func (h *hazards) hiddenChange() {
	held := map[string][]string{} // informer -> the keys it holds, sorted
	gvrOf := map[string]schema.GroupVersionResource{}
	for v, keys := range h.b.views {
		if len(keys) > 0 && h.b.viewGVR[v].Resource != "" {
			held[v] = slices.Sorted(maps.Keys(keys))
			gvrOf[v] = h.b.viewGVR[v]
		}
	}
	if env := h.env; env != nil {
		for _, f := range env.factories {
			for _, inf := range f.startedInformers() {
				if inf.host == nil || inf.host.Stopped() {
					continue
				}
				if keys := inf.inf.GetStore().ListKeys(); len(keys) > 0 {
					slices.Sort(keys)
					held[inf.name] = keys
					gvrOf[inf.name], _ = inf.host.Resource()
				}
			}
		}
	}
	if len(held) == 0 {
		h.b.s.Emit(ControllerActor, "hazard-missed", sim.F("hazard", HazardHiddenChange), sim.F("why", "no informer holds an object"))
		return
	}
	views := slices.Sorted(maps.Keys(held))
	r := h.b.s.Rand(StreamHiddenChanges)
	view := views[r.IntN(len(views))]
	keys := held[view]
	key := keys[r.IntN(len(keys))]
	ns, name, ok := strings.Cut(key, "/")
	if !ok {
		ns, name = "", key
	}
	kind := world.OpUpdate
	if r.IntN(2) == 0 {
		kind = world.OpDelete
	}
	gvr := gvrOf[view]
	write := world.Op{Kind: kind, Resource: gvr, Namespace: ns, Name: name}
	before, after, err := world.Perturbation{Kind: world.PerturbUnobserved}.Around(write)
	if err == nil {
		err = h.applyAll(before)
	}
	if err != nil {
		h.b.fail(fmt.Errorf("clientgo: hazard %s: %w", HazardHiddenChange, err))
		return
	}
	if err := h.b.w.Apply(write); err != nil {
		// The object went away meanwhile (a 404): the watches were closed for nothing.
		h.b.s.Emit(ControllerActor, "hazard-missed", sim.F("hazard", HazardHiddenChange), sim.F("why", err.Error()))
		return
	}
	if err := h.applyAll(after); err != nil {
		h.b.fail(fmt.Errorf("clientgo: hazard %s: %w", HazardHiddenChange, err))
		return
	}
	h.fire(HazardHiddenChange, sim.F("op", kind.String()), sim.F("obj", resourceName(gvr)+"/"+key))
}

func (h *hazards) applyAll(ops []world.Op) error {
	for _, op := range ops {
		if err := h.b.w.Apply(op); err != nil {
			return err
		}
	}
	return nil
}

// conflict answers an update with 409 Conflict, as the apiserver does for a stale
// resourceVersion, without serving it.
func conflict(req *http.Request, gvr schema.GroupVersionResource, name string) *http.Response {
	st := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: http.StatusConflict, Reason: metav1.StatusReasonConflict,
		Message: fmt.Sprintf("Operation cannot be fulfilled on %s %q: the object has been modified; please apply your changes to the latest version and try again", gvr.GroupResource(), name),
		Details: &metav1.StatusDetails{Name: name, Group: gvr.Group, Kind: gvr.Resource},
	}
	body, _ := json.Marshal(st) // a Status always encodes
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Type", "application/json")
	rec.WriteHeader(http.StatusConflict)
	_, _ = rec.Write(body)
	resp := rec.Result()
	resp.Request = req
	return resp
}

// isUpdate is a write the conflict hazard answers: PUT or PATCH of one object.
func isUpdate(method string) bool { return method == http.MethodPut || method == http.MethodPatch }

// isCacheList is a LIST a watch cache serves (resourceVersion=0): a stale read's occasion.
func isCacheList(req *http.Request) bool {
	if req.Method != http.MethodGet {
		return false
	}
	if w := queryValue(req.URL.RawQuery, "watch"); w == "true" || w == "1" {
		return false
	}
	if _, _, ok := collectionOf(req.URL.Path); !ok {
		return false
	}
	return queryValue(req.URL.RawQuery, "resourceVersion") == "0"
}

// staleRead takes an armed stale read for a LIST a watch cache serves (resourceVersion=0, the
// first LIST of an informer a restarted controller built), inside the step that serves it: the
// LIST goes to the stale read's replica. who names the LIST in the trace.
func (h *hazards) staleRead(who sim.Field) {
	if len(h.armed[HazardStaleRead]) == 0 {
		return
	}
	replica := h.armed[HazardStaleRead][0].Replica
	if err := h.b.w.Server().Replicas().RouteNext(replica); err != nil {
		h.b.fail(fmt.Errorf("clientgo: hazard %s: %w", HazardStaleRead, err))
		return
	}
	h.take(HazardStaleRead, who, sim.F("replica", strconv.Itoa(replica)))
}

// staleList takes an armed stale read for a LIST an Env informer sends (world.Informer's
// OnListRequest, inside that step): one a watch cache serves goes to the stale replica, as the
// controller's own LISTs do through its transport.
func (h *hazards) staleList(informer string, o metav1.ListOptions) {
	if o.ResourceVersion == "0" {
		h.staleRead(sim.F("informer", informer))
	}
}

// hazardCounts is the report's list: every hazard armed in the run, in hazardNames' order.
func (h *hazards) hazardCounts() []HazardCount {
	var out []HazardCount
	for _, name := range hazardNames {
		if h.total[name] > 0 {
			out = append(out, HazardCount{Name: name, Armed: h.total[name], Fired: h.fired[name]})
		}
	}
	return out
}

// slowBy is the extra latency of a call, if a slow-call hazard is armed.
func (h *hazards) slowBy(label string) time.Duration {
	if len(h.armed[HazardSlowCall]) == 0 {
		return 0
	}
	by := h.armed[HazardSlowCall][0].Duration
	h.take(HazardSlowCall, sim.F("call", label), sim.F("by", by.String()))
	return by
}

// restartGrace is how long (simulated) a crashed life of the controller may take to return
// before the run is declared stuck: its context is cancelled and every call it makes fails at
// once, so a controller that honours its context returns within its own timers (a worker's
// backoff, a shutdown's wait); one that does not never will.
const restartGrace = time.Minute

// quiesce waits until every goroutine of the controller is durably blocked, as a turn does
// before its step: what the driver does next (crash the controller, look whether a crashed life
// has returned) then meets the controller at the same point of its run on every replay.
func (b *bubble) quiesce() {
	b.driverBlocked.Store(true)
	synctest.Wait()
	b.driverBlocked.Store(false)
	b.wakes.Add(1)
}

// stuckRestartReport names the goroutines of the run's bubble still there restartGrace after a
// crash: besides the driver, every goroutine of the bubble is the crashed life's, since the next
// one starts only once they are gone (the world's components run on the driver).
func stuckRestartReport(driver uint64, inc *incarnation, waited time.Duration, repro string) string {
	var left []string
	for _, g := range bubbleGoroutines(driver) {
		left = append(left, g.stack)
	}
	what := "its main"
	if inc.env != nil {
		what = "its constructor or Run, or an informer its factories started,"
	}
	return fmt.Sprintf("clientgo: the controller crashed at %s (hazard %s) and %s has not returned within %v (%v since, simulated; %s): its context is cancelled and its calls fail, so %d goroutine(s) of it wait for something that will not come (a channel nothing closes, a context not derived from the one it was given), and the harness cannot start it again:\n\n%s",
		sim.FormatSimTime(inc.crashedAt), HazardRestart, what, restartGrace, waited.Round(time.Millisecond), repro, len(left), strings.Join(left, "\n\n"))
}
