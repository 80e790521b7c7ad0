package world

import (
	"fmt"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world/narration"
)

// HandlerOptions configures a registration made with World.AddHandler, or the next one made
// on the informer directly (Informer.NameNextHandler: a controller's own registration).
type HandlerOptions struct {
	// ResyncPeriod requests a resync period for the handler (informer.md §2.2 adjusts it); nil
	// means the informer's default, as with informer.HandlerOptions.
	ResyncPeriod *time.Duration
	// CallDuration is the simulated time each call of the handler takes: after a delivery the
	// handler's actor offers nothing for that long (it is busy, and counts against Quiet), so
	// notifications pile up in its buffer as they do behind a slow handler. Zero: calls take no
	// time. It must not be negative.
	CallDuration time.Duration
}

// Handler is one registration on an informer of the world, made through World.AddHandler or
// directly on the informer (by a test, a factory, a controller's own code): the world discovers
// every registration from the informer's own listeners. Its actor "<informer>/<name>" delivers
// the registration's buffered notifications one at a time; its DeliveryLog narrates, checks and
// keeps each one.
type Handler struct {
	n     *Informer
	name  string
	actor string
	id    int
	reg   informer.ResourceEventHandlerRegistration // nil until resolved from the listeners
	rec   *DeliveryLog

	removed      bool
	callDuration time.Duration
	busy         *sim.Timer // armed while a call's CallDuration runs

	// buffered mirrors the notifications the informer buffered for the handler, in order: the
	// noteRef of each (its key's number in Informer.keys, its parsed resourceVersion), pushed
	// at each StepDistributed naming the handler and popped at each StepDelivered (the informer
	// delivers to a handler in the order it distributed, informer.md §4.5). Its length is the
	// informer's count, read by the engine's poll at every step instead of taking the
	// informer's processor lock (Buffered stays the authority: quiet checks the two agree); the
	// refs spare each delivery a hash of its key and a parse of its resourceVersion: they are
	// worked out once per notification instead of once per handler.
	buffered refQueue

	// deliverFn is h.deliver, made once: a method value allocates each time it is taken.
	deliverFn func()
	// waker wakes the handler's actor, a cached one (sim.Sim.AddCachedActor): the engine asks it
	// for its actions only after a change, so idle handlers cost a step nothing. Everything
	// handlerActor.Actions reads calls changed when it changes outside the actor's own steps.
	waker sim.Waker
}

// changed tells the engine that the handler's actor may offer something else now.
func (h *Handler) changed() { h.waker.Wake() }

// announcedHandler is what AddHandler tells the observer before the registration call: the name
// and options the registration it is about to see should get.
type announcedHandler struct {
	name string
	opts HandlerOptions
	h    *Handler // set by discover
}

// AddHandler registers handler (nil: only record) with n under name (the actor is
// "<informer>/<name>"; "" means "h<ID>"), as o says. Before Start it is an ordinary
// registration; after Start the handler joins late and first receives the cache as
// initial-list adds (informer.md §3); after Stop it is refused, as client-go refuses it. n must
// be an informer of this world.
func (w *World) AddHandler(n *Informer, name string, handler informer.ResourceEventHandler, o HandlerOptions) (*Handler, error) {
	switch {
	case n == nil:
		return nil, fmt.Errorf("world: AddHandler %s: nil informer", name)
	case n.w != w:
		return nil, fmt.Errorf("world: AddHandler %s: informer %s belongs to another world", name, n.Name())
	case n.stopped || n.inf.IsStopped():
		return nil, fmt.Errorf("world: AddHandler %s: informer %s is stopped", name, n.Name())
	case o.ResyncPeriod != nil && *o.ResyncPeriod < 0:
		return nil, fmt.Errorf("world: AddHandler %s: negative ResyncPeriod %v", name, *o.ResyncPeriod)
	case o.CallDuration < 0:
		return nil, fmt.Errorf("world: AddHandler %s: negative CallDuration %v", name, o.CallDuration)
	case n.regs >= w.cfg.MaxHandlers:
		return nil, fmt.Errorf("world: AddHandler %s: informer %s already has MaxHandlers=%d registrations", name, n.Name(), w.cfg.MaxHandlers)
	case name != "" && !validName(name):
		return nil, fmt.Errorf("world: AddHandler: invalid name %q (no '/', '=', '\"' or spaces)", name)
	case name != "" && w.actors[n.Name()+"/"+name]:
		return nil, fmt.Errorf("world: AddHandler: actor name %q is already in use", n.Name()+"/"+name)
	case name != "" && n.announce != nil && n.announce.name == name:
		return nil, fmt.Errorf("world: AddHandler: name %q is announced for the next direct registration of %s (NameNextHandler)", name, n.Name())
	}
	if handler == nil {
		handler = informer.ResourceEventHandlerFuncs{}
	}
	a := &announcedHandler{name: name, opts: o}
	pending := n.announce // NameNextHandler's, kept for the registration it was made for
	n.announce = a
	reg, err := n.inf.AddEventHandlerWithOptions(handler, informer.HandlerOptions{ResyncPeriod: o.ResyncPeriod})
	n.announce = pending
	if err != nil {
		return nil, fmt.Errorf("world: AddHandler %s: %w", name, err)
	}
	h := a.h
	if h == nil {
		return nil, fmt.Errorf("world: AddHandler %s: the informer registered the handler without telling its observer", name)
	}
	h.reg = reg
	h.changed()
	n.unresolved--
	if err := w.settleOutside(); err != nil {
		return h, err // registered; the run has failed (see Settle)
	}
	return h, nil
}

