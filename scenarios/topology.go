package scenarios

import (
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/oracle"
)

// Topology returns the run's components in the order they were declared: the world's, and the
// workqueues the scenario built.
func (e *Env) Topology() world.Topology {
	if e.w == nil {
		return world.Topology{Replicas: 1}
	}
	t := e.w.Topology()
	for _, name := range e.queueOrder {
		wq := e.queues[name]
		qt := world.WorkQueueTopology{Name: name, Informer: wq.inf.name}
		for _, wk := range wq.workers {
			qt.Workers = append(qt.Workers, wk.name)
		}
		t.WorkQueues = append(t.WorkQueues, qt)
	}
	return t
}

// Verdicts returns every attached oracle's verdict (nil before the world exists).
func (e *Env) Verdicts() []oracle.Verdict {
	if e.named == nil {
		return nil
	}
	return e.named.Verdicts()
}
