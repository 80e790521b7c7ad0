// Package narration is the contract of the world's trace (package sim/world): who acts, what
// kinds of events each actor narrates, the keys of their fields, the one formatter of each
// compound value (an object reference, a change of resourceVersion, a list of handlers, the
// apiserver's name of an object), and typed readers of the events that the oracles and the
// renderers consume. The world writes its trace with these names and formatters, and a reader
// reads it with these readers, never by parsing text of its own: a change of wording is one
// edit here, and the readers' tests catch a formatter and a reader that drift apart.
//
// An event's actor is "apiserver", "workload", "world", "fault" or "clock", an informer's name
// (start, stop, synced), or "<informer>/<part>": the Reflector, the queue, the network, the
// watch stream, or one of its handlers (by the handler's name).
package narration

import (
	"strconv"
	"strings"
	"time"

	"github.com/informersim/informersim/sim"
)

// The actors that are not an informer's.
const (
	ActorAPIServer = "apiserver"
	ActorWorkload  = "workload"
	ActorWorld     = "world"
	ActorFault     = "fault"
	ActorClock     = "clock"
)

// The actors of the control plane's stand-ins (package controlplane), when a world runs them
// (world.Config.ControlPlane): each steps under its own name.
const (
	ActorGarbageCollector    = "garbage-collector"
	ActorNamespaceController = "namespace-controller"
	ActorWorkloadStatus      = "workload-status"
	ActorJobController       = "job-controller"
)

// An admission webhook's calls, in a world that calls webhooks (world.World.WebhookCall): one
// event per call, kind "call", with the webhook's name, the fault that fired (an op's text),
// the answer's delay and, for a failure, its outcome ("refused" or an HTTP code).
const (
	ActorWebhook    = "webhook"
	KindWebhookCall = "call"
)

// The kinds of the control plane's actors.
const (
	StepSync  = "sync"  // one Step of the component: a read of the apiserver, at most one write
	StepTimer = "timer" // the component's next timer (a delay, a backoff, a status latency)
	KindDid   = "did"   // what=: the write a sync made ("delete configmaps a/b (Background...)")
)

// The parts of an informer's actor "<informer>/<part>" that are not handlers.
const (
	PartReflector = "reflector"
	PartQueue     = "queue"
	PartNet       = "net"
	PartWatch     = "watch"
)

// The kinds of an informer's own actor "<informer>".
const (
	KindStart  = "start"
	KindStop   = "stop"
	KindSynced = "synced" // also a handler's: its HasSynced latched
)

// The kinds of the queue's actor "<informer>/queue".
const (
	KindPop          = "pop"           // delta=, obj= or key= deltas=, rv=, n=, init=
	KindCacheAdd     = "cache-add"     // obj=
	KindCacheUpdate  = "cache-update"  // obj=
	KindCacheDelete  = "cache-delete"  // obj=
	KindCacheReplace = "cache-replace" // n= rv=
	KindBuffer       = "buffer"        // to= call= obj= [rv=] [sync=] [init=]
	KindProcessError = "process-error" // err=
)

// The kinds of a handler's actor "<informer>/<handler>".
const (
	KindRegister = "register" // [hosted=] [requested= resync= check=]
	KindJoin     = "join"     // snapshot= [requested= resync= check=]
	KindRemove   = "remove"
	KindOnAdd    = "OnAdd"    // obj= rv= initial=
	KindOnUpdate = "OnUpdate" // obj= rv=old->new [sync=]
	KindOnDelete = "OnDelete" // obj= rv= [tombstone=]
)

// The kinds of the Reflector's actor "<informer>/reflector" (besides the watch events it
// receives, narrated by their type: ADDED, MODIFIED, DELETED, BOOKMARK, ERROR, and EOF).
const (
	KindList              = "LIST"  // its request: rv= [rvm=] [sendInitialEvents=] [labels=] [fields=] [limit=] [continue=]
	KindWatch             = "WATCH" // its request, as LIST's fields [bookmarks=] [timeout=]
	KindResyncCheck       = "resync-check"
	KindListed            = "listed"
	KindListPage          = "list-page"
	KindRelistFresh       = "relist-fresh"
	KindWatching          = "watching"
	KindRewatch           = "rewatch"
	KindRewatchAfter      = "rewatch-after"
	KindRelistAfter       = "relist-after"
	KindSkipped           = "skipped"
	KindStoreError        = "store-error"
	KindResync            = "resync"
	KindResyncSkip        = "resync-skip"
	KindWatchListSynced   = "watch-list-synced"
	KindWatchListRetry    = "watch-list-retry"
	KindWatchListFallback = "watch-list-fallback"
	KindEOF               = "EOF"
)

