package world

import (
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world/narration"
)

// InformerSpec says what an informer of the world watches, how the convergence oracle compares
// its cache with the apiserver, and the informer's own options. (informer.InformerOptions and
// informer.SharedIndexInformerOptions are client-go's names for the options of an informer
// alone.)
type InformerSpec struct {
	// Resource is the resource watched; zero means the world's Config.DefaultResource.
	Resource schema.GroupVersionResource
	// Namespace is the namespace watched; "" means all (and must be "" for a cluster-scoped
	// resource).
	Namespace string
	// LabelSelector and FieldSelector restrict the informer's LIST and WATCH requests, as
	// client-go's TweakListOptionsFunc does; the oracle compares the cache with the objects
	// that match them.
	LabelSelector string
	FieldSelector string
	// Transform, if set, is installed with SetTransform (AddInformer) and applied by the oracle
	// to a copy of each apiserver object before comparing: the cache holds transformed
	// objects. For an informer built elsewhere (HostInformer), set it to the transform that
	// informer was given.
	Transform informer.TransformFunc
	// TransformReadsOnly promises that the informer's transform only reads the object it is
	// given and returns one that shares no memory with it, as a conversion to a Go type does
	// (a type with no interface values in it: apimachinery's converter shares what it puts in
	// an interface). The informer then takes the apiserver's own objects, lent read-only as an
	// informer without a transform does (fakeapi.md §10.5), instead of copies, and the oracle
	// hands Transform the apiserver's objects, not copies. A transform that changes what it is
	// given fails the run with the read-only-objects oracle.
	TransformReadsOnly bool
	// Equal, if set, decides whether a cached (or handler-replayed) object matches the
	// apiserver's (after Transform): the oracle then compares keys and Equal only. Nil means
	// the same resourceVersion and deeply equal content.
	Equal func(cached, apiserver any) bool
	// WatchList asks for the watch-list start-up (informer.md §7.3): the ListerWatcher reports
	// watch-list semantics as supported, so a Reflector that implements it opens a WATCH with
	// sendInitialEvents instead of LIST then WATCH. False: classic list+watch.
	WatchList bool
	// Informer holds the informer's own options (resync period, indexers, queue). The world
	// sets Clock and Rand; they must be nil.
	Informer informer.SharedIndexInformerOptions
}

// Source is what an informer of the world is built from: a ListerWatcher on the world's
// apiserver, a clock on the world's engine and a random stream of its own. AddInformer makes
// one and builds the informer itself; a caller that builds informers elsewhere (a factory, a
// controller's own code) asks NewSource for one, builds the informer with ListerWatcher,
// ExampleObject and Options, and hands it to HostInformer.
type Source struct {
	w       *World
	name    string
	gvr     schema.GroupVersionResource
	ns      string
	kind    string
	opts    InformerSpec
	lw      *fakeapi.ListerWatcher
	clk     *sim.Clock
	hosted  bool
	example *unstructured.Unstructured
}

