package world

import (
	"errors"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/internal/invariant"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world/narration"
)

// The network between the apiserver and an informer (design.md "The network"). A request is
// served by the apiserver the moment the reflector actor sends it; its outcome reaches the
// Reflector one latency later. A watch stream is a TCP connection: each event is pulled from the
// apiserver's watcher by the watch actor and reaches the Reflector at
// max(pull time + its own latency, delivery time of the previous message), so a stream never
// reorders, and its end (the watcher is Done) is delivered after its last event. Latencies are
// drawn from the "network" stream, in the order messages are sent.

// link is the network between the apiserver and one informer: the Reflector's requests, served
// by the apiserver when sent (which routes them to a replica), their responses one latency
// later, and the open watch stream with its wire. The informer hosts one (Informer.net); its
// reflector, watch and net actors act through it. It reaches back to its host for the
// Reflector it feeds, the source it requests through, the actors it narrates as and the
// actors it wakes.
type link struct {
	n *Informer
	// The open watch stream, from the WATCH request until its end is delivered or it is dropped.
	stream *watchStream
	// spareTimers are "recv" timers that fired or were stopped, kept for send to re-arm;
	// wireBuf and timersBuf the buffers of the last stream, for the next one.
	spareTimers []*sim.Timer
	wireBuf     []wireMsg
	timersBuf   []*sim.Timer
	// recvFn is deliverHead, made once (a method value allocates each time it is taken).
	recvFn func()
}

// watchStream is one open watch between the apiserver and an informer.
type watchStream struct {
	w *fakeapi.Watcher
	// opened: the WATCH response reached the Reflector (WatchOpened(nil) was fed).
	opened bool
	// lastAt is the delivery time (since Epoch) of the last message put on the wire, starting
	// with the WATCH response: later messages never arrive before it.
	lastAt time.Duration
	// wire holds the messages on the wire, oldest first; timers the engine timers that deliver
	// them, one per message. Timers with equal deadlines may fire in any order (the
	// policy picks among due timers), so a firing timer delivers the oldest message, whichever
	// it was armed for: the stream stays in order and no message arrives before its own time.
	wire   fifo[wireMsg]
	timers fifo[*sim.Timer]
	// ended: the stream's end has been pulled and put on the wire.
	ended bool
}

// onWire is the number of messages on the wire.
func (st *watchStream) onWire() int { return st.wire.len() }

type wireKind int

const (
	wireOpened wireKind = iota + 1 // the WATCH response
	wireEvent
	wireClose
)

type wireMsg struct {
	kind wireKind
	ev   watch.Event
}

// send puts a message on the stream's wire, delivered one latency from now but never before the
// previous message.
//
// Its timer is a fired or stopped "recv" timer of the informer's, re-armed with Reset, when there
// is one: to the engine that is the same as a new AfterFunc (a reset timer takes the next
// creation number, under the same actor and kind), and a stream of events then allocates no
// timer and no closure per message. Every recv timer runs n.recvFn, which finds the message
// to deliver from the stream itself (deliverHead).
func (l *link) send(st *watchStream, m wireMsg) {
	s := l.n.w.s
	at := max(s.Now()+l.n.w.latency(), st.lastAt)
	st.lastAt = at
	var t *sim.Timer
	if k := len(l.spareTimers); k > 0 {
		t = l.spareTimers[k-1]
		l.spareTimers[k-1] = nil
		l.spareTimers = l.spareTimers[:k-1]
		t.Reset(at - s.Now())
	} else {
		t = l.n.w.after(at-s.Now(), l.n.netActor, narration.StepRecv, l.recvFn)
	}
	st.wire.push(m)
	st.timers.push(t)
}

