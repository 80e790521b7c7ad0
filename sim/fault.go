package sim

// faultSite is the per-run state of one fault point.
type faultSite struct {
	active bool
	hits   int64
	fired  int64
}

// Fault reports whether the fault point called site fires now, BUGGIFY style: the first time a
// site is used in a run, it is made active with probability Config.FaultSiteProbability; each
// later hit of an active site fires with probability Config.FaultHitProbability. Activation is
// drawn from a stream derived from (seed, site) alone, so the order in which sites are first
// reached changes nothing; hits draw from the "faults" stream. Every decision is a trace event
// (actor "fault": "activate" once per site, "hit" for each hit of an active site). With faults disabled, Fault returns false and
// records nothing.
func (s *Sim) Fault(site string) bool {
	if !s.faultsOn {
		return false
	}
	fs, ok := s.sites[site]
	if !ok {
		fs = &faultSite{active: newStream(s.cfg.Seed, "fault-site", site).Float64() < s.cfg.FaultSiteProbability}
		s.sites[site] = fs
		s.Emit("fault", "activate", F("site", site), FBool("active", fs.active))
	}
	fs.hits++
	if !fs.active {
		return false // decided once, at activation
	}
	fired := s.Rand(StreamFaults).Float64() < s.cfg.FaultHitProbability
	if fired {
		fs.fired++
	}
	if s.Narrated() {
		s.Emit("fault", "hit", F("site", site), FBool("fired", fired))
	} else {
		s.Emit("fault", "hit") // counted; its fields would be built for nobody
	}
	return fired
}

// SetFaultsEnabled switches every fault point on or off, e.g. off for the liveness phase after a
// safety phase with faults. Sites keep their activation across the switch.
func (s *Sim) SetFaultsEnabled(on bool) {
	if on == s.faultsOn {
		return
	}
	s.faultsOn = on
	s.Emit("fault", "enabled", FBool("on", on))
}

// FaultsEnabled reports whether fault points can fire.
func (s *Sim) FaultsEnabled() bool { return s.faultsOn }
