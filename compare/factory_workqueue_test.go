package compare

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	cgworkqueue "k8s.io/client-go/util/workqueue"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/informer/workqueue"
)

// Compile-time checks that informer/workqueue has client-go's method sets (informer.md §11): the
// interface values convert both ways by plain assignment, so adapting a controller written
// against client-go's workqueue is a type conversion, not a rewrite.
var (
	_ cgworkqueue.TypedRateLimitingInterface[string] = workqueue.TypedRateLimitingInterface[string](nil)
	_ workqueue.TypedRateLimitingInterface[string]   = cgworkqueue.TypedRateLimitingInterface[string](nil)
	_ cgworkqueue.TypedDelayingInterface[string]     = workqueue.TypedDelayingInterface[string](nil)
	_ cgworkqueue.TypedInterface[string]             = workqueue.TypedInterface[string](nil)
	_ workqueue.TypedInterface[string]               = cgworkqueue.TypedInterface[string](nil)
	_ cgworkqueue.TypedRateLimiter[string]           = workqueue.TypedRateLimiter[string](nil)
	_ workqueue.TypedRateLimiter[string]             = cgworkqueue.TypedRateLimiter[string](nil)
	// The concrete queue and limiters are client-go's interfaces as they are.
	_ cgworkqueue.TypedRateLimitingInterface[string] = (*workqueue.RateLimitingQueue[string])(nil)
	_ cgworkqueue.TypedRateLimiter[string]           = (*workqueue.BucketRateLimiter[string])(nil)
	// Our factory's client, from client-go's dynamic client.
	_ informer.Client = dynamicClient(nil)
)

// dynamicClient makes client-go's dynamic client (a real cluster, or fakeapi through the
// clientgo.Dynamic adapter) the Client of our SharedInformerFactory: one cache.ListWatch per
// resource and namespace, keeping the client's answer to the watch-list probe as client-go's
// dynamic informer does (ToListWatcherWithWatchListSemantics).
func dynamicClient(d dynamic.Interface) informer.Client {
	return informer.ClientFunc(func(gvr schema.GroupVersionResource, ns string) informer.ListerWatcher {
		lw := &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return d.Resource(gvr).Namespace(ns).List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return d.Resource(gvr).Namespace(ns).Watch(ctx, o)
			},
		}
		if p, ok := d.(interface{ IsWatchListSemanticsUnSupported() bool }); ok && p.IsWatchListSemanticsUnSupported() {
			return unsupportedLW{lw}
		}
		return lw
	})
}

type unsupportedLW struct{ *cache.ListWatch }

func (unsupportedLW) IsWatchListSemanticsUnSupported() bool { return true }

var cmsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// TestFactoryMatchesDynamicInformerFactory runs our SharedInformerFactory and client-go's dynamic
// informer factory over the same dynamic client (fakeapi) with two resources, filtered to one
// namespace: both sync, both caches hold the same objects, through the same number of requests
// (one watch-list per resource and factory), and a write after the start reaches both.
func TestFactoryMatchesDynamicInformerFactory(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv, err := fakeapi.New(fakeapi.Config{})
	if err != nil {
		t.Fatal(err)
	}
	w := podWriter{t: t, ctx: ctx, srv: srv}
	w.create("a", "p0")
	w.create("a", "p1")
	w.create("b", "p2")
	cm := newPod("a", "settings")
	cm.SetKind("ConfigMap")
	if _, err := srv.Resource(cmsGVR).Namespace("a").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	client := clientgo.Dynamic(srv)
	ours, err := informer.NewFilteredSharedInformerFactory(dynamicClient(client), 0, "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	theirs := dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, 0, "a", nil)
	type pair struct{ ours, theirs cache.Store }
	var stores []pair
	for _, gvr := range []schema.GroupVersionResource{podsGVR, cmsGVR} {
		gi, err := ours.ForResource(gvr)
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, pair{gi.Informer().GetStore(), theirs.ForResource(gvr).Informer().GetStore()})
	}
	ours.StartWithContext(ctx)
	theirs.Start(ctx.Done())
	defer theirs.Shutdown()
	defer ours.Shutdown()
	defer cancel()
	if res := ours.WaitForCacheSyncWithContext(ctx); res.AsError() != nil || len(res.Synced) != 2 {
		t.Fatalf("ours: %+v", res)
	}
	for gvr, ok := range theirs.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("client-go's %v did not sync", gvr)
		}
	}
	w.create("a", "p3")
	for {
		a, b := stores[0].ours.ListKeys(), stores[0].theirs.ListKeys()
		slices.Sort(a)
		slices.Sort(b)
		if len(a) == 3 && slices.Equal(a, b) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("pods: ours %v, client-go %v", a, b)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if got := stores[1].ours.ListKeys(); !slices.Equal(got, []string{"a/settings"}) {
		t.Errorf("configmaps: %v", got)
	}
	watchLists := 0
	for _, rq := range srv.Requests() {
		if rq.Verb == fakeapi.VerbWatch && rq.Options.SendInitialEvents != nil && *rq.Options.SendInitialEvents {
			watchLists++
		}
	}
	if watchLists != 4 {
		t.Errorf("%d watch-list requests, want 4 (two resources, two factories)", watchLists)
	}
}

// A SharedInformerFactory with two resources over the fake apiserver, goroutine driver: one
// informer per resource whatever the number of ForResource calls, started together, synced
// together, read through listers.
func ExampleSharedInformerFactory() {
	ctx, cancel := context.WithCancel(context.Background())
	srv, _ := fakeapi.New(fakeapi.Config{})
	for _, name := range []string{"web", "db"} {
		_, _ = srv.Resource(podsGVR).Namespace("default").Create(ctx, newPod("default", name), metav1.CreateOptions{})
	}
	cm := newPod("default", "settings")
	cm.SetKind("ConfigMap")
	_, _ = srv.Resource(cmsGVR).Namespace("default").Create(ctx, cm, metav1.CreateOptions{})

	factory, _ := informer.NewSharedInformerFactory(informer.ClientFunc(
		func(gvr schema.GroupVersionResource, ns string) informer.ListerWatcher {
			return srv.ListerWatcher(gvr, ns)
		}), 10*time.Minute)
	pods, _ := factory.ForResource(podsGVR)
	cms, _ := factory.ForResource(cmsGVR)
	again, _ := factory.ForResource(podsGVR)
	fmt.Println("one informer per resource:", again == pods)

	factory.StartWithContext(ctx)
	res := factory.WaitForCacheSyncWithContext(ctx)
	fmt.Println("synced:", res.Synced[podsGVR], res.Synced[cmsGVR], res.AsError())
	list, _ := pods.Lister().ByNamespace("default").List(labels.Everything())
	var names []string
	for _, o := range list {
		names = append(names, o.(metav1.Object).GetName())
	}
	slices.Sort(names)
	fmt.Println("pods:", names)
	settings, _ := cms.Lister().ByNamespace("default").Get("settings")
	fmt.Println("configmap:", settings.(metav1.Object).GetName())
	cancel()
	factory.Shutdown() // waits for both informers to return
	// Output:
	// one informer per resource: true
	// synced: true true <nil>
	// pods: [db web]
	// configmap: settings
}
