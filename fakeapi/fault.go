package fakeapi

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Faults groups the server's fault injections (fakeapi.md §6): closing, cutting off and
// duplicating watches, failing requests, compacting, burning revisions, bookmark ticks and the
// watch-list quirks. A Server hands it out with [Server.Faults]; the replica faults (freeze,
// lag, step, reinitialise, readiness, routing) are on [Replicas]. Every fault is explicit: none
// happens unless one of these methods is called (or a Config option asks for it).
type Faults struct{ s *Server }

// Faults returns the server's fault injections.
func (s *Server) Faults() Faults { return Faults{s} }

// failure is an injected error for the next request of a verb (F-6).
type failure struct {
	verb Verb
	gvr  *schema.GroupVersionResource // nil: any resource
	err  error
}

// FailNext makes the next request with verb (of any resource) fail with err, before it is
// served (fakeapi.md §6 F-6). Use a StatusError (NewTooManyRequests, NewInternalError, ...) or
// [NewConnectionRefused]. Injected failures are consumed first-in first-out.
func (f Faults) FailNext(verb Verb, err error) {
	s := f.s
	s.lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, failure{verb: verb, err: err})
}

// FailNextFor is FailNext restricted to one resource.
func (f Faults) FailNextFor(verb Verb, gvr schema.GroupVersionResource, err error) {
	s := f.s
	s.lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, failure{verb: verb, gvr: &gvr, err: err})
}

func (s *Server) takeFailure_locked(verb Verb, gvr schema.GroupVersionResource) error {
	for i, f := range s.failures {
		if f.verb == verb && (f.gvr == nil || *f.gvr == gvr) {
			s.failures = append(s.failures[:i], s.failures[i+1:]...)
			return f.err
		}
	}
	return nil
}

// CloseWatch ends open watch id (fakeapi.md §6 F-5): cleanly when err is nil (the consumer sees
// the channel close), else with one ERROR event carrying err's Status (see [NewWatchError]).
// Pending events are dropped, as when a connection closes.
func (f Faults) CloseWatch(id uint64, err error) error {
	return f.s.closeOpenWatch(id, CloseFault, err)
}

func (s *Server) closeOpenWatch(id uint64, reason CloseReason, err error) error {
	s.lock()
	defer s.mu.Unlock()
	w, ok := s.watchers[id]
	if !ok {
		return fmt.Errorf("fakeapi: no open watch %d", id)
	}
	w.close_locked(reason, err)
	return nil
}

// CloseSlowConsumer ends open watch id the way the cacher cuts off an unresponsive watcher: a
// clean close recorded as CloseSlowConsumer (F-8, k/k#125123).
func (f Faults) CloseSlowConsumer(id uint64) error {
	return f.s.closeOpenWatch(id, CloseSlowConsumer, nil)
}

// CloseAllWatches ends every open watch, in ID order, as CloseWatch does.
func (f Faults) CloseAllWatches(err error) {
	s := f.s
	s.lock()
	defer s.mu.Unlock()
	for _, w := range s.watchersAll_locked() {
		w.close_locked(CloseFault, err)
	}
}

// TriggerBookmarks queues an ordinary bookmark on every open watch that allows them, in ID
// order, as a cacher dispatch tick would (F-7).
func (f Faults) TriggerBookmarks() {
	s := f.s
	s.lock()
	defer s.mu.Unlock()
	for _, w := range s.watchersAll_locked() {
		w.bookmark_locked()
	}
}

// WatchListQuirk is a deliberately wrong watch-list behaviour of buggy servers and fakes
// (fakeapi.md §6 F-9, §4.2 "Known pitfalls"). The zero value is the faithful behaviour.
type WatchListQuirk int

const (
	// WatchListOmitAnnotation sends the end-of-initial-events bookmark without its annotation.
	WatchListOmitAnnotation WatchListQuirk = iota + 1
	// WatchListOmitEndBookmark sends no end-of-initial-events bookmark at all.
	WatchListOmitEndBookmark
	// WatchListEndBookmarkWithoutRV sends the annotated bookmark with an empty resourceVersion.
	WatchListEndBookmarkWithoutRV
)

func (q WatchListQuirk) String() string {
	switch q {
	case 0:
		return "None"
	case WatchListOmitAnnotation:
		return "OmitAnnotation"
	case WatchListOmitEndBookmark:
		return "OmitEndBookmark"
	case WatchListEndBookmarkWithoutRV:
		return "EndBookmarkWithoutRV"
	}
	return fmt.Sprintf("WatchListQuirk(%d)", int(q))
}

// SetWatchListQuirk makes watches opened from now on misbehave as q describes; 0 restores the
// faithful behaviour.
func (f Faults) SetWatchListQuirk(q WatchListQuirk) {
	s := f.s
	s.lock()
	defer s.mu.Unlock()
	s.quirk = q
}

// DuplicateEvent re-sends, at the head of watch id's buffer, the last object event the consumer
// took from it: explicitly invalid server behaviour (fakeapi.md §6 F-11, k/k#73845) for testing
// a client's tolerance of duplicate, back-in-time events. It bypasses the watch's monotonicity
// invariant and is never done unless called.
func (f Faults) DuplicateEvent(id uint64) error {
	s := f.s
	s.lock()
	defer s.mu.Unlock()
	w, ok := s.watchers[id]
	if !ok {
		return fmt.Errorf("fakeapi: no open watch %d", id)
	}
	if w.lastDelivered.ev.Object == nil {
		return fmt.Errorf("fakeapi: watch %d has delivered no object event yet", id)
	}
	w.queue, w.head = append([]queued{w.lastDelivered}, w.queue[w.head:]...), 0
	w.live++
	w.notify()
	return nil
}

// Compact moves the compaction floor to rev (fakeapi.md §6 F-1): reads and continue tokens at
// revisions below rev get 410, and every watch cache drops history older than rev-1, so watches
// from older RVs get 410 too. Compacting to a revision at or below the floor does nothing; a
// revision above the current one is an error.
func (f Faults) Compact(rev uint64) error {
	s := f.s
	s.lock()
	defer s.mu.Unlock()
	if rev > s.rev {
		return fmt.Errorf("fakeapi: compact revision %d is in the future (current %d)", rev, s.rev)
	}
	s.compact_locked(rev)
	return nil
}

// BurnRevisions consumes n revisions without writing anything, as writes to other kinds sharing
// etcd would (fakeapi.md §6 F-10). Caches following the store advance past them, so bookmarks
// and list RVs move while no event is sent.
func (f Faults) BurnRevisions(n uint64) {
	s := f.s
	s.lock()
	defer s.mu.Unlock()
	s.rev += n
	s.followStore_locked()
}

// Watchers returns the IDs of the open watches, ascending: the watches CloseWatch,
// CloseSlowConsumer and DuplicateEvent can end or disturb.
func (f Faults) Watchers() []uint64 {
	s := f.s
	s.lock()
	defer s.mu.Unlock()
	ids := make([]uint64, 0, len(s.watchers))
	for _, w := range s.watchersAll_locked() {
		ids = append(ids, w.id)
	}
	return ids
}