// NameNextHandler names the next registration made on n's informer directly, by code that is
// not the world's (a controller's own AddEventHandler, a factory's), and gives it o's
// CallDuration, as AddHandler would: its actor is "<informer>/<name>" instead of "<informer>/h<ID>",
// and with a CallDuration it is a slow handler. Call it just before the controller registers.
// o.ResyncPeriod must be nil (the registration's own call sets its resync period). A bad or
// taken name, a negative CallDuration, a stopped informer, or a name announced already and not
// yet used is an error.
func (n *Informer) NameNextHandler(name string, o HandlerOptions) error {
	switch {
	case n == nil:
		return fmt.Errorf("world: NameNextHandler %s: nil informer", name)
	case name == "" || !validName(name):
		return fmt.Errorf("world: NameNextHandler: invalid name %q (non-empty; no '/', '=', '\"' or spaces)", name)
	case n.w.actors[n.Name()+"/"+name]:
		return fmt.Errorf("world: NameNextHandler: actor name %q is already in use", n.Name()+"/"+name)
	case n.stopped || n.inf.IsStopped():
		return fmt.Errorf("world: NameNextHandler %s: informer %s is stopped", name, n.Name())
	case o.ResyncPeriod != nil:
		return fmt.Errorf("world: NameNextHandler %s: ResyncPeriod is set by the registration's own call", name)
	case o.CallDuration < 0:
		return fmt.Errorf("world: NameNextHandler %s: negative CallDuration %v", name, o.CallDuration)
	case n.announce != nil:
		return fmt.Errorf("world: NameNextHandler %s: the next registration of %s is named %q already", name, n.Name(), n.announce.name)
	}
	n.announce = &announcedHandler{name: name, opts: o}
	return nil
}

// discover hosts registration id: it names it (after the announcement, if AddHandler is making
// it), claims its actor and adds the actor to the engine. It runs inside the informer's
// registration call, so it must not call the informer; resolve finds the handle afterwards.
func (n *Informer) discover(id int) *Handler {
	if h := n.handler(id); h != nil {
		return h
	}
	w := n.w
	h := &Handler{n: n, id: id}
	h.deliverFn = h.deliver
	if a := n.announce; a != nil && a.h == nil {
		h.name, h.callDuration = a.name, a.opts.CallDuration
		a.h = h
		n.announce = nil
	}
	if h.name == "" {
		h.name = "h" + strconv.Itoa(id)
		for w.actors[n.Name()+"/"+h.name] {
			h.name += "x" // a world handler took the name: keep actors apart
		}
	}
	h.actor = n.Name() + "/" + h.name
	w.actors[h.actor] = true
	h.rec = newDeliveryLog(w, h.actor, n.cacheLookup, w.cfg.MaxRecordedNotifications)
	for len(n.byID) <= id {
		n.byID = append(n.byID, nil)
	}
	n.byID[id] = h
	n.handlers = append(n.handlers, h)
	n.regs++
	n.unresolved++
	h.waker = w.s.AddCachedActor(handlerActor{h})
	return h
}

// handler returns the handler of registration id, nil if the world has not seen it. The
// informer hands out small sequential IDs, so a slice indexed by ID serves: the observer looks
// a handler up for every notification buffered and delivered.
func (n *Informer) handler(id int) *Handler {
	if id < 0 || id >= len(n.byID) {
		return nil
	}
	return n.byID[id]
}

