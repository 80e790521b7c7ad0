package world

import (
	"strconv"
	"strings"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/internal/invariant"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world/narration"
)

// onStepEvent acts on each of the informer's step events, so it changes the world as well as
// narrating: it turns the event into trace events under the actor of the component that acted
// (the queue for pops, cache writes and buffering; the Reflector for its decisions and resync
// checks; the handler for registrations and deliveries), hosts registrations as they appear
// (discovery), buffers distributed notifications in their handlers and wakes their actors, and
// feeds each delivery to its handler's DeliveryLog.
func (n *Informer) onStepEvent(e informer.StepEvent) {
	s := n.w.s
	if e.Kind == informer.StepDistributed {
		n.bufferDistributed(&e)
	}
	switch e.Kind {
	case informer.StepDelivered:
		n.delivered(&e)
		return
	case informer.StepPopped, informer.StepCacheAdded, informer.StepCacheUpdated, informer.StepCacheDeleted, informer.StepDistributed:
		if !s.Narrated() {
			n.countUnnarrated(&e)
			return
		}
	}
	switch e.Kind {
	case informer.StepPopped:
		n.narratePop(&e)
	case informer.StepCacheAdded, informer.StepCacheUpdated, informer.StepCacheDeleted:
		s.Emit(n.queueActor, e.Kind.String(), sim.F(narration.FieldObj, narration.Ref(e.Key, e.ResourceVersion, e.Tombstone)))
	case informer.StepCacheReplaced:
		s.Emit(n.queueActor, narration.KindCacheReplace, sim.FInt(narration.FieldN, int64(e.Count)), sim.F(narration.FieldRV, e.ResourceVersion))
	case informer.StepDistributed:
		n.narrateBuffer(&e)
	case informer.StepResyncChecked:
		s.Emit(n.reflectorActor, narration.KindResyncCheck, sim.F(narration.FieldDue, n.handlerList(e.Handlers)))
	case informer.StepRegistered, informer.StepJoined:
		// Called with the informer's locks held: discover only records the registration; its
		// handle is looked up after the call returns (resolve).
		h := n.discover(e.Handler)
		if e.Kind == informer.StepJoined {
			s.Emit(h.actor, narration.KindJoin, append([]sim.Field{sim.FInt(narration.FieldSnapshot, int64(e.Count))}, resyncFields(e)...)...)
		} else {
			s.Emit(h.actor, narration.KindRegister, resyncFields(e)...)
		}
	case informer.StepRemoved:
		if h := n.handler(e.Handler); h != nil {
			h.removed = true
			h.changed()
		}
		s.Emit(n.handlerActor(e.Handler), narration.KindRemove)
	case informer.StepHandlerSynced:
		s.Emit(n.handlerActor(e.Handler), narration.KindSynced)
	case informer.StepSynced, informer.StepStopped:
		s.Emit(n.Name(), e.Kind.String())
	case informer.StepReflector:
		n.observeReflector(e.Reflector)
	default:
		s.Emit(n.Name(), e.String())
	}
}

// bufferDistributed buffers a distributed notification in each handler it goes to, waking a
// handler's actor when its buffer stops being empty.
func (n *Informer) bufferDistributed(e *informer.StepEvent) {
	ref := n.cacheLookup.keys.ref(e.Key, e.ResourceVersion) // once for all the handlers it goes to
	for _, id := range e.Handlers {
		if h := n.handler(id); h != nil {
			h.buffered.push(ref)
			if h.buffered.len() == 1 {
				// What the handler's actor offers changes only when its buffer stops being
				// empty (handlerActor.Actions): a notification buffered behind others wakes
				// nobody, so the engine does not ask every handler again at every one.
				h.changed()
			}
		}
	}
}

// delivered takes a delivery's notification out of its handler's buffer and feeds it to the
// handler's DeliveryLog (and to the read-only check after each delivery, when on).
func (n *Informer) delivered(e *informer.StepEvent) {
	if h := n.handler(e.Handler); h != nil {
		if h.buffered.len() == 0 {
			invariant.Check(false, "world: a delivery the world did not see distributed")
		}
		ref := h.buffered.pop()
		h.changed()
		h.rec.deliverRef(e, ref)
		if n.w.cfg.CheckReadOnlyEachDelivery {
			n.w.checkAfterStep(h.actor, e.Object, e.OldObject)
		}
	}
}