// doRequest is the reflector actor's "request": take the Reflector's request (NextRequest marks
// it in flight and draws a WATCH's timeout, so both happen in this step), send it, which the
// apiserver serves at once, and schedule its response.
func (l *link) doRequest() {
	req, ok := l.n.st.Reflector().NextRequest()
	if !ok { // only then: the message arguments allocate
		invariant.Check(false, "world: %s: request without a pending request", l.n.Name())
	}
	// The Reflector sends nothing while a stream is open; the world's view must agree.
	if l.stream != nil { // only then: the message arguments allocate
		invariant.Check(false, "world: %s: %v while a stream is open", l.n.Name(), req.Verb)
	}
	lat := l.n.w.latency()
	switch req.Verb {
	case informer.RequestList:
		l.emitRequest(narration.KindList, req.Options)
		if l.n.onList != nil {
			l.n.onList(req.Options)
		}
		list, err := l.list(req.Options)
		l.n.w.after(lat, l.n.netActor, narration.StepListResponse, func() { l.deliverList(list, err) })
	case informer.RequestWatch:
		l.emitRequest(narration.KindWatch, req.Options)
		open := l.n.src.lw.OpenWatchLent
		if l.copies() {
			open = l.n.src.lw.OpenWatch
		}
		wt, err := open(req.Options)
		if err != nil {
			l.n.w.after(lat, l.n.netActor, narration.StepWatchResponse, func() { l.deliverWatchFailed(err) })
			break
		}
		l.stream = &watchStream{w: wt, wire: fifo[wireMsg]{items: l.wireBuf}, timers: fifo[*sim.Timer]{items: l.timersBuf}}
		l.wireBuf, l.timersBuf = nil, nil
		l.send(l.stream, wireMsg{kind: wireOpened})
		// The watch actor offers "pull" when the watcher is Ready: the watcher says when that
		// may have changed, and the new stream is a change in itself.
		wt.OnReady(l.n.wakeWatchFn)
		l.n.watchWaker.Wake()
	default:
		invariant.Check(false, "world: %s: unknown request verb %v", l.n.Name(), req.Verb)
	}
}

// list performs the Reflector's LIST. The apiserver lends the informer its own objects rather
// than copies (fakeapi.md §10.5): the informer only reads them, as client-go's shares one
// object between its cache and every handler, and the apiserver notices any change made to one
// (the read-only-objects oracle, checked after every step). An informer with a transform gets
// copies, since client-go lets a transform change what it is given, unless the informer's spec
// promises that its transform only reads (InformerSpec.TransformReadsOnly).
func (l *link) list(o metav1.ListOptions) (runtime.Object, error) {
	if l.copies() {
		return l.n.src.lw.List(o)
	}
	list, err := l.n.src.lw.ListLent(o)
	if err != nil {
		return nil, err // not list: a nil *UnstructuredList is not a nil runtime.Object
	}
	return list, nil
}

// copies reports whether the informer must be handed copies of the apiserver's objects: it has
// a transform that may change what it is given.
func (l *link) copies() bool {
	return l.n.st.HasTransform() && !l.n.src.opts.TransformReadsOnly
}

// emitRequest narrates a request, with its options when narration reaches anyone.
func (l *link) emitRequest(verb string, o metav1.ListOptions) {
	s := l.n.w.s
	if !s.Narrated() {
		s.Emit(l.n.reflectorActor, verb) // counted; its fields would be built for nobody
		return
	}
	s.Emit(l.n.reflectorActor, verb, l.requestFields(o)...)
}

// requestFields narrates a request's options as the apiserver receives them: the Reflector's,
// then the selectors the informer's source adds.
func (l *link) requestFields(o metav1.ListOptions) []sim.Field {
	f := []sim.Field{sim.F(narration.FieldRV, o.ResourceVersion)}
	if o.ResourceVersionMatch != "" {
		f = append(f, sim.F("rvm", string(o.ResourceVersionMatch)))
	}
	if o.SendInitialEvents != nil {
		f = append(f, sim.FBool("sendInitialEvents", *o.SendInitialEvents))
	}
	if ls := l.n.src.opts.LabelSelector; ls != "" {
		f = append(f, sim.F("labels", ls))
	}
	if fs := l.n.src.opts.FieldSelector; fs != "" {
		f = append(f, sim.F("fields", fs))
	}
	if o.Limit != 0 {
		f = append(f, sim.FInt("limit", o.Limit))
	}
	if o.Continue != "" {
		f = append(f, sim.F("continue", o.Continue))
	}
	if o.AllowWatchBookmarks {
		f = append(f, sim.FBool("bookmarks", true))
	}
	if o.TimeoutSeconds != nil {
		f = append(f, sim.FDur("timeout", time.Duration(*o.TimeoutSeconds)*time.Second))
	}
	return f
}

