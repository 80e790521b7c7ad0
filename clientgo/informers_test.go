package clientgo_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/fakeapi"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
)

var (
	podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	cmsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	depsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// serverKeys returns namespace/name@rv of every live object of gvr, sorted.
func serverKeys(t *testing.T, srv *fakeapi.Server, gvr schema.GroupVersionResource) []string {
	t.Helper()
	lw := srv.ListerWatcher(gvr, "")
	lw.Name = "oracle" // kept apart from the clients' requests in the record
	obj, err := lw.ListWithContext(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, it := range obj.(*unstructured.UnstructuredList).Items {
		keys = append(keys, it.GetNamespace()+"/"+it.GetName()+"@"+it.GetResourceVersion())
	}
	slices.Sort(keys)
	return keys
}

func keysOf[T metav1.Object](objs []T) []string {
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.GetNamespace()+"/"+o.GetName()+"@"+o.GetResourceVersion())
	}
	slices.Sort(keys)
	return keys
}

// initialReads counts the requests that (re)build a cache: LISTs and watch-list WATCHes.
func initialReads(srv *fakeapi.Server, gvr schema.GroupVersionResource) (lists, watchLists int) {
	for _, rq := range srv.Requests() {
		if rq.Resource != gvr || rq.Err != "" || rq.Client == "oracle" {
			continue
		}
		switch {
		case rq.Verb == fakeapi.VerbList:
			lists++
		case rq.Verb == fakeapi.VerbWatch && rq.Options.SendInitialEvents != nil && *rq.Options.SendInitialEvents:
			watchLists++
		}
	}
	return lists, watchLists
}

// TestSharedInformerFactory runs client-go's own SharedInformerFactory over the REST front in
// both start-up modes: its listers reach sync, then converge to the server's state through a
// clean watch close, a 410 ERROR mid-watch (relist) and a re-watch from a compacted
// resourceVersion (410, relist, a delete seen only through the relist).
func TestSharedInformerFactory(t *testing.T) {
	for _, mode := range []string{"watch-list", "list+watch"} {
		t.Run(mode, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			srv, cs := newServer(t, fakeapi.Config{})
			var client kubernetes.Interface = cs
			if mode == "list+watch" {
				client = clientgo.WithoutWatchList(cs)
			}
			seedFactoryObjects(ctx, t, cs)

			factory := informers.NewSharedInformerFactory(client, 0)
			f := &factoryRun{t: t, ctx: ctx, srv: srv, cs: cs,
				podLister: factory.Core().V1().Pods().Lister(),
				cmLister:  factory.Core().V1().ConfigMaps().Lister(),
				depLister: factory.Apps().V1().Deployments().Lister(),
			}
			factory.Start(ctx.Done())
			defer factory.Shutdown()
			defer cancel()
			for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
				if !ok {
					t.Fatalf("%v did not sync", typ)
				}
			}
			f.converged("sync")
			lists, watchLists := initialReads(srv, podsGVR)
			if mode == "watch-list" && (lists != 0 || watchLists != 1) || mode == "list+watch" && (lists != 1 || watchLists != 0) {
				t.Fatalf("%s start-up made %d LISTs and %d watch-lists of pods", mode, lists, watchLists)
			}
			f.cleanCloseRewatches()
			f.expiredWatchRelists()
			f.compactionRelists()
		})
	}
}

