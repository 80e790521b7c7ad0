package fakeapi

import (
	"fmt"
	"maps"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/informersim/informersim/internal/chunklog"
)

// Verb is the kind of a request.
type Verb int

const (
	VerbCreate Verb = iota + 1
	VerbUpdate
	VerbUpdateStatus
	VerbPatch
	VerbDelete
	VerbDeleteCollection
	VerbGet
	VerbList
	VerbWatch
)

func (v Verb) String() string {
	switch v {
	case VerbCreate:
		return "create"
	case VerbUpdate:
		return "update"
	case VerbUpdateStatus:
		return "update-status"
	case VerbPatch:
		return "patch"
	case VerbDelete:
		return "delete"
	case VerbDeleteCollection:
		return "deletecollection"
	case VerbGet:
		return "get"
	case VerbList:
		return "list"
	case VerbWatch:
		return "watch"
	}
	return fmt.Sprintf("Verb(%d)", int(v))
}

// RequestRecord is the record of one request the server served (fakeapi.md MH-14, §10.3).
type RequestRecord struct {
	Seq       uint64
	Time      time.Time
	Client    string // the ListerWatcher's name, if any
	Verb      Verb
	Resource  schema.GroupVersionResource
	Namespace string
	Name      string
	// Options are the list or watch options as sent (resourceVersion, resourceVersionMatch,
	// limit, continue, sendInitialEvents, allowWatchBookmarks, timeoutSeconds, selectors).
	Options metav1.ListOptions
	// Replica is the replica that served a list or watch, or -1.
	Replica int
	// Result: the list RV and continue token, the watch ID, the written object's RV, or the error.
	ListRV   string
	Continue string
	WatchID  uint64
	ObjectRV string
	Code     int32
	Reason   metav1.StatusReason
	Err      string
}

// WatchEvent is the record of one event delivered on a watch (recorded when the consumer takes
// it, through Next or ResultChan; events discarded by a close are not recorded), or of the
// watch's close (Close set, Type empty).
type WatchEvent struct {
	Seq         uint64
	Time        time.Time
	WatchID     uint64
	Type        watch.EventType
	Key         string // namespace/name; empty for bookmarks and errors
	RV          string
	Annotations map[string]string // bookmark annotations (k8s.io/initial-events-end)
	Initial     bool              // part of the initial events of the watch
	Code        int32             // ERROR events and error closes
	Reason      metav1.StatusReason
	Close       CloseReason
}

// Record is what [Server.OnRecord] observers receive: exactly one of Request and Event is set.
type Record struct {
	Request *RequestRecord
	Event   *WatchEvent
}

type recorder struct {
	max      int
	seq      uint64
	requests recordLog[requestEntry]
	// resources holds the resources the request records share (resource).
	resources map[schema.GroupVersionResource]*schema.GroupVersionResource
	events    recordLog[WatchEvent]
	observer  func(Record)
	clk       func() time.Time
}

func (r *recorder) newRequest(verb Verb, gvr schema.GroupVersionResource, ns, name string, opts metav1.ListOptions, client string) RequestRecord {
	// A deep copy: the options' pointer fields stay the caller's.
	rq := RequestRecord{Verb: verb, Resource: gvr, Namespace: ns, Name: name, Client: client, Replica: -1}
	opts.DeepCopyInto(&rq.Options)
	return rq
}

// OnRecord sets an observer called for every request and watch event record, in order. It is
// called with the server's lock held: it must not call the Server. Nil removes it.
func (s *Server) OnRecord(f func(Record)) {
	s.lock()
	defer s.mu.Unlock()
	s.rec.observer = f
}

// Requests returns a copy of the retained request records (the newest MaxRecords).
func (s *Server) Requests() []RequestRecord {
	s.lock()
	defer s.mu.Unlock()
	entries := s.rec.requests.all()
	if entries == nil {
		return nil
	}
	out := make([]RequestRecord, len(entries))
	for i := range entries {
		out[i] = entries[i].record()
	}
	return out
}

