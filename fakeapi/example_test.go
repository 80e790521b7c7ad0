package fakeapi_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/informersim/informersim/fakeapi"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	testclock "k8s.io/utils/clock/testing"
)

var configmaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func configMap(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"k": "v"}}}
	u.SetName(name)
	return u
}

func newServer() (*fakeapi.Server, *testclock.FakeClock) {
	clk := testclock.NewFakeClock(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))
	srv, err := fakeapi.New(fakeapi.Config{Clock: clk})
	if err != nil {
		panic(err)
	}
	return srv, clk
}

func show(ev watch.Event) {
	switch o := ev.Object.(type) {
	case *unstructured.Unstructured:
		if ev.Type == watch.Bookmark {
			fmt.Println(ev.Type, o.GetResourceVersion(), o.GetAnnotations())
			return
		}
		fmt.Println(ev.Type, o.GetName(), o.GetResourceVersion())
	case *metav1.Status:
		fmt.Println(ev.Type, o.Code, o.Reason)
	}
}

// Create objects, then list them: every write takes the next global revision, and the list RV is
// the revision of the snapshot.
func ExampleResourceClient_List() {
	srv, _ := newServer()
	ctx := context.Background()
	cms := srv.Resource(configmaps).Namespace("default")
	for _, name := range []string{"b", "a"} {
		obj, _ := cms.Create(ctx, configMap(name), metav1.CreateOptions{})
		fmt.Println("created", obj.GetName(), "at", obj.GetResourceVersion())
	}
	list, _ := cms.List(ctx, metav1.ListOptions{})
	for _, it := range list.Items {
		fmt.Println("item", it.GetName(), it.GetResourceVersion())
	}
	fmt.Println("list RV", list.GetResourceVersion())
	// Output:
	// created b at 2
	// created a at 3
	// item a 3
	// item b 2
	// list RV 3
}

