package world

import (
	"fmt"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/internal/invariant"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world/narration"
)

// Notification is one handler call as a DeliveryLog saw it.
type Notification struct {
	// Kind is the method called: add, update or delete.
	Kind informer.NotificationKind
	// Key is the object's namespace/name.
	Key string
	// ResourceVersion is the new object's RV (the deleted object's, a tombstone's last known
	// object's).
	ResourceVersion string
	// OldResourceVersion is the old object's RV of an update.
	OldResourceVersion string
	// InInitialList is OnAdd's isInInitialList.
	InInitialList bool
	// Tombstone says OnDelete got a DeletedFinalStateUnknown.
	Tombstone bool
	// Sync says an update had equal old and new RVs: sync-class (informer.md §2.5).
	Sync bool
	// Time is when the handler was called (since the epoch).
	Time time.Duration
	// Object is the object the handler got: the new object, the deleted object, or the
	// tombstone's last known object.
	Object any
}

// String renders n in informer.md §14's notation: "add(ns/p1@1,true)", "upd(ns/p1@1->3)",
// "del(ns/p2@4)", "del(tomb ns/p4@6)".
func (n Notification) String() string {
	switch n.Kind {
	case informer.NotificationAdd:
		return "add(" + n.Key + "@" + n.ResourceVersion + "," + strconv.FormatBool(n.InInitialList) + ")"
	case informer.NotificationUpdate:
		return "upd(" + n.Key + "@" + n.OldResourceVersion + "->" + n.ResourceVersion + ")"
	case informer.NotificationDelete:
		if n.Tombstone {
			return "del(tomb " + n.Key + "@" + n.ResourceVersion + ")"
		}
		return "del(" + n.Key + "@" + n.ResourceVersion + ")"
	}
	return n.Kind.String()
}

// DeliveryLog watches the deliveries of one registration (World hosts one per Handler): it
// narrates each notification as a trace event of the handler's actor ("OnAdd obj=ns/a rv=2
// initial=true"), keeps it for assertions, applies it to a replayed view of the cache, and checks
// the per-object order oracle (design.md "Oracles") just before the handler is called:
//
//   - per key, RVs never go back: an add or a changing update carries an RV above the last one
//     the handler saw, a sync-class update (equal RVs, informer.md §2.5) the same RV, a delete
//     at least it;
//   - an update's old object is the state the handler was last told about;
//   - after a delete, the key's next notification is an add (a re-creation);
//   - cache before notify (informer.md §13 rule 1): when the handler is called, the informer's
//     cache holds the state it is told about or a newer one (a deleted key is absent or
//     re-created at a higher RV).
//
// It is fed by the informer's step events (StepDelivered), not by wrapping the handler, so it
// sees registrations the world did not make as well. A violation panics with a *Violation named
// OraclePerObjectOrder or OracleCacheBeforeNotify (it unwraps to an invariant.Violation), which
// the engine turns into a failed run (*sim.RunError) with the seed. A panic of the handler
// propagates the same way.
type DeliveryLog struct {
	w     *World
	actor string
	cache *cacheLookup // the informer's cache, for cache-before-notify; nil skips the check

	max int
	// notes is a ring of the last max notifications: it grows by append up to max, then each
	// new one overwrites the oldest, at head, so keeping a bounded window allocates nothing per
	// notification once full (a sliding slice would reallocate as its capacity runs out).
	notes []Notification
	head  int // index of the oldest in notes once it is full; 0 before
	total int // notifications received, including those no longer kept

	// keys numbers the keys the handler was told about (shared by the Recorders of an
	// informer's handlers: see keyIndex); states holds, by that number, the order oracle's
	// state and the replayed cache (the view: the keys not deleted, with their last object);
	// the zero entry (not seen) for a key this handler was never told about. Values side by
	// side rather than pointers to entries of their own: a delivery reads its key's entry from
	// one array instead of chasing a pointer to memory the other handlers' checks have long
	// pushed out of the cache, and updates it in place.
	keys   *keyIndex
	states []keyState
	live   int // keys not deleted: the size of the view
}

// keyIndex numbers keys from 0 in the order first seen. The Recorders of an informer's handlers
// share one: the world numbers a notification's key once, when the informer distributes it
// (see Handler.buffered), and each handler's DeliveryLog then finds its entry by that number at
// the delivery, instead of every DeliveryLog hashing the key into a map of its own.
type keyIndex struct {
	ids   map[string]int // never iterated
	names []string       // by number
}

func newKeyIndex() *keyIndex { return &keyIndex{ids: map[string]int{}} }

// id returns key's number, giving it the next one if it is new.
func (x *keyIndex) id(key string) int {
	id, ok := x.ids[key]
	if !ok {
		id = len(x.names)
		x.ids[key] = id
		x.names = append(x.names, key)
	}
	return id
}

