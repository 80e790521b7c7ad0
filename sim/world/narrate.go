package world

import (
	"strconv"
	"strings"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/internal/invariant"
	"github.com/informersim/informersim/sim"
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
	switch e.Kind {
	case informer.StepDelivered:
		if h := n.handler(e.Handler); h != nil {
			if h.buffered.len() == 0 {
				invariant.Check(false, "world: a delivery the world did not see distributed")
			}
			ref := h.buffered.pop()
			h.changed()
			h.rec.deliverRef(&e, ref)
			if n.w.cfg.CheckReadOnlyEachDelivery {
				n.w.checkAfterStep(h.actor, e.Object, e.OldObject)
			}
		}
		return
	case informer.StepPopped, informer.StepCacheAdded, informer.StepCacheUpdated, informer.StepCacheDeleted, informer.StepDistributed:
		if !s.Narrated() {
			// The per-event narration, counted but not built: nobody reads it.
			switch e.Kind {
			case informer.StepPopped:
				if e.PopSize == 0 || e.PopIndex == e.PopSize-1 {
					s.Emit(n.queueActor, "pop") // one event per Pop, as narrated
				}
			case informer.StepDistributed:
				s.Emit(n.queueActor, "buffer")
			default:
				s.Emit(n.queueActor, e.Kind.String())
			}
			return
		}
	}
	switch e.Kind {
	case informer.StepPopped:
		if e.PopSize > 0 {
			n.narratePopGroup(&e)
			return
		}
		// Field lists are built in arrays of this frame: Emit copies what it keeps, so they
		// need no heap (here and below).
		var buf [4]sim.Field
		f := append(buf[:0], sim.F("delta", string(e.Delta)))
		switch e.Delta {
		case informer.ReplacedAll:
			f = append(f, sim.F("rv", e.ResourceVersion), sim.FInt("n", int64(e.Count)))
		case informer.Bookmark:
			f = append(f, sim.F("rv", e.ResourceVersion))
		case informer.SyncAll:
		default:
			f = append(f, sim.F("obj", objRef(e.Key, e.ResourceVersion, e.Tombstone)))
		}
		if e.InInitialList {
			f = append(f, sim.FBool("init", true))
		}
		s.Emit(n.queueActor, "pop", f...)
	case informer.StepCacheAdded, informer.StepCacheUpdated, informer.StepCacheDeleted:
		s.Emit(n.queueActor, e.Kind.String(), sim.F("obj", objRef(e.Key, e.ResourceVersion, e.Tombstone)))
	case informer.StepCacheReplaced:
		s.Emit(n.queueActor, "cache-replace", sim.FInt("n", int64(e.Count)), sim.F("rv", e.ResourceVersion))
	case informer.StepDistributed:
		var buf [6]sim.Field
		f := append(buf[:0], sim.F("to", n.handlerList(e.Handlers)), sim.F("call", e.Notification.String()))
		if e.Notification == informer.NotificationUpdate {
			f = append(f, sim.F("obj", e.Key), sim.F("rv", e.OldResourceVersion+"->"+e.ResourceVersion))
		} else {
			f = append(f, sim.F("obj", objRef(e.Key, e.ResourceVersion, e.Tombstone)))
		}
		if e.Sync {
			f = append(f, sim.FBool("sync", true))
		}
		if e.InInitialList {
			f = append(f, sim.FBool("init", true))
		}
		s.Emit(n.queueActor, "buffer", f...)
	case informer.StepResyncChecked:
		s.Emit(n.reflectorActor, "resync-check", sim.F("due", n.handlerList(e.Handlers)))
	case informer.StepRegistered, informer.StepJoined:
		// Called with the informer's locks held: discover only records the registration; its
		// handle is looked up after the call returns (resolve).
		h := n.discover(e.Handler)
		if e.Kind == informer.StepJoined {
			s.Emit(h.actor, "join", append([]sim.Field{sim.FInt("snapshot", int64(e.Count))}, resyncFields(e)...)...)
		} else {
			s.Emit(h.actor, "register", resyncFields(e)...)
		}
	case informer.StepRemoved:
		if h := n.handler(e.Handler); h != nil {
			h.removed = true
			h.changed()
		}
		s.Emit(n.handlerActor(e.Handler), "remove")
	case informer.StepHandlerSynced:
		s.Emit(n.handlerActor(e.Handler), "synced")
	case informer.StepSynced, informer.StepStopped:
		s.Emit(n.Name(), e.Kind.String())
	case informer.StepReflector:
		n.observeReflector(e.Reflector)
	default:
		s.Emit(n.Name(), e.String())
	}
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
	f := []sim.Field{sim.F("key", e.Key), sim.F("deltas", strings.Join(n.popGroup, ","))}
	if e.InInitialList {
		f = append(f, sim.FBool("init", true))
	}
	n.w.s.Emit(n.queueActor, "pop", f...)
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
		f = append(f, sim.FInt("items", int64(e.Items)), sim.F("rv", e.ResourceVersion))
	case informer.EventListPage:
		f = append(f, sim.FInt("items", int64(e.Items)))
	case informer.EventWatchOpened, informer.EventWatchClosed, informer.EventStoreError:
		f = append(f, sim.F("rv", e.ResourceVersion))
	case informer.EventWatchRetry:
		f = append(f, sim.F("rv", e.ResourceVersion), sim.FDur("delay", e.Delay))
	case informer.EventPassEnded:
		f = append(f, sim.FDur("delay", e.Delay))
	case informer.EventWatchListRetry:
		// A new watch-list request follows: after a backoff for 429 or a refused connection, at
		// once for 410, too large an RV or a stream that ended before its end bookmark (§7.5).
		f = append(f, sim.F("rv", e.ResourceVersion))
		if e.Delay > 0 {
			f = append(f, sim.FDur("delay", e.Delay))
		}
	}
	if e.Err != nil {
		f = append(f, sim.F("err", e.Err.Error()))
	}
	s.Emit(n.reflectorActor, kind, f...)
}

