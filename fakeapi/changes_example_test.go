package fakeapi_test

import (
	"context"
	"fmt"

	"github.com/informersim/informersim/fakeapi"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A consumer that keeps what it read asks only for what changed since: the first read is the
// whole list, the next the keys written since, each once with its state now (b, created and
// changed, is one ADDED; a, deleted, a DELETED). After a compaction past the revision it holds,
// the answer is the whole list again.
func ExampleListerWatcher_ListChangesLent() {
	// Watch caches keeping two events of history, so that a compaction trims the server's log.
	srv, err := fakeapi.New(fakeapi.Config{MaxCacheHistoryEvents: 2})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	cms := srv.Resource(configmaps).Namespace("default")
	_, _ = cms.Create(ctx, configMap("a"), metav1.CreateOptions{})
	lw := srv.ListerWatcher(configmaps, "")
	lw.Name = "my-view"

	first, _ := lw.ListChangesLent(metav1.ListOptions{}, 0)
	fmt.Println("at", first.Revision, "full", first.Full, "items", len(first.Items))

	b, _ := cms.Create(ctx, configMap("b"), metav1.CreateOptions{})
	b.SetLabels(map[string]string{"x": "1"})
	_, _ = cms.Update(ctx, b, metav1.UpdateOptions{})
	_ = cms.Delete(ctx, "a", metav1.DeleteOptions{})
	next, _ := lw.ListChangesLent(metav1.ListOptions{}, first.Revision)
	fmt.Println("at", next.Revision, "full", next.Full)
	for _, c := range next.Changes {
		if c.Object.Object == nil {
			fmt.Println(" ", c.Type, c.Name)
			continue
		}
		fmt.Println(" ", c.Type, c.Name, c.Object.GetResourceVersion())
	}

	_, _ = cms.Create(ctx, configMap("c"), metav1.CreateOptions{})
	_, _ = cms.Create(ctx, configMap("d"), metav1.CreateOptions{})
	_ = srv.Faults().Compact(srv.Revision())
	again, _ := lw.ListChangesLent(metav1.ListOptions{}, next.Revision)
	fmt.Println("at", again.Revision, "full", again.Full, "items", len(again.Items))
	// Output:
	// at 2 full true items 1
	// at 5 full false
	//   ADDED b 4
	//   DELETED a
	// at 7 full true items 3
}
