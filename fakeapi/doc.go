// Package fakeapi is a faithful, deterministic, in-memory kube-apiserver for informer
// simulation: etcd-like resourceVersions, an event log with a compaction floor, watch caches
// per simulated apiserver, LIST and WATCH with the server's resourceVersion semantics,
// bookmarks, watch-list, selector transitions, write semantics and fault hooks. The behaviour
// follows the project's spec, fakeapi.md; comments cite its sections (§3.1, MH-4, ...).
//
// # Contract
//
// Storage (fakeapi.md §2, MH-1..MH-3, MH-10, MH-11):
//   - One global revision, shared by every resource, starting at 1 (so even an empty store has a
//     list RV). Each effective create, update or delete consumes exactly one revision;
//     [Faults.BurnRevisions] consumes revisions without writes. A no-op update (identical
//     content) consumes none and emits nothing.
//   - resourceVersions are decimal strings without leading zeros, accepted by apimachinery's
//     resourceversion.CompareResourceVersion. DELETED events carry the deletion revision.
//   - Every version of every key is kept (MVCC) until compaction: [Faults.Compact] and the
//     periodic compactor make revisions below the floor unreadable (410).
//
// Reads (§3, §4): LIST follows the dispatch table of §3.1 (RV unset, "0", N; resourceVersionMatch
// NotOlderThan and Exact; limit and continue tokens bound to a snapshot; 410 with a fresh token,
// 504 too-large with the ResourceVersionTooLarge cause, 400 and 422 for bad options, validated
// by apimachinery's own ValidateListOptions). WATCH follows §4.1: start points for RV ""/"0"/N,
// sendInitialEvents with the k8s.io/initial-events-end bookmark, ordinary bookmarks only with
// allowWatchBookmarks, label and field selector transitions (§4.4), namespace scoping, and the
// endings of §4.6 (deadline, Stop, 410 ERROR, 504 ERROR, reinit, slow consumer, faults). Within
// one watch, revisions strictly increase after the initial events, and a re-watch from any
// delivered RV (event or bookmark) continues without gap or duplicate.
//
// Replicas (MH-12, §3.4): each simulated apiserver has a watch cache at its own revision. A
// cache follows the store immediately by default; it can lag by a duration, be frozen, stepped,
// reinitialised (closing its watches and dropping its history) or marked not ready (429). LIST
// RV="0" and watches read the routed replica's cache; consistent reads read the store.
//
// Determinism (MH-13): the core is passive. It starts no goroutine, owns no timer, reads time
// only from Config.Clock and randomness only from Config.Rand, and never lets map order reach a
// result (lists sort by namespace then name; watchers are served in ID order). The one goroutine
// is the channel adapter behind [Watcher.ResultChan], for concurrent consumers such as client-go.
//
// # Usage
//
// Writes and reads go through [Server.Resource], whose [ResourceClient] has the method set of
// client-go's dynamic.ResourceInterface (Create, Update, UpdateStatus, Delete, DeleteCollection,
// Get, List, Watch, Patch, Apply, ApplyStatus). Its Namespace method returns *ResourceClient, not
// dynamic.ResourceInterface, because this module cannot import client-go; Go's type identity
// therefore needs a one-method wrapper to make *Server a dynamic.Interface: clientgo.Dynamic, in the
// nested module clientgo/.
//
// A simulator drives watches by pulling:
//
//	w, err := srv.OpenWatch(gvr, ns, opts)   // no goroutine
//	for {
//		ev, ok := w.Next()                     // one event at a time, when the driver decides
//		...
//		at, _ := srv.NextDeadline()            // schedule the next timed action
//		clock.SetTime(at); srv.Advance()       // bookmarks, deadlines, compaction, cache lag
//	}
//
// A driver that asks [Watcher.Ready] before deciding can ask only when the answer may have
// changed: [Watcher.OnReady] installs a callback the server calls whenever an event joins the
// buffer or the watch closes, and Ready turns false only through Next. Likewise
// [Server.OnStateChange] observers hear of every section that may change what NextDeadline
// answers, so a driver can keep that answer until one does or the clock moves.
//
// client-go drives it through [Server.ListerWatcher], which has the methods of
// cache.ListerWatcherWithContext and IsWatchListSemanticsUnSupported (switchable, so both the
// watch-list start-up and classic list+watch can be exercised). Its watches are *Watcher values
// consumed through ResultChan; the adapter goroutine calls Advance lazily when the clock is a
// clock.Clock, and stops on Stop or when the context is done.
//
// The Server's own methods are the store and its clients ([Server.Resource],
// [Server.ListerWatcher], [Server.OpenWatch], [Server.Snapshot]), its clock ([Server.NextDeadline],
// [Server.Advance]), what it is ([Server.Config], [Server.Revision], [Server.CompactedRevision],
// [Server.CheckSelectors]) and what it tells observers ([Server.OnCommit], [Server.OnRecord],
// [Server.OnStateChange]). What it serves is the built-in table ([BuiltinResources],
// docs/builtin-kinds.md) and Config.Resources, changed at run time by [Server.AddResource],
// [Server.UpdateResource] and [Server.RemoveResource], as CustomResourceDefinitions change what
// kube-apiserver serves (the REST front, fakeapi/rest, calls them). Everything that disturbs it
// is grouped by what it acts on:
//   - [Server.Faults] returns the faults, each an explicit call: [Faults.CloseWatch] (clean or
//     with an ERROR event, see [NewWatchError]), [Faults.CloseSlowConsumer],
//     [Faults.CloseAllWatches], [Faults.FailNext] and [Faults.FailNextFor] (including
//     [NewConnectionRefused]), [Faults.Compact], [Faults.BurnRevisions],
//     [Faults.TriggerBookmarks], [Faults.SetWatchListQuirk] (F-9) and [Faults.DuplicateEvent]
//     (F-11, invalid on purpose); [Faults.Watchers] lists the watches they can target.
//   - [Server.Replicas] returns the simulated apiservers: [Replicas.Freeze], [Replicas.Step],
//     [Replicas.Resume], [Replicas.SetLag], [Replicas.Reinit], [Replicas.SetReady],
//     [Replicas.RouteNext], and [Replicas.Len] and [Replicas.Revision] to read them.
//   - [Server.Lending] returns the checks of lent objects (see "Ownership of objects").
//
// Every request and every delivered watch event (and watch close) is recorded
// ([Server.Requests], [Server.WatchEvents]) and can be observed as it happens
// ([Server.OnRecord]).
//
// # Errors
//
// Every operating error the server returns is an *apierrors.StatusError (or, for injected
// transport faults, the error given to FailNext), because client-go type-asserts it and reads its
// Status. There are no errors.Is sentinels (style rule 16): StatusError has no Is method, so a
// sentinel would only match if the server returned that very value, losing the name, message and
// details, and a wrapper type would stop being a *StatusError. Branch with apimachinery's
// predicates instead: apierrors.IsNotFound, IsAlreadyExists, IsConflict, IsResourceExpired,
// IsTimeout with HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge), or ReasonForError.
//
// # Implementation notes
//
// One mutex guards the whole server; methods ending in _locked expect it held. Objects are
// stored as private, normalised unstructured maps (see "Ownership of objects" below). The log
// holds one entry per write with the previous state, so
// selector transitions need no extra reads. A cache's history is the part of the log after its
// historyFrom; compaction raises historyFrom too (the fake's caches do not outlive etcd
// compaction), and MaxCacheHistoryEvents bounds it. Log entries and versions that no reader can
// reach are trimmed; MaxLogEntries forces compaction of the oldest quarter when the log is full.
// The log is kept in fixed-size chunks (eventLog), so neither appending nor trimming ever copies
// it, and records likewise (recordLog).
//
// # Ownership of objects
//
// The rule every change to this package must keep: an object the server has committed is
// immutable, and no value that leaves the package aliases it.
//   - Committed objects (store versions, log entries, their previous states, objects queued on
//     watches, snapshots) are never changed after commit. Because of that they may share values:
//     a new version reuses the maps and lists of the version it replaces wherever they are equal
//     (normalizeObject, shareUnchanged), a DELETED event, a selector-leaving DELETED, a /status
//     write and a deletion mark share all but their top-level and metadata maps with the stored
//     state (withOwnMeta, copy on write), and one object sits in the store, the log and every
//     watch queue at once. This is the fake's
//     counterpart of the watch cache sharing one serialised form between watchers.
//   - Code that needs a changed object builds a new one: a fresh top-level map (and a fresh
//     metadata map when metadata changes) holding the shared values, never a write into a
//     shared map. Only maps the server has just built for the write in progress (the normalised
//     request, withOwnMeta's two maps) may be written to, and only through setField and the
//     setters built on it (setMeta, ...): a plain assignment into a full small Go map grows it
//     into a table, which every later version would keep.
//   - Everything handed to a caller is the caller's own deep copy: results of writes, Get, List
//     items, watch events (Next and ResultChan), dry runs; a bookmark's object, built for that one
//     event and referred to by nothing else, is handed out as it is. Objects callers pass in are
//     copied (normalised) before use and never retained. So an informer's cache or a user's
//     handler may change what it received without reaching the server's state; the cost is one
//     copy per watcher per event, as a real client decodes its own copy. Any new read path (a
//     snapshot, an HTTP front) must hand out copies too, made by copyObject. The internal write
//     paths return the server's object and the public methods copy it; what only reads an answer
//     copies nothing: Delete and DeleteCollection read the deleted object's resourceVersion, and
//     CreateRV and UpdateRV, for callers that discard the written object, return only that.
//     TestConsumersNeverReachStoredObjects checks the rule by scribbling over everything a
//     consumer receives, TestCallersKeepWhatTheyPassIn over everything callers pass in.
//   - The one exception on the way in is an object handed over (CreateHandedOver,
//     Mutation.HandOver): a caller that built the object for this write alone and keeps no
//     reference to it, as the REST front with the object it decoded from a request body, gives
//     it to the server with everything in it. The server then adopts its maps and lists, checked
//     and converted in place, instead of normalising a copy (adoptObject; the same content and
//     the same sharing with the stored object as normalizeObject, TestAdoptObjectIsNormalizeObject),
//     and never writes into a metadata map the object shares with a stored one.
//   - The one exception is lending, which a consumer asks for explicitly
//     (ListerWatcher.ListLent and OpenWatchLent; the world's own informers use them; and
//     Mutation.LendTo, the REST front's updates): list items, watch events, a Mutation's live
//     object and answer then share the committed objects, read-only, as client-go's informer
//     shares one object between its cache and every handler. The server cannot enforce
//     read-only, so it checks: it fingerprints each object when it first lends it and compares
//     the fingerprint before a write acts on the object, before it forgets the record, and in
//     Lending.Check and Lending.CheckObject, and reports the first change as a MutationError
//     (Lending.Mutation; lend.go). A change cannot be undone,
//     so a host ends the run that made it. TestLentObjectChangesAreNoticed plants each kind.
//
// Simplifications, each documented where it is implemented: a cache's wait for a NotOlderThan
// LIST is modelled by moving the cache forward at once if it would have caught up within
// ResourceVersionWait (watches wait for real, on the clock); a cache is per replica, not per
// resource; strategic merge patch and server-side apply answer 405; the non-cached etcd watch
// path (mid-stream 410) is not modelled; /status writes copy only .status; GET ignores
// GetOptions.ResourceVersion and reads the latest revision.
package fakeapi
