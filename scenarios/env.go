package scenarios

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cockroachdb/datadriven"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/oracle"
)

// Options change how a scenario runs without changing its text.
type Options struct {
	// Seed, if set, replaces the seed of the file's world directive (a seed sweep, a replay).
	Seed *uint64
	// Policy, if not empty, replaces the file's scheduling policy: random, fifo or pct.
	Policy string
	// Name is the scenario's name, used in the replay command of a failure.
	Name string
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

	// Narration not yet printed (the scheduler's step events are left out).
	pending  []sim.Event
	lastStep int64
	reqSeen  int
	// waitFor is the "actor:kind" a run until=event waits for; observe clears it when seen.
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
	inf    string
	name   string
	d      Directive
	h      *world.Handler
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
	if d.Cmd == "world" {
		if e.w != nil {
			return "", errors.New("the world is already built: world must be the first directive")
		}
		return e.buildWorld(d)
	}
	if e.w == nil {
		if _, err := e.buildWorld(Directive{Cmd: "world"}); err != nil {
			return "", err
		}
	}
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	err := e.dispatch(d, add)
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
	seed := uint64(d.num("seed", 1))
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
	w.Sim().Subscribe(e.observe)
	if e.named, err = oracle.Attach(w); err != nil {
		return "", err
	}
	replicas := max(apiCfg.Replicas, 1)
	return fmt.Sprintf("world seed=%d policy=%s replicas=%d", seed, policy, replicas), nil
}

