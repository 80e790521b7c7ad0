package fakeapi

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/informersim/informersim/internal/invariant"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
)

// objKey is a storage key: namespace ("" for cluster-scoped) and name. Keys sort by namespace,
// then name, which is the order of lists and initial events (fakeapi.md §4.2).
type objKey struct{ ns, name string }

func (k objKey) String() string {
	if k.ns == "" {
		return k.name
	}
	return k.ns + "/" + k.name
}

func compareKeys(a, b objKey) int {
	if c := cmp.Compare(a.ns, b.ns); c != 0 {
		return c
	}
	return cmp.Compare(a.name, b.name)
}

// version is one MVCC version of a key: the object as written at rev, or nil for a deletion.
// Stored objects are never mutated after commit; readers get deep copies.
type version struct {
	rev uint64
	obj *unstructured.Unstructured
}

// keyHistory keeps the versions of one key in ascending revision order, like etcd's key index.
type keyHistory struct {
	key      objKey
	res      *resourceStore
	versions []version
}

// atRev returns the object live at revision rev and the revision that wrote it, or nil.
func (h *keyHistory) atRev(rev uint64) (*unstructured.Unstructured, uint64) {
	for i := len(h.versions) - 1; i >= 0; i-- {
		if h.versions[i].rev <= rev {
			return h.versions[i].obj, h.versions[i].rev
		}
	}
	return nil, 0
}

func (h *keyHistory) latest() *unstructured.Unstructured {
	if len(h.versions) == 0 {
		return nil
	}
	return h.versions[len(h.versions)-1].obj
}

// resourceStore holds the keys of one resource.
type resourceStore struct {
	info   Resource
	keys   map[objKey]*keyHistory
	sorted []*keyHistory // every key of keys, sorted when !dirty
	dirty  bool
	// emptied: trim_locked removed keys from keys that sorted still holds.
	emptied bool
}

func (r *resourceStore) sortedKeys() []*keyHistory {
	if r.dirty {
		slices.SortFunc(r.sorted, func(a, b *keyHistory) int { return compareKeys(a.key, b.key) })
		r.dirty = false
	}
	return r.sorted
}

// entry is one event of the log: the write at rev. For a deletion obj is the last state
// stamped with the deletion revision (fakeapi.md MH-10); prev is the state before the write.
//
// An entry names its key by the key's history (which knows the key and its resource) to stay
// small: the log holds one entry per revision of history.
type entry struct {
	rev  uint64
	h    *keyHistory
	typ  watch.EventType
	obj  *unstructured.Unstructured
	prev *unstructured.Unstructured
	at   time.Time
}

// replica is one simulated apiserver with its watch cache (fakeapi.md MH-12, §3.4).
type replica struct {
	index int
	// cacheRV is the revision the cache has processed; lists at RV="0" see the store at it.
	cacheRV uint64
	// historyFrom is the oldest RV a watch can start from on this cache (§4.7 "410 if
	// requested RV < oldest retained - 1"). Invariant: historyFrom <= cacheRV.
	historyFrom uint64
	frozen      bool
	lag         time.Duration
	// notReadyUntil: while now is before it (or notReady is set) cache requests get 429.
	notReady      bool
	notReadyUntil time.Time
}

func (r *replica) ready(now time.Time) bool {
	return !r.notReady && !now.Before(r.notReadyUntil)
}