// NewSource checks o and returns the source of an informer to be called name (the prefix of its
// actors). Nothing joins the world until HostInformer.
func (w *World) NewSource(name string, o InformerSpec) (*Source, error) {
	switch {
	case !validName(name):
		return nil, fmt.Errorf("world: informer: invalid name %q (non-empty, no '/', '=', '\"' or spaces)", name)
	case o.Informer.Clock != nil || o.Informer.Rand != nil:
		return nil, fmt.Errorf("world: informer %s: the world sets Clock and Rand; leave them nil", name)
	case o.Informer.ResyncPeriod < 0:
		return nil, fmt.Errorf("world: informer %s: negative ResyncPeriod %v", name, o.Informer.ResyncPeriod)
	}
	gvr := o.Resource
	if gvr.Empty() {
		gvr = w.cfg.DefaultResource
	}
	if o.Namespace != "" {
		if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
			return nil, fmt.Errorf("world: informer %s: invalid namespace %q: %s", name, o.Namespace, strings.Join(errs, "; "))
		}
	}
	res, ok := w.resourceKind(gvr)
	if !ok {
		return nil, fmt.Errorf("world: informer %s: the apiserver does not serve %s", name, w.notServed(gvr))
	}
	if !res.Namespaced && o.Namespace != "" {
		return nil, fmt.Errorf("world: informer %s: %v is cluster-scoped; namespace must be empty", name, gvr)
	}
	if _, err := labels.Parse(o.LabelSelector); err != nil {
		return nil, fmt.Errorf("world: informer %s: selectors: LabelSelector %q: %w", name, o.LabelSelector, err)
	}
	if _, err := fields.ParseSelector(o.FieldSelector); err != nil {
		return nil, fmt.Errorf("world: informer %s: selectors: FieldSelector %q: %w", name, o.FieldSelector, err)
	}
	// The apiserver says which fields it supports for the resource.
	sel := metav1.ListOptions{LabelSelector: o.LabelSelector, FieldSelector: o.FieldSelector}
	if err := w.srv.CheckSelectors(gvr, sel); err != nil {
		return nil, fmt.Errorf("world: informer %s: selectors: %w", name, err)
	}
	if w.actors[name+"/reflector"] {
		return nil, fmt.Errorf("world: informer %s: the world has an informer of that name already", name)
	}
	src := &Source{w: w, name: name, gvr: gvr, ns: o.Namespace, kind: res.Kind, opts: o}
	src.lw = w.srv.ListerWatcher(gvr, o.Namespace)
	src.lw.Name = name
	src.lw.WatchListUnsupported = !o.WatchList // informer.md §7.3
	if o.LabelSelector != "" || o.FieldSelector != "" {
		ls, fs := o.LabelSelector, o.FieldSelector
		src.lw.Tweak = func(lo *metav1.ListOptions) { lo.LabelSelector, lo.FieldSelector = ls, fs }
	}
	src.clk = w.s.ClockFor("informer/" + name)
	src.example = exampleObject(gvr, res.Kind)
	return src, nil
}

// ListerWatcher returns the apiserver adapter to build the informer with. The world performs
// the Reflector's requests through it itself; the informer never calls it.
func (src *Source) ListerWatcher() informer.ListerWatcher { return src.lw }

// ExampleObject returns the informer's expected type: an Unstructured of the resource's kind.
func (src *Source) ExampleObject() runtime.Object { return exampleObject(src.gvr, src.kind) }

// Options returns o with the world's clock (ClockFor("informer/<name>")) and random
// stream ("jitter/<name>") set: the options to build the informer with.
func (src *Source) Options(o informer.SharedIndexInformerOptions) informer.SharedIndexInformerOptions {
	o.Clock = src.clk
	o.Rand = src.w.s.Rand("jitter/" + src.name)
	return o
}