// noteRef is what the Recorders need of a notification that does not depend on the handler,
// worked out once when the informer distributes it to every handler (see Handler.buffered):
// its key's number and its resourceVersion, parsed.
type noteRef struct {
	key    int    // the key's number in the informer's keyIndex
	rvText string // the resourceVersion, and what it parses to (rvOK: it does)
	rv     uint64
	rvOK   bool
}

// ref returns the noteRef of a notification with key and resourceVersion rv, numbering key in x.
func (x *keyIndex) ref(key, rv string) noteRef {
	v, err := strconv.ParseUint(rv, 10, 64)
	return noteRef{key: x.id(key), rvText: rv, rv: v, rvOK: err == nil}
}

// refQueue is a handler's mirror of its buffer: the noteRefs of the notifications buffered for
// it, oldest first (see Handler.buffered).
type refQueue = fifo[noteRef]

type keyState struct {
	seen    bool // the handler was told about the key
	rv      uint64
	rvText  string // the resourceVersion rv was parsed from
	deleted bool
	obj     any // the last object the handler was told about; nil once deleted
}

// isRV reports whether text is st.rv written in decimal, as strconv.FormatUint writes it.
func (st *keyState) isRV(text string) bool {
	// rvText parsed (digits only), so it is rv's own text unless it has a leading zero: then a
	// comparison with it answers without formatting rv, which every update asks.
	if text == st.rvText && (len(text) == 1 || text[0] != '0') {
		return true
	}
	var buf [20]byte
	return text == string(strconv.AppendUint(buf[:0], st.rv, 10))
}

// newDeliveryLog returns a DeliveryLog checking cache-before-notify against cache (nil: no check).
// The Recorders of one informer's handlers share its cacheLookup, and with it the keyIndex
// that numbers their keys; without a cache the DeliveryLog numbers them itself.
func newDeliveryLog(w *World, actor string, cache *cacheLookup, maxNotes int) *DeliveryLog {
	keys := newKeyIndex()
	if cache != nil {
		keys = cache.keys
	}
	return &DeliveryLog{w: w, actor: actor, cache: cache, max: maxNotes, keys: keys}
}

// cacheLookup is the informer's cache as cache-before-notify reads it: the last lookup of each
// key, kept while the cache's generation (informer's Generation) is unchanged. A notification is
// delivered to each handler in turn, often with no cache write in between, so the Recorders of
// an informer's handlers share one cacheLookup and the cache is read about once per
// notification, not once per handler. Any write to the cache, the informer's or one behind its
// back (a planted stale cache, TestPlantedStaleCache), changes the generation and the next
// check of every key reads again. A store without a generation is read at every check.
type cacheLookup struct {
	store informer.Store
	gen   generational // store's generation; nil if it has none
	keys  *keyIndex    // numbers the keys; shared with the Recorders that share the lookup
	byKey []keptLookup // by key number
}

// keptLookup is one key's last lookup.
type keptLookup struct {
	valid   bool   // the fields below hold the lookup of the key at generation at
	at      uint64 // the store's generation when the key was read
	found   bool   // the key was cached
	rv      uint64 // the cached object's resourceVersion, if found and parsable
	rvValid bool   // it parsed
}

// generational is what the informer's cache offers besides informer.Store: a number that changes
// whenever its contents may have changed.
type generational interface{ Generation() uint64 }

func newCacheLookup(store informer.Store) *cacheLookup {
	c := &cacheLookup{store: store, keys: newKeyIndex()}
	c.gen, _ = store.(generational)
	return c
}

// get returns whether key (number id in c.keys) is cached and, if so, its object's
// resourceVersion and whether it parsed; err is the store's lookup error (then found is false).
// told is the object a handler is told about under key, and toldRV its resourceVersion, parsed.
func (c *cacheLookup) get(id int, key string, told any, toldRV uint64) (found bool, rv uint64, rvValid bool, err error) {
	if c.gen == nil {
		return c.read(key, told, toldRV)
	}
	gen := c.gen.Generation()
	if id >= len(c.byKey) {
		c.byKey = append(c.byKey, make([]keptLookup, id+1-len(c.byKey))...)
	}
	k := &c.byKey[id]
	if k.valid && k.at == gen {
		return k.found, k.rv, k.rvValid, nil
	}
	found, rv, rvValid, err = c.read(key, told, toldRV)
	// A failed lookup is not kept: the next check asks again (and reports again).
	*k = keptLookup{valid: err == nil, at: gen, found: found, rv: rv, rvValid: rvValid}
	return found, rv, rvValid, err
}