// observe keeps the narration: every event but the scheduler's step events, which are the first
// event of each step (narration emitted outside a step carries the last step's number).
func (e *Env) observe(ev sim.Event) {
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

func (e *Env) dispatch(d Directive, add func(string, ...any)) error {
	if d.Op != nil {
		err := e.w.Apply(*d.Op)
		var status apierrors.APIStatus
		if err != nil && !errors.As(err, &status) {
			return err
		}
		return nil
	}
	switch d.Cmd {
	case "legend":
		add("%s", strings.TrimSuffix(Legend, "\n"))
	case "caption":
	case "informer":
		return e.addInformer(d, d.str("name", ""), add)
	case "factory":
		return e.addFactory(d, add)
	case "for-resource":
		fs, ok := e.factories[d.str("factory", "")]
		if !ok {
			return fmt.Errorf("no factory named %q", d.str("factory", ""))
		}
		return e.forResource(fs, d.str("resource", ""), add)
	case "start":
		if fs, ok := e.factories[d.str("informer", "")]; ok {
			e.startFactory(fs, add)
			return nil
		}
		st, err := e.informer(d)
		if err != nil {
			return err
		}
		if err := st.n.Start(); err != nil {
			add("error: %v", err)
		}
	case "stop":
		st, err := e.informer(d)
		if err != nil {
			return err
		}
		st.n.Stop()
		e.w.Settle()
	case "restart":
		return e.restart(d, add)
	case "handler":
		st, err := e.informer(d)
		if err != nil {
			return err
		}
		return e.addHandler(st, d, add)
	case "remove-handler":
		hs, err := e.handler(d.str("informer", "") + "/" + d.str("name", ""))
		if err != nil {
			return err
		}
		if err := hs.h.Remove(); err != nil {
			add("error: %v", err)
		}
		e.w.Settle()
	case "add-indexers":
		st, err := e.informer(d)
		if err != nil {
			return err
		}
		idx, err := indexers(d.list("indexers"))
		if err != nil {
			return err
		}
		if err := st.n.Informer().AddIndexers(idx); err != nil {
			add("error: %v", err)
		}
	case "workqueue", "controller":
		return e.addWorkQueue(d, add)
	case "populate":
		return e.populate(d, add)
	case "run":
		return e.run(d, add)
	case "generate":
		g, err := e.w.Generate(world.GenConfig{Ops: d.num("ops", 0), Disruptions: d.boolean("disruptions", false),
			Faults: d.boolean("faults", false), MaxInterval: d.dur("max-interval", 0)})
		if err != nil {
			return err
		}
		e.gens = append(e.gens, g)
	case "faults":
		e.w.Sim().SetFaultsEnabled(d.boolean("on", false))
		if !d.boolean("on", false) {
			for _, g := range e.gens {
				g.Stop()
			}
		}
	case "cache":
		return e.cache(d, add)
	case "log":
		hs, err := e.handler(d.str("handler", ""))
		if err != nil {
			return err
		}
		e.log(hs, d.has("new"), add)
	case "queue":
		return e.queue(d, add)
	case "rv":
		st, err := e.informer(d)
		if err != nil {
			return err
		}
		srv := e.w.Server()
		add("%s: last synced rv=%q apiserver revision=%d compacted=%d", st.name, st.n.Informer().LastSyncResourceVersion(),
			srv.Revision(), srv.CompactedRevision())
	case "requests":
		e.requests(d, add)
	case "objects":
		return e.objects(d, add)
	case "oracles":
		e.verdicts(add)
	default:
		return fmt.Errorf("directive %q is not implemented", d.Cmd)
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

func (e *Env) addInformer(d Directive, name string, add func(string, ...any)) error {
	if _, ok := e.informers[name]; ok {
		return fmt.Errorf("an informer named %q exists already", name)
	}
	gvr, err := parseResource(d.str("resource", ""))
	if err != nil {
		return err
	}
	o := world.InformerOptions{
		Resource: gvr, Namespace: d.str("ns", ""),
		LabelSelector: d.str("labels", ""), FieldSelector: d.str("fields", ""),
	}
	o.Informer.ResyncPeriod = d.dur("resync", 0)
	switch d.str("queue", "realfifo") {
	case "realfifo":
		o.Informer.QueueMode = informer.QueueRealFIFO
	case "realfifo-nonatomic":
		o.Informer.QueueMode = informer.QueueRealFIFONonAtomic
	case "deltafifo":
		o.Informer.QueueMode = informer.QueueDeltaFIFO
	}
	o.Informer.DisableBatchPop = !d.boolean("batch", true)
	if err := setWatchList(&o, d.str("mode", "list-watch")); err != nil {
		return err
	}
	if t := d.str("transform", ""); t != "" {
		o.Transform = transforms[t]
	}
	if idx := d.list("indexers"); len(idx) > 0 {
		o.Informer.Indexers, err = indexers(idx)
		if err != nil {
			return err
		}
	}
	n, err := e.w.AddInformer(name, o)
	if err != nil {
		return err
	}
	st := &infState{name: name, d: d, n: n}
	e.informers[name] = st
	e.infOrder = append(e.infOrder, name)
	return nil
}

// transforms are the named transforms a scenario can install; each is idempotent (a watch-list
// start-up applies it twice, informer.md §1.5) and works on a copy.
var transforms = map[string]informer.TransformFunc{
	"drop-annotations": func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		u = u.DeepCopy()
		u.SetAnnotations(nil)
		return u, nil
	},
	"drop-content": func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		c := &unstructured.Unstructured{Object: map[string]any{}}
		for _, k := range []string{"apiVersion", "kind", "metadata"} {
			if v, ok := u.Object[k]; ok {
				c.Object[k] = v
			}
		}
		return c.DeepCopy(), nil
	},
}

// indexers builds the named indexers: "namespace" (client-go's namespace index) and
// "label:<key>" (the value of one label).
func indexers(names []string) (informer.Indexers, error) {
	idx := informer.Indexers{}
	for _, name := range names {
		switch {
		case name == "namespace":
			idx[informer.NamespaceIndex] = informer.MetaNamespaceIndexFunc
		case strings.HasPrefix(name, "label:") && len(name) > len("label:"):
			key := strings.TrimPrefix(name, "label:")
			idx[name] = func(obj any) ([]string, error) {
				m, err := meta.Accessor(obj)
				if err != nil {
					return nil, err
				}
				if v, ok := m.GetLabels()[key]; ok {
					return []string{v}, nil
				}
				return nil, nil
			}
		default:
			return nil, fmt.Errorf("indexers: expected namespace or label:<key>, got %q", name)
		}
	}
	return idx, nil
}

func (e *Env) restart(d Directive, add func(string, ...any)) error {
	st, err := e.informer(d)
	if err != nil {
		return err
	}
	st.n.Stop()
	e.w.Settle()
	as := d.str("as", "")
	if err := e.addInformer(st.d, as, add); err != nil {
		return err
	}
	nst := e.informers[as]
	for _, hs := range st.handlers {
		hd := hs.d
		hd.Args = slices.Clone(hd.Args)
		for i := range hd.Args {
			if hd.Args[i].Key == "informer" {
				hd.Args[i].Vals = []string{as}
			}
		}
		if err := e.addHandler(nst, hd, add); err != nil {
			return err
		}
	}
	if err := nst.n.Start(); err != nil {
		add("error: %v", err)
	}
	return nil
}

func (e *Env) addHandler(st *infState, d Directive, add func(string, ...any)) error {
	return e.addHandlerWith(st, d, nil, add)
}

// argOf builds one key=value argument.
func argOf(key, val string) datadriven.CmdArg {
	return datadriven.CmdArg{Key: key, Vals: []string{val}}
}

// addHandlerWith registers h (nil: a recording-only handler, or the filter's) as d says.
func (e *Env) addHandlerWith(st *infState, d Directive, h informer.ResourceEventHandler, add func(string, ...any)) error {
	name := d.str("name", "")
	key := st.name + "/" + name
	if _, ok := e.handlers[key]; ok {
		return fmt.Errorf("a handler named %q exists already", key)
	}
	hs := &handlerState{inf: st.name, name: name, d: d}
	if f, ok := d.arg("filter"); ok {
		sel, err := labels.Parse(f)
		if err != nil {
			return fmt.Errorf("filter: expected a label selector: %v", err)
		}
		hs.filter = sel
		h = informer.FilteringResourceEventHandler{
			FilterFunc: func(obj any) bool { return matches(sel, obj) },
			Handler:    passLog{hs},
		}
	}
	if d.has("mutates") {
		if h != nil {
			return fmt.Errorf("mutates: a filtering handler cannot also be a mutating one")
		}
		h = mutatingHandler{}
	}
	o := world.HandlerOptions{CallDuration: d.dur("slow", 0)}
	if d.has("resync") {
		r := d.dur("resync", 0)
		o.ResyncPeriod = &r
	}
	wh, err := e.w.AddHandler(st.n, name, h, o)
	if err != nil {
		add("error: %v", err)
		return nil
	}
	hs.h = wh
	e.handlers[key] = hs
	st.handlers = append(st.handlers, hs)
	return nil
}

// mutatingHandler is the classic controller bug the read-only-objects oracle catches: it labels
// the very object it is given (touched=yes) instead of a DeepCopy of it.
type mutatingHandler struct{}

func (mutatingHandler) OnAdd(obj any, _ bool)  { touch(obj) }
func (mutatingHandler) OnUpdate(_, newObj any) { touch(newObj) }
func (mutatingHandler) OnDelete(any)           {}

func touch(obj any) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		l := u.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		l["touched"] = "yes"
		u.SetLabels(l)
	}
}