// resolve finds the registration handle of every discovered handler that lacks one. Cheap when
// nothing is unresolved, which is nearly always.
func (n *Informer) resolve() {
	if n.unresolved == 0 {
		return
	}
	for _, l := range n.st.Listeners() {
		if h := n.handler(l.ID); h != nil && h.reg == nil {
			h.reg = l.Registration
			h.changed()
			n.unresolved--
		}
	}
	if n.unresolved == 0 {
		return
	}
	// What is left was removed (or the informer stopped) before it could be looked up.
	for _, h := range n.handlers {
		if h.reg == nil && !h.removed {
			h.removed = true
			h.changed()
			n.unresolved--
		}
	}
}

// Remove unregisters the handler (informer.md §1.3): its buffered notifications are dropped.
func (h *Handler) Remove() error {
	if h.Removed() {
		return nil
	}
	h.n.resolve()
	if h.reg == nil {
		return nil
	}
	if err := h.n.inf.RemoveEventHandler(h.reg); err != nil {
		return fmt.Errorf("world: %s: Remove: %w", h.actor, err)
	}
	h.removed = true
	h.changed()
	return h.n.w.settleOutside()
}

// Name returns the handler's name: the one given to AddHandler, or "h<ID>".
func (h *Handler) Name() string { return h.name }

// Actor returns the handler's actor name in the trace, "<informer>/<name>".
func (h *Handler) Actor() string { return h.actor }

// ID returns the informer's registration ID for the handler.
func (h *Handler) ID() int { return h.id }

// World returns the world the handler's informer belongs to (its seed, trace and repro line, for
// matchers that report on a handler).
func (h *Handler) World() *World { return h.n.w }

// Deliveries returns the handler's delivery log: its notifications and replayed view.
func (h *Handler) Deliveries() *DeliveryLog { return h.rec }

// Removed reports whether the handler was removed, or dropped by Stop.
func (h *Handler) Removed() bool { return h.removed || h.n.stopped }

// Buffered is the number of notifications buffered for the handler, not yet delivered.
func (h *Handler) Buffered() int {
	if h.Removed() {
		return 0
	}
	h.n.resolve()
	if h.reg == nil {
		return 0
	}
	return h.n.st.Buffered(h.reg)
}

// HasSynced reports whether the registration has synced (informer.md §4.6): every initial-list
// add it was given has been delivered. False for a removed handler.
func (h *Handler) HasSynced() bool {
	if h.Removed() {
		return false
	}
	h.n.resolve()
	return h.reg != nil && h.reg.HasSynced()
}

// Busy reports whether the handler is inside a call's CallDuration.
func (h *Handler) Busy() bool { return h.busy != nil && h.busy.Armed() }

// SetCallDuration sets the simulated time each later call takes (see
// HandlerOptions.CallDuration); for registrations made on the informer directly. A negative d
// is an error.
func (h *Handler) SetCallDuration(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("world: %s: SetCallDuration: negative duration %v", h.actor, d)
	}
	h.callDuration = d
	return nil
}

type handlerActor struct{ h *Handler }

func (a handlerActor) Name() string { return a.h.actor }

func (a handlerActor) Actions(add func(sim.Action)) {
	// O(1) and allocation-free, reading the handler's own count rather than the informer's
	// (which takes its processor lock). The engine asks only after a change (Handler.changed):
	// whatever this reads must call it when it changes.
	h := a.h
	if h.buffered.len() == 0 || h.Busy() || h.Removed() {
		return
	}
	h.n.resolve()
	if h.reg != nil && !h.removed {
		add(sim.Action{Name: narration.StepDeliver, Run: h.deliverFn})
	}
}

func (h *Handler) deliver() {
	h.n.st.DeliverNext(h.reg)
	if h.callDuration > 0 {
		if h.busy != nil {
			// The last call's timer has fired (the actor offers nothing while it is armed):
			// re-armed, it is to the engine what a new one would be.
			h.busy.Reset(h.callDuration)
		} else {
			h.busy = h.n.w.after(h.callDuration, h.actor, narration.StepCallDone, func() {})
		}
	}
}

// deliveredObject is an object a handler was given in the current step (World.delivered).
type deliveredObject struct {
	obj     *unstructured.Unstructured
	handler string
}

// checkAfterStep has the objects of a delivery to handler checked at the end of the step
// (Config.CheckReadOnlyEachDelivery), when the handler has returned: the new or deleted object
// (or a tombstone's last known state) and the old object of an update.
func (w *World) checkAfterStep(handler string, objs ...any) {
	for _, o := range objs {
		if t, ok := o.(informer.DeletedFinalStateUnknown); ok {
			o = t.Obj
		}
		if u, ok := o.(*unstructured.Unstructured); ok && u != nil {
			w.delivered = append(w.delivered, deliveredObject{obj: u, handler: handler})
		}
	}
}