// Open a pull-based watch and take events one at a time: nothing is delivered until the driver
// asks, so a simulator decides the order and timing.
func ExampleServer_OpenWatch() {
	srv, _ := newServer()
	ctx := context.Background()
	cms := srv.Resource(configmaps).Namespace("default")
	cms.Create(ctx, configMap("a"), metav1.CreateOptions{})

	// A watch-list start: the current state, the annotated end bookmark, then changes.
	w, _ := srv.OpenWatch(configmaps, "default", metav1.ListOptions{
		SendInitialEvents:    ptr(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks:  true,
	})
	cms.Create(ctx, configMap("b"), metav1.CreateOptions{})
	cms.Delete(ctx, "a", metav1.DeleteOptions{})
	fmt.Println("pending", w.Pending())
	for ev, ok := w.Next(); ok; ev, ok = w.Next() {
		show(ev)
	}
	w.Stop()
	fmt.Println("done", w.Done(), w.CloseReason())
	// Output:
	// pending 4
	// ADDED a 2
	// BOOKMARK 2 map[k8s.io/initial-events-end:true]
	// ADDED b 3
	// DELETED a 4
	// done true Stopped
}

// Compaction makes old revisions unreadable: a watch from before the floor gets one ERROR 410
// event and ends, and an exact list gets 410 directly.
func ExampleFaults_Compact() {
	srv, _ := newServer()
	ctx := context.Background()
	cms := srv.Resource(configmaps).Namespace("default")
	for _, name := range []string{"a", "b", "c"} {
		cms.Create(ctx, configMap(name), metav1.CreateOptions{})
	}
	srv.Faults().Compact(4)
	w, _ := srv.OpenWatch(configmaps, "", metav1.ListOptions{ResourceVersion: "2"})
	ev, _ := w.Next()
	show(ev)
	fmt.Println("done", w.Done(), w.CloseReason())
	_, err := cms.List(ctx, metav1.ListOptions{ResourceVersion: "2", ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	fmt.Println(apierrors.IsResourceExpired(err), err)
	// Output:
	// ERROR 410 Expired
	// done true Expired
	// true The resourceVersion for the provided list is too old.
}

// Time-driven behaviour (bookmarks, deadlines, compaction, cache lag) happens only when the
// driver calls Advance at the time NextDeadline names.
func ExampleServer_Advance() {
	srv, clk := newServer()
	w, _ := srv.OpenWatch(configmaps, "", metav1.ListOptions{
		ResourceVersion: "1", AllowWatchBookmarks: true, TimeoutSeconds: ptr(int64(90)),
	})
	for w.Pending() > 0 || !w.Done() {
		at, _ := srv.NextDeadline()
		clk.SetTime(at)
		srv.Advance()
		for ev, ok := w.Next(); ok; ev, ok = w.Next() {
			fmt.Print(clk.Since(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)), " ")
			show(ev)
		}
	}
	fmt.Println("closed:", w.CloseReason())
	// Output:
	// 1m0s BOOKMARK 1 map[]
	// 1m28s BOOKMARK 1 map[]
	// closed: Deadline
}

func ptr[T any](v T) *T { return &v }

// A consumer that only reads what it receives (as an informer treats its cache) can take the
// server's own objects instead of copies. The server checks that they stay as they were: a
// change made to one is reported when a write acts on the object (or by Lending.Check).
func ExampleListerWatcher_OpenWatchLent() {
	srv, _ := newServer()
	ctx := context.Background()
	cms := srv.Resource(configmaps).Namespace("default")
	_, _ = cms.Create(ctx, configMap("a"), metav1.CreateOptions{})
	lw := srv.ListerWatcher(configmaps, "default")
	lw.Name = "my-informer"
	w, _ := lw.OpenWatchLent(metav1.ListOptions{ResourceVersion: "0"})
	ev, _ := w.Next() // the initial ADDED of a: the stored object itself
	show(ev)
	fmt.Println("unchanged:", srv.Lending().Check())

	// The bug lending catches: changing what was received, in place.
	ev.Object.(*unstructured.Unstructured).SetLabels(map[string]string{"seen": "yes"})
	cur, _ := cms.Get(ctx, "a", metav1.GetOptions{}) // a copy: Get does not check
	cur.SetAnnotations(map[string]string{"n": "1"})
	_, err := cms.Update(ctx, cur, metav1.UpdateOptions{}) // the update acts on a: it checks
	fmt.Println("update:", err)
	var changed *fakeapi.MutationError
	if errors.As(srv.Lending().Mutation(), &changed) {
		fmt.Println(changed.Resource, changed.Name, changed.ResourceVersion, changed.LentTo, "noticed by", changed.NoticedBy)
	}
	// Output:
	// ADDED a 2
	// unchanged: <nil>
	// update: <nil>
	// configmaps a 2 my-informer noticed by a write to it
}

// CreateLent answers with the object the server stored, lent read-only, for a caller that only
// reads the answer (an HTTP front encoding it): no copy is made, and a change to it is noticed.
func ExampleResourceClient_CreateLent() {
	srv, _ := newServer()
	cms := srv.Resource(configmaps).Namespace("default")
	out, _ := cms.CreateLent(context.Background(), configMap("a"), metav1.CreateOptions{}, "my-front")
	fmt.Println(out.GetName(), out.GetResourceVersion(), srv.Lending().Check())

	out.SetLabels(map[string]string{"changed": "yes"}) // the bug lending catches
	var changed *fakeapi.MutationError
	if errors.As(srv.Lending().Check(), &changed) {
		fmt.Println(changed.Name, changed.LentTo, "noticed by", changed.NoticedBy)
	}
	// Output:
	// a 2 <nil>
	// a my-front noticed by Lending.Check
}

// CreateHandedOver is CreateLent for an object built for this write alone, as an HTTP front
// decodes one from a request body: the server stores its maps themselves (converting what is
// not in its normal form, here an int) instead of a copy, so the caller lets go of it.
func ExampleResourceClient_CreateHandedOver() {
	srv, _ := newServer()
	cms := srv.Resource(configmaps).Namespace("default")
	obj := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "a"},
		"data":     map[string]any{"k": "v"},
		"replicas": 3, // an int: stored as an int64, as a copying write stores it
	}}
	// obj is handed over: from here on the caller reads only the answer, lent to it.
	out, err := cms.CreateHandedOver(context.Background(), obj, metav1.CreateOptions{}, "my-front")
	fmt.Println(out.GetName(), out.GetResourceVersion(), err)
	fmt.Printf("%T %v\n", out.Object["replicas"], out.Object["data"])
	// Output:
	// a 2 <nil>
	// int64 map[k:v]
}

// A frozen replica's watch cache stops at the revision it had: a resourceVersion="0" list,
// which its cache serves, reads the old state until the replica resumes, while a consistent
// list reads the store (fakeapi.md §3.4, §6 F-2).
func ExampleReplicas_Freeze() {
	srv, _ := newServer()
	ctx := context.Background()
	cms := srv.Resource(configmaps).Namespace("default")
	cms.Create(ctx, configMap("a"), metav1.CreateOptions{})
	srv.Replicas().Freeze(0)
	cms.Create(ctx, configMap("b"), metav1.CreateOptions{})
	names := func(opts metav1.ListOptions) string {
		l, _ := cms.List(ctx, opts)
		s := "rv " + l.GetResourceVersion() + ":"
		for _, it := range l.Items {
			s += " " + it.GetName()
		}
		return s
	}
	at, _ := srv.Replicas().Revision(0)
	fmt.Println("replica 0 at", at)
	fmt.Println("cache:", names(metav1.ListOptions{ResourceVersion: "0"}))
	fmt.Println("store:", names(metav1.ListOptions{}))
	srv.Replicas().Resume(0)
	fmt.Println("resumed:", names(metav1.ListOptions{ResourceVersion: "0"}))
	// Output:
	// replica 0 at 2
	// cache: rv 2: a
	// store: rv 3: a b
	// resumed: rv 3: a b
}