func matches(sel labels.Selector, obj any) bool {
	if tomb, ok := obj.(informer.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	return sel.Matches(labels.Set(m.GetLabels()))
}

// passLog records what a filtered handler's inner handler is told, in informer.md §14's notation.
type passLog struct{ hs *handlerState }

func (p passLog) OnAdd(obj any, init bool) {
	p.hs.passed = append(p.hs.passed, fmt.Sprintf("add(%s,%t)", ref(obj), init))
}

func (p passLog) OnUpdate(oldObj, newObj any) {
	p.hs.passed = append(p.hs.passed, fmt.Sprintf("upd(%s->%s)", ref(oldObj), rvOf(newObj)))
}

func (p passLog) OnDelete(obj any) {
	if tomb, ok := obj.(informer.DeletedFinalStateUnknown); ok {
		p.hs.passed = append(p.hs.passed, fmt.Sprintf("del(tomb %s)", ref(tomb.Obj)))
		return
	}
	p.hs.passed = append(p.hs.passed, fmt.Sprintf("del(%s)", ref(obj)))
}

func ref(obj any) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "?"
	}
	key := m.GetName()
	if m.GetNamespace() != "" {
		key = m.GetNamespace() + "/" + key
	}
	return key + "@" + m.GetResourceVersion()
}

