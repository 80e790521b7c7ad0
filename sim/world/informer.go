package sim

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/internal/invariant"
)

// InformerNode is one informer of a World with the actors that drive it:
//
//	<name>/reflector  action "request", offered while Reflector.HasRequest: take the LIST or
//	                  WATCH with NextRequest and perform it; timer "tick" at
//	                  Stepper.NextDeadline (backoff end, resync tick)
//	<name>/watch      action "pull": take the next event (or the end) of the open stream and
//	                  send it over the network
//	<name>/net        timers "list-response", "watch-response" and "recv" (the next message of
//	                  the watch stream: the WATCH response, an event or the stream's end)
//	<name>/queue      action "process": one turn of the process loop (Stepper.ProcessNext)
//	<name>/<handler>  action "deliver": one notification to that handler (Stepper.DeliverNext)
type InformerNode struct {
	w         *World
	name      string
	gvr       schema.GroupVersionResource
	namespace string
	lw        *fakeapi.ListerWatcher
	inf       informer.SharedIndexInformer
	st        *informer.Stepper

	handlers []*HandlerNode
	byID     map[int]*HandlerNode
	regs     int // registrations made, removed ones included: the next ID is regs+1

	started bool
	stopped bool

	// The open watch stream, from the WATCH request until its end is delivered or it is dropped.
	stream *watchStream

	timer *deadlineTimer

	reflectorActor, watchActor, netActor, queueActor string

	// lastListAt is when the last successful LIST reached the Reflector (resync alignment).
	lastListAt time.Duration
}

// AddInformer adds an informer of gvr in namespace ("" for all namespaces) named name, built by
// informer.NewSharedIndexInformerWithOptions with the world's clock (ClockFor("informer/<name>"))
// and a random stream of its own ("jitter/<name>"); opts.Clock and opts.Rand must be nil, and
// opts.ResyncPeriod must not be negative (the informer would panic). The
// ListerWatcher it is given (the apiserver's adapter) is never called: the world performs the
// Reflector's requests itself. Register handlers with AddHandler, then call Start.
func (w *World) AddInformer(name string, gvr schema.GroupVersionResource, namespace string, opts informer.SharedIndexInformerOptions) (*InformerNode, error) {
	switch {
	case name == "" || strings.ContainsAny(name, "/ \t\n="):
		return nil, fmt.Errorf("sim: AddInformer: invalid name %q (non-empty, no '/', '=' or spaces)", name)
	case len(w.informers) >= w.cfg.MaxInformers:
		return nil, fmt.Errorf("sim: AddInformer %s: the world already has MaxInformers=%d informers", name, w.cfg.MaxInformers)
	case opts.Clock != nil || opts.Rand != nil:
		return nil, fmt.Errorf("sim: AddInformer %s: the world sets Clock and Rand; leave them nil", name)
	case opts.ResyncPeriod < 0:
		return nil, fmt.Errorf("sim: AddInformer %s: negative ResyncPeriod %v", name, opts.ResyncPeriod)
	}
	if namespace != "" {
		if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
			return nil, fmt.Errorf("sim: AddInformer %s: invalid namespace %q: %s", name, namespace, strings.Join(errs, "; "))
		}
	}
	res, ok := w.resourceKind(gvr)
	if !ok {
		return nil, fmt.Errorf("sim: AddInformer %s: the apiserver does not serve %v", name, gvr)
	}
	if !res.Namespaced && namespace != "" {
		return nil, fmt.Errorf("sim: AddInformer %s: %v is cluster-scoped; namespace must be empty", name, gvr)
	}
	n := &InformerNode{
		w: w, name: name, gvr: gvr, namespace: namespace, byID: map[int]*HandlerNode{},
		reflectorActor: name + "/reflector", watchActor: name + "/watch", netActor: name + "/net",
		queueActor: name + "/queue",
	}
	for _, a := range []string{n.reflectorActor, n.watchActor, n.netActor, n.queueActor} {
		if w.actors[a] {
			return nil, fmt.Errorf("sim: AddInformer %s: actor name %q is already in use", name, a)
		}
	}
	n.lw = w.srv.ListerWatcher(gvr, namespace)
	n.lw.Name = name
	n.lw.WatchListUnsupported = true // the Reflector runs classic list+watch (informer.md §7.3)
	o := opts
	o.Clock = w.s.ClockFor("informer/" + name)
	o.Rand = w.s.Rand("jitter/" + name)
	n.inf = informer.NewSharedIndexInformerWithOptions(n.lw, exampleObject(gvr, res.Kind), o)
	st, err := informer.Steps(n.inf)
	if err != nil {
		return nil, fmt.Errorf("sim: AddInformer %s: %w", name, err)
	}
	n.st = st
	st.SetObserver(n.observe)
	n.timer = &deadlineTimer{s: w.s, actor: n.reflectorActor, kind: "tick", fire: n.tick, after: w.settle}
	for _, a := range []string{n.reflectorActor, n.watchActor, n.netActor, n.queueActor} {
		w.actors[a] = true
	}
	w.informers = append(w.informers, n)
	w.s.AddActor(reflectorActor{n})
	w.s.AddActor(watchActor{n})
	w.s.AddActor(queueActor{n})
	return n, nil
}

