package scenarios

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/oracle"
)

// storyDirectives build the world and tell the story.
var storyDirectives = []*directiveSpec{
	{name: "world", help: "build the world (first directive only)", args: []argSpec{
		{key: "seed", kind: argSeed}, enumArg("policy", "random", "fifo", "pct"), numArg("pct-depth"), numArg("replicas"),
		durArg("min-latency"), durArg("max-latency"), durArg("bookmark-interval"), durArg("compaction-interval"),
		numArg("watch-cache-history"), numArg("max-watch-events"), numArg("max-in-flight"), durArg("rv-wait"),
		boolArg("check-each-delivery"), flagArg("controllers"), durArg("status-latency"), strArg("stuck"), strArg("client"),
	}, handle: func(e *Env, d Directive, add func(string, ...any)) error {
		out, err := e.buildWorld(d)
		if err == nil {
			add("%s", out)
		}
		return err
	}},
	{name: "legend", help: "print the legend of the narration", handle: func(_ *Env, _ Directive, add func(string, ...any)) error {
		add("%s", strings.TrimSuffix(Legend, "\n"))
		return nil
	}},
	{name: "caption", text: true, help: "a caption between phases: the words after the directive",
		handle: func(*Env, Directive, func(string, ...any)) error { return nil }},
}

// Options change how a scenario runs without changing its text.
type Options struct {
	// Seed, if set, replaces the seed of the file's world directive (a seed sweep, a replay).
	Seed *uint64
	// Policy, if not empty, replaces the file's scheduling policy: random, fifo or pct.
	Policy string
	// Name is the scenario's name, used in the replay command of a failure.
	Name string
	// Swarm makes each generate directive with fault-ops draw its fault ops from a subset of
	// the world's fault kinds (world.World.FaultKinds) that the seed picks, each kind in or out
	// as a coin toss (swarm testing: a run without some faults reaches states the others
	// mask); a sweep's --guided. The replay command carries it (--guided).
	Swarm bool
}

// Env is the interaction environment: it holds the world a scenario builds and turns each
// directive into actions on it and narration of what happened (docs/simulation.md §E2). One Env
// runs one scenario.
type Env struct {
	opts  Options
	w     *world.World
	named *oracle.Handle

	informers map[string]*infState
	infOrder  []string
	handlers  map[string]*handlerState // "<informer>/<name>"
	queues    map[string]*workQueue
	// queueOrder names the workqueues in the order they were declared.
	queueOrder []string
	factories  map[string]*factoryState
	gens       []*world.Generator
	// swarmKinds are the fault kinds each swarmed generator drew from (Options.Swarm).
	swarmKinds [][]world.OpKind
	// genStarts is when each generator began (the shrinker writes its ops out from there).
	genStarts []time.Duration

	// Narration not yet printed (the scheduler's step events are left out).
	pending  []sim.Event
	lastStep int64
	reqSeen  int
	// waitFor is the "actor:kind" a run until=event waits for; keepNarration clears it when seen.
	waitFor string

	// failure stops the run: the first oracle violation, run error or failed convergence.
	failure error
}

type infState struct {
	name string
	d    Directive
	n    *world.Informer
	// handlers in registration order, for restart.
	handlers []*handlerState
}

type handlerState struct {
	inf  string
	name string
	d    Directive
	h    *world.Handler
	// given is the Go handler a directive registered (a workqueue's or controller's enqueue),
	// nil for one the handler directive builds from d; restart registers it again.
	given  informer.ResourceEventHandler
	filter labels.Selector
	passed []string // what the handler behind a filter was told
	shown  int      // calls a log directive has printed
}

// NewEnv returns an environment with no world yet: the first directive builds it (a world
// directive, or the defaults).
func NewEnv(opts Options) *Env {
	return &Env{opts: opts, informers: map[string]*infState{}, handlers: map[string]*handlerState{}, queues: map[string]*workQueue{}, factories: map[string]*factoryState{}}
}

// World returns the world, nil before the first directive.
func (e *Env) World() *world.World { return e.w }

// Failure returns what stopped the run, or nil.
func (e *Env) Failure() error { return e.failure }

// Hash is the SHA-256 of the run's trace ("" before the world exists).
func (e *Env) Hash() string {
	if e.w == nil {
		return ""
	}
	return e.w.Sim().Trace().Hash()
}

// Seed is the world's seed.
func (e *Env) Seed() uint64 {
	if e.w == nil {
		return 0
	}
	return e.w.Sim().Seed()
}

