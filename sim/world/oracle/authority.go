package oracle

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/narration"
)

// authority is the half of the PerObjectOrder oracle the world's DeliveryLog does not check
// (design.md "Oracles": each handler sees a subsequence of each object's authoritative states):
// every state a handler is told about, the object of an add or update, the deleted object, a
// tombstone's last known state, is one the apiserver committed for that key at that
// resourceVersion. The apiserver narrates every write ("apiserver ADDED obj=pods/default/a
// rv=2"), and a revision belongs to exactly one write, whatever its resource. The DeliveryLog
// checks the order of these states; this checks that they are real.
type authority struct {
	floor uint64   // states at or below it predate the oracle (Attach): not checked
	revs  []uint64 // the writes remembered, in revision order (at most MaxCommits)
	keys  []string
}

// newAuthority checks the states told from now on: writes made before the oracle was attached
// (to w) were not narrated to it.
func newAuthority(w *world.World) Checker {
	c := &authority{}
	if w != nil {
		c.floor = w.Server().Revision()
	}
	return c
}

func (c *authority) Name() string { return PerObjectOrder }

func (c *authority) Finish() string { return "" }

func (c *authority) Event(e sim.Event) string {
	switch {
	case narration.IsCommit(e):
		key, rv, ok := narration.Commit(e)
		if !ok {
			return ""
		}
		if len(c.revs) >= MaxCommits {
			half := len(c.revs) / 2
			c.revs, c.keys = append(c.revs[:0], c.revs[half:]...), append(c.keys[:0], c.keys[half:]...)
			c.floor = max(c.floor, c.revs[0]-1)
		}
		c.revs = append(c.revs, rv)
		c.keys = append(c.keys, key)
	case narration.IsHandlerEvent(e) && (e.Kind == narration.KindOnAdd || e.Kind == narration.KindOnUpdate || e.Kind == narration.KindOnDelete):
		n := narration.Delivered(e)
		rv, err := strconv.ParseUint(n.RV, 10, 64)
		if err != nil || rv <= c.floor {
			return "" // unparsable: the DeliveryLog reports it
		}
		i, ok := slices.BinarySearch(c.revs, rv)
		switch {
		case !ok:
			return fmt.Sprintf("%s: %s: the apiserver committed no write at rv=%d", e.Actor, n, rv)
		case c.keys[i] != n.Key:
			return fmt.Sprintf("%s: %s: the write at rv=%d was of %s, not %s", e.Actor, n, rv, c.keys[i], n.Key)
		}
	}
	return ""
}
