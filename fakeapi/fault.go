package fakeapi

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// failure is an injected error for the next request of a verb (F-6).
type failure struct {
	verb Verb
	gvr  *schema.GroupVersionResource // nil: any resource
	err  error
}

// FailNext makes the next request with verb (of any resource) fail with err, before it is
// served (fakeapi.md §6 F-6). Use a StatusError (NewTooManyRequests, NewInternalError, ...) or
// [NewConnectionRefused]. Injected failures are consumed first-in first-out.
func (s *Server) FailNext(verb Verb, err error) {
	s.lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, failure{verb: verb, err: err})
}

// FailNextFor is FailNext restricted to one resource.
func (s *Server) FailNextFor(verb Verb, gvr schema.GroupVersionResource, err error) {
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
func (s *Server) CloseWatch(id uint64, err error) error {
	return s.closeOpenWatch(id, CloseFault, err)
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
func (s *Server) CloseSlowConsumer(id uint64) error {
	return s.closeOpenWatch(id, CloseSlowConsumer, nil)
}

// CloseAllWatches ends every open watch, in ID order, as CloseWatch does.
func (s *Server) CloseAllWatches(err error) {
	s.lock()
	defer s.mu.Unlock()
	for _, w := range s.watchersAll_locked() {
		w.close_locked(CloseFault, err)
	}
}

// TriggerBookmarks queues an ordinary bookmark on every open watch that allows them, in ID
// order, as a cacher dispatch tick would (F-7).
func (s *Server) TriggerBookmarks() {
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
func (s *Server) SetWatchListQuirk(q WatchListQuirk) {
	s.lock()
	defer s.mu.Unlock()
	s.quirk = q
}

// DuplicateEvent re-sends, at the head of watch id's buffer, the last object event the consumer
// took from it: explicitly invalid server behaviour (fakeapi.md §6 F-11, k/k#73845) for testing
// a client's tolerance of duplicate, back-in-time events. It bypasses the watch's monotonicity
// invariant and is never done unless called.
func (s *Server) DuplicateEvent(id uint64) error {
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