// ReplayCommand is the one command that replays this run.
func (e *Env) ReplayCommand() string {
	name := e.opts.Name
	if name == "" {
		name = "FILE"
	}
	cmd := fmt.Sprintf("informersim run %s --seed %d", name, e.Seed())
	if e.opts.Swarm {
		cmd += " --guided"
	}
	if e.w != nil {
		if p := e.w.Sim().Config().Policy; p != sim.PolicyRandom {
			cmd += " --policy " + p.String()
		}
	}
	return cmd
}

// errStopped marks directives skipped after a failure.
var errStopped = errors.New("skipped: the run stopped at its first failure")

// Handle runs one directive and returns its output: the narration of everything that happened,
// then what the directive reports. An error means the directive itself is wrong for this
// scenario (an unknown informer, a second world); a failure of the run (an oracle violation, no
// convergence) is reported in the output and by Failure, and the directives after it are skipped.
func (e *Env) Handle(d Directive) (string, error) {
	if e.failure != nil {
		return errStopped.Error(), nil
	}
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if d.Cmd == "world" {
		if e.w != nil {
			return "", errors.New("the world is already built: world must be the first directive")
		}
		if err := e.dispatch(d, add); err != nil {
			return "", err
		}
		return strings.Join(out, "\n"), nil
	}
	if e.w == nil {
		if _, err := e.buildWorld(Directive{Cmd: "world"}); err != nil {
			return "", err
		}
	}
	err := e.dispatchOutsideStep(d, add)
	narr := e.drain(d.list("show"))
	if err != nil {
		return "", err
	}
	if narr != "" {
		out = append([]string{strings.TrimSuffix(narr, "\n")}, out...)
	}
	if e.failure != nil {
		if v := e.Violation(); v != nil {
			// The report names the oracle, the first violating event with the trace before
			// it, the seed and the replay command (the world's Repro, set in buildWorld).
			out = append(out, "FAIL: oracle "+v.Oracle+" violated", strings.TrimRight(v.Report(), "\n"))
		} else {
			out = append(out, "FAIL: "+e.failure.Error(), "replay: "+e.ReplayCommand())
		}
	}
	return strings.Join(out, "\n"), nil
}

func (e *Env) buildWorld(d Directive) (string, error) {
	seed := d.seed("seed", 1)
	if e.opts.Seed != nil {
		seed = *e.opts.Seed
	}
	policyName := d.str("policy", "random")
	if e.opts.Policy != "" {
		policyName = e.opts.Policy
	}
	policy, err := sim.ParsePolicy(policyName)
	if err != nil {
		return "", err
	}
	e.w = nil
	name := e.opts.Name
	if name == "" {
		name = "FILE"
	}
	repro := fmt.Sprintf("informersim run %s --seed %d", name, seed)
	if policy != sim.PolicyRandom {
		repro += " --policy " + policy.String()
	}
	simCfg := sim.Config{Seed: seed, Policy: policy, PCTDepth: d.num("pct-depth", 0), Repro: repro}
	apiCfg := fakeapi.Config{
		Replicas:              d.num("replicas", 0),
		BookmarkInterval:      d.dur("bookmark-interval", 0),
		CompactionInterval:    d.dur("compaction-interval", 0),
		MaxCacheHistoryEvents: d.num("watch-cache-history", 0),
		MaxWatchEvents:        d.num("max-watch-events", 0),
		ResourceVersionWait:   d.dur("rv-wait", 0),
	}
	wcfg := world.Config{
		MinLatency:        d.dur("min-latency", 0),
		MaxLatency:        d.dur("max-latency", 0),
		MaxInFlightEvents: d.num("max-in-flight", 0),

		CheckReadOnlyEachDelivery: d.boolean("check-each-delivery", false),
		ControlPlane:              controlPlaneConfig(d),
	}
	if wcfg.MaxLatency == 0 && wcfg.MinLatency > world.DefaultMaxLatency {
		wcfg.MaxLatency = wcfg.MinLatency
	}
	w, err := world.NewFromConfig(simCfg, apiCfg, wcfg)
	if err != nil {
		return "", err
	}
	e.w = w
	e.lastStep = w.Sim().StepCount()
	w.Sim().Subscribe(e.keepNarration)
	if e.named, err = oracle.Attach(w); err != nil {
		return "", err
	}
	replicas := max(apiCfg.Replicas, 1)
	out := fmt.Sprintf("world seed=%d policy=%s replicas=%d", seed, policy, replicas)
	if wcfg.ControlPlane != nil {
		out += " controllers"
	}
	if c := d.str("client", ""); c != "" {
		if err := w.AddClient(c, standInClient(w, c)); err != nil {
			return "", err
		}
		out += " client=" + c + " (a stand-in: nothing takes its faults)"
	}
	return out, nil
}

