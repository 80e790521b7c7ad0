package sim_test

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/simtest"
)

// churn is a world built to exercise PolicyFIFO's bookkeeping: actors whose action lists grow,
// shrink, reorder and repeat names from step to step, some names rebuilt at every poll (equal
// text in new memory); actors that go silent and come back; actors added mid-run; and, with
// timers, timers owned by the actors' names. All draws come from the "workload" stream, in Run.
type churn struct {
	s      *sim.Sim
	r      *rand.Rand
	actors []*churnActor
	timers bool
	// log, when non-nil, receives every action the actors offer, in poll order.
	log *[]refAction
}

type churnActor struct {
	c     *churn
	name  string
	acts  []string
	fresh []bool // fresh[i]: acts[i] is rebuilt at every poll
	run   func()
}

var churnPool = []string{"a", "b", "c", "deliver/w1", "deliver/w2"}

func newChurn(s *sim.Sim, actors int, timers bool) *churn {
	c := &churn{s: s, r: s.Rand(sim.StreamWorkload), timers: timers}
	for range actors {
		c.addActor()
	}
	return c
}

func (c *churn) addActor() {
	a := &churnActor{c: c, name: "churn/" + strconv.Itoa(len(c.actors))}
	a.run = func() { c.mutate() }
	for range c.r.IntN(3) {
		a.push()
	}
	c.actors = append(c.actors, a)
	c.s.AddActor(a)
}

func (a *churnActor) push() {
	a.acts = append(a.acts, churnPool[a.c.r.IntN(len(churnPool))])
	a.fresh = append(a.fresh, a.c.r.IntN(3) == 0)
}

func (a *churnActor) Name() string { return a.name }

func (a *churnActor) Actions(add func(sim.Action)) {
	if a == a.c.actors[0] {
		a.offer(add, "keep") // something is always enabled
	}
	for i, n := range a.acts {
		if a.fresh[i] {
			n = strings.Clone(n)
		}
		a.offer(add, n)
	}
}

func (a *churnActor) offer(add func(sim.Action), name string) {
	if a.c.log != nil {
		*a.c.log = append(*a.c.log, refAction{actor: a.name, name: name})
	}
	add(sim.Action{Name: name, Run: a.run})
}

// mutate changes one random actor's action list (or the world) after any action ran.
func (c *churn) mutate() {
	a := c.actors[c.r.IntN(len(c.actors))]
	switch op := c.r.IntN(10); {
	case op < 3:
		a.push()
	case op < 5:
		if len(a.acts) > 0 {
			i := c.r.IntN(len(a.acts))
			a.acts = append(a.acts[:i], a.acts[i+1:]...)
			a.fresh = append(a.fresh[:i], a.fresh[i+1:]...)
		}
	case op == 5:
		if len(a.acts) > 1 {
			i, j := c.r.IntN(len(a.acts)), c.r.IntN(len(a.acts))
			a.acts[i], a.acts[j] = a.acts[j], a.acts[i]
			a.fresh[i], a.fresh[j] = a.fresh[j], a.fresh[i]
		}
	case op == 6:
		a.acts, a.fresh = a.acts[:0], a.fresh[:0]
	case op == 7:
		if len(c.actors) < 12 {
			c.addActor()
		}
	case op == 8:
		if c.timers {
			d := time.Duration(1 + c.r.IntN(5))
			c.s.AfterFunc(d*time.Millisecond, a.name, "t", c.mutate)
		}
	}
	// op 9: nothing changes, so the action that ran stays enabled and rotates.
}

// fifoScenarios are the runs whose trace hashes TestFIFOTraceHashes pins.
var fifoScenarios = []struct {
	name string
	run  func(seed uint64) (*sim.Sim, error)
}{
	{"determinism-toy", func(seed uint64) (*sim.Sim, error) {
		s, _, err := simtest.Run(sim.Config{Seed: seed, Policy: sim.PolicyFIFO, Trace: sim.TraceHashOnly}, simtest.DeterminismToy())
		return s, err
	}},
	{"bench-toy", func(seed uint64) (*sim.Sim, error) {
		s, err := sim.New(sim.Config{Seed: seed, Policy: sim.PolicyFIFO, Trace: sim.TraceHashOnly, DisableFaults: true, MaxSteps: 20000})
		if err != nil {
			return nil, err
		}
		simtest.NewToy(s, simtest.ToyConfig{Producers: 8, Consumers: 8, Timers: 2, FiresPerTimer: -1, MaxBufferItems: 64, ItemsPerProducer: -1, Narrate: true})
		return s, s.RunFor(time.Hour)
	}},
	{"churn", func(seed uint64) (*sim.Sim, error) {
		s, err := sim.New(sim.Config{Seed: seed, Policy: sim.PolicyFIFO, Trace: sim.TraceHashOnly, MaxSteps: 5000})
		if err != nil {
			return nil, err
		}
		newChurn(s, 5, true)
		return s, s.RunFor(time.Hour)
	}},
}