func rvOf(obj any) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "?"
	}
	return m.GetResourceVersion()
}

// clientMatches says whether a request's client name is the informer's: the world names the
// ListerWatcher after the informer.
func clientMatches(client, informerName string) bool {
	return client == informerName || strings.HasSuffix(client, "/"+informerName) || strings.HasPrefix(client, informerName+"/")
}

const defaultBudget = time.Hour

func (e *Env) run(d Directive, add func(string, ...any)) error {
	s := e.w.Sim()
	n := 0
	for _, k := range []string{"for", "until", "steps"} {
		if d.has(k) {
			n++
		}
	}
	if n != 1 {
		return errors.New("run: expected exactly one of for=, until= or steps=")
	}
	switch {
	case d.has("for"):
		e.fail(s.RunFor(d.dur("for", 0)))
	case d.has("steps"):
		for range d.num("steps", 0) {
			ok, err := s.Step()
			if err != nil {
				e.fail(err)
				break
			}
			if !ok {
				break
			}
		}
	case d.str("until", "") == "converged":
		err := e.named.RunUntilConverged(d.dur("budget", defaultBudget))
		if errors.Is(err, world.ErrUsage) {
			// The file is wrong (an informer it never starts), not the run.
			return err
		}
		if err != nil {
			e.fail(err)
			return nil
		}
		add("converged at rv=%d: every cache and every handler's view equals the apiserver", e.w.Server().Revision())
	case d.str("until", "") == "event":
		want := d.str("event", "")
		if !strings.Contains(want, ":") {
			return errors.New(`run until=event: expected event=<actor>:<kind>, e.g. event=inf1/reflector:list-page`)
		}
		e.waitFor = want
		err := s.RunUntil(func() bool { return e.waitFor == "" }, d.dur("budget", time.Minute))
		e.waitFor = ""
		if err != nil {
			e.fail(fmt.Errorf("no event %s: %w", want, err))
		}
	case d.str("until", "") == "synced":
		st, err := e.informer(d)
		if err != nil {
			return err
		}
		inf := st.n.Informer()
		if err := s.RunUntil(inf.HasSynced, d.dur("budget", time.Minute)); err != nil {
			e.fail(fmt.Errorf("%s did not sync: %w", st.name, err))
			return nil
		}
		add("%s synced", st.name)
	}
	return nil
}

func (e *Env) cache(d Directive, add func(string, ...any)) error {
	st, err := e.informer(d)
	if err != nil {
		return err
	}
	idx := st.n.Informer().GetIndexer()
	var objs []any
	if index, ok := d.arg("index"); ok {
		objs, err = idx.ByIndex(index, d.str("value", ""))
		if err != nil {
			add("error: %v", err)
			return nil
		}
	} else {
		objs = idx.List()
	}
	lines := make([]string, 0, len(objs))
	for _, o := range objs {
		lines = append(lines, describe(o, d.has("full")))
	}
	slices.Sort(lines)
	add("%s cache: %d objects", st.name, len(lines))
	for _, l := range lines {
		add("  %s", l)
	}
	return nil
}

