package oracle

import (
	"maps"
	"slices"

	"github.com/informersim/informersim/sim"
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
	return e.Kind != "buffer"
}

// apply moves the model past e. It returns the informer's model (nil for events of no
// informer).
func (m *model) apply(e sim.Event) *infModel {
	if e.Actor == "apiserver" || e.Actor == "workload" || e.Actor == "fault" || e.Actor == "clock" || e.Actor == "world" {
		return nil
	}
	infName, part := splitActor(e.Actor)
	n := m.inf(infName)
	if n.replaceEnds(e) {
		n.replacing = false
	}
	switch {
	case part == "":
		switch e.Kind {
		case "start":
			n.started = true
		case "stop":
			n.stopped = true
			clear(n.handlers)
		case "synced":
			n.synced = true
		}
	case part == "queue":
		switch e.Kind {
		case "cache-add", "cache-update":
			k, rv, _ := cacheRef(e)
			n.cache[k] = rv
		case "cache-delete":
			k, _, _ := cacheRef(e)
			delete(n.cache, k)
		case "cache-replace":
			n.prev = maps.Clone(n.cache)
			n.cache = map[string]string{}
			n.tombs = map[string]string{}
			n.listed = intField(e, "n")
			n.replacing = true
		case "buffer":
			if !n.replacing {
				break
			}
			b, _ := bufferNote(e)
			if b.call == "delete" {
				n.tombs[b.key] = b.rv
				break
			}
			if n.listed > 0 {
				n.cache[b.key] = b.rv
				n.listed--
			}
		}
	case isHandlerEvent(e):
		switch e.Kind {
		case "register", "join":
			if !slices.Contains(n.names, part) {
				n.names = append(n.names, part)
			}
			n.handlers[part] = true
		case "remove":
			delete(n.handlers, part)
		}
	}
	return n
}
