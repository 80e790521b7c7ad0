package informer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
)

var (
	podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	cmsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// uServer is a tiny in-memory apiserver of unstructured objects for the factory's tests: one
// global RV, a history per resource, and list, watch (from an RV) and watch-list. It is safe for
// concurrent use and records every request with its namespace and selectors.
type uServer struct {
	mu       sync.Mutex
	rv       int
	objs     map[schema.GroupVersionResource]map[string]*unstructured.Unstructured // key ns/name
	watchers []*uWatcher
	requests []string
	// unsupported makes every ListerWatcher answer true to IsWatchListSemanticsUnSupported.
	unsupported bool
}

func newUServer() *uServer {
	return &uServer{objs: map[schema.GroupVersionResource]map[string]*unstructured.Unstructured{}}
}

type uWatcher struct {
	srv  *uServer
	gvr  schema.GroupVersionResource
	ns   string
	sel  labels.Selector
	ch   chan watch.Event
	done bool
}

func (w *uWatcher) ResultChan() <-chan watch.Event { return w.ch }

func (w *uWatcher) Stop() {
	w.srv.mu.Lock()
	defer w.srv.mu.Unlock()
	if !w.done {
		w.done = true
		close(w.ch)
	}
	w.srv.watchers = slices.DeleteFunc(w.srv.watchers, func(x *uWatcher) bool { return x == w })
}

// set creates or updates ns/name of gvr with labels at the next RV.
func (s *uServer) set(gvr schema.GroupVersionResource, ns, name string, lbls map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv++
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind(strings.TrimSuffix(strings.ToUpper(gvr.Resource[:1])+gvr.Resource[1:], "s"))
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(lbls)
	u.SetResourceVersion(strconv.Itoa(s.rv))
	if s.objs[gvr] == nil {
		s.objs[gvr] = map[string]*unstructured.Unstructured{}
	}
	typ := watch.Modified
	if _, ok := s.objs[gvr][ns+"/"+name]; !ok {
		typ = watch.Added
	}
	s.objs[gvr][ns+"/"+name] = u
	for _, w := range s.watchers {
		if w.gvr == gvr && (w.ns == "" || w.ns == ns) && w.sel.Matches(labels.Set(lbls)) {
			w.ch <- watch.Event{Type: typ, Object: u.DeepCopy()}
		}
	}
}

func (s *uServer) takeRequests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.requests
	s.requests = nil
	return r
}

// client returns the factory Client of s.
func (s *uServer) client() Client {
	return ClientFunc(func(gvr schema.GroupVersionResource, ns string) ListerWatcher {
		return &uLW{srv: s, gvr: gvr, ns: ns}
	})
}

type uLW struct {
	srv *uServer
	gvr schema.GroupVersionResource
	ns  string
}

func (lw *uLW) IsWatchListSemanticsUnSupported() bool {
	lw.srv.mu.Lock()
	defer lw.srv.mu.Unlock()
	return lw.srv.unsupported
}

func (lw *uLW) record(verb string, o metav1.ListOptions) (labels.Selector, error) {
	lw.srv.requests = append(lw.srv.requests, fmt.Sprintf("%s %s ns=%q sel=%q rv=%q", verb, lw.gvr.Resource, lw.ns, o.LabelSelector, o.ResourceVersion))
	return labels.Parse(o.LabelSelector)
}