// describe renders an object as "ns/name@rv" and its labels; full adds annotations, finalizers
// and content.
func describe(obj any, full bool) string {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return ref(obj)
	}
	s := ref(u)
	if l := u.GetLabels(); len(l) > 0 {
		s += " labels=" + labels.Set(l).String()
	}
	if !full {
		return s
	}
	if a := u.GetAnnotations(); len(a) > 0 {
		s += " annotations=" + labels.Set(a).String()
	}
	if f := u.GetFinalizers(); len(f) > 0 {
		s += " finalizers=" + strings.Join(f, ",")
	}
	if u.GetDeletionTimestamp() != nil {
		s += " terminating"
	}
	content := map[string]any{}
	for k, v := range u.Object {
		if k != "apiVersion" && k != "kind" && k != "metadata" {
			content[k] = v
		}
	}
	if len(content) > 0 {
		s += " content=" + formatContent(content)
	}
	return s
}

func (e *Env) log(hs *handlerState, onlyNew bool, add func(string, ...any)) {
	rec := hs.h.Recorder()
	calls := rec.Strings()
	if onlyNew {
		calls = calls[max(len(calls)-(rec.Total()-hs.shown), 0):]
	}
	hs.shown = rec.Total()
	state := "synced"
	if !hs.h.HasSynced() {
		state = "not synced"
	}
	if hs.h.Removed() {
		state = "removed"
	}
	add("%s/%s (%s, %d calls in all):", hs.inf, hs.name, state, rec.Total())
	for _, c := range calls {
		add("  %s", c)
	}
	if hs.filter != nil {
		add("  passed by filter %q to the inner handler:", hs.filter.String())
		for _, c := range hs.passed {
			add("    %s", c)
		}
	}
}

func (e *Env) queue(d Directive, add func(string, ...any)) error {
	if name, ok := d.arg("workqueue"); ok {
		q, ok := e.queues[name]
		if !ok {
			return fmt.Errorf("no workqueue named %q", name)
		}
		q.describe(add)
		return nil
	}
	st, err := e.informer(d)
	if err != nil {
		return err
	}
	stp, err := informer.Steps(st.n.Informer())
	if err != nil {
		return err
	}
	add("%s queue: %d items", st.name, stp.QueueLen())
	for _, h := range st.n.Handlers() {
		if h.Removed() {
			continue
		}
		busy := ""
		if h.Busy() {
			busy = " (in a call)"
		}
		add("  %s: %d buffered%s", h.Name(), h.Buffered(), busy)
	}
	return nil
}

func (e *Env) requests(d Directive, add func(string, ...any)) {
	all := e.w.Server().Requests()
	from := e.reqSeen
	if d.has("all") || from > len(all) {
		from = 0
	}
	e.reqSeen = len(all)
	client := d.str("client", "")
	n := 0
	for _, r := range all[from:] {
		if client != "" && !clientMatches(r.Client, client) {
			continue
		}
		add("%s", formatRequest(r))
		n++
	}
	if n == 0 {
		add("no new requests")
	}
}

