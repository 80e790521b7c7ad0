package world

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/internal/chunklog"
	"github.com/informersim/informersim/internal/invariant"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world/narration"
)

// The fake apiserver's adapter is a ListerWatcher of the informer; the check lives here, in the
// lowest package that imports both (style.md rule 2).
var _ informer.ListerWatcher = (*fakeapi.ListerWatcher)(nil)

// Defaults of Config; each is documented on its field.
const (
	DefaultMinLatency               = time.Millisecond
	DefaultMaxLatency               = 50 * time.Millisecond
	DefaultMaxInformers             = 16
	DefaultMaxHandlers              = 64
	DefaultMaxInFlightEvents        = 1000
	DefaultMaxRecordedNotifications = 100_000
)

// DefaultResource is the resource an Op, an informer and a generator use when they name none
// and Config.DefaultResource is zero: pods. The apiserver deletes pods gracefully (fakeapi.md
// §5.3): an unscheduled pod's delete stores deletionTimestamp first (MODIFIED), then removes it
// at the next revision (DELETED).
func DefaultResource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Version: "v1", Resource: "pods"}
}

// DefaultNamespace is the namespace of a namespaced object whose Op names none.
const DefaultNamespace = "default"

// Config configures a World. New validates a copy and fills the zero fields with the defaults
// above; the caller's struct is never changed (style.md rule 17).
type Config struct {
	// DefaultResource is what an Op, AddInformer and Generate use when they name no resource.
	// Zero means DefaultResource() (pods). It must be served by the apiserver.
	DefaultResource schema.GroupVersionResource

	// MinLatency and MaxLatency bound the one-way network latency between the apiserver and an
	// informer: each response and each watch event draws its latency uniformly from
	// [MinLatency, MaxLatency] on the "network" stream. Zero means DefaultMinLatency (1ms) and
	// DefaultMaxLatency (50ms); MinLatency must not exceed MaxLatency.
	MinLatency time.Duration
	MaxLatency time.Duration

	// MaxInformers bounds the informers of a world that are not stopped (a restarted
	// controller's stopped ones do not count). Zero means DefaultMaxInformers (16).
	MaxInformers int
	// MaxHandlers bounds the handler registrations of one informer, removed ones included.
	// Zero means DefaultMaxHandlers (64).
	MaxHandlers int
	// MaxInFlightEvents bounds the watch events pulled from one stream and not yet delivered:
	// at the bound the stream stops pulling (TCP flow control), so the apiserver's own buffer
	// fills and it may cut the watch off as a slow consumer. Zero means
	// DefaultMaxInFlightEvents (1000).
	MaxInFlightEvents int
	// MaxRecordedNotifications bounds the notifications each handler's DeliveryLog keeps for
	// assertions (the oldest are dropped first; the oracles keep working on every one).
	// Zero means DefaultMaxRecordedNotifications (100,000).
	MaxRecordedNotifications int
	// CheckReadOnlyEachDelivery has the apiserver check the objects a handler was given at the
	// end of its delivery step (fakeapi.Lending.CheckObject), so that a read-only-objects
	// violation stops the run at the step of the handler that changed one. Without it a change
	// is noticed at the object's next write, when it leaves the apiserver's history, or in
	// CheckConverged, and the trace in between shows the handlers that could have made it. Each
	// delivery then costs a fingerprint of its objects, about a microsecond.
	CheckReadOnlyEachDelivery bool
	// RecordOps keeps every op the world applies (World.Ops), so that any run, not only a
	// Generator's, can be written out as a scenario file and replayed. Off by default: the
	// record grows with the run.
	RecordOps bool
	// ControlPlane, when not nil, runs the stand-ins of kube-controller-manager (package
	// controlplane: the garbage collector, the namespace controller, workload status) as actors
	// on the engine, each under its own name (narration.ActorGarbageCollector...), counted by
	// Quiet. Its Rand must be nil: the world draws from its "controlplane" stream. Off by default,
	// so a world's runs are those of a world without it.
	ControlPlane *controlplane.Config
}