// Name returns the informer's name, the prefix of its actors.
func (n *InformerNode) Name() string { return n.name }

// Resource returns the informer's resource and namespace ("" for all).
func (n *InformerNode) Resource() (schema.GroupVersionResource, string) { return n.gvr, n.namespace }

// Informer returns the informer itself (its cache, HasSynced, LastSyncResourceVersion...).
func (n *InformerNode) Informer() informer.SharedIndexInformer { return n.inf }

// Stepper returns the informer's step API, which the world drives.
func (n *InformerNode) Stepper() *informer.Stepper { return n.st }

// ListerWatcher returns the apiserver adapter the informer was built with; its Name labels the
// informer's requests in the apiserver's record.
func (n *InformerNode) ListerWatcher() *fakeapi.ListerWatcher { return n.lw }

// Handlers returns the handlers registered through the world, removed ones included, in
// registration order.
func (n *InformerNode) Handlers() []*HandlerNode { return append([]*HandlerNode(nil), n.handlers...) }

// Started reports whether Start was called.
func (n *InformerNode) Started() bool { return n.started }

// Stopped reports whether Stop was called.
func (n *InformerNode) Stopped() bool { return n.stopped }

// Start starts the informer (Stepper.Start, informer.md §1.6): the Reflector then has its first
// LIST ready, and the reflector actor offers "request". Call it from a test between runs or from
// an action.
func (n *InformerNode) Start() error {
	if n.started || n.stopped {
		return fmt.Errorf("sim: %s: Start on a started or stopped informer", n.name)
	}
	n.started = true
	n.w.s.Emit(n.name, "start")
	n.st.Start()
	n.w.settle()
	return nil
}

// Stop stops the informer (informer.md §14 T9): the Reflector stops, an open watch is stopped at
// the apiserver and its undelivered events dropped, responses still on the network are ignored,
// and every handler is removed with its buffered notifications.
func (n *InformerNode) Stop() {
	if n.stopped {
		return
	}
	n.stopped = true
	n.w.s.Emit(n.name, "stop")
	n.st.Stop()
	if n.stream != nil {
		n.dropStream("informer stopped")
	}
	n.timer.disarm()
	n.w.settle()
}

// settle drops a stream the Reflector has left and re-arms the informer's timer. The world calls
// it after every step.
func (n *InformerNode) settle() {
	if !n.started {
		return
	}
	if n.stopped {
		n.timer.disarm()
		return
	}
	r := n.st.Reflector()
	if n.stream != nil && n.stream.opened && !r.Watching() {
		// A resync error, an Error event or Stop ended the stream (informer.md §7.6): stop the
		// watcher and drop what is still on the wire.
		n.dropStream("reflector left the stream")
	}
	at, ok := n.st.NextDeadline()
	n.timer.arm(at, ok)
}

