package clientgo_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/informersim/informersim/fakeapi"
	fakerest "github.com/informersim/informersim/fakeapi/rest"
	"github.com/informersim/informersim/kube"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
)

// wireLog records the media types of every request and response a client made.
type wireLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *wireLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		line := fmt.Sprintf("%s %s body=%q", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		if resp != nil {
			line += fmt.Sprintf(" -> %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		l.mu.Lock()
		l.lines = append(l.lines, line)
		l.mu.Unlock()
		return resp, err
	})
}

// not returns the recorded lines for which keep is false.
func (l *wireLog) not(keep func(string) bool) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.lines {
		if !keep(s) {
			out = append(out, s)
		}
	}
	return out
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// kubeconfigClient serves srv on a loopback listener with kube.RESTOptions, writes the
// kubeconfig `informersim serve` prints, and loads it with clientcmd as a controller's main
// does: no ContentType, client-go's defaults. The wireLog sees every request.
func kubeconfigClient(t *testing.T, srv *fakeapi.Server) (*kubernetes.Clientset, *wireLog) {
	t.Helper()
	h, err := fakerest.NewHandler(srv, kube.RESTOptions())
	if err != nil {
		t.Fatal(err)
	}
	l, err := fakerest.Listen("127.0.0.1:0", h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(fakerest.Kubeconfig(l.URL(), "informersim")), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ContentType != "" || cfg.AcceptContentTypes != "" {
		t.Fatalf("the kubeconfig's rest.Config sets content types %q %q", cfg.ContentType, cfg.AcceptContentTypes)
	}
	log := &wireLog{}
	cfg.Wrap(log.wrap)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs, log
}

const pbType = "application/vnd.kubernetes.protobuf"

// typedClient is the method set every typed client of client-go shares, for an object type T and
// its list type L.
type typedClient[T runtime.Object, L runtime.Object] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Get(context.Context, string, metav1.GetOptions) (T, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
	Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (T, error)
	List(context.Context, metav1.ListOptions) (L, error)
	Watch(context.Context, metav1.ListOptions) (watch.Interface, error)
	Delete(context.Context, string, metav1.DeleteOptions) error
}

// typedKind is one typed client's verbs on the object named "x", with the types erased.
type typedKind struct {
	name   string
	create func() error
	get    func() (metav1.Object, error)
	update func(metav1.Object) (metav1.Object, error)
	patch  func(pt types.PatchType, data string) (metav1.Object, error)
	list   func() (n int, rv string, err error)
	watch  func(rv string) (watch.Interface, error)
	del    func(opts metav1.DeleteOptions) error
}

// typedOps erases the types of c, whose object is obj (named "x").
func typedOps[T interface {
	runtime.Object
	metav1.Object
}, L interface {
	runtime.Object
	metav1.ListInterface
}](name string, ctx context.Context, c typedClient[T, L], obj T) typedKind {
	return typedKind{
		name: name,
		create: func() error {
			_, err := c.Create(ctx, obj, metav1.CreateOptions{})
			return err
		},
		get: func() (metav1.Object, error) { return c.Get(ctx, "x", metav1.GetOptions{}) },
		update: func(o metav1.Object) (metav1.Object, error) {
			o.SetLabels(map[string]string{"updated": "yes"})
			return c.Update(ctx, o.(T), metav1.UpdateOptions{})
		},
		patch: func(pt types.PatchType, d string) (metav1.Object, error) {
			return c.Patch(ctx, "x", pt, []byte(d), metav1.PatchOptions{})
		},
		list: func() (int, string, error) {
			l, err := c.List(ctx, metav1.ListOptions{})
			if err != nil {
				return 0, "", err
			}
			return meta.LenList(l), l.GetResourceVersion(), nil
		},
		watch: func(rv string) (watch.Interface, error) { return c.Watch(ctx, metav1.ListOptions{ResourceVersion: rv}) },
		del:   func(o metav1.DeleteOptions) error { return c.Delete(ctx, "x", o) },
	}
}

// Goal: an unmodified typed clientset over a kubeconfig (client-go's default configuration,
// protobuf for built-in kinds) does every verb on ConfigMaps, Pods and Deployments, its watches
// go on through a 410 (an ERROR event in protobuf framing, then a fresh list and watch), and
// every body it sent or received was protobuf, not a JSON fallback.
func TestKubeconfigTypedClientProtobuf(t *testing.T) {
	ctx := testCtx(t)
	srv, err := fakeapi.New(fakeapi.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cs, log := kubeconfigClient(t, srv)
	ns := "default"

	cms, pods, deps := cs.CoreV1().ConfigMaps(ns), cs.CoreV1().Pods(ns), cs.AppsV1().Deployments(ns)
	kinds := []typedKind{
		typedOps("configmaps", ctx, cms, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Data: map[string]string{"k": "v"}}),
		typedOps("pods", ctx, pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}),
		typedOps("deployments", ctx, deps, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}},
		}}),
	}
	for _, k := range kinds {
		w := typedWritesWatched(ctx, t, k)
		typedWatchExpiresThenDelete(ctx, t, srv, k, w)
	}
	// Every body went as protobuf: requests with a body say so, responses answer in it.
	if odd := log.not(func(s string) bool {
		withBody := !strings.HasPrefix(s, "GET ") && !strings.Contains(s, `body=""`)
		switch {
		case strings.Contains(s, "patch+json") || strings.Contains(s, "merge-patch"):
			return strings.Contains(s, `-> 200 "`+pbType+`"`) // patches are JSON by definition
		case withBody && !strings.Contains(s, `body="`+pbType+`"`):
			return false
		}
		return strings.Contains(s, `"`+pbType+`"`) || strings.Contains(s, `"`+pbType+`;stream=watch"`)
	}); len(odd) > 0 {
		t.Errorf("requests not in protobuf:\n%s", strings.Join(odd, "\n"))
	}
}