// countUnnarrated emits the trace event of a pop, cache write or buffering when the run narrates
// nothing: the per-event narration, counted but not built, since nobody reads it.
func (n *Informer) countUnnarrated(e *informer.StepEvent) {
	s := n.w.s
	switch e.Kind {
	case informer.StepPopped:
		if e.PopSize == 0 || e.PopIndex == e.PopSize-1 {
			s.Emit(n.queueActor, narration.KindPop) // one event per Pop, as narrated
		}
	case informer.StepDistributed:
		s.Emit(n.queueActor, narration.KindBuffer)
	default:
		s.Emit(n.queueActor, e.Kind.String())
	}
}

// narratePop narrates a pop: one delta (its RV or object, whether from the initial list), or a
// group of deltas handed out by one Pop (narratePopGroup).
func (n *Informer) narratePop(e *informer.StepEvent) {
	s := n.w.s
	if e.PopSize > 0 {
		n.narratePopGroup(e)
		return
	}
	// Field lists are built in arrays of this frame: Emit copies what it keeps, so they
	// need no heap (here and in narrateBuffer).
	var buf [4]sim.Field
	f := append(buf[:0], sim.F(narration.FieldDelta, string(e.Delta)))
	switch e.Delta {
	case informer.ReplacedAll:
		f = append(f, sim.F(narration.FieldRV, e.ResourceVersion), sim.FInt(narration.FieldN, int64(e.Count)))
	case informer.Bookmark:
		f = append(f, sim.F(narration.FieldRV, e.ResourceVersion))
	case informer.SyncAll:
	default:
		f = append(f, sim.F(narration.FieldObj, narration.Ref(e.Key, e.ResourceVersion, e.Tombstone)))
	}
	if e.InInitialList {
		f = append(f, sim.FBool(narration.FieldInit, true))
	}
	s.Emit(n.queueActor, narration.KindPop, f...)
}

// narrateBuffer narrates a notification buffered for its handlers: which, what call, the object.
func (n *Informer) narrateBuffer(e *informer.StepEvent) {
	s := n.w.s
	var buf [6]sim.Field
	f := append(buf[:0], sim.F(narration.FieldTo, n.handlerList(e.Handlers)), sim.F(narration.FieldCall, e.Notification.String()))
	if e.Notification == informer.NotificationUpdate {
		f = append(f, sim.F(narration.FieldObj, e.Key), sim.F(narration.FieldRV, narration.RVChange(e.OldResourceVersion, e.ResourceVersion)))
	} else {
		f = append(f, sim.F(narration.FieldObj, narration.Ref(e.Key, e.ResourceVersion, e.Tombstone)))
	}
	if e.Sync {
		f = append(f, sim.FBool(narration.FieldSync, true))
	}
	if e.InInitialList {
		f = append(f, sim.FBool(narration.FieldInit, true))
	}
	s.Emit(n.queueActor, narration.KindBuffer, f...)
}

// narratePopGroup narrates one Pop of a DeltaFIFO that handed out several deltas (one key's,
// grouped in the order they were queued) as one line, "pop key=default/a
// deltas=Updated@4,Deleted@5", once the last of them is seen: the informer reports them one by
// one, before it processes any.
func (n *Informer) narratePopGroup(e *informer.StepEvent) {
	d := string(e.Delta) + "@" + e.ResourceVersion
	if e.Tombstone {
		d += "(tomb)"
	}
	if e.PopIndex == 0 {
		n.popGroup = n.popGroup[:0]
	}
	n.popGroup = append(n.popGroup, d)
	if e.PopIndex < e.PopSize-1 {
		return
	}
	invariant.Check(len(n.popGroup) == e.PopSize, "world: a Pop of %d deltas narrated from %d", e.PopSize, len(n.popGroup))
	f := []sim.Field{sim.F(narration.FieldKey, e.Key), sim.F(narration.FieldDeltas, strings.Join(n.popGroup, ","))}
	if e.InInitialList {
		f = append(f, sim.FBool(narration.FieldInit, true))
	}
	n.w.s.Emit(n.queueActor, narration.KindPop, f...)
}

