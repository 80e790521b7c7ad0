package fakeapi

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Lent objects (see the package documentation, "Ownership of objects", and fakeapi.md §10.5).
//
// A consumer that promises to only read what it receives (the world's own informers, which hand
// objects to their cache and their handlers exactly as client-go's informer does) may take the
// committed objects themselves instead of deep copies: ListerWatcher.ListLent and OpenWatchLent.
// The server cannot make a Go map read-only, so it checks instead: when it first lends an object
// it records a fingerprint of its content (fingerprint.go), and it compares the fingerprint again
// before it acts on that object (the current version a write starts from, so that no change
// passes into the versions built from it), before it forgets the record, in Lending.Check, which
// checks every record (a host runs it when it checks a run's end state), and in
// Lending.CheckObject, which checks one (a host runs it right after code that may change one). Reads that only hand out
// a copy or lend the object again do not check: a change is noticed by one of those three, later.
// A difference means someone changed a shared object; the server reports the first one as a
// MutationError (Lending.Mutation, Lending.Check). It cannot undo the change, so a run that sees one is
// over: the world fails it with the read-only-objects oracle.
//
// A record lives as long as the server holds the object: trimming a version or a log entry
// checks the object's record one last time and forgets it (forgetLent_locked), so the book is
// never larger than the history, and costs one fingerprint per lent object to end.
//
// Records are keyed by the object's content, its top-level map (contentKey): a list item is a
// new Unstructured around the stored object's map, so the map, not the Unstructured, is what a
// consumer holds of a lent object. Every committed object has a top-level map of its own.

// lentRecord is what the server knows of one lent object: its fingerprint when lent, and, for
// the report, whom it went to and what it was (read at lending time, not from the object,
// which may have changed since).
type lentRecord struct {
	content map[string]any // the object's content, what the fingerprint covers
	sum     uint64
	seq     uint64 // the order of lending, which fixes the order checkAllLent_locked reports in
	// The holders are the consumers it was lent to, observers (Lending.Snapshot) aside, in the
	// order first lent: one committed object goes to every informer watching its key, so any of
	// them may be the one that changed it. to is the first holder (held), or while there is none
	// the first observer; the book keeps the other holders apart (lendBook.more), so that the
	// common case, an object lent to one informer, allocates nothing and the record stays small
	// (it is copied at every lookup).
	to   string
	held bool
	h    *keyHistory // its key and resource
	rv   string
}

// lendBook holds the records of lent objects and the first mutation found.
type lendBook struct {
	records map[unsafe.Pointer]lentRecord // by contentKey
	// more holds, by contentKey, the holders of a record after its first, in the order first
	// lent, for the objects lent to more than one.
	more map[unsafe.Pointer][]string
	seq  uint64 // records made so far
	// mutation is the first change found, read without the server's lock by Lending.Mutation (a
	// host asks after every step).
	mutation atomic.Pointer[MutationError]
}

// MutationError reports that an object the server lent read-only was changed after it was
// handed out: a handler, a cache or user code wrote into an object it received from an
// informer, which client-go forbids (objects from an informer are shared with its cache;
// DeepCopy one before changing it). The fields say what the object was when it was lent.
type MutationError struct {
	// Resource, Namespace and Name name the object; ResourceVersion is the version lent.
	Resource        string
	Namespace, Name string
	ResourceVersion string
	// LentTo is the name of the first consumer it was lent to (the ListerWatcher's Name), an
	// observer (Lending.Snapshot) only when nothing else holds it.
	LentTo string
	// Holders names every consumer it was lent to, LentTo first, in the order first lent,
	// observers aside: the server shares one object between every informer that lists or
	// watches it, so the change may come from any of them (the handler is named by NoticedBy
	// when world.Config.CheckReadOnlyEachDelivery checks each delivery).
	Holders []string
	// NoticedBy says what found the change: a write to the object, the trimming of its history,
	// or Lending.Check.
	NoticedBy string
}

func (e *MutationError) Error() string {
	name := e.Name
	if e.Namespace != "" {
		name = e.Namespace + "/" + name
	}
	to := strconv.Quote(e.LentTo)
	if len(e.Holders) > 1 {
		quoted := make([]string, len(e.Holders))
		for i, h := range e.Holders {
			quoted[i] = strconv.Quote(h)
		}
		to = "each of " + strings.Join(quoted, ", ") + " (any of them may have changed it)"
	}
	return fmt.Sprintf("fakeapi: %s %s at resourceVersion %s, lent read-only to %s, was changed after it was handed out (noticed by %s): objects an informer hands to its cache and handlers are shared and must not be changed; DeepCopy one before changing it",
		e.Resource, name, e.ResourceVersion, to, e.NoticedBy)
}

// Lending groups the checks of objects the server lent read-only (see "Ownership of objects" in
// the package documentation): a host that takes lent objects (ListerWatcher.ListLent,
// OpenWatchLent, Lending.Snapshot) asks it whether any was changed. A Server hands it out with
// [Server.Lending].
type Lending struct{ s *Server }

// Lending returns the server's checks of lent objects.
func (s *Server) Lending() Lending { return Lending{s} }

// Mutation returns the first change to a lent object the server has found (a
// *MutationError), or nil. It takes no lock: a host may ask after every step.
func (l Lending) Mutation() error {
	s := l.s
	if m := s.lent.mutation.Load(); m != nil {
		return m
	}
	return nil
}