// The kinds of the network's actor "<informer>/net" (a response reaching the Reflector) and of
// the watch stream's "<informer>/watch".
const (
	KindListOK     = "LIST-ok"     // items= rv= [continue=]
	KindListError  = "LIST-error"  // code= reason= | err=
	KindWatchOK    = "WATCH-ok"    // watch=
	KindWatchError = "WATCH-error" // code= reason= | err=
	KindEnd        = "end"         // reason=: the apiserver ended the stream
	KindDrop       = "drop"        // why= lost=: the informer dropped the stream
)

// The kinds of the steps: the first event of each step names the action or the timer that ran
// it, under its actor. A Script's step is its op's kind (or StepOps for several at one time).
const (
	StepRequest       = "request"        // <informer>/reflector: take and send the Reflector's request
	StepTick          = "tick"           // <informer>/reflector: the informer's next deadline
	StepPull          = "pull"           // <informer>/watch: the next event (or end) of the stream
	StepRecv          = "recv"           // <informer>/net: a message of the stream arrives
	StepListResponse  = "list-response"  // <informer>/net
	StepWatchResponse = "watch-response" // <informer>/net: a WATCH that failed
	StepProcess       = "process"        // <informer>/queue: one turn of the process loop
	StepDeliver       = "deliver"        // <informer>/<handler>: one notification
	StepCallDone      = "done"           // <informer>/<handler>: a slow call ends
	StepAdvance       = "advance"        // apiserver: its next timed work
	StepOp            = "op"             // workload: a Generator's next op
	StepOps           = "ops"            // workload: several scripted ops at one time
)

// The kinds of the events an oracle builds for its reports (package oracle), not narrated by the
// world: a watch the apiserver opened, an event it sent, the end of a checked trace, the
// converged world.
const (
	KindWatchOpened = "watch-opened"
	KindWatchEvent  = "watch-event"
	KindTraceEnd    = "end"
	KindConverged   = "converged"
	// KindCheckConverged is the world's own report event of a failed convergence check.
	KindCheckConverged = "check-converged"
	ActorOracle        = "oracle"
)

// kinds is every kind the world narrates for an informer's actors and for the apiserver's writes
// (a fault op's kind is its op kind's name; a watch event reaching the Reflector its type).
var kinds = []string{KindStart, KindStop, KindSynced, KindPop, KindCacheAdd, KindCacheUpdate, KindCacheDelete,
	KindCacheReplace, KindBuffer, KindProcessError, KindRegister, KindJoin, KindRemove, KindOnAdd, KindOnUpdate,
	KindOnDelete, KindList, KindWatch, KindResyncCheck, KindListed, KindListPage, KindRelistFresh, KindWatching,
	KindRewatch, KindRewatchAfter, KindRelistAfter, KindSkipped, KindStoreError, KindResync, KindResyncSkip,
	KindWatchListSynced, KindWatchListRetry, KindWatchListFallback, KindEOF, KindListOK, KindListError, KindWatchOK,
	KindWatchError, KindEnd, KindDrop, KindAdded, KindModified, KindDeleted, KindWriteError,
	StepRequest, StepTick, StepPull, StepRecv, StepListResponse, StepWatchResponse, StepProcess, StepDeliver,
	StepCallDone, StepAdvance, StepOp, StepOps, StepSync, StepTimer, KindDid}

// Known reports whether kind is one of the kinds (or step kinds) this package declares.
func Known(kind string) bool {
	for _, k := range kinds {
		if k == kind {
			return true
		}
	}
	return false
}

// The apiserver's kinds: its commits (whoever wrote), a refused write, and, under their op kind's
// name (world.OpKind.String: "close-watches", "compact", "lag-replica"...), the faults it was
// told to inject.
const (
	KindAdded      = "ADDED"    // obj=<resource>/<ns>/<name> rv=
	KindModified   = "MODIFIED" // obj= rv=
	KindDeleted    = "DELETED"  // obj= rv=
	KindWriteError = "write-error"
)

