package fakeapi

import (
	"fmt"
	"time"
)

// route_locked picks the replica for a list or watch: a one-shot override from RouteNext first,
// then a pinned replica (pin >= 0), then the routing policy (fakeapi.md §6 F-4).
func (s *Server) route_locked(pin int) *replica {
	if len(s.routes) > 0 {
		i := s.routes[0]
		s.routes = s.routes[1:]
		return s.replicas[i]
	}
	if pin >= 0 && pin < len(s.replicas) {
		return s.replicas[pin]
	}
	switch s.cfg.Routing {
	case RoutingRoundRobin:
		r := s.replicas[s.rr%len(s.replicas)]
		s.rr++
		return r
	case RoutingRandom:
		return s.replicas[s.rnd.IntN(len(s.replicas))]
	}
	return s.replicas[0]
}

// checkReplica_locked is the error a replica method returns for an index the server does not
// have (Config.Replicas sets how many it has).
func (s *Server) checkReplica_locked(method string, i int) error {
	if i < 0 || i >= len(s.replicas) {
		return fmt.Errorf("fakeapi: %s(%d): no replica %d: the server has %d (indices 0 to %d; Config.Replicas sets how many)", method, i, i, len(s.replicas), len(s.replicas)-1)
	}
	return nil
}

// Replicas groups what can be done to the simulated apiservers one by one (fakeapi.md §3.4,
// §6 F-2..F-4): their caches can be frozen, stepped, resumed, made to lag, reinitialised or
// marked not ready, and a list or watch can be routed to one. A Server hands it out with
// [Server.Replicas]; Config.Replicas sets how many there are.
type Replicas struct{ s *Server }

// Replicas returns the server's simulated apiservers.
func (s *Server) Replicas() Replicas { return Replicas{s} }

// Len returns the number of simulated apiservers.
func (rs Replicas) Len() int {
	s := rs.s
	s.lock()
	defer s.mu.Unlock()
	return len(s.replicas)
}

// The replica methods below take a replica index in [0, Len()); another index is an error
// naming it, and the method changes nothing.

// RouteNext makes the next list or watch (of any resource) go to replica i, overriding the
// routing policy once. Calls queue up in order.
func (rs Replicas) RouteNext(i int) error {
	s := rs.s
	s.lock()
	defer s.mu.Unlock()
	if err := s.checkReplica_locked("Replicas.RouteNext", i); err != nil {
		return err
	}
	s.routes = append(s.routes, i)
	return nil
}

// Revision returns the revision replica i's watch cache has processed (0 with an error
// for a replica the server does not have).
func (rs Replicas) Revision(i int) (uint64, error) {
	s := rs.s
	s.lock()
	defer s.mu.Unlock()
	if err := s.checkReplica_locked("Replicas.Revision", i); err != nil {
		return 0, err
	}
	return s.replicas[i].cacheRV, nil
}

// Freeze stops replica i's cache from processing new revisions (fakeapi.md §6 F-2): its
// RV="0" lists go stale, NotOlderThan reads above it get 504, and its watches stall.
func (rs Replicas) Freeze(i int) error {
	s := rs.s
	s.lock()
	defer s.mu.Unlock()
	if err := s.checkReplica_locked("Replicas.Freeze", i); err != nil {
		return err
	}
	s.replicas[i].frozen = true
	return nil
}

// Resume unfreezes replica i; without lag it catches up at once and its watches receive
// the events they missed, in order.
func (rs Replicas) Resume(i int) error {
	s := rs.s
	s.lock()
	defer s.mu.Unlock()
	if err := s.checkReplica_locked("Replicas.Resume", i); err != nil {
		return err
	}
	r := s.replicas[i]
	r.frozen = false
	if r.lag == 0 {
		s.advanceReplica_locked(r, s.rev)
	}
	s.advance_locked()
	return nil
}

// Step moves replica i's cache forward to revision rev (capped at the current revision),
// frozen or not: the "step" of F-2.
func (rs Replicas) Step(i int, rev uint64) error {
	s := rs.s
	s.lock()
	defer s.mu.Unlock()
	if err := s.checkReplica_locked("Replicas.Step", i); err != nil {
		return err
	}
	s.advanceReplica_locked(s.replicas[i], min(rev, s.rev))
	return nil
}

// SetLag makes replica i's cache see each write lag after it happened (F-2); Advance
// moves it as the clock passes. Zero makes it follow the store immediately; a negative lag is an
// error.
func (rs Replicas) SetLag(i int, lag time.Duration) error {
	s := rs.s
	s.lock()
	defer s.mu.Unlock()
	if err := s.checkReplica_locked("Replicas.SetLag", i); err != nil {
		return err
	}
	if lag < 0 {
		return fmt.Errorf("fakeapi: Replicas.SetLag(%d, %v): negative lag", i, lag)
	}
	r := s.replicas[i]
	r.lag = lag
	if r.lag == 0 && !r.frozen {
		s.advanceReplica_locked(r, s.rev)
	}
	return nil
}

// SetReady marks replica i's cache ready or not; while not ready, requests it would serve
// from its cache get 429 (fakeapi.md §3.2 row 4, §3.4 "Readiness").
func (rs Replicas) SetReady(i int, ready bool) error {
	s := rs.s
	s.lock()
	defer s.mu.Unlock()
	if err := s.checkReplica_locked("Replicas.SetReady", i); err != nil {
		return err
	}
	s.replicas[i].notReady = !ready
	return nil
}

// Reinit reinitialises replica i's watch cache as an apiserver restart does (fakeapi.md
// §6 F-3): every watch it serves is closed cleanly, its history is dropped, it relists at the
// current revision (unfreezing it), and it answers 429 for notReadyFor (zero: ready at once).
// Re-watching from an RV before the reinitialisation then gets 410.
func (rs Replicas) Reinit(i int, notReadyFor time.Duration) error {
	s := rs.s
	s.lock()
	defer s.mu.Unlock()
	if err := s.checkReplica_locked("Replicas.Reinit", i); err != nil {
		return err
	}
	if notReadyFor < 0 {
		return fmt.Errorf("fakeapi: Replicas.Reinit(%d, %v): negative not-ready time", i, notReadyFor)
	}
	r := s.replicas[i]
	for _, w := range s.watchersOf_locked(i) {
		w.close_locked(CloseReinit, nil)
	}
	r.frozen = false
	r.cacheRV = s.rev
	r.historyFrom = s.rev
	if notReadyFor > 0 {
		r.notReadyUntil = s.clk.Now().Add(notReadyFor)
	}
	s.trim_locked()
	return nil
}
