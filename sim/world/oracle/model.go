package oracle

import (
	"maps"
	"slices"

	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world/narration"
)

// model rebuilds, from the narration alone, what the trace oracles need to know of each
// informer: its cache (key → resourceVersion), which registrations are current, and where a
// relist's replace stands. Each checker keeps its own model, so the oracles stay independent.
type model struct {
	infs map[string]*infModel
}

type infModel struct {
	started, stopped, synced bool
	cache                    map[string]string
	// handlers are the current registrations by name, in registration order in names.
	handlers map[string]bool
	names    []string

	// An atomic replace (informer.md §6.3): "cache-replace n=N" swaps the cache, then the
	// notifications follow: a tombstone delete for each cached key the list lacks, then one add
	// or update for each of the N listed objects. prev is the cache before the replace; listed
	// counts the objects still to come; tombs the tombstones seen.
	replacing bool
	listed    int
	prev      map[string]string
	tombs     map[string]string
}

func newModel() *model { return &model{infs: map[string]*infModel{}} }

func (m *model) inf(name string) *infModel {
	n := m.infs[name]
	if n == nil {
		n = &infModel{cache: map[string]string{}, handlers: map[string]bool{}}
		m.infs[name] = n
	}
	return n
}

// current returns the current registrations of n in registration order.
func (n *infModel) current() []string {
	out := make([]string, 0, len(n.handlers))
	for _, h := range n.names {
		if n.handlers[h] {
			out = append(out, h)
		}
	}
	return out
}

// replaceEnds reports whether e, an event of the same informer, ends an open replace group: any
// event but a buffer does, and so does the buffer that brings the last listed object.
func (n *infModel) replaceEnds(e sim.Event) bool {
	if !n.replacing {
		return false
	}
	return e.Kind != narration.KindBuffer
}

// apply moves the model past e. It returns the informer's model (nil for events of no
// informer).
func (m *model) apply(e sim.Event) *infModel {
	if e.Actor == narration.ActorAPIServer || e.Actor == narration.ActorWorkload || e.Actor == narration.ActorFault || e.Actor == narration.ActorClock || e.Actor == narration.ActorWorld {
		return nil
	}
	infName, part := narration.SplitActor(e.Actor)
	n := m.inf(infName)
	if n.replaceEnds(e) {
		n.replacing = false
	}
	switch {
	case part == "":
		switch e.Kind {
		case narration.KindStart:
			n.started = true
		case narration.KindStop:
			n.stopped = true
			clear(n.handlers)
		case narration.KindSynced:
			n.synced = true
		}
	case part == narration.PartQueue:
		switch e.Kind {
		case narration.KindCacheAdd, narration.KindCacheUpdate:
			k, rv, _ := narration.CacheWrite(e)
			n.cache[k] = rv
		case narration.KindCacheDelete:
			k, _, _ := narration.CacheWrite(e)
			delete(n.cache, k)
		case narration.KindCacheReplace:
			n.prev = maps.Clone(n.cache)
			n.cache = map[string]string{}
			n.tombs = map[string]string{}
			n.listed = narration.Int(e, narration.FieldN)
			n.replacing = true
		case narration.KindBuffer:
			if !n.replacing {
				break
			}
			b, _ := narration.Buffered(e)
			if b.Call == narration.CallDelete {
				n.tombs[b.Key] = b.RV
				break
			}
			if n.listed > 0 {
				n.cache[b.Key] = b.RV
				n.listed--
			}
		}
	case narration.IsHandlerEvent(e):
		switch e.Kind {
		case narration.KindRegister, narration.KindJoin:
			if !slices.Contains(n.names, part) {
				n.names = append(n.names, part)
			}
			n.handlers[part] = true
		case narration.KindRemove:
			delete(n.handlers, part)
		}
	}
	return n
}
