package informer

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// client-go TestCache (informer.md §8.2): Add overwrites, Update inserts, Delete of an absent key
// is fine, Get/GetByKey, and List/ListKeys sorted by key (our determinism rule, style.md 9).
func TestStoreCRUD(t *testing.T) {
	s := NewStore(MetaNamespaceKeyFunc)
	mustStore(t, s.Add(dataObj("ns", "b", "1")))
	mustStore(t, s.Add(dataObj("ns", "a", "2")))
	mustStore(t, s.Add(dataObj("ns", "b", "3")))      // overwrite
	mustStore(t, s.Update(dataObj("", "c", "4")))     // insert
	mustStore(t, s.Delete(dataObj("ns", "zzz", "5"))) // absent: no error
	if diff := cmp.Diff([]string{"c@4", "ns/a@2", "ns/b@3"}, dataDescribeAll(s.List())); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"c", "ns/a", "ns/b"}, s.ListKeys()); diff != "" {
		t.Errorf("ListKeys (-want +got):\n%s", diff)
	}
	got, exists, err := s.Get(dataObj("ns", "b", ""))
	if err != nil || !exists || dataDescribe(got) != "ns/b@3" {
		t.Errorf("Get(ns/b) = %s, %v, %v", dataDescribe(got), exists, err)
	}
	mustStore(t, s.Delete(dataObj("ns", "b", "6")))
	if _, exists, err := s.GetByKey("ns/b"); exists || err != nil {
		t.Errorf("GetByKey(ns/b) after Delete: exists %v, err %v", exists, err)
	}
	if err := s.Resync(); err != nil {
		t.Errorf("Resync: %v", err)
	}
}

// client-go TestCache Replace part (informer.md §8.2): Replace swaps the whole contents; a key
// error leaves the store untouched; duplicate keys keep the last entry (§16).
func TestStoreReplace(t *testing.T) {
	s := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	mustStore(t, s.Add(dataObj("old", "x", "1")))
	err := s.Replace([]any{dataObj("ns", "a", "2"), dataNoMeta{"bad"}}, "9")
	if err == nil {
		t.Fatalf("Replace with a key error succeeded")
	}
	if diff := cmp.Diff([]string{"old/x@1"}, dataDescribeAll(s.List())); diff != "" {
		t.Errorf("after failed Replace (-want +got):\n%s", diff)
	}
	mustStore(t, s.Replace([]any{dataObj("ns", "a", "2"), dataObj("ns", "a", "3"), dataObj("ns2", "b", "4")}, "10"))
	if diff := cmp.Diff([]string{"ns/a@3", "ns2/b@4"}, dataDescribeAll(s.List())); diff != "" {
		t.Errorf("after Replace (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ns", "ns2"}, s.ListIndexFuncValues(NamespaceIndex)); diff != "" {
		t.Errorf("indices after Replace must be rebuilt (-want +got):\n%s", diff)
	}
	if got := s.LastStoreSyncResourceVersion(); got != "10" {
		t.Errorf("store RV after Replace = %q, want the list RV 10", got)
	}
}

// client-go TestThreadSafeStoreRV (informer.md §8.2): the store RV is the last written one, not the
// maximum; tombstones and non-meta objects leave it unchanged; Bookmark sets it.
func TestStoreResourceVersionTracking(t *testing.T) {
	s := NewStore(DeletionHandlingMetaNamespaceKeyFunc)
	step := func(what string, f func(), want string) {
		t.Helper()
		f()
		if got := s.LastStoreSyncResourceVersion(); got != want {
			t.Errorf("after %s: store RV = %q, want %q", what, got, want)
		}
	}
	step("add@5", func() { mustStore(t, s.Add(dataObj("ns", "a", "5"))) }, "5")
	step("update@3 (lower)", func() { mustStore(t, s.Update(dataObj("ns", "a", "3"))) }, "3")
	step("delete@7", func() { mustStore(t, s.Delete(dataObj("ns", "a", "7"))) }, "7")
	step("tombstone delete", func() { mustStore(t, s.Delete(DeletedFinalStateUnknown{Key: "ns/a", Obj: dataObj("ns", "a", "8")})) }, "7")
	step("bookmark 12", func() { s.Bookmark("12") }, "12")
	step("replace at 20", func() { mustStore(t, s.Replace(nil, "20")) }, "20")
	step("add of a metadata-less explicit key", func() { mustStore(t, s.Add(ExplicitKey("k"))) }, "20")
}