func (c Config) validate() (Config, error) {
	if c.MinLatency < 0 || c.MaxLatency < 0 {
		return c, fmt.Errorf("world: Config: negative latency [%v, %v]", c.MinLatency, c.MaxLatency)
	}
	if c.MinLatency == 0 {
		c.MinLatency = DefaultMinLatency
		if c.MaxLatency > 0 && c.MaxLatency < c.MinLatency {
			c.MinLatency = c.MaxLatency
		}
	}
	if c.MaxLatency == 0 {
		c.MaxLatency = max(DefaultMaxLatency, c.MinLatency)
	}
	if c.MinLatency > c.MaxLatency {
		return c, fmt.Errorf("world: Config: MinLatency %v exceeds MaxLatency %v", c.MinLatency, c.MaxLatency)
	}
	if c.DefaultResource.Empty() {
		c.DefaultResource = DefaultResource()
	}
	for _, f := range []struct {
		v   *int
		def int
		n   string
	}{
		{&c.MaxInformers, DefaultMaxInformers, "MaxInformers"},
		{&c.MaxHandlers, DefaultMaxHandlers, "MaxHandlers"},
		{&c.MaxInFlightEvents, DefaultMaxInFlightEvents, "MaxInFlightEvents"},
		{&c.MaxRecordedNotifications, DefaultMaxRecordedNotifications, "MaxRecordedNotifications"},
	} {
		if *f.v < 0 {
			return c, fmt.Errorf("world: Config: negative %s %d", f.n, *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	return c, nil
}

// World is a simulated cluster: one fake apiserver, any number of informers, the network
// between them, the user's own actors, and the oracles that say whether the informers got it
// right. Every component is an actor of one sim.Sim, so the seed decides every interleaving and
// every latency (design.md "Determinism"). See the package documentation.
type World struct {
	// cp is the control plane's stand-ins when Config.ControlPlane is set (controlplane.go).
	cp *controlplane.ControlPlane
	// hooks are the admission webhooks' faults (webhooks.go).
	hooks webhooks
	s     *sim.Sim
	srv   *fakeapi.Server
	cfg   Config
	net   *rand.Rand // the "network" stream: latencies

	informers []*Informer
	actors    map[string]bool                                  // actor names in use: the trace must tell them apart
	kinds     map[schema.GroupVersionResource]fakeapi.Resource // resourceKind's answers; never iterated

	// The apiserver's one engine timer, armed at srv.NextDeadline() (bookmarks, watch deadlines,
	// compaction, lagging caches).
	srvTimer *deadlineTimer
	// srvNext is srv.NextDeadline()'s last answer, asked at sim time srvNext.now; it stands
	// until the apiserver's state may have changed (srvNext.stale, set by the server's
	// OnStateChange observer) or the clock moved, as NextDeadline's answer depends on nothing
	// else. settle asks after every step, and most steps (a handler's delivery, the informer's
	// processing) touch no apiserver state: they are spared the server's lock. Test binaries
	// ask anyway and check the kept answer (invariant.Thorough).
	srvNext struct {
		stale bool
		now   time.Duration
		at    time.Time
		ok    bool
	}
	checkSrvNext bool // invariant.Thorough when the world was made

	// delivered holds the objects handlers were given in this step, for the read-only check at
	// its end (Config.CheckReadOnlyEachDelivery).
	delivered []deliveredObject

	// pendingOps counts scripted op batches not yet applied and generators not done: the world
	// is not Quiet while the workload still has something to say.
	pendingOps int
	// opLog is every op applied, with Config.RecordOps (Ops): a record is a few hundred bytes,
	// which a slice grown by append copied at every doubling.
	opLog chunklog.Log[GeneratedOp]
	// applying counts the ops being applied: an op a client's host applies while taking a
	// client fault (a hidden change's writes) is part of that op, not recorded on its own.
	applying int
	// clients are the clients of the apiserver the world does not run, whose hosts take the
	// client faults aimed at them (clientfaults.go), in their order of registration.
	clients []client

	// The user's work (user.go).
	userActors []sim.Actor
	userTimers []*sim.Timer
	quietConds []namedCond
	checks     []namedCheck
	deadlines  []*userDeadlines
}

// New builds a world for seed: a sim.Sim with every other engine setting at its default, a fake
// apiserver on the sim's clock and "apiserver" stream, and the world around them. The run's
// repro line (sim.Config.Repro) replays it under go test; see Repro.
func New(seed uint64, cfg Config) (*World, error) {
	return NewFromConfig(sim.Config{Seed: seed}, fakeapi.Config{}, cfg)
}

// NewFromConfig is New with the engine's and the apiserver's settings given. apiCfg.Clock and
// apiCfg.Rand must be nil: the world sets them from the sim. An empty simCfg.Repro becomes
// Repro(simCfg.Seed).
func NewFromConfig(simCfg sim.Config, apiCfg fakeapi.Config, cfg Config) (*World, error) {
	if apiCfg.Clock != nil || apiCfg.Rand != nil {
		return nil, errors.New("world: NewFromConfig: the world sets the apiserver's Clock and Rand; leave them nil")
	}
	if simCfg.Repro == "" {
		simCfg.Repro = Repro(simCfg.Seed)
	}
	s, err := sim.New(simCfg)
	if err != nil {
		return nil, fmt.Errorf("world: %w", err)
	}
	apiCfg.Clock = s.ClockFor("apiserver")
	apiCfg.Rand = s.Rand(sim.StreamAPIServer)
	srv, err := fakeapi.New(apiCfg)
	if err != nil {
		return nil, fmt.Errorf("world: %w", err)
	}
	return NewOn(s, srv, cfg)
}

// NewOn builds a world around an existing engine and apiserver. srv must have been built with
// the sim's clock (fakeapi.Config{Clock: s.ClockFor("apiserver"), Rand: s.Rand(sim.StreamAPIServer)}),
// so that the apiserver's time is the simulation's; New does that for you. A Sim or Server hosts
// at most one world.
func NewOn(s *sim.Sim, srv *fakeapi.Server, cfg Config) (*World, error) {
	if s == nil || srv == nil {
		return nil, errors.New("world: NewOn: nil Sim or Server")
	}
	if c, ok := srv.Config().Clock.(*sim.Clock); !ok || c.Owner() != s {
		return nil, errors.New("world: NewOn: the apiserver's Config.Clock must be the sim's clock (s.ClockFor(\"apiserver\"))")
	}
	vc, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	w := &World{s: s, srv: srv, cfg: vc, net: s.Rand(sim.StreamNetwork), actors: map[string]bool{},
		kinds: map[schema.GroupVersionResource]fakeapi.Resource{}}
	if _, ok := w.resourceKind(vc.DefaultResource); !ok {
		return nil, fmt.Errorf("world: Config: the apiserver does not serve DefaultResource %s", w.notServed(vc.DefaultResource))
	}
	// The world settles at the end of every step, whichever actor or timer ran (its own, the
	// user's, or one added to the engine directly), so no action needs to remember to.
	if err := s.AfterEachStep("world", w.settle); err != nil {
		return nil, errors.New("world: NewOn: the Sim already hosts a world")
	}
	w.srvTimer = &deadlineTimer{s: s, actor: narration.ActorAPIServer, kind: narration.StepAdvance, fire: func() { srv.Advance() }}
	w.srvNext.stale, w.checkSrvNext = true, invariant.Thorough()
	srv.OnStateChange(func() { w.srvNext.stale = true })
	w.actors["apiserver"] = true
	for _, a := range []string{"workload", "fault", "clock"} {
		w.actors[a] = true // the generator's, the engine's fault points', the engine clock's
	}
	srv.OnCommit(w.narrateCommit)
	s.SetKnob("latency", vc.MinLatency.String()+".."+vc.MaxLatency.String())
	if vc.ControlPlane != nil {
		if err := w.startControlPlane(*vc.ControlPlane); err != nil {
			return nil, err
		}
	}
	w.settle()
	return w, nil
}

// Sim returns the world's engine: run it with RunFor or RunUntil, or use the world's
// RunUntilConverged.
func (w *World) Sim() *sim.Sim { return w.s }

// Server returns the world's fake apiserver. Every write made on it, from a test, a handler or
// an actor, is narrated. Calls made on it outside a step (from a test, between runs) may change
// its next deadline: call Settle afterwards, or use Apply.
func (w *World) Server() *fakeapi.Server { return w.srv }

// Config returns the world's configuration with defaults filled in.
func (w *World) Config() Config { return w.cfg }

// Informers returns the world's informers in the order they were added.
func (w *World) Informers() []*Informer { return append([]*Informer(nil), w.informers...) }

// Settle re-arms the engine timers of the apiserver and of every informer at their components'
// next deadlines, stops the apiserver's watcher of any stream a Reflector has left, and gives
// registrations made directly on an informer their actors. Every action of the world does it at
// its end; call it after driving the apiserver or an informer directly from outside a step.
// It returns the read-only-objects *Violation when a change to an object an informer handed out
// has been found (by a write made since the last step, say): the run has failed, and every
// later step and check fails with it too.
func (w *World) Settle() error { return w.settleOutside() }

// settle is the end of every step (an AfterEachStep hook): there, a change to a lent object is a
// panic that the engine turns into the run's failure at that step.
func (w *World) settle() {
	if v := w.settleChecked(); v != nil {
		panic(v)
	}
}

// settleOutside is settle for the methods a test calls between runs (Apply, Start, AddHandler,
// ...): a change to a lent object is returned as the *Violation a step would have failed the
// run with, not a panic escaping into the caller's test.
func (w *World) settleOutside() error {
	if v := w.settleChecked(); v != nil {
		return v
	}
	return nil
}

// settleChecked settles the world, unless a change to a lent object has been found: then it
// settles nothing and returns the violation (the run has failed; nothing more runs).
func (w *World) settleChecked() *Violation {
	for i, d := range w.delivered {
		_ = w.srv.Lending().CheckObject(d.obj, "the end of "+d.handler+"'s delivery step") // reported below
		w.delivered[i] = deliveredObject{}
	}
	w.delivered = w.delivered[:0]
	if err := w.srv.Lending().Mutation(); err != nil {
		return w.violationAbout(OracleReadOnlyObjects, err.Error(), mutatedKey(err), w.lastEvent())
	}
	for _, n := range w.informers {
		n.settle()
	}
	w.srvTimer.arm(w.srvNextDeadline())
	for _, u := range w.deadlines {
		at, ok := u.d.Next()
		u.timer.arm(at, ok)
	}
	return nil
}

// srvNextDeadline is srv.NextDeadline(), asked only when its answer may have changed (see
// World.srvNext).
func (w *World) srvNextDeadline() (time.Time, bool) {
	n, now := &w.srvNext, w.s.Now()
	if n.stale || n.now != now {
		n.at, n.ok = w.srv.NextDeadline()
		n.stale, n.now = false, now
	} else if w.checkSrvNext {
		if at, ok := w.srv.NextDeadline(); !at.Equal(n.at) || ok != n.ok {
			invariant.Check(false, "world: the apiserver's next deadline is %v %v, the world kept %v %v: a state change went unseen", at, ok, n.at, n.ok)
		}
	}
	return n.at, n.ok
}

// claim reserves an actor name, which must be new.
func (w *World) claim(actor string) error {
	if w.actors[actor] {
		return fmt.Errorf("actor name %q is already in use", actor)
	}
	w.actors[actor] = true
	return nil
}

// validName reports whether name can be one segment of an actor name.
func validName(name string) bool {
	return name != "" && !strings.ContainsAny(name, "/ \t\n=\"")
}

// latency draws one network latency from the "network" stream.
func (w *World) latency() time.Duration {
	lo, hi := w.cfg.MinLatency, w.cfg.MaxLatency
	if hi == lo {
		return lo
	}
	return lo + time.Duration(w.net.Int64N(int64(hi-lo)+1))
}

// after schedules fn as a traced step d from now (the world settles after it, as after every
// step).
func (w *World) after(d time.Duration, actor, kind string, fn func()) *sim.Timer {
	return w.s.AfterFunc(d, actor, kind, fn)
}

// resourceKind looks up how the apiserver serves gvr. The apiserver's resources are fixed when it
// is built, so each answer is kept (every op asks).
func (w *World) resourceKind(gvr schema.GroupVersionResource) (fakeapi.Resource, bool) {
	if r, ok := w.kinds[gvr]; ok {
		return r, true
	}
	r, ok := w.lookupResource(gvr)
	if ok {
		w.kinds[gvr] = r
	}
	return r, ok
}

// notServed completes "the apiserver does not serve ": gvr, then what the apiserver does serve.
func (w *World) notServed(gvr schema.GroupVersionResource) string {
	var served []string
	seen := map[schema.GroupVersionResource]bool{}
	for _, r := range slices.Concat(w.srv.Config().Resources, fakeapi.BuiltinResources()) {
		if !seen[r.GVR] {
			seen[r.GVR] = true
			served = append(served, gvrString(r.GVR))
		}
	}
	sort.Strings(served)
	hint := ""
	if gvr.Version == "" {
		hint = " (it has no Version: core resources are {Version: \"v1\", Resource: \"pods\"})"
	}
	return fmt.Sprintf("%s%s; it serves %s (a custom resource is served once listed in fakeapi.Config.Resources, given to NewFromConfig)",
		gvrString(gvr), hint, strings.Join(served, ", "))
}

// gvrString writes gvr as a URL path does: "v1/pods", "apps/v1/deployments".
func gvrString(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return fmt.Sprintf("%q", gvr.Version+"/"+gvr.Resource)
	}
	return fmt.Sprintf("%q", gvr.Group+"/"+gvr.Version+"/"+gvr.Resource)
}

func (w *World) lookupResource(gvr schema.GroupVersionResource) (fakeapi.Resource, bool) {
	res := w.srv.Config().Resources
	// Configured resources replace built-in ones with the same GVR.
	for i := len(res) - 1; i >= 0; i-- {
		if res[i].GVR == gvr {
			return res[i], true
		}
	}
	for _, r := range fakeapi.BuiltinResources() {
		if r.GVR == gvr {
			return r, true
		}
	}
	return fakeapi.Resource{}, false
}

// exampleObject is the informer's expected type: an Unstructured with the resource's GVK, so the
// Reflector skips events of any other kind (informer.md §7.6).
func exampleObject(gvr schema.GroupVersionResource, kind string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvr.GroupVersion().WithKind(kind))
	return u
}

// deadlineTimer keeps one engine timer armed at a component's next deadline (the Reflector's
// backoff or resync tick, the apiserver's bookmarks and deadlines). Components own no timers;
// the world re-arms this one after every step that may have moved the deadline.
type deadlineTimer struct {
	s     *sim.Sim
	actor string
	kind  string
	fire  func()

	t      *sim.Timer
	armed  bool
	at     time.Duration // since the epoch, when armed
	atTime time.Time     // the deadline it was armed for, when armed
}

// arm makes the timer fire at at (a clock time), or disarms it when ok is false. A deadline in
// the past fires at the next step.
func (d *deadlineTimer) arm(at time.Time, ok bool) {
	if !ok {
		if d.armed {
			d.t.Stop()
			d.armed = false
		}
		return
	}
	// The usual case, at the end of nearly every step: the same deadline as last time, and the
	// timer is not behind the clock, so it stays as it is (a deadline in the past is armed at
	// the time it was armed, never earlier than now). The comparison of the two times is their
	// representation: two equal instants written differently only take the longer way below.
	if d.armed && at == d.atTime && d.at >= d.s.Now() {
		return
	}
	want := max(at.Sub(sim.Epoch()), d.s.Now())
	d.atTime = at
	if d.armed && d.at == want {
		return
	}
	if d.t == nil {
		d.t = d.s.AfterFunc(want-d.s.Now(), d.actor, d.kind, d.run)
	} else {
		d.t.Reset(want - d.s.Now())
	}
	d.armed, d.at = true, want
}

func (d *deadlineTimer) disarm() { d.arm(time.Time{}, false) }

func (d *deadlineTimer) run() {
	if !d.armed { // only then: the message arguments allocate
		invariant.Check(false, "world: %s %s fired while disarmed", d.actor, d.kind)
	}
	d.armed = false
	d.fire()
}
