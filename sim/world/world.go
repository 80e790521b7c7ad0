package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/internal/invariant"
)

// The fake apiserver's adapter is a ListerWatcher of the informer; the check lives here, in the
// lowest package that imports both (style rule 2).
var _ informer.ListerWatcher = (*fakeapi.ListerWatcher)(nil)

// Defaults of WorldConfig; each is documented on its field.
const (
	DefaultMinLatency               = time.Millisecond
	DefaultMaxLatency               = 50 * time.Millisecond
	DefaultMaxInformers             = 16
	DefaultMaxHandlers              = 64
	DefaultMaxInFlightEvents        = 1000
	DefaultMaxRecordedNotifications = 100_000
)

// WorldConfig configures a World. NewWorld validates a copy and fills the zero fields with the
// defaults above; the caller's struct is never changed (style rule 17).
type WorldConfig struct {
	// MinLatency and MaxLatency bound the one-way network latency between the apiserver and an
	// informer: each response and each watch event draws its latency uniformly from
	// [MinLatency, MaxLatency] on the "network" stream. Zero means DefaultMinLatency (1ms) and
	// DefaultMaxLatency (50ms); MinLatency must not exceed MaxLatency.
	MinLatency time.Duration
	MaxLatency time.Duration

	// MaxInformers bounds the informers of a world. Zero means DefaultMaxInformers (16).
	MaxInformers int
	// MaxHandlers bounds the handler registrations of one informer, removed ones included.
	// Zero means DefaultMaxHandlers (64).
	MaxHandlers int
	// MaxInFlightEvents bounds the watch events pulled from one stream and not yet delivered:
	// at the bound the stream stops pulling (TCP flow control), so the apiserver's own buffer
	// fills and it may cut the watch off as a slow consumer. Zero means
	// DefaultMaxInFlightEvents (1000).
	MaxInFlightEvents int
	// MaxRecordedNotifications bounds the notifications each handler's Recorder keeps for
	// assertions (the oldest are dropped first; the oracles keep working on every one).
	// Zero means DefaultMaxRecordedNotifications (100,000).
	MaxRecordedNotifications int
}