// Server is the fake apiserver. All methods are safe for concurrent use; none starts a
// goroutine except [Watcher.ResultChan], and none reads the clock except through Config.Clock.
type Server struct {
	mu sync.Mutex
	// epoch counts the times mu was taken by lock: every section that may change the state (all
	// but the pure reads NextDeadline and Watcher's Pending, Done, Ready and CloseReason,
	// which take mu directly). The state changes only under mu, so an unchanged epoch means an
	// unchanged state.
	epoch uint64
	// deadline is NextDeadline's last answer, computed at epoch deadline.epoch and clock time
	// deadline.now: the answer depends on nothing else, so it stands while both are the same (a
	// driver asks after every step, and most steps touch no server state).
	deadline struct {
		valid   bool
		epoch   uint64
		now     time.Time
		at      time.Time
		pending bool
	}
	cfg Config
	clk clock.PassiveClock
	rnd *rand.Rand
	// serviceRange is Config.ServiceCIDR parsed, nil without one (serviceips.go).
	serviceRange *serviceRange

	resources map[schema.GroupVersionResource]*resourceStore
	objects   int // live objects across resources

	// rev is the global revision (fakeapi.md MH-1): the revision of the last write. It starts at
	// 1, as etcd's does, so that even an empty store has a valid list RV (MH-2).
	rev uint64
	// floor is the compacted revision: reads at revisions below it get 410 (§2).
	floor uint64
	// log holds the entries with rev > kept, in ascending revision order.
	log  eventLog
	kept uint64

	replicas []*replica
	rr       int
	routes   []int // one-shot routing overrides, consumed first-in first-out

	watchers    map[uint64]*Watcher
	nextWatchID uint64
	// open lists the watchers in ID order (IDs only grow, so opening appends). Closed ones stay
	// until pruneOpen_locked runs, which only happens outside loops over open, so those loops
	// need no copy: they skip closed watchers.
	open      []*Watcher
	openStale bool // some watcher in open is closed

	compactAt     time.Time // next periodic compaction
	compactTarget uint64    // revision observed at the previous compaction tick

	failures []failure
	quirk    WatchListQuirk

	rec recorder

	commitObservers []func(Commit) // see OnCommit
	stateObservers  []func()       // see OnStateChange

	lent lendBook // objects lent read-only (lend.go)

	nowSec  int64  // the second of nowText (now_locked)
	nowText string // the last timestamp now_locked formatted
}

// New returns a Server configured by a validated copy of cfg.
func New(cfg Config) (*Server, error) {
	c, err := cfg.validated()
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:       c,
		clk:       c.Clock,
		rnd:       c.Rand,
		resources: make(map[schema.GroupVersionResource]*resourceStore, len(c.Resources)),
		rev:       1,
		watchers:  make(map[uint64]*Watcher),
	}
	s.rec.max = c.MaxRecords
	if c.ServiceCIDR != "" {
		s.serviceRange, _ = parseServiceRange(c.ServiceCIDR) // validated
	}
	for _, r := range c.Resources {
		s.resources[r.GVR] = &resourceStore{info: r, keys: make(map[objKey]*keyHistory)}
	}
	for i := 0; i < c.Replicas; i++ {
		s.replicas = append(s.replicas, &replica{index: i, cacheRV: s.rev, historyFrom: s.rev})
	}
	now := s.clk.Now()
	if c.CompactionInterval > 0 {
		s.compactAt = now.Add(c.CompactionInterval)
		s.compactTarget = s.rev
	}
	return s, nil
}

// Config returns the validated configuration in use (defaults filled in).
func (s *Server) Config() Config {
	s.lock()
	defer s.mu.Unlock()
	c := s.cfg
	c.Resources = slices.Clone(c.Resources)
	return c
}

// Revision returns the current global revision: the revision of the last write or burn.
func (s *Server) Revision() uint64 {
	// Not lock: a pure read, which leaves the epoch and the OnStateChange observers alone (the
	// control plane asks after every step whether the server was written, and each ask made the
	// world's driver ask NextDeadline again).
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rev
}

// CompactedRevision returns the compaction floor: reads below it get 410.
func (s *Server) CompactedRevision() uint64 {
	s.mu.Lock() // not lock: a pure read
	defer s.mu.Unlock()
	return s.floor
}

// FormatRV renders a revision as a resourceVersion string (decimal, no leading zeros; MH-2).
func FormatRV(rev uint64) string { return strconv.FormatUint(rev, 10) }

func (s *Server) lookup_locked(gvr schema.GroupVersionResource) (*resourceStore, bool) {
	r, ok := s.resources[gvr]
	return r, ok
}