// matching returns the objects lw sees, sorted by key.
func (lw *uLW) matching(sel labels.Selector) []*unstructured.Unstructured {
	keys := make([]string, 0, len(lw.srv.objs[lw.gvr]))
	for k, u := range lw.srv.objs[lw.gvr] {
		if (lw.ns == "" || u.GetNamespace() == lw.ns) && sel.Matches(labels.Set(u.GetLabels())) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	out := make([]*unstructured.Unstructured, len(keys))
	for i, k := range keys {
		out[i] = lw.srv.objs[lw.gvr][k].DeepCopy()
	}
	return out
}

func (lw *uLW) ListWithContext(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
	lw.srv.mu.Lock()
	defer lw.srv.mu.Unlock()
	sel, err := lw.record("list", o)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	l := &unstructured.UnstructuredList{}
	l.SetResourceVersion(strconv.Itoa(lw.srv.rv))
	for _, u := range lw.matching(sel) {
		l.Items = append(l.Items, *u)
	}
	return l, nil
}

func (lw *uLW) WatchWithContext(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
	lw.srv.mu.Lock()
	defer lw.srv.mu.Unlock()
	sel, err := lw.record("watch", o)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	w := &uWatcher{srv: lw.srv, gvr: lw.gvr, ns: lw.ns, sel: sel, ch: make(chan watch.Event, 1024)}
	if o.SendInitialEvents != nil && *o.SendInitialEvents {
		for _, u := range lw.matching(sel) {
			w.ch <- watch.Event{Type: watch.Added, Object: u}
		}
		end := &unstructured.Unstructured{}
		end.SetResourceVersion(strconv.Itoa(lw.srv.rv))
		end.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
		w.ch <- watch.Event{Type: watch.Bookmark, Object: end}
	}
	lw.srv.watchers = append(lw.srv.watchers, w)
	return w, nil
}

// informer.md §9: ForResource memoizes one informer per resource; its lister reads the cache
// (namespace index included); Start starts only the informers not started yet and is
// idempotent; WaitForCacheSync reports each started resource; Shutdown waits for every
// informer goroutine. Goroutine driver, watch-list start-up (the server supports it).
func TestFactoryGoroutineDriver(t *testing.T) {
	srv := newUServer()
	srv.set(podsGVR, "a", "p1", nil)
	srv.set(podsGVR, "b", "p2", nil)
	srv.set(cmsGVR, "a", "c1", nil)
	clk := clocktesting.NewFakeClock(infT0)
	f, err := NewSharedInformerFactoryWithOptions(srv.client(), 0,
		WithInformerOptions(func(_ schema.GroupVersionResource, o *SharedIndexInformerOptions) { o.Clock = clk }))
	if err != nil {
		t.Fatal(err)
	}
	pods, err := f.ForResource(podsGVR)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := f.ForResource(podsGVR)
	if again != pods {
		t.Fatal("ForResource returned a second informer for the same resource")
	}
	// A deadline far above the test's few milliseconds: a WaitForCacheSync that waits for an
	// informer that never syncs (an unstarted one it should not wait for) fails the test
	// instead of hanging it until the binary's timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	f.StartWithContext(ctx)
	f.StartWithContext(ctx) // idempotent
	if got := f.WaitForCacheSync(ctx.Done()); !cmp.Equal(got, map[schema.GroupVersionResource]bool{podsGVR: true}) {
		t.Fatalf("WaitForCacheSync = %v, want only pods, synced", got)
	}
	cms, _ := f.ForResource(cmsGVR) // created after Start: the next Start starts it alone
	if res := f.WaitForCacheSyncWithContext(ctx); len(res.Synced) != 1 {
		t.Fatalf("unstarted configmaps reported: %v", res.Synced)
	}
	f.StartWithContext(ctx)
	res := f.WaitForCacheSyncWithContext(ctx)
	if res.Err != nil || !cmp.Equal(res.Synced, map[schema.GroupVersionResource]bool{podsGVR: true, cmsGVR: true}) {
		t.Fatalf("WaitForCacheSyncWithContext = %+v", res)
	}
	if reqs := srv.takeRequests(); len(reqs) != 2 {
		t.Errorf("requests %q, want one watch-list per resource (Start started none twice)", reqs)
	}
	objs, err := pods.Lister().ByNamespace("b").List(labels.Everything())
	if err != nil || len(objs) != 1 || objs[0].(*unstructured.Unstructured).GetName() != "p2" {
		t.Errorf("pods in b: %v, %v", objs, err)
	}
	if _, err := cms.Lister().ByNamespace("a").Get("c1"); err != nil {
		t.Errorf("configmap a/c1: %v", err)
	}
	if _, err := cms.Lister().ByNamespace("a").Get("nope"); !apierrors.IsNotFound(err) {
		t.Errorf("missing configmap: %v, want NotFound", err)
	}
	cancel()
	f.Shutdown()
	f.Shutdown() // safe twice
	if !pods.Informer().IsStopped() || !cms.Informer().IsStopped() {
		t.Error("Shutdown returned before the informers stopped")
	}
	f.StartWithContext(context.Background()) // no-op after Shutdown
	if _, err := pods.Informer().AddEventHandler(ResourceEventHandlerFuncs{}); err == nil {
		t.Error("informer restarted after Shutdown")
	}
}

// informer.md §9: WithNamespace and WithTweakListOptions reach LIST and WATCH alike;
// WithCustomResyncConfig overrides the default per resource; WithTransform is set on each
// informer. Classic list+watch (the server says it cannot serve watch-list), step driver.
func TestFactoryOptionsStepDriven(t *testing.T) {
	srv := newUServer()
	srv.unsupported = true
	srv.set(podsGVR, "a", "keep", map[string]string{"app": "web"})
	srv.set(podsGVR, "a", "skip", map[string]string{"app": "db"})
	srv.set(podsGVR, "b", "other", map[string]string{"app": "web"})
	clk := clocktesting.NewFakeClock(infT0)
	var hosted []FactoryInformer
	f, err := NewSharedInformerFactoryWithOptions(srv.client(), time.Minute,
		WithNamespace("a"),
		WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "app=web" }),
		WithCustomResyncConfig(map[schema.GroupVersionResource]time.Duration{cmsGVR: 0}),
		WithTransform(func(obj any) (any, error) {
			u := obj.(*unstructured.Unstructured)
			u.SetAnnotations(map[string]string{"seen": "yes"})
			return u, nil
		}),
		WithInformerOptions(func(_ schema.GroupVersionResource, o *SharedIndexInformerOptions) { o.Clock = clk }),
		WithStepDriver(func(fi FactoryInformer) (func() error, error) { hosted = append(hosted, fi); return nil, nil }),
	)
	if err != nil {
		t.Fatal(err)
	}
	pods, _ := f.ForResource(podsGVR)
	cms, _ := f.ForResource(cmsGVR)
	if len(hosted) != 2 || hosted[0].GVR != podsGVR || hosted[1].Namespace != "a" || hosted[0].Tweak == nil {
		t.Fatalf("hosted %+v", hosted)
	}
	if hosted[0].Stepper.Reflector() != nil {
		t.Fatal("a step-driven informer started before Start")
	}
	f.Start(nil)
	f.Start(nil) // idempotent
	if got := f.WaitForCacheSync(nil); !cmp.Equal(got, map[schema.GroupVersionResource]bool{podsGVR: false, cmsGVR: false}) {
		t.Fatalf("WaitForCacheSync before any step = %v, want both false (no waiting in step mode)", got)
	}
	for _, fi := range hosted {
		e := &infStep{t: t, lw: nil, clock: clk, inf: fi.Informer, st: fi.Stepper}
		e.quiesceVia(fi.Informer.(*sharedIndexInformer).lw)
	}
	if got := f.WaitForCacheSyncWithContext(context.Background()); got.Err != nil {
		t.Fatalf("not synced after stepping: %+v", got)
	}
	if diff := cmp.Diff(srv.takeRequests(), []string{
		`list pods ns="a" sel="app=web" rv="0"`, `watch pods ns="a" sel="app=web" rv="3"`,
		`list configmaps ns="a" sel="app=web" rv="0"`, `watch configmaps ns="a" sel="app=web" rv="3"`,
	}); diff != "" {
		t.Errorf("requests (-got +want):\n%s", diff)
	}
	if got := pods.Informer().GetStore().ListKeys(); !cmp.Equal(got, []string{"a/keep"}) {
		t.Errorf("pods cached %v, want [a/keep]", got)
	}
	obj, _, _ := pods.Informer().GetStore().GetByKey("a/keep")
	if obj.(*unstructured.Unstructured).GetAnnotations()["seen"] != "yes" {
		t.Error("the transform did not run")
	}
	if got := hosted[0].Stepper.Reflector().resyncPeriod; got != time.Minute {
		t.Errorf("pods resync %v, want the default 1m", got)
	}
	if got := hosted[1].Stepper.Reflector().resyncPeriod; got != 0 {
		t.Errorf("configmaps resync %v, want the custom 0", got)
	}
	_ = cms
	f.Shutdown()
}

