package scenarios

import (
	"github.com/informersim/informersim/sim/world/oracle"
)

// Topology names a run's components, so a picture of the run (package timeline) can give each
// its own lane and call it by client-go's name: the informers with their queue and handlers,
// and the workqueues with their workers.
type Topology struct {
	// Replicas is the number of apiserver replicas (watch caches), at least 1.
	Replicas   int
	Informers  []InformerTopology
	WorkQueues []WorkQueueTopology
}

// InformerTopology is one informer: its name (its actor), its queue ("realfifo",
// "realfifo-nonatomic" or "deltafifo") and its handlers' actors ("inf1/h1"), in registration
// order.
type InformerTopology struct {
	Name     string
	Queue    string
	Handlers []string
}

// WorkQueueTopology is one workqueue: its actor (also the name of its handler on the informer)
// and its workers' actors ("q/w1").
type WorkQueueTopology struct {
	Name     string
	Informer string
	Workers  []string
}

// Topology returns the run's components in the order they were declared.
func (e *Env) Topology() Topology {
	t := Topology{Replicas: 1}
	if e.w == nil {
		return t
	}
	t.Replicas = max(e.w.Server().Replicas(), 1)
	for _, name := range e.infOrder {
		st := e.informers[name]
		it := InformerTopology{Name: name, Queue: st.d.str("queue", "realfifo")}
		for _, h := range st.n.Handlers() {
			it.Handlers = append(it.Handlers, h.Actor())
		}
		t.Informers = append(t.Informers, it)
	}
	for _, name := range e.queueOrder {
		wq := e.queues[name]
		qt := WorkQueueTopology{Name: name, Informer: wq.inf.name}
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