func formatRequest(r fakeapi.RequestRecord) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s %s", r.Seq, r.Verb, r.Resource.Resource)
	if r.Namespace != "" {
		fmt.Fprintf(&b, " ns=%s", r.Namespace)
	}
	if r.Name != "" {
		fmt.Fprintf(&b, " name=%s", r.Name)
	}
	o := r.Options
	if r.Verb == fakeapi.VerbList || r.Verb == fakeapi.VerbWatch {
		fmt.Fprintf(&b, " rv=%q", o.ResourceVersion)
		if o.ResourceVersionMatch != "" {
			fmt.Fprintf(&b, " match=%s", o.ResourceVersionMatch)
		}
		if o.Limit != 0 {
			fmt.Fprintf(&b, " limit=%d", o.Limit)
		}
		if o.Continue != "" {
			b.WriteString(" continue=yes")
		}
		if o.SendInitialEvents != nil && *o.SendInitialEvents {
			b.WriteString(" sendInitialEvents=true")
		}
		if o.LabelSelector != "" {
			fmt.Fprintf(&b, " labels=%s", o.LabelSelector)
		}
		if o.FieldSelector != "" {
			fmt.Fprintf(&b, " fields=%s", o.FieldSelector)
		}
		if r.Replica >= 0 {
			fmt.Fprintf(&b, " replica=%d", r.Replica)
		}
	}
	b.WriteString(" ->")
	switch {
	case r.Err != "":
		fmt.Fprintf(&b, " %d %s", r.Code, r.Reason)
	case r.Verb == fakeapi.VerbList:
		fmt.Fprintf(&b, " rv=%s", r.ListRV)
		if r.Continue != "" {
			b.WriteString(" continue=yes")
		}
	case r.Verb == fakeapi.VerbWatch:
		fmt.Fprintf(&b, " watch=%d", r.WatchID)
	default:
		fmt.Fprintf(&b, " rv=%s", r.ObjectRV)
	}
	return b.String()
}

func (e *Env) objects(d Directive, add func(string, ...any)) error {
	gvr, err := parseResource(d.str("resource", ""))
	if err != nil {
		return err
	}
	if gvr.Empty() {
		gvr = e.w.Config().DefaultResource
	}
	list, err := e.w.Server().Snapshot(gvr, d.str("ns", ""), metav1.ListOptions{})
	if err != nil {
		add("error: %v", err)
		return nil
	}
	add("apiserver %s at rv=%s: %d objects", gvr.Resource, list.GetResourceVersion(), len(list.Items))
	lines := make([]string, 0, len(list.Items))
	for i := range list.Items {
		lines = append(lines, describe(&list.Items[i], true))
	}
	slices.Sort(lines)
	for _, l := range lines {
		add("  %s", l)
	}
	return nil
}

func (e *Env) verdicts(add func(string, ...any)) {
	deliveries := 0
	for _, name := range e.infOrder {
		for _, h := range e.informers[name].n.Handlers() {
			deliveries += h.Recorder().Total()
		}
	}
	add("%d deliveries checked", deliveries)
	for _, v := range e.named.Verdicts() {
		if v.Name == oracle.EventualConsistency {
			continue
		}
		add("%s", v.String())
	}
	if err := e.w.CheckConverged(); err != nil {
		add("%s (%s): not converged now: %v", oracle.EventualConsistency, oracle.Liveness, err)
	} else {
		add("%s (%s): ok now: every cache and handler view equals the apiserver", oracle.EventualConsistency, oracle.Liveness)
	}
}

// ctx is the context of the controllers' writes.
var ctx = context.Background()

// populate creates n pods named <prefix>-000... and narrates them as one line.
func (e *Env) populate(d Directive, add func(string, ...any)) error {
	n := d.num("n", 0)
	if n == 0 || n > 10_000 {
		return errors.New("populate: expected n between 1 and 10000")
	}
	prefix := d.str("prefix", "p")
	var lbl map[string]string
	if l, ok := d.arg("label"); ok {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return fmt.Errorf("populate: label: expected key=value, got %q", l)
		}
		lbl = map[string]string{k: v}
	}
	before := len(e.pending)
	first := e.w.Server().Revision() + 1
	for i := range n {
		op := world.Op{Kind: world.OpCreate, Namespace: d.str("ns", ""), Name: fmt.Sprintf("%s-%03d", prefix, i), Labels: lbl}
		if err := e.w.Apply(op); err != nil {
			return fmt.Errorf("populate: %v", err)
		}
	}
	e.pending = e.pending[:before]
	add("created %d pods %s-000..%s-%03d at rv=%d..%d", n, prefix, prefix, n-1, first, e.w.Server().Revision())
	return nil
}