// Informer is one informer of a World with the actors that drive it:
//
//	<name>/reflector  action "request", offered while Reflector.HasRequest: take the LIST or
//	                  WATCH with NextRequest and perform it; timer "tick" at the informer's
//	                  next deadline (backoff end, resync tick)
//	<name>/watch      action "pull": take the next event (or the end) of the open stream and
//	                  send it over the network
//	<name>/net        timers "list-response", "watch-response" and "recv" (the next message of
//	                  the watch stream: the WATCH response, an event or the stream's end)
//	<name>/queue      action "process": one turn of the process loop
//	<name>/<handler>  action "deliver": one notification to that registration
//
// Its parts have one job each: the lifecycle here, the network and its streams (link, stream.go), the
// narration of what the informer does (narrate.go), the registrations (handler.go).
type Informer struct {
	w   *World
	src *Source
	inf informer.SharedIndexInformer
	st  *informer.Stepper

	// The actors' action functions, made once: a method value allocates each time it is
	// taken, and the engine asks every actor for its actions at every step.
	doRequestFn, pullFn, processFn func()

	handlers []*Handler        // every registration seen, removed ones included, in ID order
	byID     []*Handler        // registration ID → handler (IDs count from 1); see handler
	announce *announcedHandler // set by AddHandler while its registration call runs, or by NameNextHandler until the next registration
	regs     int               // registrations seen, for MaxHandlers
	// cacheLookup is the informer's cache as its handlers' Recorders read it (shared: see
	// cacheLookup), with the keyIndex that numbers the keys the informer distributes (see
	// Handler.buffered).
	cacheLookup *cacheLookup
	// unresolved counts discovered handlers whose registration handle is not looked up yet.
	unresolved int

	started bool
	stopped bool
	// onList, if set, runs in the step in which the Reflector sends a LIST (OnListRequest).
	onList func(metav1.ListOptions)

	// net is the network between the apiserver and this informer (stream.go).
	net link

	timer *deadlineTimer

	reflectorActor, watchActor, netActor, queueActor string
	// popGroup holds the narration of the deltas of a DeltaFIFO Pop seen so far
	// (narratePopGroup).
	popGroup []string
	// The reflector, watch and queue actors are cached actors of the engine
	// (sim.Sim.AddCachedActor), like the handlers' actors: the engine asks one for its actions
	// only after a step of its own or a Wake, so the many steps that touch neither the
	// Reflector, the queue, the stream nor the apiserver's watcher (above all the handlers'
	// deliveries) cost these three nothing. Everything their Actions read wakes them when it
	// changes outside their own steps (see wakeParts and the callers of each waker); test
	// binaries re-ask them at every step (invariant.Thorough) and fail a run at a missed wake.
	reflectorWaker, watchWaker, queueWaker sim.Waker
	// wakeWatchFn is watchWaker.Wake, made once: the apiserver's watcher of each stream calls
	// it when its buffer grows or it closes (fakeapi.Watcher.OnReady).
	wakeWatchFn func()
}

// wakeParts wakes the reflector, watch and queue actors: the Reflector's phase, the queue's
// length or the stream may have changed. Called when the world feeds the Reflector (a response
// or a stream message reaching it: the Reflector writes to the queue and may end the stream),
// and at Start, Stop and drops. A wake costs the next step one poll of each; a missed one
// would make a run differ from polling, which the thorough checks catch.
func (n *Informer) wakeParts() {
	n.reflectorWaker.Wake()
	n.watchWaker.Wake()
	n.queueWaker.Wake()
}

// AddInformer builds an informer named name as o says, with informer.NewSharedIndexInformerWithOptions
// over the world's apiserver, clock and a random stream of its own, and hosts it (HostInformer).
// Register handlers with AddHandler (or on the informer itself), then call Start.
func (w *World) AddInformer(name string, o InformerSpec) (*Informer, error) {
	src, err := w.NewSource(name, o)
	if err != nil {
		return nil, err
	}
	inf := informer.NewSharedIndexInformerWithOptions(src.lw, src.example, src.Options(o.Informer))
	if o.Transform != nil {
		if err := inf.SetTransform(o.Transform); err != nil {
			return nil, fmt.Errorf("world: informer %s: %w", name, err)
		}
	}
	return w.HostInformer(src, inf)
}