// The field keys.
const (
	FieldObj       = "obj"
	FieldWhat      = "what"
	FieldRV        = "rv"
	FieldKey       = "key"
	FieldTo        = "to"
	FieldCall      = "call"
	FieldSync      = "sync"
	FieldInit      = "init"
	FieldInitial   = "initial"
	FieldTombstone = "tombstone"
	FieldN         = "n"
	FieldDue       = "due"
	FieldSnapshot  = "snapshot"
	FieldHosted    = "hosted"
	FieldRequested = "requested"
	FieldResync    = "resync"
	FieldCheck     = "check"
	FieldDelta     = "delta"
	FieldDeltas    = "deltas"
	FieldItems     = "items"
	FieldDelay     = "delay"
	FieldErr       = "err"
	FieldCode      = "code"
	FieldReason    = "reason"
	FieldOp        = "op"
	FieldCause     = "cause"
	FieldWatch     = "watch"
	FieldWhy       = "why"
	FieldLost      = "lost"
)

// The notifications' calls, in a queue's "buffer" event (call=).
const (
	CallAdd    = "add"
	CallUpdate = "update"
	CallDelete = "delete"
)

// Ref is an object reference: "ns/name@rv", or "tomb(ns/name@rv)" for a tombstone.
func Ref(key, rv string, tomb bool) string {
	s := key + "@" + rv
	if tomb {
		return "tomb(" + s + ")"
	}
	return s
}

// ParseRef reads Ref's form (the rv is after the last '@').
func ParseRef(ref string) (key, rv string, tomb bool) {
	if strings.HasPrefix(ref, "tomb(") && strings.HasSuffix(ref, ")") {
		tomb = true
		ref = ref[len("tomb(") : len(ref)-1]
	}
	if i := strings.LastIndexByte(ref, '@'); i >= 0 {
		return ref[:i], ref[i+1:], tomb
	}
	return ref, "", tomb
}

// RVChange is an update's change of resourceVersion: "old->new".
func RVChange(old, new string) string { return old + "->" + new }

// ParseRVChange reads RVChange's form.
func ParseRVChange(v string) (old, new string) {
	old, new, _ = strings.Cut(v, "->")
	return old, new
}

// HandlerList is a list of handler names: "h1,h2", "-" for none.
func HandlerList(names []string) string {
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, ",")
}

// ParseHandlerList reads HandlerList's form (nil for none).
func ParseHandlerList(v string) []string {
	if v == "" || v == "-" {
		return nil
	}
	return strings.Split(v, ",")
}

// CommitRef is the apiserver's name of a written object: "<resource>/<ns>/<name>", or
// "<resource>/<name>" for a cluster-scoped one.
func CommitRef(resource, namespace, name string) string {
	if namespace != "" {
		return resource + "/" + namespace + "/" + name
	}
	return resource + "/" + name
}

// CommitKey is the informer's key ("ns/name" or "name") of CommitRef's object.
func CommitKey(ref string) string {
	_, key, _ := strings.Cut(ref, "/")
	return key
}

// SplitActor splits "inf1/h1" into ("inf1", "h1"); "inf1" gives ("inf1", "").
func SplitActor(actor string) (informer, part string) {
	if i := strings.IndexByte(actor, '/'); i >= 0 {
		return actor[:i], actor[i+1:]
	}
	return actor, ""
}

// IsInformerPart reports whether part names one of an informer's own parts, not a handler.
func IsInformerPart(part string) bool {
	return part == PartReflector || part == PartQueue || part == PartNet || part == PartWatch
}

var handlerKinds = map[string]bool{
	KindRegister: true, KindJoin: true, KindRemove: true, KindSynced: true,
	KindOnAdd: true, KindOnUpdate: true, KindOnDelete: true,
}

// IsHandlerEvent reports whether e is narrated by a handler's actor "<informer>/<handler>".
func IsHandlerEvent(e sim.Event) bool {
	_, part := SplitActor(e.Actor)
	return part != "" && !IsInformerPart(part) && handlerKinds[e.Kind]
}

// IsCommit reports whether e is one of the apiserver's commits.
func IsCommit(e sim.Event) bool {
	return e.Actor == ActorAPIServer && (e.Kind == KindAdded || e.Kind == KindModified || e.Kind == KindDeleted)
}

