package oracle

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/narration"
)

// lateJoin is the LateJoin oracle (design.md "Oracles"; informer.md §3, §4.5, §4.6):
//
//   - exact snapshot: a handler that joins after start ("join snapshot=N") is given exactly the
//     cache at that moment: N initial-list adds, one per cached key at its cached RV, buffered
//     for it alone before anything else happens;
//   - no gap: every notification distributed after it joined that is not sync-class is buffered
//     for every current registration (sync-class ones are the resync oracle's);
//   - no duplicate, nothing lost: each registration is handed exactly what was buffered for it,
//     in order (until it is removed or the informer stops, which drop the buffer);
//   - HasSynced (§4.6): a registration latches synced only after its informer has, and only once
//     every initial-list add buffered for it has been delivered; at convergence every current
//     registration of a synced informer has latched.
type lateJoin struct {
	m *model
	// pending are the snapshot adds a joining handler still has to be given, per informer: key →
	// RV, for handler joining.
	joining  map[string]string // informer → handler joining
	snapshot map[string]map[string]string
	// queues are, per "informer/handler", the notifications buffered and not yet delivered.
	queues map[string][]narration.Note
	// initBuffered and initDelivered count initial-list adds per "informer/handler".
	initBuffered, initDelivered map[string]int
	synced                      map[string]bool
}

func newLateJoin(*world.World) Checker {
	return &lateJoin{m: newModel(), joining: map[string]string{}, snapshot: map[string]map[string]string{},
		queues: map[string][]narration.Note{}, initBuffered: map[string]int{}, initDelivered: map[string]int{}, synced: map[string]bool{}}
}

func (c *lateJoin) Name() string { return LateJoin }

func (c *lateJoin) Event(e sim.Event) string {
	msg := c.check(e)
	c.m.apply(e)
	return msg
}

func (c *lateJoin) check(e sim.Event) string {
	infName, part := narration.SplitActor(e.Actor)
	n := c.m.infs[infName]
	if h := c.joining[infName]; h != "" && !(part == narration.PartQueue && e.Kind == narration.KindBuffer) {
		snap := c.snapshot[infName]
		delete(c.joining, infName)
		if len(snap) > 0 {
			return fmt.Sprintf("%s/%s joined, but %d cached object(s) were not in its snapshot (first: %s)", infName, h, len(snap), firstKey(snap))
		}
	}
	switch {
	case n == nil && part == "":
		return ""
	case part == narration.PartQueue && e.Kind == narration.KindBuffer:
		b, to := narration.Buffered(e)
		if h := c.joining[infName]; h != "" {
			return c.snapshotAdd(infName, h, b, to)
		}
		if n == nil {
			return ""
		}
		if !b.Sync {
			if want := n.current(); !slices.Equal(sortedCopy(to), sortedCopy(want)) {
				return fmt.Sprintf("%s: %s buffered for [%s], but the current registrations are [%s] (a gap)", infName, b, strings.Join(to, ","), strings.Join(want, ","))
			}
		}
		for _, h := range to {
			q := infName + "/" + h
			c.queues[q] = append(c.queues[q], b)
			if b.Call == narration.CallAdd && b.Initial {
				c.initBuffered[q]++
			}
		}
	case narration.IsHandlerEvent(e):
		q := e.Actor
		switch e.Kind {
		case narration.KindJoin:
			if n == nil {
				n = c.m.inf(infName)
			}
			if want := narration.Int(e, narration.FieldSnapshot); want != len(n.cache) {
				return fmt.Sprintf("%s joined with a snapshot of %d object(s), but the cache holds %d", q, want, len(n.cache))
			}
			c.joining[infName] = part
			c.snapshot[infName] = maps.Clone(n.cache)
		case narration.KindRemove:
			delete(c.queues, q)
		case narration.KindSynced:
			if c.synced[q] {
				break
			}
			c.synced[q] = true
			if n == nil || !n.synced {
				return fmt.Sprintf("%s latched synced before its informer synced", q)
			}
			if undelivered := c.initBuffered[q] - c.initDelivered[q]; undelivered > 0 {
				return fmt.Sprintf("%s latched synced with %d initial-list add(s) not yet delivered", q, undelivered)
			}
		case narration.KindOnAdd, narration.KindOnUpdate, narration.KindOnDelete:
			got := narration.Delivered(e)
			qu := c.queues[q]
			if len(qu) == 0 {
				return fmt.Sprintf("%s was given %s, but nothing was buffered for it (a duplicate)", q, got)
			}
			want := qu[0]
			c.queues[q] = qu[1:]
			if got.String() != want.String() {
				return fmt.Sprintf("%s was given %s, but %s was buffered for it first", q, got, want)
			}
			if got.Call == narration.CallAdd && got.Initial {
				c.initDelivered[q]++
			}
		}
	case part == "" && e.Kind == narration.KindStop:
		for q := range c.queues {
			if strings.HasPrefix(q, infName+"/") {
				delete(c.queues, q)
			}
		}
	}
	return ""
}

// snapshotAdd checks one notification buffered while handler h joins informer infName.
func (c *lateJoin) snapshotAdd(infName, h string, b narration.Note, to []string) string {
	q := infName + "/" + h
	if len(to) != 1 || to[0] != h || b.Call != narration.CallAdd || !b.Initial {
		return fmt.Sprintf("%s joining: %s buffered for [%s], want an initial-list add for %s alone", q, b, strings.Join(to, ","), h)
	}
	snap := c.snapshot[infName]
	rv, ok := snap[b.Key]
	switch {
	case !ok && c.m.infs[infName].cache[b.Key] != "":
		return fmt.Sprintf("%s joining: %s given twice in its snapshot (a duplicate)", q, b)
	case !ok:
		return fmt.Sprintf("%s joining: %s is not in the cache", q, b)
	case rv != b.RV:
		return fmt.Sprintf("%s joining: %s, but the cache holds rv=%s", q, b, rv)
	}
	delete(snap, b.Key)
	c.queues[q] = append(c.queues[q], b)
	c.initBuffered[q]++
	return ""
}

// Finish is the liveness half: every current registration of a started, synced, unstopped
// informer has latched synced, and a join in progress got its whole snapshot.
func (c *lateJoin) Finish() string {
	for _, infName := range sortedKeys(c.m.infs) {
		n := c.m.infs[infName]
		if h := c.joining[infName]; h != "" && len(c.snapshot[infName]) > 0 {
			return fmt.Sprintf("%s/%s joined, but %d cached object(s) were not in its snapshot", infName, h, len(c.snapshot[infName]))
		}
		if !n.started || n.stopped || !n.synced {
			continue
		}
		for _, h := range n.current() {
			q := infName + "/" + h
			if !c.synced[q] && len(c.queues[q]) == 0 {
				return fmt.Sprintf("%s never latched synced, though its informer synced and it was given all %d initial-list add(s)", q, c.initDelivered[q])
			}
		}
	}
	return ""
}

func firstKey(m map[string]string) string {
	return sortedKeys(m)[0]
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