// reflectorKind names a Reflector event in the trace.
func reflectorKind(k informer.ReflectorEventKind) string {
	switch k {
	case informer.EventListed:
		return "listed"
	case informer.EventListPage:
		return "list-page"
	case informer.EventRelistUnavailable:
		return "relist-fresh"
	case informer.EventWatchOpened:
		return "watching"
	case informer.EventWatchClosed:
		return "rewatch"
	case informer.EventWatchRetry:
		return "rewatch-after"
	case informer.EventPassEnded:
		return "relist-after"
	case informer.EventSkipped:
		return "skipped"
	case informer.EventStoreError:
		return "store-error"
	case informer.EventResync:
		return "resync"
	case informer.EventResyncSkipped:
		return "resync-skip"
	case informer.EventWatchListSynced:
		return "watch-list-synced"
	case informer.EventWatchListRetry:
		return "watch-list-retry"
	case informer.EventWatchListFallback:
		// The watch-list attempt failed for good: this pass lists instead (informer.md §7.3).
		return "watch-list-fallback"
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
		return "-"
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strings.TrimPrefix(n.handlerActor(id), n.Name()+"/")
	}
	return strings.Join(parts, ",")
}

// resyncFields narrates a registration's resync periods (informer.md §2.2) for the resync
// alignment oracle: the period asked for (or the informer's default), the effective one, and the
// informer's check period after the registration. An informer that never resyncs has them all
// zero, and then says nothing.
func resyncFields(e informer.StepEvent) []sim.Field {
	if e.RequestedResyncPeriod == 0 && e.ResyncPeriod == 0 && e.CheckPeriod == 0 {
		return nil
	}
	return []sim.Field{sim.FDur("requested", e.RequestedResyncPeriod), sim.FDur("resync", e.ResyncPeriod), sim.FDur("check", e.CheckPeriod)}
}

// objRef renders an object reference "ns/name@rv", or "tomb(ns/name@rv)" for a tombstone.
func objRef(key, rv string, tomb bool) string {
	s := key + "@" + rv
	if tomb {
		return "tomb(" + s + ")"
	}
	return s
}

// narrateCommit narrates one write of the apiserver, whoever made it (an op, a handler or an
// actor through the server's client API, the apiserver's own timed work), as actor "apiserver":
// "ADDED obj=pods/default/a rv=2". It runs with the apiserver's lock held and only emits.
func (w *World) narrateCommit(c fakeapi.Commit) {
	if !w.s.Narrated() {
		w.s.Emit("apiserver", string(c.Type)) // counted, nobody reads its fields
		return
	}
	var ref string
	if c.Namespace != "" {
		ref = c.Resource.Resource + "/" + c.Namespace + "/" + c.Name
	} else {
		ref = c.Resource.Resource + "/" + c.Name
	}
	w.s.Emit("apiserver", string(c.Type), sim.F("obj", ref), sim.F("rv", fakeapi.FormatRV(c.Revision)))
}
