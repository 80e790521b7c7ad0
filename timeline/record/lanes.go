package record

import (
	"strconv"

	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/narration"
)

// Component is one lane of the timeline: a part of the run, with the role it plays and its name
// in client-go (or kube-apiserver).
type Component struct {
	ID string `json:"id"`
	// Label is what the lane is called on the page.
	Label string `json:"label"`
	// Role is one of the roles in docs/run.schema.json: apiserver, replica, informer,
	// reflector, network, queue, cache, processor, handler, workqueue, worker, user, controller
	// (the control plane's stand-ins, docs/controlplane.md).
	Role string `json:"role"`
	// ClientGo is the part's name in client-go, and Stage the pipeline picture's box it
	// belongs to ("" for the user's own actors).
	ClientGo string `json:"clientgo"`
	Stage    string `json:"stage,omitempty"`
	// Informer is the informer the part belongs to, if any.
	Informer string `json:"informer,omitempty"`
}

// laneMap assigns each event to a component: the run's topology gives the informers, handlers,
// workqueues and workers; any other actor is a user actor, given a lane when it first acts.
type laneMap struct {
	list     []Component
	index    map[string]int
	replicas int
	// informers and handlers by actor; workqueues and workers by actor.
	informers map[string]bool
	handlers  map[string]bool
	queues    map[string]bool
	workers   map[string]bool
}

// Topology is what the lanes are drawn for (world.Topology): an actor it does not name gets a
// user lane when it first acts.
type Topology = world.Topology

// TopologyOf returns the world's own components (World.Topology).
func TopologyOf(w *world.World) Topology { return w.Topology() }

func newLaneMap(t Topology) *laneMap {
	m := &laneMap{index: map[string]int{}, replicas: t.Replicas, informers: map[string]bool{},
		handlers: map[string]bool{}, queues: map[string]bool{}, workers: map[string]bool{}}
	m.add(Component{ID: narration.ActorAPIServer, Label: "apiserver", Role: "apiserver", ClientGo: "kube-apiserver", Stage: StageAPIServer})
	if t.Replicas > 1 {
		for i := range t.Replicas {
			n := strconv.Itoa(i)
			m.add(Component{ID: "apiserver/replica-" + n, Label: "replica " + n + " (watch cache)", Role: "replica",
				ClientGo: "kube-apiserver's watch cache (cacher)", Stage: StageAPIServer})
		}
	}
	for _, inf := range t.Informers {
		queue := "RealFIFO"
		if inf.Queue == "deltafifo" {
			queue = "DeltaFIFO"
		}
		m.informers[inf.Name] = true
		n := inf.Name
		m.add(Component{ID: n, Label: n + " · informer", Role: "informer", ClientGo: "SharedIndexInformer (HasSynced)", Stage: StageInformer, Informer: n})
		m.add(Component{ID: n + "/reflector", Label: n + " · Reflector", Role: "reflector", ClientGo: "Reflector", Stage: StageReflector, Informer: n})
		m.add(Component{ID: n + "/network", Label: n + " · network", Role: "network", ClientGo: "ListerWatcher (LIST and WATCH over HTTP)", Stage: StageListerWatcher, Informer: n})
		m.add(Component{ID: n + "/queue", Label: n + " · " + queue, Role: "queue", ClientGo: queue + " (Pop in processLoop)", Stage: queue, Informer: n})
		m.add(Component{ID: n + "/cache", Label: n + " · Indexer", Role: "cache", ClientGo: "Indexer (the cache, threadSafeMap)", Stage: StageIndexer, Informer: n})
		m.add(Component{ID: n + "/processor", Label: n + " · sharedProcessor", Role: "processor", ClientGo: "sharedProcessor.distribute", Stage: StageProcessor, Informer: n})
		for _, h := range inf.Handlers {
			m.handlers[h] = true
			m.add(Component{ID: h, Label: h + " · handler", Role: "handler", ClientGo: "processorListener → ResourceEventHandler", Stage: StageListener, Informer: n})
		}
	}
	for _, q := range t.WorkQueues {
		m.queues[q.Name] = true
		m.add(Component{ID: q.Name, Label: q.Name + " · workqueue", Role: "workqueue", ClientGo: "workqueue (rate-limited)", Stage: StageWorkqueue, Informer: q.Informer})
		for _, wk := range q.Workers {
			m.workers[wk] = true
			m.add(Component{ID: wk, Label: wk + " · worker", Role: "worker", ClientGo: "worker (processNextWorkItem)", Stage: StageWorker, Informer: q.Informer})
		}
	}
	return m
}

func (m *laneMap) add(c Component) {
	if _, ok := m.index[c.ID]; ok {
		return
	}
	m.index[c.ID] = len(m.list)
	m.list = append(m.list, c)
}

func (m *laneMap) components() []Component { return append([]Component(nil), m.list...) }

// lane returns the ID of e's lane, adding a user lane for an actor the topology does not name.
func (m *laneMap) lane(e *sim.Event) string {
	a := e.Actor
	switch {
	case a == narration.ActorAPIServer:
		if m.replicas > 1 {
			if r, ok := narration.Str(*e, "replica"); ok {
				if id := "apiserver/replica-" + r; m.has(id) {
					return id
				}
			}
		}
		return narration.ActorAPIServer
	case m.informers[a], m.handlers[a], m.queues[a], m.workers[a]:
		return a
	}
	if inf, part := narration.SplitActor(a); part != "" && m.informers[inf] {
		switch part {
		case narration.PartReflector:
			return inf + "/reflector"
		case narration.PartNet, narration.PartWatch:
			return inf + "/network"
		case narration.PartQueue:
			switch e.Kind {
			case narration.KindCacheAdd, narration.KindCacheUpdate, narration.KindCacheDelete, narration.KindCacheReplace:
				return inf + "/cache"
			case narration.KindBuffer:
				return inf + "/processor"
			}
			return inf + "/queue"
		}
	}
	switch a {
	case narration.ActorGarbageCollector, narration.ActorNamespaceController, narration.ActorWorkloadStatus, narration.ActorJobController:
		// The control plane's stand-ins (world controllers): kube-controller-manager's, not the user's.
		m.add(Component{ID: a, Label: a + " · controller", Role: "controller", ClientGo: "kube-controller-manager"})
		return a
	}
	m.add(Component{ID: a, Label: a + " · user", Role: "user", ClientGo: "your code"})
	return a
}

func (m *laneMap) has(id string) bool { _, ok := m.index[id]; return ok }
