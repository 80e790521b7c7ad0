package oracle

import (
	"fmt"
	"slices"

	"github.com/informersim/informersim/sim"
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

func (c *tombstones) Name() string { return Tombstones }

func (c *tombstones) Event(e sim.Event) string {
	infName, part := splitActor(e.Actor)
	if n := c.m.infs[infName]; n != nil && n.replacing && e.Kind != "buffer" {
		if msg := c.replaceDone(infName, n); msg != "" {
			c.m.apply(e)
			return msg
		}
	}
	msg := ""
	if n := c.m.infs[infName]; n != nil && part == "queue" {
		switch e.Kind {
		case "buffer":
			b, _ := bufferNote(e)
			if n.replacing && b.call == "delete" {
				if !b.tomb {
					msg = fmt.Sprintf("%s: the relist deleted %s@%s without a tombstone", infName, b.key, b.rv)
					break
				}
				held, ok := n.prev[b.key]
				switch {
				case !ok:
					msg = fmt.Sprintf("%s: tombstone for %s@%s, but the cache held no %s before the relist", infName, b.key, b.rv, b.key)
				case held != b.rv:
					msg = fmt.Sprintf("%s: tombstone for %s@%s, but the last state the cache held was rv=%s", infName, b.key, b.rv, held)
				case n.tombs[b.key] != "":
					msg = fmt.Sprintf("%s: second tombstone for %s in one relist", infName, b.key)
				}
			}
		case "cache-delete":
			k, rv, tomb := cacheRef(e)
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