// WatchEvents returns a copy of the retained watch event records (the newest MaxRecords).
func (s *Server) WatchEvents() []WatchEvent {
	s.lock()
	defer s.mu.Unlock()
	out := s.rec.events.all()
	for i := range out {
		out[i].Annotations = maps.Clone(out[i].Annotations)
	}
	return out
}

func (s *Server) finishRequest_locked(rq *RequestRecord, err error) {
	s.finishRequestOf_locked(rq, err, nil)
}

// finishRequestOf_locked is finishRequest_locked for a client that keeps what its requests look
// up about their resource in t (nil: none).
func (s *Server) finishRequestOf_locked(rq *RequestRecord, err error, t *requestTarget) {
	if err != nil {
		rq.Err = err.Error()
		if st, ok := err.(apierrors.APIStatus); ok {
			rq.Code, rq.Reason = st.Status().Code, st.Status().Reason
		}
	}
	if s.rec.max < 0 {
		return
	}
	s.rec.seq++
	rq.Seq, rq.Time = s.rec.seq, s.clk.Now()
	s.rec.requests.append(s.rec.entryOf(rq, t.recorded(&s.rec, rq.Resource)), s.rec.max)
	if s.rec.observer != nil {
		c := *rq
		s.rec.observer(Record{Request: &c})
	}
}

func (s *Server) recordEvent_locked(w *Watcher, q queued) {
	if s.rec.max < 0 {
		return // records off: nothing to build
	}
	ev := WatchEvent{WatchID: w.id, Type: q.ev.Type, Initial: q.initial}
	if q.h != nil {
		ev.Key = q.h.key.String()
	}
	switch o := q.ev.Object.(type) {
	case *unstructured.Unstructured:
		ev.RV = o.GetResourceVersion()
		if q.ev.Type == watch.Bookmark {
			ev.Annotations = o.GetAnnotations()
		}
	case *metav1.Status:
		ev.Code, ev.Reason = o.Code, o.Reason
	default:
		ev.RV = FormatRV(q.rev)
	}
	s.appendEvent_locked(ev)
}

func (s *Server) recordClose_locked(w *Watcher, reason CloseReason, err error) {
	if s.rec.max < 0 {
		return
	}
	ev := WatchEvent{WatchID: w.id, Close: reason}
	if err != nil {
		st := statusOf(err)
		ev.Code, ev.Reason = st.Code, st.Reason
	}
	s.appendEvent_locked(ev)
}

func (s *Server) appendEvent_locked(ev WatchEvent) {
	if s.rec.max < 0 {
		return
	}
	s.rec.seq++
	ev.Seq, ev.Time = s.rec.seq, s.clk.Now()
	s.rec.events.append(ev, s.rec.max)
	if s.rec.observer != nil {
		c := ev
		s.rec.observer(Record{Event: &c})
	}
}

// requestEntry is a RequestRecord as the server's log keeps it, in 152 bytes instead of 400:
// what most requests leave zero is kept behind pointers, nil when zero. The list options are
// zero for every write and for the control plane's reads, most of a harness run's requests
// (830 of 838 in one), and a ListOptions by value is 144 bytes; a continue token, a watch ID
// and an error are as rare. The resource is shared by the records of its requests
// (recorder.resource).
type requestEntry struct {
	seq       uint64
	time      time.Time
	client    string
	verb      Verb
	replica   int
	resource  *schema.GroupVersionResource
	namespace string
	name      string
	options   *metav1.ListOptions
	listRV    string
	objectRV  string
	outcome   *requestOutcome
}

// requestOutcome is the part of a request's result that most requests leave zero.
type requestOutcome struct {
	cont    string
	watchID uint64
	code    int32
	reason  metav1.StatusReason
	err     string
}

// entry returns rq as the log keeps it.
func (r *recorder) entry(rq *RequestRecord) requestEntry {
	return r.entryOf(rq, r.resource(rq.Resource))
}

