package fakeapi

import (
	"time"

	"github.com/informersim/informersim/internal/invariant"
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

func (s *Server) replica_locked(i int) *replica {
	invariant.Check(i >= 0 && i < len(s.replicas), "fakeapi: replica %d out of range [0, %d)", i, len(s.replicas))
	return s.replicas[i]
}

// Replicas returns the number of simulated apiservers.
func (s *Server) Replicas() int {
	s.lock()
	defer s.mu.Unlock()
	return len(s.replicas)
}

// RouteNext makes the next list or watch (of any resource) go to replica i, overriding the
// routing policy once. Calls queue up in order.
func (s *Server) RouteNext(i int) {
	s.lock()
	defer s.mu.Unlock()
	s.replica_locked(i)
	s.routes = append(s.routes, i)
}

// ReplicaRevision returns the revision replica i's watch cache has processed.
func (s *Server) ReplicaRevision(i int) uint64 {
	s.lock()
	defer s.mu.Unlock()
	return s.replica_locked(i).cacheRV
}

// FreezeReplica stops replica i's cache from processing new revisions (fakeapi.md §6 F-2): its
// RV="0" lists go stale, NotOlderThan reads above it get 504, and its watches stall.
func (s *Server) FreezeReplica(i int) {
	s.lock()
	defer s.mu.Unlock()
	s.replica_locked(i).frozen = true
}

// ResumeReplica unfreezes replica i; without lag it catches up at once and its watches receive
// the events they missed, in order.
func (s *Server) ResumeReplica(i int) {
	s.lock()
	defer s.mu.Unlock()
	r := s.replica_locked(i)
	r.frozen = false
	if r.lag == 0 {
		s.advanceReplica_locked(r, s.rev)
	}
	s.advance_locked()
}

// StepReplica moves replica i's cache forward to revision rev (capped at the current revision),
// frozen or not: the "step" of F-2.
func (s *Server) StepReplica(i int, rev uint64) {
	s.lock()
	defer s.mu.Unlock()
	s.advanceReplica_locked(s.replica_locked(i), min(rev, s.rev))
}

// SetReplicaLag makes replica i's cache see each write lag after it happened (F-2); Advance
// moves it as the clock passes. Zero makes it follow the store immediately.
func (s *Server) SetReplicaLag(i int, lag time.Duration) {
	s.lock()
	defer s.mu.Unlock()
	r := s.replica_locked(i)
	r.lag = max(lag, 0)
	if r.lag == 0 && !r.frozen {
		s.advanceReplica_locked(r, s.rev)
	}
}

// SetReplicaReady marks replica i's cache ready or not; while not ready, requests it would serve
// from its cache get 429 (fakeapi.md §3.2 row 4, §3.4 "Readiness").
func (s *Server) SetReplicaReady(i int, ready bool) {
	s.lock()
	defer s.mu.Unlock()
	s.replica_locked(i).notReady = !ready
}

// ReinitReplica reinitialises replica i's watch cache as an apiserver restart does (fakeapi.md
// §6 F-3): every watch it serves is closed cleanly, its history is dropped, it relists at the
// current revision (unfreezing it), and it answers 429 for notReadyFor (zero: ready at once).
// Re-watching from an RV before the reinitialisation then gets 410.
func (s *Server) ReinitReplica(i int, notReadyFor time.Duration) {
	s.lock()
	defer s.mu.Unlock()
	r := s.replica_locked(i)
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
}