// hasRequest reports whether the Reflector has a request to send now. The Reflector alone knows:
// it has none before Start, after Stop, during a backoff, while a stream is open, and while a
// request is on the network (it keeps at most one in flight, until ListDone or WatchOpened).
func (n *InformerNode) hasRequest() bool {
	return n.st.Reflector().HasRequest()
}

func (n *InformerNode) tick() {
	n.st.Tick()
}

// HandlerNode is one handler registration made through World.AddHandler: its actor delivers the
// registration's buffered notifications one at a time to a Recorder, which checks and records
// them and then calls the user's handler.
type HandlerNode struct {
	n       *InformerNode
	name    string
	actor   string
	id      int
	reg     informer.ResourceEventHandlerRegistration
	rec     *Recorder
	removed bool
}

// UseInformerResync is the resync argument of AddHandler that asks for the informer's default
// period (AddEventHandler rather than AddEventHandlerWithResyncPeriod). It is the only negative
// resync AddHandler accepts.
const UseInformerResync time.Duration = -1

// AddHandler registers handler (nil: only record) with n under name (the actor is
// "<informer>/<name>"; "" means "h<ID>"), asking for resync (UseInformerResync for the informer's
// default; informer.md §2.2 adjusts it). Before Start it is an ordinary registration; after
// Start the handler joins late and first receives the cache as initial-list adds (§3); after
// Stop it is refused, as client-go refuses it. n must be an informer of this world. The
// handler is wrapped in a Recorder, which narrates every notification, keeps it, and checks the
// per-object order oracle on each delivery.
func (w *World) AddHandler(n *InformerNode, name string, handler informer.ResourceEventHandler, resync time.Duration) (*HandlerNode, error) {
	switch {
	case n == nil:
		return nil, fmt.Errorf("sim: AddHandler %s: nil informer", name)
	case n.w != w:
		return nil, fmt.Errorf("sim: AddHandler %s: informer %s belongs to another world", name, n.name)
	case n.stopped:
		return nil, fmt.Errorf("sim: AddHandler %s: informer %s is stopped", name, n.name)
	case resync < 0 && resync != UseInformerResync:
		return nil, fmt.Errorf("sim: AddHandler %s: negative resync %v (use UseInformerResync for the informer's period)", name, resync)
	case n.regs >= w.cfg.MaxHandlers:
		return nil, fmt.Errorf("sim: AddHandler %s: informer %s already has MaxHandlers=%d registrations", name, n.name, w.cfg.MaxHandlers)
	}
	id := n.regs + 1
	if name == "" {
		name = "h" + strconv.Itoa(id)
	}
	if strings.ContainsAny(name, "/ \t\n=") {
		return nil, fmt.Errorf("sim: AddHandler: invalid name %q (no '/', '=' or spaces)", name)
	}
	actor := n.name + "/" + name
	if w.actors[actor] {
		return nil, fmt.Errorf("sim: AddHandler: actor name %q is already in use", actor)
	}
	h := &HandlerNode{n: n, name: name, actor: actor, id: id}
	h.rec = newRecorder(w, actor, handler, n.inf.GetStore(), w.cfg.MaxRecordedNotifications)
	// The observer names the registration's events by ID, so the ID must be known before the
	// registration emits its first event (a late join emits them inside the call).
	n.byID[id] = h
	var reg informer.ResourceEventHandlerRegistration
	var err error
	if resync < 0 {
		reg, err = n.inf.AddEventHandler(h.rec)
	} else {
		reg, err = n.inf.AddEventHandlerWithResyncPeriod(h.rec, resync)
	}
	if err != nil {
		delete(n.byID, id)
		return nil, fmt.Errorf("sim: AddHandler %s: %w", actor, err)
	}
	n.regs++
	h.reg = reg
	found := false
	for _, l := range n.st.Listeners() {
		if l.Registration == reg {
			invariant.Check(l.ID == id, "sim: AddHandler %s: registration got ID %d, expected %d", actor, l.ID, id)
			found = true
		}
	}
	invariant.Check(found, "sim: AddHandler %s: registration not among the informer's listeners", actor)
	w.actors[actor] = true
	n.handlers = append(n.handlers, h)
	w.s.AddActor(handlerActor{h})
	w.settle()
	return h, nil
}

