package oracle

import (
	"fmt"
	"slices"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/narration"
)

// WatchOpened is a WATCH the apiserver accepted, as the watch-guarantees oracle reads it from the
// apiserver's request record (fakeapi.md MH-14, §10.3).
type WatchOpened struct {
	ID        uint64
	Resource  schema.GroupVersionResource
	Namespace string
	Options   metav1.ListOptions
}

// watchGuarantees is the WatchGuarantees oracle (design.md "Oracles"; fakeapi.md §4.3, §4.5,
// MH-3, MH-7): what the fake apiserver delivers on each watch, checked against every write it
// committed.
//
//   - ordered and unique: after the initial events, RVs strictly increase on a watch;
//   - resumable: nothing at or before the RV the watch started from;
//   - gap-free: every committed write in the watch's scope (resource and namespace) after its
//     start is delivered before any later event or bookmark; each event is a committed write
//     of that key at that RV;
//   - bookmarks: monotonic, never below an event already sent, and never ahead of what was
//     sent (every write in scope up to a bookmark's RV was delivered before it);
//   - nothing after the watch's close, and no initial event after the initial-events-end
//     bookmark.
//
// Watches with a label or field selector are checked for order, uniqueness, resumption and
// bookmarks only: the record does not say which writes matched (fakeapi.md §4.4).
type watchGuarantees struct {
	commits map[schema.GroupVersionResource][]fakeapi.Commit // in revision order
	forgot  map[schema.GroupVersionResource]bool             // older writes were forgotten
	watches map[uint64]*watchState
	// closed are the IDs of closed watches, oldest first: the last maxClosedWatches are kept
	// to catch an event after the close.
	closed []uint64
}

const maxClosedWatches = 1024

type watchState struct {
	WatchOpened
	start        uint64 // the numeric start RV; 0 for "" and "0"
	selector     bool
	cursor       uint64 // everything in scope up to here was delivered; 0 until known
	last         uint64 // the last event's RV
	lastBookmark uint64
	initialDone  bool
	closed       bool
}

func newWatchGuarantees() *watchGuarantees {
	return &watchGuarantees{commits: map[schema.GroupVersionResource][]fakeapi.Commit{},
		forgot: map[schema.GroupVersionResource]bool{}, watches: map[uint64]*watchState{}}
}

func (c *watchGuarantees) Name() string { return WatchGuarantees }

// MaxCommits bounds the writes the watch-guarantees oracle remembers per resource (style rule
// 14): past it the older half is forgotten, and a watch resuming from before what is remembered
// is checked from there on (a gap among forgotten writes goes unseen; nothing is misreported).
const MaxCommits = 1 << 18

// Commit records one write of the apiserver.
func (c *watchGuarantees) Commit(cm fakeapi.Commit) string {
	cs := c.commits[cm.Resource]
	if len(cs) >= MaxCommits {
		cs = append(cs[:0], cs[len(cs)/2:]...)
		c.forgot[cm.Resource] = true
	}
	c.commits[cm.Resource] = append(cs, cm)
	return ""
}

// Opened records a watch the apiserver accepted.
func (c *watchGuarantees) Opened(o WatchOpened) string {
	st := &watchState{WatchOpened: o, selector: o.Options.LabelSelector != "" || o.Options.FieldSelector != ""}
	if rv := o.Options.ResourceVersion; rv != "" && rv != "0" {
		n, err := strconv.ParseUint(rv, 10, 64)
		if err != nil {
			return fmt.Sprintf("watch %d: unparsable start resourceVersion %q", o.ID, rv)
		}
		st.start, st.cursor = n, n
	}
	c.watches[o.ID] = st
	return ""
}

// Delivered checks one event the consumer took from a watch (or the watch's close).
func (c *watchGuarantees) Delivered(ev fakeapi.WatchEvent) string {
	st := c.watches[ev.WatchID]
	if st == nil {
		return ""
	}
	if st.closed && ev.Type != watch.Error {
		// A terminal ERROR comes after the close's record (fakeapi: it is delivered last).
		return fmt.Sprintf("watch %d: %s %s@%s delivered after the watch closed", ev.WatchID, ev.Type, ev.Key, ev.RV)
	}
	if ev.Close != 0 {
		st.closed = true
		if c.closed = append(c.closed, ev.WatchID); len(c.closed) > maxClosedWatches {
			delete(c.watches, c.closed[0])
			c.closed = c.closed[1:]
		}
		return ""
	}
	if ev.Type == watch.Error {
		return ""
	}
	rv, err := strconv.ParseUint(ev.RV, 10, 64)
	if err != nil {
		return fmt.Sprintf("watch %d: %s %s with unparsable resourceVersion %q", ev.WatchID, ev.Type, ev.Key, ev.RV)
	}
	if ev.Type == watch.Bookmark {
		if ev.Annotations[metav1.InitialEventsAnnotationKey] == "true" {
			st.initialDone = true
			if rv < st.start {
				return fmt.Sprintf("watch %d: initial-events-end bookmark at rv=%d, before the start rv=%d", ev.WatchID, rv, st.start)
			}
			st.cursor = max(st.cursor, rv)
			st.lastBookmark = rv
			return ""
		}
		switch {
		case rv < st.last:
			return fmt.Sprintf("watch %d: bookmark at rv=%d after an event at rv=%d", ev.WatchID, rv, st.last)
		case rv < st.lastBookmark:
			return fmt.Sprintf("watch %d: bookmark went back from rv=%d to rv=%d", ev.WatchID, st.lastBookmark, rv)
		}
		st.lastBookmark = rv
		if msg := c.gap(st, rv, true); msg != "" {
			return fmt.Sprintf("watch %d: bookmark at rv=%d is ahead of what was sent: %s", ev.WatchID, rv, msg)
		}
		return ""
	}
	if ev.Initial {
		if st.initialDone {
			return fmt.Sprintf("watch %d: initial %s %s@%d after the initial-events-end bookmark", ev.WatchID, ev.Type, ev.Key, rv)
		}
		return ""
	}
	switch {
	case st.start > 0 && rv <= st.start:
		return fmt.Sprintf("watch %d: %s %s@%d at or before the start rv=%d (not resumable)", ev.WatchID, ev.Type, ev.Key, rv, st.start)
	case rv <= st.last:
		return fmt.Sprintf("watch %d: %s %s@%d after rv=%d (out of order or duplicate)", ev.WatchID, ev.Type, ev.Key, rv, st.last)
	case rv <= st.lastBookmark:
		return fmt.Sprintf("watch %d: %s %s@%d after a bookmark at rv=%d", ev.WatchID, ev.Type, ev.Key, rv, st.lastBookmark)
	}
	st.last = rv
	if st.selector {
		return ""
	}
	if msg := c.gap(st, rv, false); msg != "" {
		return fmt.Sprintf("watch %d: %s %s@%d skips %s (a gap)", ev.WatchID, ev.Type, ev.Key, rv, msg)
	}
	if !c.committed(st, ev.Key, rv) {
		return fmt.Sprintf("watch %d: %s %s@%d, but no write of %s was committed at rv=%d", ev.WatchID, ev.Type, ev.Key, rv, ev.Key, rv)
	}
	return ""
}