// commit_locked appends one write at a new revision (MH-1) and fans it out to the caches that
// follow the store without lag. obj is the new state (nil for a deletion); prev the old one.
func (s *Server) commit_locked(res *resourceStore, key objKey, typ watch.EventType, obj, prev *unstructured.Unstructured) *unstructured.Unstructured {
	s.rev++
	rev := s.rev
	rv := FormatRV(rev)
	h := res.keys[key]
	if h == nil {
		h = &keyHistory{key: key, res: res}
		res.keys[key] = h
		res.sorted = append(res.sorted, h)
		res.dirty = true
	}
	if n := len(h.versions); n > 0 {
		if h.versions[n-1].rev >= rev { // the check only when it fails: its arguments would allocate
			invariant.Check(false, "fakeapi: revision of %v went from %d to %d", key, h.versions[n-1].rev, rev)
		}
	}
	var evObj *unstructured.Unstructured
	if typ == watch.Deleted {
		// MH-10: the DELETED event carries the last state with the deletion revision; it shares
		// all but its top-level and metadata maps with prev (copy on write).
		evObj = withOwnMeta(prev)
		setMeta(evObj, "resourceVersion", rv)
		h.versions = append(h.versions, version{rev: rev})
		s.objects--
	} else {
		setMeta(obj, "resourceVersion", rv)
		evObj = obj
		h.versions = append(h.versions, version{rev: rev, obj: obj})
		if prev == nil {
			s.objects++
		}
	}
	s.log.append(entry{rev: rev, h: h, typ: typ, obj: evObj, prev: prev, at: s.clk.Now()})
	s.notifyCommit_locked(res, key, typ, rev)
	s.followStore_locked()
	if s.log.len() > s.cfg.MaxLogEntries {
		// Bound the log (style rule 14): compact away the oldest quarter at once so the cost
		// of trimming is amortised over many writes.
		target := s.log.at(s.log.len() / 4).rev
		s.compact_locked(target)
	}
	return evObj
}

// followStore_locked moves every replica that follows the store without lag to the current
// revision.
func (s *Server) followStore_locked() {
	for _, r := range s.replicas {
		if !r.frozen && r.lag == 0 && r.cacheRV < s.rev {
			s.advanceReplica_locked(r, s.rev)
		}
	}
}

// logIndexAfter returns the index of the first log entry with rev > after. Every write asks
// about the newest entries (the write just logged, the end of a cache's history), so those are
// answered before the binary search.
func (s *Server) logIndexAfter(after uint64) int {
	n := s.log.len()
	switch {
	case n == 0 || s.log.at(n-1).rev <= after:
		return n
	case n == 1 || s.log.at(n-2).rev <= after:
		return n - 1
	}
	return sort.Search(n-1, func(i int) bool { return s.log.at(i).rev > after })
}

// advanceReplica_locked moves replica r's cache to revision to, dispatching the entries in
// (cacheRV, to] to its watchers in watcher-ID order (style rule 9), then trims its history to
// MaxCacheHistoryEvents.
func (s *Server) advanceReplica_locked(r *replica, to uint64) {
	if to <= r.cacheRV {
		return
	}
	if to > s.rev { // the check only when it fails: its arguments would allocate
		invariant.Check(false, "fakeapi: replica %d advanced to %d beyond revision %d", r.index, to, s.rev)
	}
	// Watchers in ID order (style rule 9); the loops skip the closed and other replicas' ones.
	// A watcher closed while dispatching (a slow consumer) ignores later entries, as
	// dispatch_locked checks closed.
	start := s.logIndexAfter(r.cacheRV)
	for i := start; i < s.log.len() && s.log.at(i).rev <= to; i++ {
		e := s.log.at(i)
		for _, w := range s.open {
			if w.replica == r.index && !w.closed {
				w.dispatch_locked(e)
			}
		}
	}
	r.cacheRV = to
	for _, w := range s.open {
		if w.replica == r.index && !w.closed {
			w.cacheAdvanced_locked()
		}
	}
	// The cache keeps at most MaxCacheHistoryEvents entries of history (§4.7).
	from := s.logIndexAfter(r.historyFrom)
	end := s.logIndexAfter(to)
	if n := end - from; n > s.cfg.MaxCacheHistoryEvents {
		r.historyFrom = s.log.at(end - s.cfg.MaxCacheHistoryEvents - 1).rev
	}
	s.trim_locked()
}