// Remove unregisters the handler (informer.md §1.3): its buffered notifications are dropped.
func (h *HandlerNode) Remove() error {
	if h.removed {
		return nil
	}
	if err := h.n.inf.RemoveEventHandler(h.reg); err != nil {
		return err
	}
	h.removed = true
	h.n.w.settle()
	return nil
}

// Name returns the handler's name; Actor the trace actor "<informer>/<name>".
func (h *HandlerNode) Name() string { return h.name }

// Actor returns the handler's actor name in the trace.
func (h *HandlerNode) Actor() string { return h.actor }

// ID returns the informer's registration ID for the handler (StepEvent.Handler).
func (h *HandlerNode) ID() int { return h.id }

// Registration returns the informer's handle.
func (h *HandlerNode) Registration() informer.ResourceEventHandlerRegistration { return h.reg }

// Recorder returns the handler's recorder: its notifications and replayed view.
func (h *HandlerNode) Recorder() *Recorder { return h.rec }

// Notifications is Recorder().Notifications().
func (h *HandlerNode) Notifications() []Notification { return h.rec.Notifications() }

// Removed reports whether the handler was removed, or dropped by Stop.
func (h *HandlerNode) Removed() bool { return h.removed || h.n.stopped }

// Pending is the number of notifications buffered for the handler.
func (h *HandlerNode) Pending() int {
	if h.Removed() {
		return 0
	}
	return h.n.st.Pending(h.reg)
}

// The actors of an informer. Each offers its action only when the component has work, so a
// quiet informer adds nothing to the scheduler's choices.

type reflectorActor struct{ n *InformerNode }

func (a reflectorActor) Name() string { return a.n.reflectorActor }

func (a reflectorActor) Actions(add func(Action)) {
	if a.n.hasRequest() {
		add(Action{Name: "request", Run: a.n.doRequest})
	}
}

type watchActor struct{ n *InformerNode }

func (a watchActor) Name() string { return a.n.watchActor }

func (a watchActor) Actions(add func(Action)) {
	if a.n.canPull() {
		add(Action{Name: "pull", Run: a.n.pull})
	}
}

type queueActor struct{ n *InformerNode }

func (a queueActor) Name() string { return a.n.queueActor }

func (a queueActor) Actions(add func(Action)) {
	if a.n.st.QueueLen() > 0 {
		add(Action{Name: "process", Run: a.n.process})
	}
}

func (n *InformerNode) process() {
	if err := n.st.ProcessNext(); err != nil {
		// client-go drops it (informer.md §6.1); the trace keeps it.
		n.w.s.Emit(n.queueActor, "process-error", F("err", err.Error()))
	}
	n.w.settle()
}

type handlerActor struct{ h *HandlerNode }

func (a handlerActor) Name() string { return a.h.actor }

func (a handlerActor) Actions(add func(Action)) {
	if a.h.Pending() > 0 {
		add(Action{Name: "deliver", Run: a.h.deliver})
	}
}

func (h *HandlerNode) deliver() {
	h.n.st.DeliverNext(h.reg)
	h.n.w.settle()
}