// HostInformer makes inf, built from src (see Source), an informer of the world: the world
// drives it step by step from now on. inf must have been built by package informer, not
// started, and hosted by no other world; handlers it already has are hosted too. A source hosts
// one informer.
func (w *World) HostInformer(src *Source, inf informer.SharedIndexInformer) (*Informer, error) {
	switch {
	case src == nil || inf == nil:
		return nil, errors.New("world: HostInformer: nil Source or informer")
	case src.w != w:
		return nil, fmt.Errorf("world: HostInformer %s: the source belongs to another world", src.name)
	case src.hosted:
		return nil, fmt.Errorf("world: HostInformer %s: the source already hosts an informer", src.name)
	case w.liveInformers() >= w.cfg.MaxInformers:
		return nil, fmt.Errorf("world: HostInformer %s: the world already has MaxInformers=%d informers not stopped", src.name, w.cfg.MaxInformers)
	}
	for _, m := range w.informers {
		if m.inf == inf {
			return nil, fmt.Errorf("world: HostInformer %s: the informer is already hosted as %s", src.name, m.Name())
		}
	}
	name := src.name
	n := &Informer{
		w: w, src: src, inf: inf,
		reflectorActor: name + "/reflector", watchActor: name + "/watch", netActor: name + "/net",
		queueActor: name + "/queue", cacheLookup: newCacheLookup(inf.GetStore()),
	}
	n.net.n = n
	n.doRequestFn, n.pullFn, n.processFn = n.net.doRequest, n.net.pull, n.process
	n.net.recvFn = n.net.deliverHead
	for _, a := range []string{n.reflectorActor, n.watchActor, n.netActor, n.queueActor} {
		if w.actors[a] {
			return nil, fmt.Errorf("world: HostInformer %s: actor name %q is already in use", name, a)
		}
	}
	st, err := informer.Steps(inf)
	if err != nil {
		return nil, fmt.Errorf("world: HostInformer %s: %w", name, err)
	}
	if inf.IsStopped() {
		return nil, fmt.Errorf("world: HostInformer %s: the informer is stopped", name)
	}
	n.st = st
	st.SetObserver(n.onStepEvent)
	src.hosted = true
	n.timer = &deadlineTimer{s: w.s, actor: n.reflectorActor, kind: narration.StepTick, fire: n.tick}
	for _, a := range []string{n.reflectorActor, n.watchActor, n.netActor, n.queueActor} {
		w.actors[a] = true
	}
	w.informers = append(w.informers, n)
	n.reflectorWaker = w.s.AddCachedActor(reflectorActor{n})
	n.watchWaker = w.s.AddCachedActor(watchActor{n})
	n.queueWaker = w.s.AddCachedActor(queueActor{n})
	n.wakeWatchFn = n.watchWaker.Wake
	// Registrations made before the world saw the informer: host them now, in ID order, and
	// narrate them as registrations (with their effective resync period; what they asked for
	// and the check period are the informer's to know), so the trace names every handler.
	for _, l := range st.Listeners() {
		h := n.discover(l.ID)
		f := []sim.Field{sim.FBool(narration.FieldHosted, true)}
		if l.ResyncPeriod != 0 {
			f = append(f, sim.FDur(narration.FieldResync, l.ResyncPeriod))
		}
		w.s.Emit(h.actor, narration.KindRegister, f...)
	}
	n.resolve()
	return n, nil
}

// liveInformers counts the informers not stopped, which MaxInformers bounds: a stopped one stays
// in the world (its actors name it in the trace) but is driven no more, as a restarted
// controller's dead informers.
func (w *World) liveInformers() int {
	n := 0
	for _, m := range w.informers {
		if !m.stopped {
			n++
		}
	}
	return n
}

// Name returns the informer's name, the prefix of its actors.
func (n *Informer) Name() string { return n.src.name }

// Resource returns the informer's resource and namespace ("" for all).
func (n *Informer) Resource() (schema.GroupVersionResource, string) { return n.src.gvr, n.src.ns }

// Spec returns the options the informer was added with (its queue, resync period, selectors).
func (n *Informer) Spec() InformerSpec { return n.src.opts }

// SharedIndexInformer returns the informer itself: its cache, HasSynced,
// LastSyncResourceVersion, and AddEventHandler (a registration made there is hosted like one
// made with World.AddHandler).
func (n *Informer) SharedIndexInformer() informer.SharedIndexInformer { return n.inf }

// Handlers returns every registration the world has seen on the informer, removed ones
// included, in registration order.
func (n *Informer) Handlers() []*Handler { return append([]*Handler(nil), n.handlers...) }

// OnListRequest makes f run inside the step in which the informer's Reflector sends a LIST,
// with its options, just before the apiserver serves it: a harness may route that LIST
// (fakeapi.Replicas.RouteNext: the informer's next request is the LIST) or count it. Nil
// removes it.
func (n *Informer) OnListRequest(f func(metav1.ListOptions)) { n.onList = f }

// Started reports whether the informer was started (by Start, or by a factory's Start once the
// world has settled).
func (n *Informer) Started() bool { return n.started }

// Stopped reports whether Stop was called.
func (n *Informer) Stopped() bool { return n.stopped }