func (c *cacheLookup) read(key string, told any, toldRV uint64) (found bool, rv uint64, rvValid bool, err error) {
	cached, ok, err := c.store.GetByKey(key)
	if err != nil || !ok {
		return false, 0, false, err
	}
	if sameObject(cached, told) {
		// The usual case when a handler is told about an add or update: the cache holds the
		// very object it is given, whose RV the notification carries, so there is nothing to
		// read again. (Objects are not changed in place: client-go forbids it.)
		return true, toldRV, true, nil
	}
	rv, perr := strconv.ParseUint(rvOf(cached), 10, 64)
	return true, rv, perr == nil, nil
}

// Notifications returns the kept notifications, oldest first.
func (r *DeliveryLog) Notifications() []Notification {
	out := make([]Notification, 0, len(r.notes))
	out = append(out, r.notes[r.head:]...)
	return append(out, r.notes[:r.head]...)
}

// Strings returns the kept notifications in informer.md §14's notation.
func (r *DeliveryLog) Strings() []string {
	notes := r.Notifications()
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = n.String()
	}
	return out
}

// Take returns the kept notifications in notation and forgets them (the view and the oracle's
// state stay).
func (r *DeliveryLog) Take() []string {
	out := r.Strings()
	clear(r.notes) // let the objects be collected
	r.notes, r.head = r.notes[:0], 0
	return out
}

// Total is the number of notifications received, dropped ones included.
func (r *DeliveryLog) Total() int { return r.total }

// View returns the replayed cache: key → the last object the handler was told about.
func (r *DeliveryLog) View() map[string]any {
	out := make(map[string]any, r.live)
	for id, st := range r.states {
		if st.seen && !st.deleted {
			out[r.keys.names[id]] = st.obj
		}
	}
	return out
}

// deliver narrates, checks and records the delivery e, just before the handler is called.
func (r *DeliveryLog) deliver(e informer.StepEvent) {
	r.deliverRef(&e, r.keys.ref(e.Key, e.ResourceVersion))
}

// deliverRef is deliver with e's noteRef (in r.keys) already worked out: the world does it once
// per notification, when it is distributed. The event and the notification go down by pointer,
// here and below: copying them at each call was a tenth of a delivery's cost with 16 handlers.
func (r *DeliveryLog) deliverRef(e *informer.StepEvent, ref noteRef) {
	n := Notification{Kind: e.Notification, Key: e.Key, ResourceVersion: e.ResourceVersion, Object: e.Object}
	s := r.w.s
	narrated := s.Narrated() // if not, each call is emitted bare: counted, nobody reads it
	switch e.Notification {
	case informer.NotificationAdd:
		n.InInitialList = e.InInitialList
		if !narrated {
			s.Emit(r.actor, narration.KindOnAdd)
			break
		}
		s.Emit(r.actor, narration.KindOnAdd, sim.F(narration.FieldObj, n.Key), sim.F(narration.FieldRV, n.ResourceVersion), sim.FBool(narration.FieldInitial, n.InInitialList))
	case informer.NotificationUpdate:
		n.OldResourceVersion = e.OldResourceVersion
		n.Sync = n.ResourceVersion == n.OldResourceVersion
		if !narrated {
			s.Emit(r.actor, narration.KindOnUpdate)
			break
		}
		f := []sim.Field{sim.F(narration.FieldObj, n.Key), sim.F(narration.FieldRV, narration.RVChange(n.OldResourceVersion, n.ResourceVersion))}
		if n.Sync {
			f = append(f, sim.FBool(narration.FieldSync, true))
		}
		s.Emit(r.actor, narration.KindOnUpdate, f...)
	case informer.NotificationDelete:
		if t, ok := e.Object.(informer.DeletedFinalStateUnknown); ok {
			n.Tombstone = true
			n.Object = t.Obj
		}
		if !narrated {
			s.Emit(r.actor, narration.KindOnDelete)
			break
		}
		f := []sim.Field{sim.F(narration.FieldObj, n.Key), sim.F(narration.FieldRV, n.ResourceVersion)}
		if n.Tombstone {
			f = append(f, sim.FBool(narration.FieldTombstone, true))
		}
		s.Emit(r.actor, narration.KindOnDelete, f...)
	}
	r.record(&n, ref)
}

func (r *DeliveryLog) record(n *Notification, ref noteRef) {
	n.Time = r.w.s.Now()
	st := r.check(n, ref)
	switch n.Kind {
	case informer.NotificationAdd, informer.NotificationUpdate:
		st.obj = n.Object
	case informer.NotificationDelete:
		st.obj = nil
	}
	r.total++
	if len(r.notes) < r.max {
		r.notes = append(r.notes, *n)
		return
	}
	r.notes[r.head] = *n
	r.head++
	if r.head == len(r.notes) {
		r.head = 0
	}
}