// Goal: PolicyFIFO schedules exactly as it did when these hashes were recorded (before its
// bookkeeping was optimised): same picks, same traces. Method: run toy worlds and a churning
// world under fifo for a few seeds and compare the trace hashes with the recorded ones.
func TestFIFOTraceHashes(t *testing.T) {
	// Recorded with the name-scanning bookkeeping (before the per-actor fast path).
	want := map[string]string{
		"determinism-toy/1":  "97ad6df303133886fbe41231a57143c13798d9336b699141710aa85d74b6677c", // 230 steps
		"determinism-toy/2":  "5d421342bd0a14ff569c53b602eff1e196d412629d341cb68c9df33326a3c3c2", // 230 steps
		"determinism-toy/3":  "59554a57299acaa1c2879b6844448a47106c54b342461a0e31db157ae9656a1f", // 230 steps
		"determinism-toy/42": "efc8ef2935c6d740acf56652af3f97362d981884f21e12014dd761d16135d331", // 230 steps
		"bench-toy/1":        "f11168ad5a677e5fbe3f91b11c71a9d34a2e17288791206b6385c15b3b47f25a", // 20000 steps
		"bench-toy/2":        "beeddd076689468ad3fe172add61278874382e26744a1f497a9a36e24b8aab0d", // 20000 steps
		"bench-toy/3":        "58f170f9c6e2925de198abd0986b31c9e8f3aa471d0c67dcac2e066a989976c7", // 20000 steps
		"bench-toy/42":       "75f115c540118430b04a4c019ef81bd30d04c14baffb4bc3dae1123fc04101a2", // 20000 steps
		"churn/1":            "f0bbd383f4ef321b1d3af007b63cf494c7e43c6ed7beb2a70a43cca09fead070", // 5000 steps
		"churn/2":            "32719f5b93397739b73f7c911ac365be23b1217d68de0f6d21e94c384d3fb867", // 5000 steps
		"churn/3":            "3c5817227fa6706e4ef7c5050aeb12c698f343e143143be5f5fcdbca4d046243", // 5000 steps
		"churn/42":           "73cfb91556c56cf0e1965065c37c2ff0be384d28a9a59999c37608f7bca647fc", // 5000 steps
	}
	for _, sc := range fifoScenarios {
		for _, seed := range []uint64{1, 2, 3, 42} {
			s, err := sc.run(seed)
			if err != nil && !errors.Is(err, sim.ErrMaxSteps) {
				t.Fatalf("%s seed %d: %v", sc.name, seed, err)
			}
			key := sc.name + "/" + strconv.FormatUint(seed, 10)
			if got := s.Trace().Hash(); got != want[key] {
				t.Errorf("%s: trace hash %s after %d steps, want %s", key, got, s.StepCount(), want[key])
			}
		}
	}
}

// refAction is one enabled action as the reference model sees it.
type refAction struct {
	actor, name string
	since       int64
}

// refFIFO is PolicyFIFO written plainly, with maps and name lookups: an action's since is the
// step count when the same (actor, name) was first seen enabled without a gap (the first action
// of that name in the actor's previous list), an actor with nothing enabled forgets its history,
// and the action that runs counts as enabled anew.
type refFIFO struct {
	prev  map[string][]refAction
	steps int64
}

func (r *refFIFO) pick(acts []refAction) int {
	seen := map[string]bool{}
	for i := 0; i < len(acts); {
		actor := acts[i].actor
		j := i
		for j < len(acts) && acts[j].actor == actor {
			j++
		}
		for k := i; k < j; k++ {
			acts[k].since = r.steps
			for _, p := range r.prev[actor] {
				if p.name == acts[k].name {
					acts[k].since = p.since
					break
				}
			}
		}
		r.prev[actor] = append([]refAction(nil), acts[i:j]...)
		seen[actor] = true
		i = j
	}
	for actor := range r.prev {
		if !seen[actor] {
			delete(r.prev, actor)
		}
	}
	best := 0
	for i := range acts {
		if acts[i].since < acts[best].since {
			best = i
		}
	}
	r.steps++
	prev := r.prev[acts[best].actor]
	for k := range prev {
		if prev[k].name == acts[best].name {
			prev[k].since = r.steps
		}
	}
	return best
}

// Goal: PolicyFIFO picks what the plain reference model picks, step by step, on worlds whose
// action lists churn. Method: log the actions the churning actors offer at each step, feed them
// to refFIFO, and compare its pick with the step event the engine records.
func TestFIFOMatchesReference(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		s, err := sim.New(sim.Config{Seed: seed, Policy: sim.PolicyFIFO, DisableFaults: true, MaxSteps: 3000, Trace: sim.TraceNone})
		if err != nil {
			t.Fatal(err)
		}
		var log []refAction
		c := newChurn(s, 4, false)
		c.log = &log
		ref := &refFIFO{prev: map[string][]refAction{}}
		failed := false
		s.Subscribe(func(e sim.Event) {
			if failed {
				return
			}
			i := ref.pick(log)
			if got, want := e.Actor+" "+e.Kind, log[i].actor+" "+log[i].name; got != want {
				t.Errorf("seed %d step %d: engine ran %q, reference %q (enabled %v)", seed, e.Step, got, want, log)
				failed = true
			}
			log = log[:0]
		})
		if err := s.RunFor(time.Hour); err != nil && !errors.Is(err, sim.ErrMaxSteps) {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if s.StepCount() < 3000 {
			t.Errorf("seed %d: only %d steps", seed, s.StepCount())
		}
	}
}
