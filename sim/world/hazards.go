package world

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world/narration"
)

// The hazards a run may exercise, the situations an informer's correctness hinges on; a run
// reports how often each fired (CountHazards), so a sweep can say which it never reached.
const (
	HazardWatchExpired = "watch-expired-410" // a Reflector got a 410 Expired (watch or list)
	HazardRelist       = "relist"            // a Reflector relists after a failed watch
	HazardTombstone    = "tombstone"         // a handler was told of a delete by a tombstone
	HazardStaleList    = "stale-list"        // a LIST was answered at a revision older than the newest one
	HazardBookmark     = "bookmark"          // a Reflector received a bookmark
	HazardWatchEnd     = "watch-end"         // the apiserver ended a watch stream
	HazardCompaction   = "compaction"        // the apiserver compacted its history
	HazardConflict     = "conflict"          // a write was refused with a 409 conflict
	HazardSlowHandler  = "slow-handler"      // a handler's call took time (a slow call ended)
	HazardLateJoin     = "late-join"         // a handler joined a running informer
	HazardResync       = "resync"            // an informer's resync sent same-version updates
	HazardRestart      = "restart"           // an informer started after one stopped (a restart)
)

// HazardNames lists the hazards in the order reports print them.
func HazardNames() []string {
	return []string{HazardWatchExpired, HazardRelist, HazardTombstone, HazardStaleList, HazardBookmark, HazardWatchEnd,
		HazardCompaction, HazardConflict, HazardSlowHandler, HazardLateJoin, HazardResync, HazardRestart}
}

// Hazards counts how often each hazard fired (HazardNames), in one run or summed over a sweep.
type Hazards map[string]int

// CountHazards counts the hazards in a run's trace events (sim.Trace.Events), from the world's
// narration: a Reflector's ERROR (or failed LIST or WATCH) with code 410, its relist-after and
// BOOKMARK; a handler's OnDelete of a tombstone, its join and the end of a slow call; the end of
// a watch stream the apiserver sent; a compaction; a write refused with 409; a resync; a start
// of an informer that had started before; a stale list: an informer's LIST answered (LIST-ok)
// at a revision older than the newest one the apiserver had committed (its ADDED, MODIFIED
// and DELETED) when the LIST was sent, as from a lagging or frozen replica's watch cache.
// Commits the trace does not narrate (a user's handler writing to the Server directly) are not
// seen, so a stale list counted is one, and one not counted may still be.
func CountHazards(events []sim.Event) Hazards {
	h := Hazards{}
	stopped := false
	var newest uint64
	listSentAt := map[string]uint64{} // an informer's LIST in flight: the newest revision when sent
	for _, e := range events {
		slash := strings.LastIndexByte(e.Actor, '/')
		role, informer := e.Actor[slash+1:], e.Actor[:max(slash, 0)]
		switch {
		case e.Actor == narration.ActorAPIServer && (e.Kind == narration.KindAdded || e.Kind == narration.KindModified || e.Kind == narration.KindDeleted):
			if rv, err := strconv.ParseUint(field(e, "rv"), 10, 64); err == nil {
				newest = max(newest, rv)
			}
		case role == "reflector" && e.Kind == narration.KindList:
			listSentAt[informer] = newest
		case e.Actor != role && e.Kind == narration.KindListOK:
			if sent, ok := listSentAt[informer]; ok {
				delete(listSentAt, informer)
				if rv, err := strconv.ParseUint(field(e, "rv"), 10, 64); err == nil && rv < sent {
					h[HazardStaleList]++
				}
			}
		case role == "reflector" && (e.Kind == "ERROR" || e.Kind == narration.KindListError || e.Kind == narration.KindWatchError) && field(e, "code") == "410":
			h[HazardWatchExpired]++
		case e.Actor != role && (e.Kind == narration.KindListError || e.Kind == narration.KindWatchError) && field(e, "code") == "410":
			h[HazardWatchExpired]++ // a failed LIST or WATCH narrated by the informer's network
		case role == "reflector" && e.Kind == narration.KindRelistAfter:
			h[HazardRelist]++
		case role == "reflector" && e.Kind == "BOOKMARK":
			h[HazardBookmark]++
		case e.Kind == narration.KindOnDelete && field(e, "tombstone") == "true":
			h[HazardTombstone]++
		case role == "watch" && e.Kind == narration.KindEnd:
			h[HazardWatchEnd]++
		case e.Kind == OpCompact.String():
			h[HazardCompaction]++
		case e.Kind == narration.KindWriteError && field(e, "code") == "409":
			h[HazardConflict]++
		case e.Actor != role && e.Kind == narration.StepCallDone:
			h[HazardSlowHandler]++
		case e.Kind == narration.KindJoin:
			h[HazardLateJoin]++
		case e.Kind == narration.KindResync:
			h[HazardResync]++
		case e.Actor == role && e.Kind == narration.KindStop:
			stopped = true
		case e.Actor == role && e.Kind == narration.KindStart && stopped:
			h[HazardRestart]++ // a start once an informer stopped (restart ... as=new starts a new one)
		}
	}
	return h
}

func field(e sim.Event, key string) string {
	for _, f := range e.Fields {
		if f.Key == key {
			return f.Value
		}
	}
	return ""
}

// Add adds o's counts to h.
func (h Hazards) Add(o Hazards) {
	for k, n := range o {
		h[k] += n
	}
}

// Never lists the hazards that did not fire, in HazardNames order.
func (h Hazards) Never() []string {
	var out []string
	for _, k := range HazardNames() {
		if h[k] == 0 {
			out = append(out, k)
		}
	}
	return out
}

// String is "tombstone=1 relist=2 ...; never: compaction, ..." in HazardNames order.
func (h Hazards) String() string {
	var b strings.Builder
	for _, k := range HazardNames() {
		if n := h[k]; n > 0 {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%s=%d", k, n)
		}
	}
	if b.Len() == 0 {
		b.WriteString("none")
	}
	if never := h.Never(); len(never) > 0 {
		b.WriteString("; never: " + strings.Join(never, ", "))
	}
	return b.String()
}
