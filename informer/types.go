package informer

import (
	"errors"
	"fmt"
)

// This file holds the vocabulary shared by every informer component: the delta and
// notification types, keys, and the small interfaces the components consume. Names follow
// client-go's tools/cache so that a reader who knows client-go recognises each one
// (informer.md §5.1, §6.2, §8).

// DeltaType says what happened to an object between two states of the queue (informer.md §5.1).
// The values are client-go's strings, because they appear in traces and people grep for them.
type DeltaType string

// The delta types. ReplacedAll, SyncAll and Bookmark exist only in the atomic RealFIFO mode
// (client-go's AtomicFIFO gate, on by default in v0.37).
const (
	Added       DeltaType = "Added"
	Updated     DeltaType = "Updated"
	Deleted     DeltaType = "Deleted"
	Replaced    DeltaType = "Replaced"
	Sync        DeltaType = "Sync"
	ReplacedAll DeltaType = "ReplacedAll"
	SyncAll     DeltaType = "SyncAll"
	Bookmark    DeltaType = "Bookmark"
)

// Delta is one change to one object: the object's state after the change, or for a deletion its
// last known state, possibly a [DeletedFinalStateUnknown]. For ReplacedAll the Object is a
// [ReplacedAllInfo], for Bookmark a [BookmarkInfo], for SyncAll nil.
type Delta struct {
	Type   DeltaType
	Object any
}

// Deltas is a list of changes to one object, oldest first.
type Deltas []Delta

// Oldest returns the oldest delta, or nil if there is none.
func (d Deltas) Oldest() *Delta {
	if len(d) == 0 {
		return nil
	}
	return &d[0]
}

// Newest returns the newest delta, or nil if there is none.
func (d Deltas) Newest() *Delta {
	if len(d) == 0 {
		return nil
	}
	return &d[len(d)-1]
}

// ReplacedAllInfo is the payload of a ReplacedAll delta: a whole relist, applied atomically
// (informer.md §5.3, §6.3).
type ReplacedAllInfo struct {
	ResourceVersion string
	Objects         []any
}

// BookmarkInfo is the payload of a Bookmark delta (informer.md §5.3, §6.2).
type BookmarkInfo struct {
	ResourceVersion string
}

// DeletedFinalStateUnknown is a tombstone: the informer learnt of a deletion from a relist, not
// from a watch event, so it never saw the object's final state. Obj is the last state the
// informer knew, and may be nil (informer.md §5.1, §13 rule 9).
type DeletedFinalStateUnknown struct {
	Key string
	Obj any
}

// KeyFunc computes an object's key. Implementations must be deterministic.
type KeyFunc func(obj any) (string, error)

// KeyError reports that an object's key could not be computed (informer.md §8.1).
type KeyError struct {
	Obj any
	Err error
}

func (k KeyError) Error() string {
	return fmt.Sprintf("couldn't create key for object %+v: %v", k.Obj, k.Err)
}

// Unwrap returns the key function's error.
func (k KeyError) Unwrap() error { return k.Err }

// ExplicitKey is an object that is its own key, for callers that already have the key.
type ExplicitKey string

// TransformFunc rewrites an object before it enters the queue (informer.md §1.5). It must be
// idempotent: in watch-list mode the initial objects are transformed twice.
type TransformFunc func(any) (any, error)

// ResourceEventHandler receives an informer's notifications (informer.md §6.2, §10).
// isInInitialList is true for adds that are part of the informer's initial list, or of the cache
// snapshot replayed to a handler that joined late (§3).
type ResourceEventHandler interface {
	OnAdd(obj any, isInInitialList bool)
	OnUpdate(oldObj, newObj any)
	OnDelete(obj any)
}

