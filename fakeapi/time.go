package fakeapi

import (
	"time"
)

// NextDeadline returns the earliest time (never before the clock's now) at which
// [Server.Advance] has something to do: a
// periodic compaction, a lagging cache catching up, a replica becoming ready, a watch's bookmark,
// wait timeout or deadline. The server owns no timers; its driver (the simulator's clock heap,
// or the adapter goroutine) calls Advance when the clock reaches this time.
func (s *Server) NextDeadline() (time.Time, bool) {
	s.mu.Lock() // not lock: a pure read, which leaves the epoch alone
	defer s.mu.Unlock()
	now, d := s.clk.Now(), &s.deadline
	if d.valid && d.epoch == s.epoch && d.now.Equal(now) {
		return d.at, d.pending
	}
	at, pending := s.nextDeadline_locked()
	d.valid, d.epoch, d.now, d.at, d.pending = true, s.epoch, now, at, pending
	return at, pending
}

// lock takes mu for a section that may change the server's state, and says so by moving the
// epoch (see Server.epoch).
func (s *Server) lock() {
	s.mu.Lock()
	s.epoch++
	for _, f := range s.stateObservers {
		f()
	}
}

// Advance performs everything due at the clock's current time, in a fixed order: caches catch
// up (replica order), the compactor runs, then each open watch (ID order) handles its wait
// timeout, bookmarks and deadline. Calling it early or twice is harmless.
func (s *Server) Advance() {
	s.lock()
	defer s.mu.Unlock()
	s.advance_locked()
}

func (s *Server) advance_locked() {
	s.pruneOpen_locked()
	now := s.clk.Now()
	for _, r := range s.replicas {
		if r.frozen || r.lag == 0 || r.cacheRV >= s.rev {
			continue
		}
		target := s.rev
		for i := s.logIndexAfter(r.cacheRV); i < s.log.len(); i++ {
			if e := s.log.at(i); e.at.Add(r.lag).After(now) {
				target = e.rev - 1
				break
			}
		}
		s.advanceReplica_locked(r, target)
	}
	if !s.compactAt.IsZero() && !now.Before(s.compactAt) {
		// etcd's compactor compacts to the revision it saw on its previous tick (§2).
		s.compact_locked(s.compactTarget)
		s.compactTarget = s.rev
		s.compactAt = s.compactAt.Add(s.cfg.CompactionInterval)
		if !s.compactAt.After(now) {
			s.compactAt = now.Add(s.cfg.CompactionInterval)
		}
	}
	for _, w := range s.open { // ID order; a watcher's advance closes at most itself
		if !w.closed {
			w.advance_locked(now)
		}
	}
}

func (w *Watcher) advance_locked(now time.Time) {
	s := w.srv
	if w.waiting && !now.Before(w.waitUntil) {
		r := s.replicas[w.replica]
		w.close_locked(CloseTooLarge, newTooLargeResourceVersion(w.waitRV, r.cacheRV, 1))
		return
	}
	if !w.deadline.IsZero() {
		if before := s.cfg.BookmarkBeforeDeadline; before > 0 && !w.finalBookmarkSent && !now.Before(w.deadline.Add(-before)) {
			w.finalBookmarkSent = true
			w.bookmark_locked()
		}
		if !now.Before(w.deadline) {
			w.close_locked(CloseDeadline, nil)
			return
		}
	}
	if !w.nextBookmark.IsZero() && !now.Before(w.nextBookmark) {
		w.bookmark_locked()
		w.nextBookmark = now.Add(s.cfg.BookmarkInterval)
	}
}

func (s *Server) nextDeadline_locked() (time.Time, bool) {
	var best time.Time
	consider := func(t time.Time) {
		if !t.IsZero() && (best.IsZero() || t.Before(best)) {
			best = t
		}
	}
	consider(s.compactAt)
	now := s.clk.Now()
	for _, r := range s.replicas {
		if !r.notReady && r.notReadyUntil.After(now) {
			consider(r.notReadyUntil)
		}
		if r.frozen || r.lag == 0 || r.cacheRV >= s.rev {
			continue
		}
		if i := s.logIndexAfter(r.cacheRV); i < s.log.len() {
			consider(s.log.at(i).at.Add(r.lag))
		} else {
			consider(now) // only burned revisions to catch up with
		}
	}
	for _, w := range s.open {
		if w.closed {
			continue
		}
		if w.waiting {
			consider(w.waitUntil)
		}
		if !w.deadline.IsZero() {
			if before := s.cfg.BookmarkBeforeDeadline; before > 0 && w.req.bookmarks && !w.finalBookmarkSent {
				consider(w.deadline.Add(-before))
			}
			consider(w.deadline)
		}
		consider(w.nextBookmark)
	}
	if !best.IsZero() && best.Before(now) {
		best = now // already due: never ask the driver to move its clock backwards
	}
	return best, !best.IsZero()
}

// watchersAll_locked returns the open watches in ID order.
func (s *Server) watchersAll_locked() []*Watcher {
	ws := make([]*Watcher, 0, len(s.watchers))
	for _, w := range s.open {
		if !w.closed {
			ws = append(ws, w)
		}
	}
	return ws
}