func (n *Informer) observeReflector(e informer.ReflectorEvent) {
	s := n.w.s
	kind := reflectorKind(e.Kind)
	if !s.Narrated() {
		s.Emit(n.reflectorActor, kind) // counted; its fields would be built for nobody
		return
	}
	var f []sim.Field
	switch e.Kind {
	case informer.EventListed, informer.EventWatchListSynced:
		// watch-list-synced: the watch-list's end bookmark arrived: the store was replaced, as
		// after a LIST, and the resync timer starts here (informer.md §7.5, §2.3); the same
		// stream goes on as the watch.
		f = append(f, sim.FInt(narration.FieldItems, int64(e.Items)), sim.F(narration.FieldRV, e.ResourceVersion))
	case informer.EventListPage:
		f = append(f, sim.FInt(narration.FieldItems, int64(e.Items)))
	case informer.EventWatchOpened, informer.EventWatchClosed, informer.EventStoreError:
		f = append(f, sim.F(narration.FieldRV, e.ResourceVersion))
	case informer.EventWatchRetry:
		f = append(f, sim.F(narration.FieldRV, e.ResourceVersion), sim.FDur(narration.FieldDelay, e.Delay))
	case informer.EventPassEnded:
		f = append(f, sim.FDur(narration.FieldDelay, e.Delay))
	case informer.EventWatchListRetry:
		// A new watch-list request follows: after a backoff for 429 or a refused connection, at
		// once for 410, too large an RV or a stream that ended before its end bookmark (§7.5).
		f = append(f, sim.F(narration.FieldRV, e.ResourceVersion))
		if e.Delay > 0 {
			f = append(f, sim.FDur(narration.FieldDelay, e.Delay))
		}
	}
	if e.Err != nil {
		f = append(f, sim.F(narration.FieldErr, e.Err.Error()))
	}
	s.Emit(n.reflectorActor, kind, f...)
}

// reflectorKind names a Reflector event in the trace.
func reflectorKind(k informer.ReflectorEventKind) string {
	switch k {
	case informer.EventListed:
		return narration.KindListed
	case informer.EventListPage:
		return narration.KindListPage
	case informer.EventRelistUnavailable:
		return narration.KindRelistFresh
	case informer.EventWatchOpened:
		return narration.KindWatching
	case informer.EventWatchClosed:
		return narration.KindRewatch
	case informer.EventWatchRetry:
		return narration.KindRewatchAfter
	case informer.EventPassEnded:
		return narration.KindRelistAfter
	case informer.EventSkipped:
		return narration.KindSkipped
	case informer.EventStoreError:
		return narration.KindStoreError
	case informer.EventResync:
		return narration.KindResync
	case informer.EventResyncSkipped:
		return narration.KindResyncSkip
	case informer.EventWatchListSynced:
		return narration.KindWatchListSynced
	case informer.EventWatchListRetry:
		return narration.KindWatchListRetry
	case informer.EventWatchListFallback:
		// The watch-list attempt failed for good: this pass lists instead (informer.md §7.3).
		return narration.KindWatchListFallback
	}
	return k.String()
}

func (n *Informer) handlerActor(id int) string {
	if h := n.handler(id); h != nil {
		return h.actor
	}
	return n.Name() + "/h" + strconv.Itoa(id)
}

func (n *Informer) handlerList(ids []int) string {
	if len(ids) == 0 {
		return narration.HandlerList(nil)
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strings.TrimPrefix(n.handlerActor(id), n.Name()+"/")
	}
	return narration.HandlerList(parts)
}

// resyncFields narrates a registration's resync periods (informer.md §2.2) for the resync
// alignment oracle: the period asked for (or the informer's default), the effective one, and the
// informer's check period after the registration. An informer that never resyncs has them all
// zero, and then says nothing.
func resyncFields(e informer.StepEvent) []sim.Field {
	if e.RequestedResyncPeriod == 0 && e.ResyncPeriod == 0 && e.CheckPeriod == 0 {
		return nil
	}
	return []sim.Field{sim.FDur(narration.FieldRequested, e.RequestedResyncPeriod), sim.FDur(narration.FieldResync, e.ResyncPeriod), sim.FDur(narration.FieldCheck, e.CheckPeriod)}
}

// narrateCommit narrates one write of the apiserver, whoever made it (an op, a handler or an
// actor through the server's client API, the apiserver's own timed work), as actor "apiserver":
// "ADDED obj=pods/default/a rv=2". It runs with the apiserver's lock held and only emits.
func (w *World) narrateCommit(c fakeapi.Commit) {
	if !w.s.Narrated() {
		w.s.Emit(narration.ActorAPIServer, string(c.Type)) // counted, nobody reads its fields
		return
	}
	ref := narration.CommitRef(c.Resource.Resource, c.Namespace, c.Name)
	w.s.Emit(narration.ActorAPIServer, string(c.Type), sim.F(narration.FieldObj, ref), sim.F(narration.FieldRV, fakeapi.FormatRV(c.Revision)))
}
