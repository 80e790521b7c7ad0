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
	requests recordLog[RequestRecord]
	events   recordLog[WatchEvent]
	observer func(Record)
	clk      func() time.Time
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
	return s.rec.requests.all()
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
	s.rec.requests.append(*rq, s.rec.max)
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

// recordChunk is the number of records in each chunk of a recordLog.
const recordChunk = 32

// recordLog keeps the newest records, up to a bound, in chunks of recordChunk records. A slice
// grown by append copies every record each time it doubles, and records are large (a request's
// holds its list options), so the records of a short world run cost a sixth of the bytes it
// allocates; chunks are filled in place and never copied. Beyond the bound, the oldest records
// are dropped in batches (at least a quarter of the bound, so the cost is amortised), freeing
// the chunks they emptied.
type recordLog[T any] struct {
	chunks [][]T // the records are chunks[0][head:], then the later chunks; all but the last are full
	head   int
	n      int // records kept
}

// append adds v, then drops the oldest records if more than limit (>= 1) are kept.
func (l *recordLog[T]) append(v T, limit int) {
	if k := len(l.chunks); k == 0 || len(l.chunks[k-1]) == recordChunk {
		l.chunks = append(l.chunks, make([]T, 0, recordChunk))
	}
	last := &l.chunks[len(l.chunks)-1]
	*last = append(*last, v)
	l.n++
	if l.n > limit {
		drop := max(l.n-limit, limit/4)
		l.drop(min(drop, l.n-1))
	}
}

// drop removes the k oldest records (k < l.n, so the last chunk stays).
func (l *recordLog[T]) drop(k int) {
	l.n -= k
	off := l.head + k
	full := off / recordChunk // chunks emptied entirely: full ones, since the last one stays
	clear(l.chunks[:full])
	l.chunks = l.chunks[full:]
	l.head = off % recordChunk
	clear(l.chunks[0][:l.head]) // no references kept from dropped records
}

// all returns a copy of the records, oldest first (nil when there is none).
func (l *recordLog[T]) all() []T {
	if l.n == 0 {
		return nil
	}
	out := make([]T, 0, l.n)
	for i, c := range l.chunks {
		if i == 0 {
			c = c[l.head:]
		}
		out = append(out, c...)
	}
	return out
}