// gap returns the first write in st's scope after its cursor and before rv (up to rv when
// through) that was not delivered, then moves the cursor to rv. The cursor is unknown (0)
// until the first live event of a watch that started from "" or "0".
func (c *watchGuarantees) gap(st *watchState, rv uint64, through bool) string {
	from := st.cursor
	st.cursor = max(st.cursor, rv)
	if st.selector || from == 0 {
		return ""
	}
	commits := c.commits[st.Resource]
	i, _ := slices.BinarySearchFunc(commits, from+1, func(cm fakeapi.Commit, rev uint64) int {
		return cmpU(cm.Revision, rev)
	})
	for ; i < len(commits); i++ {
		cm := commits[i]
		if cm.Revision > rv || (cm.Revision == rv && !through) {
			break
		}
		if st.Namespace == "" || cm.Namespace == st.Namespace {
			return fmt.Sprintf("the write %s %s@%d", cm.Type, commitKey(cm), cm.Revision)
		}
	}
	return ""
}

// committed reports whether a write of key at rv in st's scope was committed.
func (c *watchGuarantees) committed(st *watchState, key string, rv uint64) bool {
	commits := c.commits[st.Resource]
	if c.forgot[st.Resource] && (len(commits) == 0 || rv < commits[0].Revision) {
		return true // a forgotten write (MaxCommits): nothing to say
	}
	i, ok := slices.BinarySearchFunc(commits, rv, func(cm fakeapi.Commit, rev uint64) int { return cmpU(cm.Revision, rev) })
	return ok && commitKey(commits[i]) == key
}

func commitKey(cm fakeapi.Commit) string {
	if cm.Namespace == "" {
		return cm.Name
	}
	return cm.Namespace + "/" + cm.Name
}

func cmpU(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// attachWatchGuarantees hooks the WatchGuarantees oracle to the apiserver of h's world: it reads
// every write (OnCommit) and every watch opened and event sent (OnRecord, whose one observer it
// takes), not the trace.
func attachWatchGuarantees(h *Handle) {
	c := newWatchGuarantees()
	srv := h.w.Server()
	srv.OnCommit(func(cm fakeapi.Commit) { c.Commit(cm) })
	srv.OnRecord(func(r fakeapi.Record) { h.record(c, r) })
}

// record reads one record of the apiserver. It runs with the apiserver's lock held: it must not
// call the Server.
func (h *Handle) record(c *watchGuarantees, r fakeapi.Record) {
	if h.first != nil {
		return
	}
	var msg string
	var e sim.Event
	s := h.w.Sim()
	switch {
	case r.Request != nil:
		q := r.Request
		if q.Verb != fakeapi.VerbWatch || q.WatchID == 0 || q.Code != 0 || q.Err != "" {
			return
		}
		msg = c.Opened(WatchOpened{ID: q.WatchID, Resource: q.Resource, Namespace: q.Namespace, Options: q.Options})
		e = sim.Event{Step: s.StepCount(), Time: s.Now(), Actor: narration.ActorAPIServer, Kind: narration.KindWatchOpened,
			Fields: []sim.Field{sim.FInt("watch", int64(q.WatchID)), sim.F("rv", q.Options.ResourceVersion)}}
	case r.Event != nil:
		ev := r.Event
		msg = c.Delivered(*ev)
		f := []sim.Field{sim.FInt("watch", int64(ev.WatchID))}
		if ev.Close != 0 {
			f = append(f, sim.F("close", ev.Close.String()))
		} else {
			f = append(f, sim.F("type", string(ev.Type)), sim.F("obj", ev.Key), sim.F("rv", ev.RV))
		}
		e = sim.Event{Step: s.StepCount(), Time: s.Now(), Actor: narration.ActorAPIServer, Kind: narration.KindWatchEvent, Fields: f}
	}
	if msg != "" {
		h.found(world.NewViolation(s, WatchGuarantees, msg, e, world.DefaultViolationWindow))
	}
}