// Start starts the informer (informer.md §1.6): the Reflector then has its first LIST ready,
// and the reflector actor offers "request". Call it from a test between runs or from an action.
func (n *Informer) Start() error {
	if n.started || n.stopped || n.st.Reflector() != nil {
		return fmt.Errorf("world: %s: Start on a started or stopped informer", n.Name())
	}
	n.started = true
	n.w.s.Emit(n.Name(), narration.KindStart)
	n.st.Start()
	n.wakeParts()
	return n.w.settleOutside()
}

// Stop stops the informer (informer.md §14 T9): the Reflector stops, an open watch is stopped at
// the apiserver and its undelivered events dropped, responses still on the network are ignored,
// and every handler is removed with its buffered notifications.
func (n *Informer) Stop() {
	if n.stopped {
		return
	}
	n.stopped = true
	for _, h := range n.handlers {
		h.changed() // Removed reads n.stopped
	}
	n.w.s.Emit(n.Name(), narration.KindStop)
	n.st.Stop()
	n.wakeParts()
	if n.net.stream != nil {
		n.net.dropStream("informer stopped")
	}
	n.timer.disarm()
	// A violation found here stays the run's failure: the next step, check or Settle
	// reports it (Stop has no error to return it with).
	_ = n.w.settleOutside()
}

// settle hosts new registrations, drops a stream the Reflector has left and re-arms the
// informer's timer. The world calls it after every step.
func (n *Informer) settle() {
	n.resolve()
	if !n.started {
		if n.st.Reflector() == nil {
			return
		}
		// Started by someone else: a factory's Start calls Stepper.Start itself.
		n.started = true
		n.wakeParts()
		n.w.s.Emit(n.Name(), narration.KindStart)
	}
	if n.stopped {
		n.timer.disarm()
		return
	}
	r := n.st.Reflector()
	if n.net.stream != nil && n.net.stream.opened && !r.Watching() {
		// A resync error, an Error event or Stop ended the stream (informer.md §7.6): stop the
		// watcher and drop what is still on the wire.
		n.net.dropStream("reflector left the stream")
	}
	at, ok := n.st.NextDeadline()
	n.timer.arm(at, ok)
}

// The actors of an informer. Each offers its action only when the component has work, so a
// quiet informer adds nothing to the scheduler's choices.

type reflectorActor struct{ n *Informer }

func (a reflectorActor) Name() string { return a.n.reflectorActor }

func (a reflectorActor) Actions(add func(sim.Action)) {
	// The Reflector alone knows whether it has a request to send: none before Start, after
	// Stop, during a backoff, while a stream is open or a request is on the network.
	if r := a.n.st.Reflector(); r != nil && r.HasRequest() { // nil before Start
		add(sim.Action{Name: narration.StepRequest, Run: a.n.doRequestFn})
	}
}

type watchActor struct{ n *Informer }

func (a watchActor) Name() string { return a.n.watchActor }

func (a watchActor) Actions(add func(sim.Action)) {
	if a.n.net.canPull() {
		add(sim.Action{Name: narration.StepPull, Run: a.n.pullFn})
	}
}

type queueActor struct{ n *Informer }

func (a queueActor) Name() string { return a.n.queueActor }

func (a queueActor) Actions(add func(sim.Action)) {
	if a.n.st.QueueLen() > 0 {
		add(sim.Action{Name: narration.StepProcess, Run: a.n.processFn})
	}
}

// tick is the reflector's "tick" timer: the Reflector's timers (backoff end, resync). A resync
// queues Sync items, so the queue actor is woken (the reflector's own actor is asked again after
// any step under its name); a resync error ends the stream, which settle then drops (waking all).
func (n *Informer) tick() {
	n.st.Tick()
	n.queueWaker.Wake()
}

func (n *Informer) process() {
	if err := n.st.ProcessNext(); err != nil {
		// client-go drops it (informer.md §6.1); the trace keeps it.
		n.w.s.Emit(n.queueActor, narration.KindProcessError, sim.F(narration.FieldErr, err.Error()))
	}
}