func (c WorldConfig) validate() (WorldConfig, error) {
	if c.MinLatency < 0 || c.MaxLatency < 0 {
		return c, fmt.Errorf("sim: WorldConfig: negative latency [%v, %v]", c.MinLatency, c.MaxLatency)
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
		return c, fmt.Errorf("sim: WorldConfig: MinLatency %v exceeds MaxLatency %v", c.MinLatency, c.MaxLatency)
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
			return c, fmt.Errorf("sim: WorldConfig: negative %s %d", f.n, *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	return c, nil
}

// World is a simulated cluster: one fake apiserver, any number of informers, the network
// between them, and the oracles that say whether the informers got it right. Every component is
// an actor of one Sim, so the seed decides every interleaving and every latency (design.md,
// style rule 6). See the package documentation, section "The world".
type World struct {
	s   *Sim
	srv *fakeapi.Server
	cfg WorldConfig
	net *rand.Rand

	informers []*InformerNode
	actors    map[string]bool // actor names in use: the trace must tell them apart

	// The apiserver's one engine timer, armed at srv.NextDeadline() (bookmarks, watch deadlines,
	// compaction, lagging caches).
	srvTimer *deadlineTimer

	// pendingOps counts scripted ops not yet applied and generators not done: the world is not
	// Quiet while the workload still has something to say.
	pendingOps int
}

// NewWorld builds a world around s and srv. srv must have been built with the sim's clock
// (fakeapi.Config{Clock: s.ClockFor("apiserver"), Rand: s.Rand(StreamAPIServer)}), so that the
// apiserver's time is the simulation's; NewWorldFromSeed does that for you.
func NewWorld(s *Sim, srv *fakeapi.Server, cfg WorldConfig) (*World, error) {
	if s == nil || srv == nil {
		return nil, errors.New("sim: NewWorld: nil Sim or Server")
	}
	c, ok := srv.Config().Clock.(*Clock)
	if !ok || c.s != s {
		return nil, errors.New("sim: NewWorld: the apiserver's Config.Clock must be the sim's clock (s.ClockFor(\"apiserver\"))")
	}
	vc, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	w := &World{s: s, srv: srv, cfg: vc, net: s.Rand(StreamNetwork), actors: map[string]bool{}}
	w.srvTimer = &deadlineTimer{s: s, actor: "apiserver", kind: "advance", fire: func() { srv.Advance() }, after: w.settle}
	w.actors["apiserver"] = true
	s.SetKnob("latency", vc.MinLatency.String()+".."+vc.MaxLatency.String())
	w.settle()
	return w, nil
}

// NewWorldFromSeed builds a Sim for seed (every other engine setting at its default), a fake
// apiserver on the sim's clock and "apiserver" stream, and the world around them.
func NewWorldFromSeed(seed uint64, cfg WorldConfig) (*World, error) {
	return NewWorldFromConfig(Config{Seed: seed}, fakeapi.Config{}, cfg)
}

// NewWorldFromConfig is NewWorldFromSeed with the engine's and the apiserver's settings given.
// apiCfg.Clock and apiCfg.Rand must be nil: the world sets them from the sim.
func NewWorldFromConfig(simCfg Config, apiCfg fakeapi.Config, cfg WorldConfig) (*World, error) {
	if apiCfg.Clock != nil || apiCfg.Rand != nil {
		return nil, errors.New("sim: NewWorldFromConfig: the world sets the apiserver's Clock and Rand; leave them nil")
	}
	s, err := New(simCfg)
	if err != nil {
		return nil, err
	}
	apiCfg.Clock = s.ClockFor("apiserver")
	apiCfg.Rand = s.Rand(StreamAPIServer)
	srv, err := fakeapi.New(apiCfg)
	if err != nil {
		return nil, err
	}
	return NewWorld(s, srv, cfg)
}

// Sim returns the world's engine: run it with RunFor, RunUntil, or the world's RunUntilConverged.
func (w *World) Sim() *Sim { return w.s }

// Server returns the world's fake apiserver. Calls made on it outside a step (from a test,
// between runs) may change its next deadline: call Settle afterwards, or use Apply.
func (w *World) Server() *fakeapi.Server { return w.srv }

// Config returns the world's configuration with defaults filled in.
func (w *World) Config() WorldConfig { return w.cfg }

// Informers returns the world's informers in the order they were added.
func (w *World) Informers() []*InformerNode { return append([]*InformerNode(nil), w.informers...) }

// Settle re-arms the engine timers of the apiserver and of every informer at their components'
// next deadlines, and stops the apiserver's watcher of any stream a Reflector has left. Every
// action of the world does it at its end; call it after driving the apiserver or an informer
// directly from outside a step. (A Reflector's next request needs no settling: the reflector
// actor asks Reflector.HasRequest each time the scheduler collects actions.)
func (w *World) Settle() { w.settle() }

func (w *World) settle() {
	for _, n := range w.informers {
		n.settle()
	}
	at, ok := w.srv.NextDeadline()
	w.srvTimer.arm(at, ok)
}

func (w *World) claim(actor string) error {
	if w.actors[actor] {
		return fmt.Errorf("sim: actor name %q is already in use", actor)
	}
	w.actors[actor] = true
	return nil
}

// latency draws one network latency from the "network" stream.
func (w *World) latency() time.Duration {
	lo, hi := w.cfg.MinLatency, w.cfg.MaxLatency
	if hi == lo {
		return lo
	}
	return lo + time.Duration(w.net.Int64N(int64(hi-lo)+1))
}

// After schedules fn as a traced step (actor, kind) d from now, after which the world settles:
// use it to act on the world mid-run (register a late handler, stop an informer, write). A
// negative d, an empty actor or kind, or a nil fn is an error.
func (w *World) After(d time.Duration, actor, kind string, fn func()) (*Timer, error) {
	switch {
	case d < 0:
		return nil, fmt.Errorf("sim: After: negative delay %v", d)
	case actor == "" || kind == "":
		return nil, fmt.Errorf("sim: After: empty actor %q or kind %q", actor, kind)
	case fn == nil:
		return nil, errors.New("sim: After: nil func")
	}
	return w.after(d, actor, kind, fn), nil
}

// after schedules fn as a traced step d from now; the world settles after it.
func (w *World) after(d time.Duration, actor, kind string, fn func()) *Timer {
	return w.s.AfterFunc(d, actor, kind, func() {
		fn()
		w.settle()
	})
}

// resourceKind looks up the Kind the apiserver serves gvr as.
func (w *World) resourceKind(gvr schema.GroupVersionResource) (fakeapi.Resource, bool) {
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
	s     *Sim
	actor string
	kind  string
	fire  func()
	after func()

	t     *Timer
	armed bool
	at    time.Duration // since Epoch, when armed
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
	want := max(at.Sub(Epoch), d.s.Now())
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
	invariant.Check(d.armed, "sim: %s %s fired while disarmed", d.actor, d.kind)
	d.armed = false
	d.fire()
	d.after()
}

// Narrate renders the narration of events, one line each, as "time actor: kind fields"
// ("+0.017s inf1/h1: OnAdd obj=default/p1 rv=2 initial=true"), leaving out the scheduler's step
// events (the first event of each step), so a run reads like informer.md §14's worked traces.
func Narrate(events []Event) string {
	var b []byte
	last := int64(0)
	for i := range events {
		e := &events[i]
		if e.Step != last {
			last = e.Step
			continue
		}
		b = appendSimTime(b, e.Time)
		b = append(b, ' ')
		b = append(b, e.Actor...)
		b = append(b, ": "...)
		b = append(b, e.Kind...)
		for _, f := range e.Fields {
			b = append(b, ' ')
			b = append(b, f.Key...)
			b = append(b, '=')
			b = appendValue(b, f.Value)
		}
		b = append(b, '\n')
	}
	return string(b)
}
