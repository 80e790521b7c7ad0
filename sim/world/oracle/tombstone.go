package oracle

import (
	"fmt"
	"slices"

	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/narration"
)

// tombstones is the Tombstones oracle (design.md "Oracles"; informer.md §6.3, §14 T5): a
// delete the informer missed while disconnected reaches the handlers as DeletedFinalStateUnknown
// carrying the last state the cache held.
//
//   - A relist (an atomic replace) gives one tombstone for each key the cache held and the new
//     list lacks, and none for any other key; each carries the RV the cache held before the
//     replace.
//   - A cache delete by tombstone (the DeltaFIFO and non-atomic paths) removes the state the
//     cache held: the tombstone's RV is the cached RV.
type tombstones struct {
	m *model
}

func newTombstones(*world.World) Checker { return &tombstones{m: newModel()} }

func (c *tombstones) Name() string { return Tombstones }

// Finish reports a relist's replace group still open at the end of the trace.
func (c *tombstones) Finish() string {
	for _, name := range sortedKeys(c.m.infs) {
		if n := c.m.infs[name]; n.replacing {
			if msg := c.replaceDone(name, n); msg != "" {
				return msg
			}
		}
	}
	return ""
}

func (c *tombstones) Event(e sim.Event) string {
	infName, part := narration.SplitActor(e.Actor)
	if n := c.m.infs[infName]; n != nil && n.replacing && e.Kind != narration.KindBuffer {
		if msg := c.replaceDone(infName, n); msg != "" {
			c.m.apply(e)
			return msg
		}
	}
	msg := ""
	if n := c.m.infs[infName]; n != nil && part == narration.PartQueue {
		switch e.Kind {
		case narration.KindBuffer:
			b, _ := narration.Buffered(e)
			if n.replacing && b.Call == narration.CallDelete {
				if !b.Tomb {
					msg = fmt.Sprintf("%s: the relist deleted %s@%s without a tombstone", infName, b.Key, b.RV)
					break
				}
				held, ok := n.prev[b.Key]
				switch {
				case !ok:
					msg = fmt.Sprintf("%s: tombstone for %s@%s, but the cache held no %s before the relist", infName, b.Key, b.RV, b.Key)
				case held != b.RV:
					msg = fmt.Sprintf("%s: tombstone for %s@%s, but the last state the cache held was rv=%s", infName, b.Key, b.RV, held)
				case n.tombs[b.Key] != "":
					msg = fmt.Sprintf("%s: second tombstone for %s in one relist", infName, b.Key)
				}
			}
		case narration.KindCacheDelete:
			k, rv, tomb := narration.CacheWrite(e)
			if tomb && !n.replacing {
				if held, ok := n.cache[k]; ok && held != rv {
					msg = fmt.Sprintf("%s: tombstone for %s@%s, but the cache held rv=%s", infName, k, rv, held)
				}
			}
		}
	}
	c.m.apply(e)
	return msg
}

// replaceDone checks a finished replace: every key the cache held and the list lacks got its
// tombstone, and no listed key got one.
func (c *tombstones) replaceDone(infName string, n *infModel) string {
	var missed []string
	for k := range n.prev {
		if _, listed := n.cache[k]; !listed && n.tombs[k] == "" {
			missed = append(missed, k)
		}
	}
	slices.Sort(missed)
	if len(missed) > 0 {
		return fmt.Sprintf("%s: the relist dropped %s@%s from the cache without a tombstone", infName, missed[0], n.prev[missed[0]])
	}
	var wrong []string
	for k := range n.tombs {
		if _, listed := n.cache[k]; listed {
			wrong = append(wrong, k)
		}
	}
	slices.Sort(wrong)
	if len(wrong) > 0 {
		return fmt.Sprintf("%s: tombstone for %s, which the relist still lists", infName, wrong[0])
	}
	return ""
}