// watchersOf_locked returns the open watchers served by replica idx, in ID order.
func (s *Server) watchersOf_locked(idx int) []*Watcher {
	var ws []*Watcher
	for _, w := range s.open {
		if w.replica == idx && !w.closed {
			ws = append(ws, w)
		}
	}
	return ws
}

// addWatcher_locked registers a new watcher (its ID is the largest yet).
func (s *Server) addWatcher_locked(w *Watcher) {
	s.pruneOpen_locked()
	s.watchers[w.id] = w
	s.open = append(s.open, w)
}

// pruneOpen_locked drops closed watchers from open. It must not run inside a loop over open.
func (s *Server) pruneOpen_locked() {
	if s.openStale {
		s.open = slices.DeleteFunc(s.open, func(w *Watcher) bool { return w.closed })
		s.openStale = false
	}
}

func (s *Server) compact_locked(rev uint64) {
	if rev <= s.floor {
		return
	}
	s.floor = rev
	for _, r := range s.replicas {
		r.historyFrom = max(r.historyFrom, min(rev-1, r.cacheRV))
	}
	s.trim_locked()
}

// trim_locked drops log entries and versions no reader can reach any more: everything at or
// below min(floor-1, every cache's historyFrom). Versions needed to rebuild the state at that
// revision are kept, since lagging caches and exact reads read it.
func (s *Server) trim_locked() {
	keep := uint64(0)
	if s.floor > 0 {
		keep = s.floor - 1
	}
	for _, r := range s.replicas {
		keep = min(keep, r.historyFrom)
	}
	if keep <= s.kept {
		return
	}
	n := s.logIndexAfter(keep)
	// Trim the key of each dropped entry (trimming a key twice changes nothing the second
	// time), then drop the entries. The log is resliced rather than moved, so trimming costs
	// what it drops, not the length of the log; append reallocates the live part when needed.
	emptied := false
	for i := 0; i < n; i++ {
		e := s.log.at(i)
		if e.typ == watch.Deleted {
			// A DELETED event's object lives only in the log. Every other entry's object is a
			// version, which may outlive its entry (the current state of a key left alone):
			// trimKey forgets it when the version goes.
			s.forgetLent_locked(e.obj)
		}
		if h := e.h; len(h.versions) > 0 && trimKey(h, keep, s.forgetLent_locked) {
			delete(h.res.keys, h.key)
			h.res.emptied = true
			emptied = true
		}
	}
	s.log.dropFront(n)
	s.kept = keep
	if emptied {
		for _, res := range s.resources { // order irrelevant: each resource is cleaned alone
			if res.emptied {
				res.sorted = slices.DeleteFunc(res.sorted, func(x *keyHistory) bool { return len(x.versions) == 0 })
				res.emptied = false
			}
		}
	}
}

// trimKey drops the versions of h that no reader can reach: it keeps the newest version at or
// below keep (the state at keep) and all later ones, and drops that one too if it is a deletion.
// It reports whether h is left without versions. forget is called with each dropped object.
func trimKey(h *keyHistory, keep uint64, forget func(*unstructured.Unstructured)) bool {
	i := -1
	for j := range h.versions {
		if h.versions[j].rev <= keep {
			i = j
		} else {
			break
		}
	}
	if i < 0 {
		return false
	}
	if h.versions[i].obj == nil {
		i++
	}
	if i > 0 {
		for _, v := range h.versions[:i] {
			forget(v.obj)
		}
		// Reslice, as for the log: a key written at every revision would otherwise move its
		// whole history at every write.
		clear(h.versions[:i])
		h.versions = h.versions[i:]
	}
	return len(h.versions) == 0
}