// entryOf is entry with resource, the records' copy of rq.Resource, already found.
func (r *recorder) entryOf(rq *RequestRecord, resource *schema.GroupVersionResource) requestEntry {
	e := requestEntry{seq: rq.Seq, time: rq.Time, client: rq.Client, verb: rq.Verb, replica: rq.Replica,
		resource: resource, namespace: rq.Namespace, name: rq.Name, listRV: rq.ListRV, objectRV: rq.ObjectRV}
	if rq.Options != (metav1.ListOptions{}) {
		opts := rq.Options
		e.options = &opts
	}
	if o := (requestOutcome{cont: rq.Continue, watchID: rq.WatchID, code: rq.Code, reason: rq.Reason, err: rq.Err}); o != (requestOutcome{}) {
		e.outcome = new(requestOutcome) // not &o: o would be allocated for every request
		*e.outcome = o
	}
	return e
}

// record returns the RequestRecord e keeps.
func (e *requestEntry) record() RequestRecord {
	rq := RequestRecord{Seq: e.seq, Time: e.time, Client: e.client, Verb: e.verb, Replica: e.replica,
		Resource: *e.resource, Namespace: e.namespace, Name: e.name, ListRV: e.listRV, ObjectRV: e.objectRV}
	if e.options != nil {
		rq.Options = *e.options
	}
	if o := e.outcome; o != nil {
		rq.Continue, rq.WatchID, rq.Code, rq.Reason, rq.Err = o.cont, o.watchID, o.code, o.reason, o.err
	}
	return rq
}

// resource returns the one copy of gvr the records share, made at its first request. The
// first maxSharedResources resources requested are shared; a client asking for more (names it
// makes up, each a 404) gets a copy per record, so that the table stays small.
func (r *recorder) resource(gvr schema.GroupVersionResource) *schema.GroupVersionResource {
	if p, ok := r.resources[gvr]; ok {
		return p
	}
	p := new(schema.GroupVersionResource) // not &gvr: gvr would be allocated at every call
	*p = gvr
	if len(r.resources) < maxSharedResources {
		if r.resources == nil {
			r.resources = map[schema.GroupVersionResource]*schema.GroupVersionResource{}
		}
		r.resources[gvr] = p
	}
	return p
}

const maxSharedResources = 1024

// requestTarget is what a client's requests look up about the one resource they name, kept
// from the first: the resource's store (the server's table of resources never changes) and
// the records' copy of its name. A control plane's scan makes one LIST per served resource,
// and the two map lookups by a group, version and resource were a fifth of each.
type requestTarget struct {
	res    *resourceStore
	record *schema.GroupVersionResource
}

// store returns gvr's store, looked up once by a target (t may be nil: looked up each time).
func (t *requestTarget) store(s *Server, gvr schema.GroupVersionResource) (*resourceStore, bool) {
	if t != nil && t.res != nil {
		return t.res, true
	}
	res, ok := s.lookup_locked(gvr)
	if ok && t != nil {
		t.res = res
	}
	return res, ok
}

// recorded returns r's copy of gvr for the records, looked up once by a target (t may be nil).
func (t *requestTarget) recorded(r *recorder, gvr schema.GroupVersionResource) *schema.GroupVersionResource {
	if t == nil {
		return r.resource(gvr)
	}
	if t.record == nil {
		t.record = r.resource(gvr)
	}
	return t.record
}

// recordLog keeps the newest records, up to a bound, in a chunklog.Log: records are large (a
// request's holds its list options), and a slice grown by append, copying every record each time
// it doubled, cost a sixth of the bytes a short world run allocates. Beyond the bound, the oldest
// records are dropped in batches (at least a quarter of the bound, so the cost is amortised).
type recordLog[T any] struct {
	chunklog.Log[T]
}

// recordChunk is the most records in a chunk of a recordLog: a record is large, a few hundred
// bytes, and most runs keep a few hundred records at most.
const recordChunk = 32

// append adds v, then drops the oldest records if more than limit (>= 1) are kept.
func (l *recordLog[T]) append(v T, limit int) {
	l.MaxChunk = recordChunk
	l.Append(v)
	if n := l.Len(); n > limit {
		l.DropOldest(min(max(n-limit, limit/4), n-1))
	}
}

// all returns a copy of the records, oldest first (nil when there is none).
func (l *recordLog[T]) all() []T { return l.All() }