// seedFactoryObjects writes what TestSharedInformerFactory's informers start from: 30 pods in
// namespace a (p00..p29, the ones write deletes), 5 ConfigMaps in b (c0..c4, the ones it
// updates) and one Deployment, so three informers of different groups sync at once.
func seedFactoryObjects(ctx context.Context, t *testing.T, cs *kubernetes.Clientset) {
	t.Helper()
	for i := range 30 {
		if _, err := cs.CoreV1().Pods("a").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%02d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		if _, err := cs.CoreV1().ConfigMaps("b").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c%d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cs.AppsV1().Deployments("a").Create(ctx, newDeployment("d", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// factoryRun is one mode of TestSharedInformerFactory once its factory has started: the phases
// below run in order on it, each counting the pod relists so far (they accumulate), so they are
// methods on one value rather than independent subtests.
type factoryRun struct {
	t         *testing.T
	ctx       context.Context
	srv       *fakeapi.Server
	cs        *kubernetes.Clientset
	podLister corelisters.PodLister
	cmLister  corelisters.ConfigMapLister
	depLister appslisters.DeploymentLister
}

// converged waits until the three listers hold exactly the server's objects at their RVs, and
// fails the test at the context's deadline, naming the step.
func (f *factoryRun) converged(step string) {
	f.t.Helper()
	for {
		p, _ := f.podLister.List(labels.Everything())
		c, _ := f.cmLister.List(labels.Everything())
		d, _ := f.depLister.List(labels.Everything())
		if slices.Equal(keysOf(p), serverKeys(f.t, f.srv, podsGVR)) &&
			slices.Equal(keysOf(c), serverKeys(f.t, f.srv, cmsGVR)) &&
			slices.Equal(keysOf(d), serverKeys(f.t, f.srv, depsGVR)) {
			return
		}
		select {
		case <-f.ctx.Done():
			f.t.Fatalf("%s: listers did not converge:\npods %v\nwant %v", step, keysOf(p), serverKeys(f.t, f.srv, podsGVR))
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// write makes round i's changes: a new pod n<i>, the delete of seed pod p<i> and an update of
// ConfigMap c<i%5>, so each round moves two informers.
func (f *factoryRun) write(i int) {
	f.t.Helper()
	t, ctx, cs := f.t, f.ctx, f.cs
	pods := cs.CoreV1().Pods("a")
	if _, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%02d", i)}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, fmt.Sprintf("p%02d", i), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cm, err := cs.CoreV1().ConfigMaps("b").Get(ctx, fmt.Sprintf("c%d", i%5), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"i": fmt.Sprint(i)}
	if _, err := cs.CoreV1().ConfigMaps("b").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// cleanCloseRewatches: after a clean close the reflectors re-watch from their last RV, without a
// relist. (The pod watch must have delivered an event first: client-go treats a watch that ends
// within a second with no event as an error and relists.)
func (f *factoryRun) cleanCloseRewatches() {
	f.t.Helper()
	f.write(0)
	f.converged("events")
	f.srv.Faults().CloseAllWatches(nil)
	f.write(1)
	f.converged("clean close")
	if l, wl := initialReads(f.srv, podsGVR); l+wl != 1 {
		f.t.Fatalf("a clean close caused a relist (%d LISTs, %d watch-lists)", l, wl)
	}
}

// expiredWatchRelists: after a 410 mid-watch every reflector relists.
func (f *factoryRun) expiredWatchRelists() {
	f.t.Helper()
	f.srv.Faults().CloseAllWatches(fakeapi.NewWatchError(410))
	f.write(2)
	f.converged("410")
	f.write(3) // an event on the new pod watch, so that its close below is not "very short"
	f.converged("events after 410")
	if l, wl := initialReads(f.srv, podsGVR); l+wl != 2 {
		f.t.Fatalf("after a 410 ERROR: %d LISTs, %d watch-lists of pods, want 2 in all", l, wl)
	}
}

// compactionRelists compacts while the pod reflector is away: its re-watch from its last RV gets
// 410 and it relists; the deletes it missed reach it only through that relist.
func (f *factoryRun) compactionRelists() {
	f.t.Helper()
	t, srv := f.t, f.srv
	seen := len(srv.WatchEvents())
	srv.Faults().FailNextFor(fakeapi.VerbWatch, podsGVR, fakeapi.NewConnectionRefused())
	srv.Faults().CloseAllWatches(nil)
	for i := 4; i < 8; i++ {
		f.write(i)
	}
	if err := srv.Faults().Compact(srv.Revision()); err != nil {
		t.Fatal(err)
	}
	f.converged("compaction")
	if l, wl := initialReads(srv, podsGVR); l+wl != 3 {
		t.Fatalf("after compaction: %d LISTs, %d watch-lists of pods, want 3 in all", l, wl)
	}
	expired := false
	for _, ev := range srv.WatchEvents()[seen:] {
		expired = expired || ev.Type == watch.Error && ev.Code == 410
	}
	if !expired {
		t.Fatal("no re-watch after the compaction got a 410 ERROR event")
	}
}