// quiesceVia steps e's informer to quiescence, performing the Reflector's requests through lw.
func (e *infStep) quiesceVia(lw ListerWatcher) {
	e.lwOverride = lw
	e.quiesce()
}

// Bad input to the factory is an error, never a panic (common rules).
func TestFactoryBadInput(t *testing.T) {
	srv := newUServer()
	if _, err := NewSharedInformerFactory(nil, 0); err == nil {
		t.Error("nil client accepted")
	}
	if _, err := NewSharedInformerFactory(srv.client(), -time.Second); err == nil {
		t.Error("negative resync accepted")
	}
	if _, err := NewSharedInformerFactoryWithOptions(srv.client(), 0, nil); err == nil {
		t.Error("nil option accepted")
	}
	if _, err := NewSharedInformerFactoryWithOptions(srv.client(), 0, WithCustomResyncConfig(map[schema.GroupVersionResource]time.Duration{podsGVR: -1})); err == nil {
		t.Error("negative custom resync accepted")
	}
	if _, err := NewSharedInformerFactoryWithOptions(srv.client(), 0, WithStepDriver(nil)); err == nil {
		t.Error("nil step callback accepted")
	}
	f, _ := NewSharedInformerFactory(srv.client(), 0)
	for _, gvr := range []schema.GroupVersionResource{{}, {Resource: "pods"}, {Version: "v1"}} {
		if _, err := f.ForResource(gvr); err == nil || !strings.HasPrefix(err.Error(), "informer: ") {
			t.Errorf("ForResource(%v): %v, want an informer: error", gvr, err)
		}
	}
	nilClient, _ := NewSharedInformerFactory(ClientFunc(func(schema.GroupVersionResource, string) ListerWatcher { return nil }), 0)
	if _, err := nilClient.ForResource(podsGVR); err == nil {
		t.Error("a client without a ListerWatcher accepted")
	}
	res := SyncResult{Err: context.Canceled, Synced: map[schema.GroupVersionResource]bool{podsGVR: false, cmsGVR: true}}
	if err := res.AsError(); err == nil || !errors.Is(err, context.Canceled) || err.Error() != "failed to sync all caches: /v1, Resource=pods: context canceled" {
		t.Errorf("AsError = %v", err)
	}
}