// observe turns the informer's step events into trace events, under the actor of the component
// that acted: the queue for pops, cache writes and buffering; the Reflector for its decisions and
// resync checks; the handler for registrations. Deliveries are narrated by the Recorder.
func (n *InformerNode) observe(e informer.StepEvent) {
	s := n.w.s
	switch e.Kind {
	case informer.StepDelivered:
		return // the Recorder narrates the call itself
	case informer.StepPopped:
		f := []Field{F("delta", string(e.Delta))}
		switch e.Delta {
		case informer.ReplacedAll:
			f = append(f, F("rv", e.ResourceVersion), FInt("n", int64(e.Count)))
		case informer.Bookmark:
			f = append(f, F("rv", e.ResourceVersion))
		case informer.SyncAll:
		default:
			f = append(f, F("obj", objRef(e.Key, e.ResourceVersion, e.Tombstone)))
		}
		if e.InInitialList {
			f = append(f, FBool("init", true))
		}
		s.Emit(n.queueActor, "pop", f...)
	case informer.StepCacheAdded, informer.StepCacheUpdated, informer.StepCacheDeleted:
		s.Emit(n.queueActor, e.Kind.String(), F("obj", objRef(e.Key, e.ResourceVersion, e.Tombstone)))
	case informer.StepCacheReplaced:
		s.Emit(n.queueActor, "cache-replace", FInt("n", int64(e.Count)), F("rv", e.ResourceVersion))
	case informer.StepDistributed:
		f := []Field{F("to", n.handlerList(e.Handlers)), F("call", e.Notification.String())}
		if e.Notification == informer.NotificationUpdate {
			f = append(f, F("obj", e.Key), F("rv", e.OldResourceVersion+"->"+e.ResourceVersion))
		} else {
			f = append(f, F("obj", objRef(e.Key, e.ResourceVersion, e.Tombstone)))
		}
		if e.Sync {
			f = append(f, FBool("sync", true))
		}
		if e.InInitialList {
			f = append(f, FBool("init", true))
		}
		s.Emit(n.queueActor, "buffer", f...)
	case informer.StepResyncChecked:
		s.Emit(n.reflectorActor, "resync-check", F("due", n.handlerList(e.Handlers)))
	case informer.StepRegistered, informer.StepRemoved:
		s.Emit(n.handlerActor(e.Handler), e.Kind.String())
	case informer.StepHandlerSynced:
		s.Emit(n.handlerActor(e.Handler), "synced")
	case informer.StepJoined:
		s.Emit(n.handlerActor(e.Handler), "join", FInt("snapshot", int64(e.Count)))
	case informer.StepSynced, informer.StepStopped:
		s.Emit(n.name, e.Kind.String())
	case informer.StepReflector:
		n.observeReflector(e.Reflector)
	default:
		s.Emit(n.name, e.String())
	}
}

func (n *InformerNode) observeReflector(e informer.ReflectorEvent) {
	var f []Field
	kind := ""
	switch e.Kind {
	case informer.EventListed:
		kind = "listed"
		f = append(f, FInt("items", int64(e.Items)), F("rv", e.ResourceVersion))
		n.lastListAt = n.w.s.Now()
	case informer.EventListPage:
		kind = "list-page"
		f = append(f, FInt("items", int64(e.Items)))
	case informer.EventRelistUnavailable:
		kind = "relist-fresh"
	case informer.EventWatchOpened:
		kind = "watching"
		f = append(f, F("rv", e.ResourceVersion))
	case informer.EventWatchClosed:
		kind = "rewatch"
		f = append(f, F("rv", e.ResourceVersion))
	case informer.EventWatchRetry:
		kind = "rewatch-after"
		f = append(f, F("rv", e.ResourceVersion), FDur("delay", e.Delay))
	case informer.EventPassEnded:
		kind = "relist-after"
		f = append(f, FDur("delay", e.Delay))
	case informer.EventSkipped:
		kind = "skipped"
	case informer.EventStoreError:
		kind = "store-error"
		f = append(f, F("rv", e.ResourceVersion))
	case informer.EventResync:
		kind = "resync"
	case informer.EventResyncSkipped:
		kind = "resync-skip"
	default:
		kind = e.Kind.String()
	}
	if e.Err != nil {
		f = append(f, F("err", e.Err.Error()))
	}
	n.w.s.Emit(n.reflectorActor, kind, f...)
}

func (n *InformerNode) handlerActor(id int) string {
	if h, ok := n.byID[id]; ok {
		return h.actor
	}
	return n.name + "/h" + strconv.Itoa(id)
}

func (n *InformerNode) handlerList(ids []int) string {
	if len(ids) == 0 {
		return "-"
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strings.TrimPrefix(n.handlerActor(id), n.name+"/")
	}
	return strings.Join(parts, ",")
}

// objRef renders an object reference "ns/name@rv", or "tomb(ns/name@rv)" for a tombstone.
func objRef(key, rv string, tomb bool) string {
	s := key + "@" + rv
	if tomb {
		return "tomb(" + s + ")"
	}
	return s
}