// Str returns the value of e's field key.
func Str(e sim.Event, key string) (string, bool) {
	for _, f := range e.Fields {
		if f.Key == key {
			return f.Value, true
		}
	}
	return "", false
}

// Bool reads e's boolean field key: false when absent.
func Bool(e sim.Event, key string) bool {
	v, _ := Str(e, key)
	return v == "true"
}

// Int reads e's integer field key: -1 when absent or not an integer.
func Int(e sim.Event, key string) int {
	v, _ := Str(e, key)
	n, err := strconv.Atoi(v)
	if err != nil {
		return -1
	}
	return n
}

// Dur reads e's duration field key (Go syntax, "1.5s"): 0 when absent, -1 when unreadable.
func Dur(e sim.Event, key string) time.Duration {
	v, ok := Str(e, key)
	if !ok {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return -1
	}
	return d
}

// Note is one notification, as the queue buffered it for handlers or as a handler was given it.
// Its String form compares the two: "add ns/a@2 init", "update ns/a 2->3", "delete ns/a@4 tomb".
type Note struct {
	Call    string // CallAdd, CallUpdate or CallDelete
	Key     string
	RV      string // the new (or deleted) object's resourceVersion
	OldRV   string // an update's old resourceVersion
	Initial bool   // an add's isInInitialList
	Tomb    bool   // a delete's DeletedFinalStateUnknown
	Sync    bool   // an update with equal resourceVersions
}

func (n Note) String() string {
	switch n.Call {
	case CallAdd:
		if n.Initial {
			return "add " + n.Key + "@" + n.RV + " init"
		}
		return "add " + n.Key + "@" + n.RV
	case CallUpdate:
		return "update " + n.Key + " " + RVChange(n.OldRV, n.RV)
	case CallDelete:
		if n.Tomb {
			return "delete " + n.Key + "@" + n.RV + " tomb"
		}
		return "delete " + n.Key + "@" + n.RV
	}
	return n.Call + " " + n.Key
}

// Buffered reads a queue's KindBuffer event: the notification, and the handlers it was buffered
// for.
func Buffered(e sim.Event) (Note, []string) {
	n := Note{}
	n.Call, _ = Str(e, FieldCall)
	obj, _ := Str(e, FieldObj)
	if n.Call == CallUpdate {
		n.Key = obj
		rv, _ := Str(e, FieldRV)
		n.OldRV, n.RV = ParseRVChange(rv)
	} else {
		n.Key, n.RV, n.Tomb = ParseRef(obj)
	}
	n.Initial = Bool(e, FieldInit)
	n.Sync = Bool(e, FieldSync)
	to, _ := Str(e, FieldTo)
	return n, ParseHandlerList(to)
}

// Delivered reads a handler's KindOnAdd, KindOnUpdate or KindOnDelete event.
func Delivered(e sim.Event) Note {
	n := Note{}
	n.Key, _ = Str(e, FieldObj)
	rv, _ := Str(e, FieldRV)
	switch e.Kind {
	case KindOnAdd:
		n.Call, n.RV, n.Initial = CallAdd, rv, Bool(e, FieldInitial)
	case KindOnUpdate:
		n.Call = CallUpdate
		n.OldRV, n.RV = ParseRVChange(rv)
		n.Sync = n.OldRV == n.RV
	case KindOnDelete:
		n.Call, n.RV, n.Tomb = CallDelete, rv, Bool(e, FieldTombstone)
	}
	return n
}

// CacheWrite reads a queue's cache-add, cache-update or cache-delete event.
func CacheWrite(e sim.Event) (key, rv string, tomb bool) {
	obj, _ := Str(e, FieldObj)
	return ParseRef(obj)
}

// Commit reads one of the apiserver's commits (IsCommit): the informer's key of the object
// written, and the revision.
func Commit(e sim.Event) (key string, rev uint64, ok bool) {
	obj, _ := Str(e, FieldObj)
	v, _ := Str(e, FieldRV)
	rev, err := strconv.ParseUint(v, 10, 64)
	return CommitKey(obj), rev, err == nil
}

// ResyncPeriods reads a registration's resync periods (KindRegister, KindJoin): the one asked
// for (or the informer's default), the effective one, and the informer's check period after it.
func ResyncPeriods(e sim.Event) (requested, effective, check time.Duration) {
	return Dur(e, FieldRequested), Dur(e, FieldResync), Dur(e, FieldCheck)
}