// Store is a keyed collection of objects (informer.md §8.2). The informer's cache and both
// queues implement it.
type Store interface {
	Add(obj any) error
	Update(obj any) error
	Delete(obj any) error
	List() []any
	ListKeys() []string
	Get(obj any) (item any, exists bool, err error)
	GetByKey(key string) (item any, exists bool, err error)
	// Replace swaps the whole contents for list, recorded at resourceVersion.
	Replace(list []any, resourceVersion string) error
	Resync() error
	// LastStoreSyncResourceVersion is the resourceVersion last written to the store
	// ("last written", not the maximum; informer.md §8.2).
	LastStoreSyncResourceVersion() string
	// Bookmark records a resourceVersion without changing any object.
	Bookmark(resourceVersion string)
}

// IndexFunc computes the index values of an object.
type IndexFunc func(obj any) ([]string, error)

// Indexers maps an index name to its IndexFunc.
type Indexers map[string]IndexFunc

// Indexer is a Store with indices (informer.md §8.3).
type Indexer interface {
	Store
	Index(indexName string, obj any) ([]any, error)
	IndexKeys(indexName, indexedValue string) ([]string, error)
	ListIndexFuncValues(indexName string) []string
	ByIndex(indexName, indexedValue string) ([]any, error)
	GetIndexers() Indexers
	AddIndexers(newIndexers Indexers) error
}

// TransactionType says what one [Transaction] does.
type TransactionType string

// The transaction types.
const (
	TransactionTypeAdd    TransactionType = "Add"
	TransactionTypeUpdate TransactionType = "Update"
	TransactionTypeDelete TransactionType = "Delete"
)

// Transaction is one write in a batch applied under one lock (informer.md §6.4, §8.2).
type Transaction struct {
	Object any
	Type   TransactionType
}

// TransactionStore applies several writes at once; batch processing uses it.
type TransactionStore interface {
	Transaction(txns ...Transaction) *TransactionError
}

// TransactionError reports which transactions of a batch failed.
type TransactionError struct {
	SuccessfulIndices []int
	TotalTransactions int
	Errors            []error
}

func (t *TransactionError) Error() string {
	return fmt.Sprintf("failed to execute (%d/%d) transactions failed due to: %v",
		t.TotalTransactions-len(t.SuccessfulIndices), t.TotalTransactions, t.Errors)
}

// PopProcessFunc processes what one Pop removed from a queue: a [Deltas].
type PopProcessFunc func(obj any, isInInitialList bool) error

// ProcessBatchFunc processes a batch of deltas with distinct keys (informer.md §5.3 PopBatch).
type ProcessBatchFunc func(deltas []Delta, isInInitialList bool) error

// ErrFIFOClosed is returned by Pop on a closed, empty queue. The message is client-go's.
var ErrFIFOClosed = errors.New("DeltaFIFO: manipulating with closed queue")

// ErrQueueEmpty is returned by Pop and PopBatch on an open, empty queue. client-go's Pop blocks
// instead; ours never blocks, so the step driver asks Len first and the goroutine driver waits on
// its own condition variable.
var ErrQueueEmpty = errors.New("informer: queue is empty")

// Queue is what the Reflector writes to and the process loop pops from: RealFIFO or DeltaFIFO
// (informer.md §5). Unlike client-go's, it is a step-driven core: no lock, no blocking. Pop and
// PopBatch process at most one unit of work and return [ErrQueueEmpty] when there is none.
type Queue interface {
	Add(obj any) error
	Update(obj any) error
	Delete(obj any) error
	Replace(list []any, resourceVersion string) error
	Resync() error
	// Len is the number of items Pop can still hand out.
	Len() int
	Pop(process PopProcessFunc) (any, error)
	// HasSynced reports whether the initial population has been popped and processed (sticky);
	// DeltaFIFO counts an item when it is popped, before it is processed (informer.md §5.2).
	HasSynced() bool
	Close()
}

// BatchQueue is a Queue that can pop several items at once (RealFIFO; informer.md §5.3).
type BatchQueue interface {
	Queue
	PopBatch(processBatch ProcessBatchFunc, processSingle PopProcessFunc) error
}

// BookmarkQueue is a Queue that records bookmarks as items (atomic RealFIFO; informer.md §5.3).
type BookmarkQueue interface {
	Bookmark(resourceVersion string) error
}