// Check compares every lent object the server still keeps a record of with its fingerprint
// now, and returns the first change found, this time or before (see Mutation). A host calls
// it when it checks a run's end state: the server otherwise notices a change only when a write
// acts on the object or the object leaves its history.
func (l Lending) Check() error {
	s := l.s
	s.mu.Lock() // reads and at most records a mutation: no state a deadline depends on
	defer s.mu.Unlock()
	s.checkAllLent_locked()
	return l.Mutation()
}

// lend_locked hands out obj, a committed object of h's key, to the consumer named to,
// recording its fingerprint the first time; lending it again checks nothing and only adds a new
// consumer to its holders. An observer (Lending.Snapshot) is not made a holder.
func (s *Server) lend_locked(obj *unstructured.Unstructured, h *keyHistory, to string, observer bool) {
	b := &s.lent
	key := contentKey(obj.Object)
	if r, ok := b.records[key]; ok {
		// Checked when the server acts on it, drops it, or Lending.Check runs.
		switch {
		case observer || r.held && r.to == to: // nothing new to record
		case !r.held: // the first holder after observers
			r.to, r.held = to, true
			b.records[key] = r
		case !slices.Contains(b.more[key], to): // another holder
			if b.more == nil {
				b.more = make(map[unsafe.Pointer][]string)
			}
			b.more[key] = append(b.more[key], to)
		}
		return
	}
	if b.records == nil {
		b.records = make(map[unsafe.Pointer]lentRecord)
	}
	b.seq++
	r := lentRecord{content: obj.Object, sum: fingerprint(obj.Object), seq: b.seq, to: to, held: !observer, h: h, rv: metaStr(obj, "resourceVersion")}
	b.records[key] = r
}

// checkLent_locked compares obj, a committed object the server is about to act on, with its
// fingerprint if it was lent. what names the action for the report.
func (s *Server) checkLent_locked(obj *unstructured.Unstructured, what string) {
	if s.lent.records == nil || obj == nil { // nothing was ever lent: the common case costs this
		return
	}
	if r, ok := s.lent.records[contentKey(obj.Object)]; ok {
		s.verifyLent_locked(r, what)
	}
}

// verifyLent_locked records a mutation of r's object, unless one was found before, if its
// content no longer has r's fingerprint.
func (s *Server) verifyLent_locked(r lentRecord, what string) {
	if fingerprint(r.content) == r.sum {
		return
	}
	var holders []string
	if r.held {
		holders = append([]string{r.to}, s.lent.more[contentKey(r.content)]...)
	}
	s.lent.mutation.CompareAndSwap(nil, &MutationError{
		Resource: r.h.res.info.GVR.Resource, Namespace: r.h.key.ns, Name: r.h.key.name,
		ResourceVersion: r.rv, LentTo: r.to, Holders: holders, NoticedBy: what,
	})
}

// checkAllLent_locked checks every record, in the order they were made, so that when several
// objects changed, the one reported is the same in every run.
func (s *Server) checkAllLent_locked() {
	all := make([]lentRecord, 0, len(s.lent.records))
	for _, r := range s.lent.records {
		all = append(all, r)
	}
	slices.SortFunc(all, func(x, y lentRecord) int { return cmp.Compare(x.seq, y.seq) })
	for _, r := range all {
		s.verifyLent_locked(r, "Lending.Check")
	}
}

// forgetLent_locked checks obj's record, if it was lent, one last time and forgets it: the
// server is dropping the object from its history (trim_locked) and will not read it again.
func (s *Server) forgetLent_locked(obj *unstructured.Unstructured) {
	if s.lent.records == nil || obj == nil {
		return
	}
	key := contentKey(obj.Object)
	if r, ok := s.lent.records[key]; ok {
		s.verifyLent_locked(r, "the trimming of its history")
		delete(s.lent.records, key)
		delete(s.lent.more, key)
	}
}

// CheckObject compares the lent object whose content obj holds (the object itself, or a
// list item around it) with its fingerprint now, and returns the first change found, this time
// or before (see Mutation). noticedBy names the check in the report. It is nil for an
// object that was never lent. A host calls it to notice a change right after the code that may
// have made it, such as a handler that was just given obj.
func (l Lending) CheckObject(obj *unstructured.Unstructured, noticedBy string) error {
	s := l.s
	if obj != nil {
		s.mu.Lock() // reads and at most records a mutation, as Check
		s.checkLent_locked(obj, noticedBy)
		s.mu.Unlock()
	}
	return l.Mutation()
}

// contentKey identifies an object by its content, its top-level map (see "Records are keyed"
// above). The map's address is its identity: Go maps do not move, and the key keeps the map
// alive while it is recorded.
func contentKey(m map[string]any) unsafe.Pointer {
	return reflect.ValueOf(m).UnsafePointer()
}

// holdsLent_locked reports whether the server still holds obj, the object of a watch event at
// revision rev of h's key, and so keeps checking it if lent: every log entry and version after
// the trimmed revision is held, older ones only while they are still a version of the key (an
// initial event's object may be an old but current version). An event that waited in a slow
// watch's queue past the trimming of its revision is handed out as a copy instead.
func (s *Server) holdsLent_locked(h *keyHistory, rev uint64, obj *unstructured.Unstructured) bool {
	if rev > s.kept {
		return true
	}
	for i := len(h.versions) - 1; i >= 0; i-- {
		if h.versions[i].obj == obj {
			return true
		}
	}
	return false
}
