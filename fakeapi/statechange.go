package fakeapi

// OnStateChange adds an observer called whenever the server's state may change: at the start
// of every section that may change it (a write, a watch pull or stop, a clock advance, a fault,
// a configuration change), the sections that move the epoch NextDeadline's own cache keys on.
// NextDeadline's answer depends only on that state and on the clock, so a driver that asks it
// after each of its steps may keep its last answer until an observer call or a clock move: the
// simulator's world does, sparing most steps the server's lock. Observers cannot be removed.
//
// f runs with the server's lock held, on the goroutine that entered the section: it must be
// quick and must not call the Server.
func (s *Server) OnStateChange(f func()) {
	if f == nil {
		return
	}
	s.lock() // the new observer is not called for its own registration: it is not there yet
	defer s.mu.Unlock()
	s.stateObservers = append(s.stateObservers, f)
}
