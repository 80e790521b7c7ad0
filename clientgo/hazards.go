package clientgo

import (
	"encoding/json"
	"fmt"
	"maps"
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
// from the seed (the "hazards" stream) in the safety phase, the hazard is armed. An armed hazard
// fires on the next occasion (a restart at once, a conflict at the controller's next update);
// Report.Hazards counts, for each configured hazard, how often it was armed and how often it
// actually fired, so a sweep that never exercised one shows it.
type Hazards struct {
	// Restarts crash-restarts the controller: its context is cancelled, its requests fail from
	// then on (a crashed process's connections are gone: "connection refused"), its watches
	// end, and under Constructor.New every informer its Env handed out is stopped in the world (its
	// handlers removed, never to run again: a process's caches die with it). Once its goroutines
	// have returned (Main's main; New's constructor, Run and the goroutines its
	// factories started), the harness calls Main again with a new *rest.Config, or New with a
	// new Env whose informers are new (named "deployments.apps~1" after the first restart), and
	// starts its factories and calls Run: a process starting afresh, with empty caches and no
	// memory, while the world went on (Sieve's intermediate states: a restart mid-reconcile
	// sees the half of a reconcile that was written). A crashed life whose goroutines have not
	// all returned restartGrace (simulated) after its crash ends the process with a panic
	// naming them, as the watchdog does for a stuck run: they can never end, and the test could
	// not. RestartAt adds restarts at chosen instants (since the run's start), besides the
	// Restarts drawn ones.
	Restarts  int
	RestartAt []time.Duration
	// StaleReads sends that many of the controller's LISTs served from a watch cache
	// (resourceVersion=0, as every informer's first LIST after a start) to the last replica,
	// StaleLag behind the others (set when the run starts; zero means 10s): the informer starts
	// from a past state of the world (time travel for a controller that restarted), then its
	// watch and later reads are routed as Cluster.API.Routing says. A cluster of fewer than two
	// replicas gets a second, the lagging one (which RoutingPrimary, the default, never routes
	// to; RoutingRoundRobin and RoutingRandom do). Under
	// Constructor.New the Env's informers' LISTs take them too (at the step their Reflector sends
	// one), besides those of the controller's clientsets.
	StaleReads int
	StaleLag   time.Duration
	// HiddenChanges closes every watch cleanly, deletes or updates (a draw) an object one of the
	// controller's informers holds (those its main built, or its current Env's), and compacts the history: the informer's re-watch gets 410
	// and its relist finds the change, whose event it never saw (unobserved states).
	HiddenChanges int
	// Conflicts answers that many of the controller's updates (PUT or PATCH) 409 Conflict,
	// without serving them, though they would have succeeded.
	Conflicts int
	// SlowCalls delays the response to that many of the controller's calls by SlowBy (zero
	// means 5s) on top of its latency.
	SlowCalls int
	SlowBy    time.Duration
}

// The hazards by name, in Report.Hazards' order.
const (
	HazardRestart      = "crash-restart"
	HazardStaleRead    = "stale-read"
	HazardHiddenChange = "hidden-change"
	HazardConflict     = "conflict"
	HazardSlowCall     = "slow-call"
)

var hazardNames = []string{HazardRestart, HazardStaleRead, HazardHiddenChange, HazardConflict, HazardSlowCall}

// HazardCount is one configured hazard in a Report: how many times it was armed, and how many
// times it fired (a conflict armed when the controller made no more updates never fires).
type HazardCount struct {
	Name         string
	Armed, Fired int
}

func (h HazardCount) String() string { return fmt.Sprintf("%s %d/%d", h.Name, h.Fired, h.Armed) }

// StreamHazards is the random stream hazard instants and choices are drawn from.
const StreamHazards = "hazards"

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

// hazards is the run's hazard state, the driver's alone.
type hazards struct {
	b   *bubble
	cfg Hazards
	// armed counts, by name, the hazards armed and not fired yet; total and fired the report's.
	armed, total, fired map[string]int
	staleReplica        int
	// restartDue is set by an armed restart; run's lifecycle takes it at the next turn.
	restartDue bool
	// env is the current life's Env (Constructor.New), whose informers a hidden change may pick.
	env *Env
}

// armHazards makes the run's hazards and schedules every configured one at its instants (from
// now, the controller's start).
func armHazards(b *bubble, h Hazards, within time.Duration) (*hazards, error) {
	hz := &hazards{b: b, cfg: h, armed: map[string]int{}, total: map[string]int{}, fired: map[string]int{}}
	if h.StaleLag == 0 {
		hz.cfg.StaleLag = 10 * time.Second
	}
	if h.SlowBy == 0 {
		hz.cfg.SlowBy = 5 * time.Second
	}
	if h.StaleReads > 0 {
		hz.staleReplica = b.w.Server().Replicas().Len() - 1
		if err := b.w.Server().Replicas().SetLag(hz.staleReplica, hz.cfg.StaleLag); err != nil {
			return nil, err
		}
	}
	r := b.s.Rand(StreamHazards)
	counts := map[string]int{HazardRestart: h.Restarts, HazardStaleRead: h.StaleReads, HazardHiddenChange: h.HiddenChanges,
		HazardConflict: h.Conflicts, HazardSlowCall: h.SlowCalls}
	for _, name := range hazardNames {
		var at []time.Duration
		for range counts[name] {
			at = append(at, time.Duration(r.Int64N(int64(within))))
		}
		if name == HazardRestart {
			at = append(at, h.RestartAt...)
		}
		for _, d := range at {
			hz.total[name]++
			b.s.AfterFunc(d, ControllerActor, "hazard", func() { hz.arm(name) })
		}
	}
	return hz, nil
}

// arm arms one hazard, inside its step; a hidden change fires at once.
func (h *hazards) arm(name string) {
	h.b.s.Emit(ControllerActor, "hazard-armed", sim.F("hazard", name))
	switch name {
	case HazardRestart:
		h.restartDue = true
	case HazardHiddenChange:
		h.hiddenChange()
	default:
		h.armed[name]++
	}
}

// take fires an armed hazard if there is one, and reports whether it did.
func (h *hazards) take(name string, fields ...sim.Field) bool {
	if h == nil || h.armed[name] == 0 {
		return false
	}
	h.armed[name]--
	h.fire(name, fields...)
	return true
}

func (h *hazards) fire(name string, fields ...sim.Field) {
	h.fired[name]++
	h.b.s.Emit(ControllerActor, "hazard-fired", append([]sim.Field{sim.F("hazard", name)}, fields...)...)
}

// hiddenChange closes every watch, deletes or updates an object an informer of the controller
// holds, and compacts: the change reaches the informer only through its relist. The informers
// are those the controller built itself (Main: as far as the world served them) and
// those the current life's Env handed out (Constructor.New: their caches). With no object held, it
// does nothing (and does not count as fired).
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
	r := h.b.s.Rand(StreamHazards)
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
	if err := h.b.w.Apply(world.Op{Kind: world.OpCloseWatches}); err != nil {
		h.b.fail(fmt.Errorf("clientgo: hazard %s: %w", HazardHiddenChange, err))
		return
	}
	if err := h.b.w.Apply(world.Op{Kind: kind, Resource: gvr, Namespace: ns, Name: name}); err != nil {
		// The object went away meanwhile (a 404): the watches were closed for nothing.
		h.b.s.Emit(ControllerActor, "hazard-missed", sim.F("hazard", HazardHiddenChange), sim.F("why", err.Error()))
		return
	}
	if err := h.b.w.Apply(world.Op{Kind: world.OpCompact}); err != nil {
		h.b.fail(fmt.Errorf("clientgo: hazard %s: %w", HazardHiddenChange, err))
		return
	}
	h.fire(HazardHiddenChange, sim.F("op", kind.String()), sim.F("obj", resourceName(gvr)+"/"+key))
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

// staleList takes an armed stale read for a LIST an Env informer sends (world.Informer's
// OnListRequest, inside that step): one a watch cache serves (resourceVersion=0, the first LIST
// of an informer a restarted controller built) goes to the stale replica, as the controller's
// own LISTs do through its transport.
func (h *hazards) staleList(informer string, o metav1.ListOptions) {
	if h == nil || h.armed[HazardStaleRead] == 0 || o.ResourceVersion != "0" {
		return
	}
	if err := h.b.w.Server().Replicas().RouteNext(h.staleReplica); err == nil {
		h.take(HazardStaleRead, sim.F("informer", informer), sim.F("replica", strconv.Itoa(h.staleReplica)))
	}
}

// hazardCounts is the report's list: every configured hazard, in hazardNames' order.
func (h *hazards) hazardCounts() []HazardCount {
	if h == nil {
		return nil
	}
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
	if h == nil {
		return 0
	}
	if h.take(HazardSlowCall, sim.F("call", label), sim.F("by", h.cfg.SlowBy.String())) {
		return h.cfg.SlowBy
	}
	return 0
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