// standInClient takes the client faults aimed at the world directive's client=NAME: a client
// that runs outside the file (a Go test's controller, whose failing run was written out as its
// ops), so that the file runs under informersim all the same. It says of each fault that
// nothing took it, rather than pass it over in silence.
func standInClient(w *world.World, name string) world.TakeClientFault {
	return func(op world.Op) error {
		w.Sim().Emit(name, "not-taken", sim.F("why", "a stand-in: the client runs outside the file"))
		return nil
	}
}

// dispatchOutsideStep is dispatch for a directive's own action, which runs outside any step: a
// violation the world returns from it (a write revealing that a handler changed an object it
// was lent, World.Apply) fails the run, as it would have at the next step; it is not an error
// of the file.
func (e *Env) dispatchOutsideStep(d Directive, add func(string, ...any)) error {
	err := e.dispatch(d, add)
	var v *world.Violation
	if errors.As(err, &v) {
		e.fail(v)
		return nil
	}
	return err
}

// dispatch runs the directive's handler: the one its row of the language holds (specs).
func (e *Env) dispatch(d Directive, add func(string, ...any)) error {
	spec, ok := specs[d.Cmd]
	if !ok { // a Directive built by hand, not by ParseDirective
		return fmt.Errorf("unknown directive %q (expected one of: %s)", d.Cmd, strings.Join(DirectiveNames(), ", "))
	}
	return spec.handle(e, d, add)
}

// keepNarration keeps the narration: every event but the scheduler's step events, which are
// the first event of each step (narration emitted outside a step carries the last step's
// number).
func (e *Env) keepNarration(ev sim.Event) {
	if ev.Step != e.lastStep {
		e.lastStep = ev.Step
		return
	}
	ev.Fields = slices.Clone(ev.Fields)
	e.pending = append(e.pending, ev)
	if e.waitFor != "" && ev.Actor+":"+ev.Kind == e.waitFor {
		e.waitFor = ""
	}
}

// drain renders the pending narration, only the actors show names when it is not empty.
func (e *Env) drain(show []string) string {
	evs := e.pending
	e.pending = nil
	keep := evs[:0:0]
	for _, ev := range evs {
		if len(show) > 0 && !matchActor(ev.Actor, show) {
			continue
		}
		ev.Step = 0
		keep = append(keep, ev)
	}
	return sim.Narrate(keep)
}

func matchActor(actor string, show []string) bool {
	for _, s := range show {
		if actor == s || strings.HasSuffix(actor, "/"+s) || strings.HasPrefix(actor, s+"/") {
			return true
		}
	}
	return false
}

// fail records the first failure of the run, folded through the oracles: a violation of a
// named oracle is reported as that oracle's.
func (e *Env) fail(err error) {
	if err == nil || e.failure != nil {
		return
	}
	if e.named != nil {
		err = e.named.Check(err)
	}
	e.failure = err
}

// Violation returns the named oracle's violation that stopped the run, if that is what did.
func (e *Env) Violation() *world.Violation {
	var v *world.Violation
	if errors.As(e.failure, &v) {
		return v
	}
	return nil
}

func (e *Env) informer(d Directive) (*infState, error) {
	name := d.str("informer", "")
	st, ok := e.informers[name]
	if !ok {
		if len(e.infOrder) == 0 {
			return nil, fmt.Errorf("no informer named %q: the scenario has no informer yet (add one with: informer name=%s)", name, cmp.Or(name, "inf1"))
		}
		return nil, fmt.Errorf("no informer named %q (expected one of: %s)", name, strings.Join(e.infOrder, ", "))
	}
	return st, nil
}

func (e *Env) handler(key string) (*handlerState, error) {
	hs, ok := e.handlers[key]
	if !ok {
		var keys []string
		for k := range e.handlers {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return nil, fmt.Errorf("no handler %q (expected <informer>/<name>, one of: %s)", key, strings.Join(keys, ", "))
	}
	return hs, nil
}

// parseResource is world.ParseResource, with the empty string for "the world's default resource".
func parseResource(v string) (schema.GroupVersionResource, error) {
	if v == "" {
		return schema.GroupVersionResource{}, nil
	}
	gvr, err := world.ParseResource(v)
	if err != nil {
		return gvr, fmt.Errorf("resource: %w", err)
	}
	return gvr, nil
}

// ctx is the context of the controllers' writes.
var ctx = context.Background()
