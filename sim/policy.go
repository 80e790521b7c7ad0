package sim

import (
	"fmt"
	"slices"
	"strconv"
)

// Policy chooses which of the actions enabled now runs next.
type Policy int

const (
	// PolicyRandom picks uniformly among the enabled actions, drawing from the "scheduling"
	// stream. The default: it explores interleavings broadly.
	PolicyRandom Policy = iota + 1
	// PolicyFIFO runs the action that has been enabled longest; an action that runs and stays
	// enabled counts as newly enabled, so none starves. Ties go to poll order (due timers in
	// deadline order, then actors in registration order, each in its own order). It draws
	// nothing, so a world without other randomness schedules alike for every seed: stable
	// traces for teaching.
	PolicyFIFO
	// PolicyPCT is probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010): each
	// actor gets a random priority, the highest-priority enabled actor runs, and at PCTDepth-1
	// random steps the running actor drops below all others. It finds bugs of depth d with
	// probability at least 1/(n·k^(d-1)).
	PolicyPCT
)

var policyNames = [...]string{PolicyRandom: "random", PolicyFIFO: "fifo", PolicyPCT: "pct"}

func (p Policy) String() string {
	if p >= PolicyRandom && p <= PolicyPCT {
		return policyNames[p]
	}
	return "Policy(" + strconv.Itoa(int(p)) + ")"
}

// GoName is the constant's Go name, for repro hints that are Go code.
func (p Policy) GoName() string {
	switch p {
	case PolicyRandom:
		return "PolicyRandom"
	case PolicyFIFO:
		return "PolicyFIFO"
	case PolicyPCT:
		return "PolicyPCT"
	}
	return p.String()
}

// ParsePolicy parses a policy name as String prints it ("random", "fifo", "pct").
func ParsePolicy(name string) (Policy, error) {
	for p := PolicyRandom; p <= PolicyPCT; p++ {
		if policyNames[p] == name {
			return p, nil
		}
	}
	return 0, fmt.Errorf("sim: unknown policy %q (want random, fifo or pct)", name)
}

// pctState is the state of PolicyPCT: a priority per actor id and the change points.
type pctState struct {
	// prio[id] is the priority of actor id; higher runs first. Initial priorities are >= depth,
	// so the priorities given at change points (1 .. depth-1) are below all of them.
	prio []uint64
	// change holds the steps at which the running actor's priority drops, ascending.
	change []int64
	// next is the index in change of the next change point.
	next int
}

func newPCT(s *Sim) *pctState {
	p := &pctState{}
	r := s.Rand(StreamScheduling)
	for range s.cfg.PCTDepth - 1 {
		p.change = append(p.change, 1+r.Int64N(int64(s.cfg.PCTSteps)))
	}
	slices.Sort(p.change)
	return p
}

// priority returns the priority of actor id, drawing a fresh one for actors not seen before.
// Fresh priorities are random 62-bit numbers above depth: the random permutation of the paper,
// extended to actors that appear mid-run.
func (p *pctState) priority(s *Sim, id int) uint64 {
	for len(p.prio) <= id {
		p.prio = append(p.prio, 0)
	}
	if p.prio[id] == 0 {
		p.prio[id] = uint64(s.cfg.PCTDepth) + 1 + s.Rand(StreamScheduling).Uint64N(1<<62)
	}
	return p.prio[id]
}

// pick returns the index in s.enabled of the first action of the highest-priority actor, then
// applies any change point due at this step to that actor.
func (p *pctState) pick(s *Sim) int {
	best, bestPrio := 0, uint64(0)
	for i := range s.enabled {
		if pr := p.priority(s, s.enabled[i].actor); pr > bestPrio {
			best, bestPrio = i, pr
		}
	}
	step := s.step + 1
	for p.next < len(p.change) && p.change[p.next] <= step {
		p.next++
		// The i-th change point lowers the running actor to priority depth-i: later change
		// points give lower priorities, as in the paper.
		p.prio[s.enabled[best].actor] = uint64(s.cfg.PCTDepth - p.next)
	}
	return best
}