// check is the per-object order oracle and the cache-before-notify oracle (design.md
// "Oracles"); a violation panics with a *Violation naming the oracle. It returns the key's
// entry, updated with n's resourceVersion and whether n deletes the key.
func (r *DeliveryLog) check(n *Notification, ref noteRef) *keyState {
	// Every check tests its condition before calling violate: the formatting arguments are
	// built (and allocated) only for a violation, not for each of the many correct deliveries.
	// They get a copy of *n: the pointer itself in an argument would move n to the heap.
	id, rv := ref.key, ref.rv
	if r.keys.names[id] != n.Key || ref.rvText != n.ResourceVersion {
		// The world's mirror of what it saw distributed went wrong.
		invariant.Check(false, "world: %s: %s delivered under key number %d (%s) and rv %q", r.actor, *n, id, r.keys.names[id], ref.rvText)
	}
	if !ref.rvOK {
		r.w.violate(OraclePerObjectOrder, "%s: %s: unparsable resourceVersion %q", r.actor, *n, n.ResourceVersion)
	}
	if id >= len(r.states) {
		r.states = append(r.states, make([]keyState, id+1-len(r.states))...)
	}
	ent := &r.states[id] // stays valid: nothing below grows r.states
	st := *ent
	seen := st.seen
	switch n.Kind {
	case informer.NotificationAdd:
		if seen && !st.deleted {
			r.w.violate(OraclePerObjectOrder, "%s: %s: add of a key the handler holds at rv=%d", r.actor, *n, st.rv)
		}
		if seen && rv <= st.rv {
			r.w.violate(OraclePerObjectOrder, "%s: %s: re-creation at rv=%d not after the delete at rv=%d", r.actor, *n, rv, st.rv)
		}
	case informer.NotificationUpdate:
		if !seen || st.deleted {
			r.w.violate(OraclePerObjectOrder, "%s: %s: update of a key the handler does not hold", r.actor, *n)
		}
		if !st.isRV(n.OldResourceVersion) {
			r.w.violate(OraclePerObjectOrder, "%s: %s: old object rv=%s is not the last state the handler saw (rv=%d)", r.actor, *n, n.OldResourceVersion, st.rv)
		}
		if n.Sync {
			if rv != st.rv {
				r.w.violate(OraclePerObjectOrder, "%s: %s: sync update at rv=%d after rv=%d", r.actor, *n, rv, st.rv)
			}
		} else if rv <= st.rv {
			r.w.violate(OraclePerObjectOrder, "%s: %s: rv went from %d to %d", r.actor, *n, st.rv, rv)
		}
	case informer.NotificationDelete:
		// A delete of a key the handler never held is possible (a watch DELETED for an uncached
		// key, informer.md §14 T2); otherwise it is not older than what the handler holds.
		if seen && !st.deleted && rv < st.rv {
			r.w.violate(OraclePerObjectOrder, "%s: %s: delete at rv=%d before rv=%d", r.actor, *n, rv, st.rv)
		}
		if seen && st.deleted {
			r.w.violate(OraclePerObjectOrder, "%s: %s: second delete without a re-creation", r.actor, *n)
		}
	}
	ent.seen = true
	deleted := n.Kind == informer.NotificationDelete
	switch {
	case !ent.deleted && deleted && seen:
		r.live--
	case (ent.deleted || !seen) && !deleted:
		r.live++
	}
	ent.rv, ent.rvText, ent.deleted = rv, n.ResourceVersion, deleted
	if r.cache == nil {
		return ent
	}
	ok, crv, parsed, err := r.cache.get(id, n.Key, n.Object, rv)
	if err != nil {
		r.w.violate(OracleCacheBeforeNotify, "%s: %s: cache lookup: %v", r.actor, *n, err)
	}
	if !ok {
		return ent // deleted since: newer than what the handler is told
	}
	if !parsed {
		r.w.violate(OracleCacheBeforeNotify, "%s: %s: cached object with unparsable resourceVersion", r.actor, *n)
	}
	if n.Kind == informer.NotificationDelete {
		if crv <= rv {
			r.w.violate(OracleCacheBeforeNotify, "%s: %s: the cache still holds the deleted key at rv=%d", r.actor, *n, crv)
		}
	} else if crv < rv {
		r.w.violate(OracleCacheBeforeNotify, "%s: %s: the cache holds an older rv=%d (cache before notify)", r.actor, *n, crv)
	}
	return ent
}

// describe returns the key and RV of an object handed to a handler.
func describe(obj any) (key, rv string) {
	key, err := informer.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		key = fmt.Sprintf("<%v>", err)
	}
	if m, err := meta.Accessor(obj); err == nil {
		rv = m.GetResourceVersion()
	}
	return key, rv
}