// Goal: the scale subresource through the typed clients (GetScale, UpdateScale, and a stale
// Scale refused), and the system namespaces listed once created.
func TestKubeconfigScaleAndNamespaces(t *testing.T) {
	ctx := testCtx(t)
	srv, err := fakeapi.New(fakeapi.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := fakerest.EnsureNamespaces(ctx, srv, fakerest.SystemNamespaces...); err != nil {
		t.Fatal(err)
	}
	cs, _ := kubeconfigClient(t, srv)
	nss, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ns := range nss.Items {
		if ns.Status.Phase != corev1.NamespaceActive {
			t.Errorf("namespace %s is %q", ns.Name, ns.Status.Phase)
		}
		names = append(names, ns.Name)
	}
	if strings.Join(names, ",") != "default,kube-node-lease,kube-public,kube-system" {
		t.Fatalf("namespaces %v", names)
	}

	deps := cs.AppsV1().Deployments("default")
	if _, err := deps.Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sc, err := deps.GetScale(ctx, "web", metav1.GetOptions{})
	if err != nil || sc.Spec.Replicas != 2 || sc.Status.Selector != "app=web" {
		t.Fatalf("GetScale: %v %+v", err, sc)
	}
	stale := sc.DeepCopy()
	sc.Spec.Replicas = 4
	up, err := deps.UpdateScale(ctx, "web", sc, metav1.UpdateOptions{})
	if err != nil || up.Spec.Replicas != 4 {
		t.Fatalf("UpdateScale: %v %+v", err, up)
	}
	if d, err := deps.Get(ctx, "web", metav1.GetOptions{}); err != nil || *d.Spec.Replicas != 4 {
		t.Fatalf("the deployment after UpdateScale: %v %+v", err, d)
	}
	stale.Spec.Replicas = 9
	if _, err := deps.UpdateScale(ctx, "web", stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("UpdateScale with a stale resourceVersion: %v, want 409", err)
	}
	if _, err := cs.AppsV1().ReplicaSets("default").UpdateScale(ctx, "none", &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "none"}}, metav1.UpdateOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("UpdateScale of a missing ReplicaSet: %v, want 404", err)
	}
}