// client-go TestCacheTransactionShouldIndexErrors (informer.md §8.2, §6.4): a transaction with a
// key error applies the others, reports the failure, lists only successful indices; the store RV
// is that of the last applied object.
func TestStoreTransaction(t *testing.T) {
	s := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	mustStore(t, s.Add(dataObj("ns", "gone", "1")))
	ts := s.(TransactionStore)
	terr := ts.Transaction(
		Transaction{Type: TransactionTypeAdd, Object: dataObj("ns", "a", "2")},
		Transaction{Type: TransactionTypeUpdate, Object: dataNoMeta{"bad"}},
		Transaction{Type: TransactionTypeDelete, Object: dataObj("ns", "gone", "3")},
		Transaction{Type: TransactionTypeAdd, Object: dataObj("other", "b", "4")},
	)
	if terr == nil {
		t.Fatalf("Transaction with a key error returned nil")
	}
	if diff := cmp.Diff([]int{0, 2, 3}, terr.SuccessfulIndices); diff != "" {
		t.Errorf("SuccessfulIndices (-want +got):\n%s", diff)
	}
	if terr.TotalTransactions != 4 || len(terr.Errors) != 1 {
		t.Errorf("TransactionError = %+v", terr)
	}
	if !strings.Contains(terr.Error(), "(1/4)") {
		t.Errorf("error text %q does not report 1 of 4 failed", terr.Error())
	}
	if diff := cmp.Diff([]string{"ns/a@2", "other/b@4"}, dataDescribeAll(s.List())); diff != "" {
		t.Errorf("contents (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ns", "other"}, s.ListIndexFuncValues(NamespaceIndex)); diff != "" {
		t.Errorf("index values (-want +got):\n%s", diff)
	}
	if got := s.LastStoreSyncResourceVersion(); got != "4" {
		t.Errorf("store RV = %q, want 4", got)
	}
	if terr := ts.Transaction(Transaction{Type: TransactionTypeAdd, Object: dataObj("ns", "c", "5")}); terr != nil {
		t.Errorf("clean Transaction = %v, want nil", terr)
	}
}

// informer.md §8.2 thread safety: readers on other goroutines while one writer writes; run with
// -race. (The store is the one informer component with its own lock.)
func TestStoreConcurrentReaders(t *testing.T) {
	s := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = s.List()
				_, _ = s.ByIndex(NamespaceIndex, "ns")
				_, _, _ = s.GetByKey("ns/o1")
			}
		}()
	}
	for i := 0; i < 500; i++ {
		name := fmt.Sprintf("o%d", i%10)
		mustStore(t, s.Update(dataObj("ns", name, fmt.Sprint(i))))
		if i%7 == 0 {
			mustStore(t, s.Delete(dataObj("ns", name, fmt.Sprint(i))))
		}
	}
	close(stop)
	wg.Wait()
}

func mustStore(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Goal: Generation changes with every write that may change the cache's contents, through each
// write path (the Store methods and the keyed forms the process loop uses), and with nothing
// else: a reader that reuses a lookup while it is unchanged never reuses a stale one.
func TestStoreGeneration(t *testing.T) {
	c := newCache(MetaNamespaceKeyFunc, Indexers{})
	last := c.Generation()
	step := func(what string, changes bool, write func()) {
		t.Helper()
		write()
		got := c.Generation()
		if changed := got != last; changed != changes {
			t.Errorf("%s: generation %d -> %d, want changed=%v", what, last, got, changes)
		}
		last = got
	}
	a1, a2 := dataObj("ns", "a", "1"), dataObj("ns", "a", "2")
	step("Add", true, func() { mustStore(t, c.Add(a1)) })
	step("Update", true, func() { mustStore(t, c.Update(a2)) })
	step("Update with the same object", true, func() { mustStore(t, c.Update(a2)) })
	step("Get, GetByKey, List, ListKeys", false, func() {
		_, _, _ = c.Get(a1)
		_, _, _ = c.GetByKey("ns/a")
		_ = c.List()
		_ = c.ListKeys()
	})
	step("Bookmark", false, func() { c.Bookmark("9") })
	step("Resync", false, func() { mustStore(t, c.Resync()) })
	step("Delete", true, func() { mustStore(t, c.Delete(a2)) })
	step("Delete of an absent key", false, func() { mustStore(t, c.Delete(a2)) })
	step("Replace", true, func() { mustStore(t, c.Replace([]any{a1}, "5")) })
	step("Transaction", true, func() {
		if err := c.Transaction(Transaction{Type: TransactionTypeUpdate, Object: a2}); err != nil {
			t.Fatal(err)
		}
	})
	step("setKeyed", true, func() { c.setKeyed("ns/a", a1, readRV(a1)) })
	step("deleteKeyed", true, func() { c.deleteKeyed("ns/a", a1, readRV(a1)) })
	step("transactionKeyed", true, func() {
		c.transactionKeyed([]Transaction{{Type: TransactionTypeAdd, Object: a2}}, []string{"ns/a"}, readRV(a2))
	})
	step("replaceKeyed", true, func() { c.replaceKeyed([]any{a1}, []string{"ns/a"}, "6") })
}