func (l *link) deliverList(list runtime.Object, err error) {
	l.n.wakeParts() // the Reflector is fed: its phase and the queue change
	if err != nil {
		l.n.w.s.Emit(l.n.netActor, narration.KindListError, errFields(err)...)
		l.n.st.Reflector().ListDone(nil, err)
		return
	}
	ul := list.(interface {
		GetResourceVersion() string
		GetContinue() string
	})
	items := 0
	if each, ok := list.(interface {
		EachListItem(func(runtime.Object) error) error
	}); ok {
		_ = each.EachListItem(func(runtime.Object) error { items++; return nil })
	}
	f := []sim.Field{sim.FInt("items", int64(items)), sim.F("rv", ul.GetResourceVersion())}
	if c := ul.GetContinue(); c != "" {
		f = append(f, sim.F("continue", c))
	}
	l.n.w.s.Emit(l.n.netActor, narration.KindListOK, f...)
	l.n.st.Reflector().ListDone(list, nil)
}

func (l *link) deliverWatchFailed(err error) {
	l.n.wakeParts() // the Reflector is fed: its phase changes
	l.n.w.s.Emit(l.n.netActor, narration.KindWatchError, errFields(err)...)
	l.n.st.Reflector().WatchOpened(err)
}

// deliverHead delivers the oldest message on the open stream's wire (see watchStream.wire): a
// recv timer of the stream fired. It is the one timer of the stream that is no longer armed
// (each firing delivers at once, and a dropped stream's timers are stopped), and it goes back to
// the spare timers.
func (l *link) deliverHead() {
	st := l.stream
	if st == nil || st.onWire() == 0 { // only then: the message arguments allocate
		invariant.Check(false, "world: %s: delivery on a dropped stream", l.n.Name())
	}
	// Usually the oldest timer (deadlines never decrease along the wire), so taking it from the
	// fifo moves nothing; deleting it from a slice moved every later one, a cost in the length
	// of the wire paid at each message.
	i := slices.IndexFunc(st.timers.queued(), func(t *sim.Timer) bool { return !t.Armed() })
	if i < 0 { // only then: the message arguments allocate
		invariant.Check(false, "world: %s: unknown delivery timer", l.n.Name())
	}
	l.spareTimers = append(l.spareTimers, st.timers.take(i))
	wasFull := st.onWire() >= l.n.w.cfg.MaxInFlightEvents
	m := st.wire.pop()
	if m.kind == wireEvent {
		l.deliverEventWaking(st, m.ev, wasFull)
		return
	}
	// The wire has room again, and the Reflector is fed: its phase, the queue and the stream
	// may change.
	l.n.wakeParts()
	switch m.kind {
	case wireOpened:
		l.deliverWatchOpened(st)
	case wireClose:
		l.deliverClose(st)
	}
}

// deliverEventWaking delivers a watch event taken off the wire, which was full before (wasFull),
// and wakes only the informer's actors whose offers it may have changed, rather than all three
// at every event (each wake costs the next step a poll of the actor). An event that ends the
// stream drops it, which wakes all three. Otherwise: the queue actor offers "process" while the
// queue is not empty, so it is woken if that changed (the Reflector queues the event); the
// watch actor offers "pull" while the wire has room (and the watcher is ready, which the
// watcher reports itself), so it is woken if the wire was full; the reflector actor offers
// "request" when the Reflector has a request, which it has none of while its stream is open,
// so it is woken only if that changed after all.
func (l *link) deliverEventWaking(st *watchStream, ev watch.Event, wasFull bool) {
	r := l.n.st.Reflector()
	hadWork, hadRequest := l.n.st.QueueLen() > 0, r.HasRequest()
	l.deliverEvent(st, ev)
	if l.stream != st {
		return // dropped: every part was woken
	}
	if l.n.st.QueueLen() > 0 != hadWork {
		l.n.queueWaker.Wake()
	}
	if wasFull {
		l.n.watchWaker.Wake()
	}
	if r.HasRequest() != hadRequest {
		l.n.reflectorWaker.Wake()
	}
}

func (l *link) deliverWatchOpened(st *watchStream) {
	l.n.w.s.Emit(l.n.netActor, narration.KindWatchOK, sim.FInt(narration.FieldWatch, int64(st.w.ID())))
	r := l.n.st.Reflector()
	r.WatchOpened(nil)
	st.opened = true
	if !r.Watching() {
		l.dropStream("reflector ended the stream at once")
	}
}