// The tweak keeps the inner ListerWatcher's answer to the watch-list probe (client-go's
// ToListWatcherWithWatchListSemantics), so an unsupported client stays classic behind a tweak.
func TestFactoryTweakKeepsWatchListProbe(t *testing.T) {
	srv := newUServer()
	srv.unsupported = true
	tw := tweakedListerWatcher{inner: &uLW{srv: srv, gvr: podsGVR}, tweak: func(*metav1.ListOptions) {}}
	if !watchListUnsupported(tw) {
		t.Error("the tweak hid IsWatchListSemanticsUnSupported")
	}
}

// A step host decides how each informer starts and may refuse one: a refused informer is not
// memoized (ForResource fails, and may be asked again), Start calls the host's start function
// instead of Stepper.Start, and a start that fails is retried by the next Start.
func TestFactoryStepHost(t *testing.T) {
	srv := newUServer()
	refuse := true
	var starts []string
	failStart := true
	f, err := NewSharedInformerFactoryWithOptions(srv.client(), 0, WithStepDriver(func(fi FactoryInformer) (func() error, error) {
		if refuse {
			return nil, errors.New("world full")
		}
		return func() error {
			starts = append(starts, fi.GVR.Resource)
			if failStart {
				failStart = false
				return errors.New("not now")
			}
			fi.Stepper.Start()
			return nil
		}, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ForResource(podsGVR); err == nil || !strings.Contains(err.Error(), "world full") {
		t.Fatalf("ForResource with a refusing host: %v", err)
	}
	refuse = false
	gi, err := f.ForResource(podsGVR)
	if err != nil {
		t.Fatal(err)
	}
	f.Start(nil)
	if st, _ := Steps(gi.Informer()); st.Reflector() != nil {
		t.Fatal("started although the host's start failed")
	}
	f.Start(nil)
	f.Start(nil)
	if !cmp.Equal(starts, []string{"pods", "pods"}) {
		t.Errorf("start calls %v, want two (the failed one, then the one that worked)", starts)
	}
	if st, _ := Steps(gi.Informer()); st.Reflector() == nil {
		t.Error("not started by the second Start")
	}
}
