package world

import "github.com/informersim/informersim/informer"

// Topology names a run's components, so a picture of the run (package timeline/record) can give
// each its own lane and call it by client-go's name: the apiserver's replicas, each informer
// with its queue and its handlers, and the workqueues with their workers. An actor it does not
// name is a user's actor.
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

// WorkQueueTopology is one workqueue: its actor (also the name of its handler on the informer),
// its informer and its workers' actors ("q/w1"). The world itself hosts no workqueue: a host
// that builds them (the scenario language) adds them.
type WorkQueueTopology struct {
	Name     string
	Informer string
	Workers  []string
}

// Topology returns the world's own components: its apiserver's replicas and its informers with
// their handlers, in the order they were added (no workqueues: see WorkQueueTopology).
func (w *World) Topology() Topology {
	t := Topology{Replicas: max(w.srv.Replicas().Len(), 1)}
	for _, n := range w.informers {
		it := InformerTopology{Name: n.Name(), Queue: "realfifo"}
		switch n.Spec().Informer.QueueMode {
		case informer.QueueDeltaFIFO:
			it.Queue = "deltafifo"
		case informer.QueueRealFIFONonAtomic:
			it.Queue = "realfifo-nonatomic"
		}
		for _, h := range n.Handlers() {
			it.Handlers = append(it.Handlers, h.Actor())
		}
		t.Informers = append(t.Informers, it)
	}
	return t
}