// canPull: the stream has an event or its end ready at the apiserver, and the in-flight window
// has room.
func (l *link) canPull() bool {
	st := l.stream
	if st == nil || st.ended || l.n.stopped || st.onWire() >= l.n.w.cfg.MaxInFlightEvents {
		return false
	}
	return st.w.Ready()
}

// pull is the watch actor's "pull": take one event (or the end) off the apiserver's watcher and
// put it on the wire.
func (l *link) pull() {
	st := l.stream
	if ev, ok := st.w.Next(); ok {
		l.send(st, wireMsg{kind: wireEvent, ev: ev})
	} else {
		if !st.w.Done() { // only then: the message arguments allocate
			invariant.Check(false, "world: %s: pull with nothing ready", l.n.Name())
		}
		st.ended = true
		l.n.w.s.Emit(l.n.watchActor, narration.KindEnd, sim.F(narration.FieldReason, st.w.CloseReason().String()))
		l.send(st, wireMsg{kind: wireClose})
	}
}

func (l *link) deliverEvent(st *watchStream, ev watch.Event) {
	if !st.opened { // only then: the message arguments allocate
		invariant.Check(false, "world: %s: watch event before the WATCH response", l.n.Name())
	}
	if l.n.w.s.Narrated() {
		l.emitEvent(ev)
	} else {
		l.n.w.s.Emit(l.n.reflectorActor, string(ev.Type)) // counted, nobody reads its fields
	}
	r := l.n.st.Reflector()
	if stop := r.WatchEvent(ev); stop || !r.Watching() {
		l.dropStream("stream ended by " + string(ev.Type))
	}
}

func (l *link) deliverClose(st *watchStream) {
	if st.onWire() != 0 { // only then: the message arguments allocate
		invariant.Check(false, "world: %s: stream end delivered before its events", l.n.Name())
	}
	l.stream = nil
	l.keepBuffers(st)
	l.n.w.s.Emit(l.n.reflectorActor, narration.KindEOF)
	l.n.st.Reflector().WatchClosed()
}

// dropStream stops the apiserver's watcher and drops every message still on the wire, as closing
// a connection does.
func (l *link) dropStream(why string) {
	st := l.stream
	l.stream = nil
	l.n.wakeParts() // no stream: nothing to pull; the Reflector may ask for a new one
	for _, t := range st.timers.queued() {
		t.Stop()
	}
	l.spareTimers = append(l.spareTimers, st.timers.queued()...)
	l.n.w.s.Emit(l.n.watchActor, narration.KindDrop, sim.F(narration.FieldWhy, why), sim.FInt(narration.FieldLost, int64(st.onWire())))
	l.keepBuffers(st)
	st.w.Stop()
}

// keepBuffers keeps the buffers of a stream that ended, emptied, for the informer's next stream.
func (l *link) keepBuffers(st *watchStream) {
	l.wireBuf, l.timersBuf = st.wire.release(), st.timers.release()
}

// emitEvent narrates a watch event reaching the Reflector: its object's key and RV, a
// bookmark's RV, an Error's status.
func (l *link) emitEvent(ev watch.Event) {
	s, kind := l.n.w.s, string(ev.Type)
	if ev.Type == watch.Error {
		s.Emit(l.n.reflectorActor, kind, errFields(apierrors.FromObject(ev.Object))...)
		return
	}
	m, ok := ev.Object.(metav1.Object)
	switch {
	case !ok:
		s.Emit(l.n.reflectorActor, kind)
	case ev.Type == watch.Bookmark:
		s.Emit(l.n.reflectorActor, kind, sim.F(narration.FieldRV, m.GetResourceVersion()))
	default:
		key := m.GetName()
		if ns := m.GetNamespace(); ns != "" {
			key = ns + "/" + key
		}
		s.Emit(l.n.reflectorActor, kind, sim.F(narration.FieldObj, key), sim.F(narration.FieldRV, m.GetResourceVersion()))
	}
}

func errFields(err error) []sim.Field {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		s := st.Status()
		return []sim.Field{sim.FInt(narration.FieldCode, int64(s.Code)), sim.F(narration.FieldReason, string(s.Reason))}
	}
	return []sim.Field{sim.F(narration.FieldErr, err.Error())}
}