// Goal: client-go's two event recorders work unchanged: record.EventBroadcaster writes core/v1
// events and, for a repeated one, its correlator's strategic merge patch raises the count; the
// events.k8s.io recorder writes events.k8s.io/v1 events, which core/v1 reads too (one store).
// All are listable.
func TestKubeconfigEventRecorders(t *testing.T) {
	ctx := testCtx(t)
	srv, err := fakeapi.New(fakeapi.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := kubeconfigClient(t, srv)
	cm, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "subject"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	b := record.NewBroadcaster(record.WithContext(ctx))
	defer b.Shutdown()
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	rec := b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "informersim-test"})
	rec.Event(cm, corev1.EventTypeNormal, "Seen", "the configmap was seen")
	rec.Event(cm, corev1.EventTypeNormal, "Seen", "the configmap was seen")
	var got *corev1.Event
	for got == nil || got.Count != 2 {
		l, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=subject,involvedObject.kind=ConfigMap"})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) > 1 {
			t.Fatalf("the repeated event was not aggregated: %d events", len(l.Items))
		}
		if len(l.Items) == 1 {
			got = &l.Items[0]
		}
		if ctx.Err() != nil {
			t.Fatalf("no event with count 2: %+v", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got.Reason != "Seen" || got.InvolvedObject.UID != cm.UID || got.Source.Component != "informersim-test" {
		t.Fatalf("event %+v", got)
	}

	eb := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	defer eb.Shutdown()
	if err := eb.StartRecordingToSinkWithContext(ctx); err != nil {
		t.Fatal(err)
	}
	erec := eb.NewRecorder(scheme.Scheme, "informersim-test")
	erec.Eventf(cm, nil, corev1.EventTypeWarning, "Checked", "Check", "checked %s", cm.Name)
	var ev *eventsv1.Event
	for ev == nil {
		l, err := cs.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The core recorder's events are listed too: one store serves both versions.
		for i := range l.Items {
			if l.Items[i].Reason == "Checked" {
				ev = &l.Items[i]
			}
		}
		if ctx.Err() != nil {
			t.Fatal("no events.k8s.io event")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if ev.Reason != "Checked" || ev.Regarding.Name != "subject" || ev.Note != "checked subject" || ev.ReportingController != "informersim-test" {
		t.Fatalf("events.k8s.io event %+v", ev)
	}
	// One store, as on kube-apiserver: the events.k8s.io event is read through core/v1 too.
	same, err := cs.CoreV1().Events("default").Get(ctx, ev.Name, metav1.GetOptions{})
	if err != nil || same.UID != ev.UID || same.Message != ev.Note || same.InvolvedObject.Name != "subject" || same.ReportingController != "informersim-test" {
		t.Fatalf("the events.k8s.io event through core/v1: %v %+v", err, same)
	}
}

// Goal: client-go's discovery gets the aggregated format (two requests, /api and /apis) and finds
// in it exactly what the legacy documents (one request per group version) say: groups,
// versions, resources with their kinds, scope, verbs, short names, categories and subresources.
func TestDiscoveryAggregatedMatchesLegacy(t *testing.T) {
	srv, err := fakeapi.New(fakeapi.Config{Resources: []fakeapi.Resource{{
		GVR: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}, Kind: "Gadget", Namespaced: true, Status: true,
		Scale: &fakeapi.ScaleSubresource{SpecReplicasPath: ".spec.size", StatusReplicasPath: ".status.size"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	cs, log := kubeconfigClient(t, srv)
	describe := func(legacy bool) (string, int) {
		t.Helper()
		d := cs.Discovery().(*discovery.DiscoveryClient)
		d.UseLegacyDiscovery = legacy
		before := len(log.not(func(string) bool { return false }))
		groups, lists, err := d.ServerGroupsAndResources()
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, g := range groups {
			for _, v := range g.Versions {
				lines = append(lines, fmt.Sprintf("group %q version %s preferred %s", g.Name, v.Version, g.PreferredVersion.Version))
			}
		}
		for _, l := range lists {
			gv, _ := schema.ParseGroupVersion(l.GroupVersion)
			for _, r := range l.APIResources {
				// What each format leaves implicit: a legacy entry of the list's own group
				// version names none, and the aggregated format has no singular name for a
				// subresource (client-go fills in the parent's).
				if r.Group == "" && r.Version == "" {
					r.Group, r.Version = gv.Group, gv.Version
				}
				if strings.Contains(r.Name, "/") {
					r.SingularName = ""
				}
				lines = append(lines, fmt.Sprintf("%s %s kind=%s/%s/%s ns=%v verbs=%v short=%v cat=%v singular=%s", l.GroupVersion, r.Name, r.Group, r.Version, r.Kind, r.Namespaced, r.Verbs, r.ShortNames, r.Categories, r.SingularName))
			}
		}
		slices.Sort(lines)
		return strings.Join(lines, "\n"), len(log.not(func(string) bool { return false })) - before
	}
	legacy, legacyRequests := describe(true)
	aggregated, aggregatedRequests := describe(false)
	if aggregatedRequests != 2 || legacyRequests <= 2 {
		t.Errorf("requests: aggregated %d (want 2), legacy %d", aggregatedRequests, legacyRequests)
	}
	for _, want := range []string{"deployments/scale kind=autoscaling/v1/Scale", "gadgets/scale kind=autoscaling/v1/Scale", "events.k8s.io/v1 events", "v1 configmaps kind=", "short=[cm]"} {
		if !strings.Contains(aggregated, want) {
			t.Errorf("aggregated discovery lacks %q:\n%s", want, aggregated)
		}
	}
	if aggregated != legacy {
		t.Errorf("aggregated discovery:\n%s\nlegacy:\n%s", aggregated, legacy)
	}
}

// nextEvent is w's next event, failing the test if the stream ends or ctx does first.
func nextEvent(ctx context.Context, t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("the watch ended")
		}
		return ev
	case <-ctx.Done():
		t.Fatal("no watch event")
	}
	return watch.Event{}
}

// typedWritesWatched lists k, watches from the list's RV, then creates, updates and patches
// (merge, then strategic merge) object x, checking each write's answer and the watch's events;
// it returns the watch, with the two patches' events read, for typedWatchExpiresThenDelete.
func typedWritesWatched(ctx context.Context, t *testing.T, k typedKind) watch.Interface {
	t.Helper()
	_, rv, err := k.list()
	if err != nil {
		t.Fatalf("%s: list: %v", k.name, err)
	}
	w, err := k.watch(rv)
	if err != nil {
		t.Fatalf("%s: watch: %v", k.name, err)
	}
	if err := k.create(); err != nil {
		t.Fatalf("%s: create: %v", k.name, err)
	}
	if ev := nextEvent(ctx, t, w); ev.Type != watch.Added {
		t.Fatalf("%s: first event %v", k.name, ev.Type)
	}
	got, err := k.get()
	if err != nil {
		t.Fatalf("%s: get: %v", k.name, err)
	}
	if _, err := k.update(got); err != nil {
		t.Fatalf("%s: update: %v", k.name, err)
	}
	if ev := nextEvent(ctx, t, w); ev.Type != watch.Modified || ev.Object.(metav1.Object).GetLabels()["updated"] != "yes" {
		t.Fatalf("%s: event after the update %v %+v", k.name, ev.Type, ev.Object)
	}
	if p, err := k.patch(types.MergePatchType, `{"metadata":{"annotations":{"merge":"1"}}}`); err != nil || p.GetAnnotations()["merge"] != "1" {
		t.Fatalf("%s: merge patch: %v", k.name, err)
	}
	if p, err := k.patch(types.StrategicMergePatchType, `{"metadata":{"annotations":{"smp":"1"}}}`); err != nil || p.GetAnnotations()["smp"] != "1" || p.GetAnnotations()["merge"] != "1" {
		t.Fatalf("%s: strategic merge patch: %v", k.name, err)
	}
	nextEvent(ctx, t, w)
	nextEvent(ctx, t, w)
	return w
}

// typedWatchExpiresThenDelete ends w with a 410 and checks what a reflector then sees and does
// (an ERROR event carrying the Status, the stream's end, a relist and a fresh watch), then deletes
// x, first with a failing UID precondition in the protobuf DeleteOptions.
func typedWatchExpiresThenDelete(ctx context.Context, t *testing.T, srv *fakeapi.Server, k typedKind, w watch.Interface) {
	t.Helper()
	// The 410 mid-watch: an ERROR event carrying the Status, then the stream ends.
	srv.Faults().CloseAllWatches(fakeapi.NewWatchError(410))
	ev := nextEvent(ctx, t, w)
	if st, ok := ev.Object.(*metav1.Status); ev.Type != watch.Error || !ok || st.Code != 410 || !apierrors.IsResourceExpired(apierrors.FromObject(ev.Object)) {
		t.Fatalf("%s: after the 410: %v %+v", k.name, ev.Type, ev.Object)
	}
	if _, ok := <-w.ResultChan(); ok {
		t.Fatalf("%s: the watch goes on after its ERROR event", k.name)
	}
	// What a reflector does then: list again and watch from there.
	n, rv, err := k.list()
	if err != nil || n != 1 {
		t.Fatalf("%s: relist: %d %v", k.name, n, err)
	}
	if w, err = k.watch(rv); err != nil {
		t.Fatalf("%s: rewatch: %v", k.name, err)
	}
	// A delete whose protobuf DeleteOptions carry a failing precondition, then a real one.
	if err := k.del(metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(types.UID("nope"))}}); !apierrors.IsConflict(err) {
		t.Fatalf("%s: delete with a wrong uid precondition: %v, want 409", k.name, err)
	}
	if err := k.del(metav1.DeleteOptions{}); err != nil {
		t.Fatalf("%s: delete: %v", k.name, err)
	}
	if ev := nextEvent(ctx, t, w); ev.Type != watch.Deleted && ev.Type != watch.Modified {
		t.Fatalf("%s: event after the delete %v", k.name, ev.Type)
	}
	w.Stop()
}
