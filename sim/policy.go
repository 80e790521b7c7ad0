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

// fifoState is the bookkeeping of PolicyFIFO: the actor actions enabled at the previous
// collect, in poll order, and the step count since when each has been enabled.
//
// An action is known by its actor and name; its since is that of the first action of the same
// name in its actor's previous list, or the current step count if there is none, and an actor
// with nothing enabled forgets its history. All entries of one (actor, name) share one since
// (they are aged alike and run alike), so an action at the same position of its actor's list as
// before, with the same name, simply takes that entry's since. Nearly every step offers the
// very actions of the previous one: age then compares the lists position by position, copies
// each since and stores nothing. Only when the list changed does it match actor by actor and
// store the new list.
type fifoState struct {
	entries []fifoEntry // the actions of the last collect, grouped by actor in id order
	spare   []fifoEntry // the buffer the next changed list is built in
	// first is the index in s.enabled of entries[0]: the number of due timers, which come
	// first and are aged by their due step instead.
	first int
}

type fifoEntry struct {
	actor int
	name  string
	since int64
}

// age sets since for the actor actions acts (s.enabled[first:], grouped by actor in id order)
// at step count step, and remembers them for the next call.
func (f *fifoState) age(s *Sim, acts []enabledAction, first int, step int64) {
	f.first = first
	if len(acts) == len(f.entries) {
		same := true
		for k := range acts {
			e := &f.entries[k]
			if e.actor != acts[k].actor || e.name != s.actionName(acts[k]) {
				same = false
				break
			}
			acts[k].since = e.since
		}
		if same {
			return
		}
	}
	prev, next := f.entries, f.spare[:0]
	for i := 0; i < len(acts); {
		id := acts[i].actor
		j := i + 1
		for j < len(acts) && acts[j].actor == id {
			j++
		}
		group := acts[i:j]
		i = j
		for len(prev) > 0 && prev[0].actor < id {
			prev = prev[1:]
		}
		n := 0
		for n < len(prev) && prev[n].actor == id {
			n++
		}
		old := prev[:n]
		prev = prev[n:]
		for k := range group {
			name := s.actionName(group[k])
			group[k].since = step
			if k < len(old) && old[k].name == name {
				group[k].since = old[k].since
			} else {
				for _, p := range old {
					if p.name == name {
						group[k].since = p.since
						break
					}
				}
			}
			next = append(next, fifoEntry{id, name, group[k].since})
		}
	}
	f.entries, f.spare = next, f.entries
}

// ran records that the action s.enabled[i] of an actor ran as step count step: the action
// counts as enabled anew, so an action that stays enabled cannot starve the others.
func (f *fifoState) ran(i int, step int64) {
	k := i - f.first
	id, name := f.entries[k].actor, f.entries[k].name
	for j := k; j < len(f.entries) && f.entries[j].actor == id; j++ {
		if f.entries[j].name == name {
			f.entries[j].since = step
		}
	}
	for j := k - 1; j >= 0 && f.entries[j].actor == id; j-- {
		if f.entries[j].name == name {
			f.entries[j].since = step
		}
	}
}
