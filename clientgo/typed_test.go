package clientgo_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/fakeapi"
	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

func newServer(t testing.TB, cfg fakeapi.Config) (*fakeapi.Server, *kubernetes.Clientset) {
	t.Helper()
	srv, err := fakeapi.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := clientgo.Clientset(srv)
	if err != nil {
		t.Fatal(err)
	}
	return srv, cs
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestTypedConfigMapCRUD drives every verb of the typed ConfigMap client over HTTP.
func TestTypedConfigMapCRUD(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := testCtx(t)
	_, cs := newServer(t, fakeapi.Config{})
	cms := cs.CoreV1().ConfigMaps("a")

	created, err := cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "c1", Labels: map[string]string{"app": "x"}},
		Data:       map[string]string{"k": "v"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.UID == "" || created.ResourceVersion == "" || created.Namespace != "a" || created.Data["k"] != "v" {
		t.Fatalf("created %+v", created)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c1"}}, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: %v, want AlreadyExists", err)
	}
	gen, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "g-"}}, metav1.CreateOptions{})
	if err != nil || len(gen.Name) != len("g-")+5 {
		t.Fatalf("generateName: %v %q", err, gen.Name)
	}

	got, err := cms.Get(ctx, "c1", metav1.GetOptions{})
	if err != nil || got.ResourceVersion != created.ResourceVersion {
		t.Fatalf("get: %v %+v", err, got)
	}
	if _, err := cms.Get(ctx, "nope", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get missing: %v", err)
	}

	got.Data["k"] = "v2"
	updated, err := cms.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil || updated.Data["k"] != "v2" || updated.ResourceVersion == got.ResourceVersion {
		t.Fatalf("update: %v %+v", err, updated)
	}
	// The conflict: an update carrying the stale resourceVersion.
	got.Data["k"] = "stale"
	if _, err := cms.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("stale update: %v, want Conflict", err)
	}

	patched, err := cms.Patch(ctx, "c1", types.MergePatchType, []byte(`{"data":{"p":"1"}}`), metav1.PatchOptions{})
	if err != nil || patched.Data["p"] != "1" || patched.Data["k"] != "v2" {
		t.Fatalf("merge patch: %v %+v", err, patched)
	}
	patched, err = cms.Patch(ctx, "c1", types.JSONPatchType, []byte(`[{"op":"remove","path":"/data/p"}]`), metav1.PatchOptions{})
	if err != nil || len(patched.Data) != 1 {
		t.Fatalf("json patch: %v %+v", err, patched)
	}
	// The server has every feature of kube/: strategic merge patch too.
	patched, err = cms.Patch(ctx, "c1", types.StrategicMergePatchType, []byte(`{"data":{"s":"1"}}`), metav1.PatchOptions{})
	if err != nil || patched.Data["s"] != "1" || patched.Data["k"] != "v2" {
		t.Fatalf("strategic merge patch: %v %+v", err, patched)
	}
	patched, err = cms.Patch(ctx, "c1", types.JSONPatchType, []byte(`[{"op":"remove","path":"/data/s"}]`), metav1.PatchOptions{})
	if err != nil || len(patched.Data) != 1 {
		t.Fatalf("json patch: %v %+v", err, patched)
	}

	list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "app=x"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "c1" || list.ResourceVersion == "" {
		t.Fatalf("list by label: %v %+v", err, list)
	}
	page, err := cms.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || len(page.Items) != 1 || page.Continue == "" {
		t.Fatalf("first page: %v %+v", err, page.ListMeta)
	}
	rest, err := cms.List(ctx, metav1.ListOptions{Limit: 1, Continue: page.Continue})
	if err != nil || len(rest.Items) != 1 || rest.Items[0].Name == page.Items[0].Name {
		t.Fatalf("second page: %v %+v", err, rest)
	}

	if err := cms.Delete(ctx, "c1", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(types.UID("wrong"))}}); !apierrors.IsConflict(err) {
		t.Fatalf("delete with a wrong UID precondition: %v, want Conflict", err)
	}
	if err := cms.Delete(ctx, "c1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "c1", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("second delete: %v", err)
	}
	if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if list, err := cms.List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Fatalf("after deletecollection: %v %d items", err, len(list.Items))
	}
}

// TestTypedPodStatusAndGracefulDelete checks the /status subresource split and pod deletion.
func TestTypedPodStatusAndGracefulDelete(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := testCtx(t)
	_, cs := newServer(t, fakeapi.Config{})
	pods := cs.CoreV1().Pods("a")
	p, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec:       corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Writes to the main resource keep the stored status.
	p.Status.Phase = corev1.PodFailed
	p.Labels = map[string]string{"l": "1"}
	p, err = pods.Update(ctx, p, metav1.UpdateOptions{})
	if err != nil || p.Labels["l"] != "1" || p.Status.Phase != corev1.PodRunning {
		t.Fatalf("update: %v labels %v phase %q", err, p.Labels, p.Status.Phase)
	}
	// Writes to /status change only the status.
	p.Status.Message = "warming up"
	p.Labels = map[string]string{"l": "2"}
	p, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
	if err != nil || p.Labels["l"] != "1" || p.Status.Message != "warming up" {
		t.Fatalf("update status: %v labels %v phase %q", err, p.Labels, p.Status.Phase)
	}
	p, err = pods.Patch(ctx, "p", types.MergePatchType, []byte(`{"status":{"podIP":"10.0.0.1"}}`), metav1.PatchOptions{}, "status")
	if err != nil || p.Status.PodIP != "10.0.0.1" {
		t.Fatalf("status patch: %v %+v", err, p.Status)
	}
	if _, err := pods.Get(ctx, "p", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	byField, err := pods.List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n1"})
	if err != nil || len(byField.Items) != 1 {
		t.Fatalf("field selector: %v %+v", err, byField)
	}
	// A scheduled pod is deleted gracefully: it stays, with a deletionTimestamp.
	if err := pods.Delete(ctx, "p", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err = pods.Get(ctx, "p", metav1.GetOptions{})
	if err != nil || p.DeletionTimestamp == nil {
		t.Fatalf("after graceful delete: %v %+v", err, p)
	}
	if err := pods.Delete(ctx, "p", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx, "p", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after delete with grace 0: %v", err)
	}
}

// TestTypedDeploymentGenerationAndConflict checks generation tracking, the status split and an
// update conflict on an apps/v1 resource.
func TestTypedDeploymentGenerationAndConflict(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := testCtx(t)
	_, cs := newServer(t, fakeapi.Config{})
	deps := cs.AppsV1().Deployments("a")
	d, err := deps.Create(ctx, newDeployment("d", 1), metav1.CreateOptions{})
	if err != nil || d.Generation != 1 {
		t.Fatalf("create: %v generation %d", err, d.Generation)
	}
	stale := d.DeepCopy()
	d.Spec.Replicas = ptr.To[int32](3)
	d, err = deps.Update(ctx, d, metav1.UpdateOptions{})
	if err != nil || d.Generation != 2 {
		t.Fatalf("spec update: %v generation %d", err, d.Generation)
	}
	stale.Spec.Replicas = ptr.To[int32](5)
	if _, err := deps.Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("stale update: %v, want Conflict", err)
	}
	d.Status.ObservedGeneration, d.Status.Replicas = 2, 3
	d, err = deps.UpdateStatus(ctx, d, metav1.UpdateOptions{})
	if err != nil || d.Generation != 2 || d.Status.ObservedGeneration != 2 || d.Status.Replicas != 3 {
		t.Fatalf("status update: %v %+v", err, d)
	}
	if err := deps.Delete(ctx, "d", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}); err != nil {
		t.Fatal(err)
	}
	d, err = deps.Get(ctx, "d", metav1.GetOptions{})
	if err != nil || d.DeletionTimestamp == nil || len(d.Finalizers) != 1 || d.Finalizers[0] != metav1.FinalizerDeleteDependents {
		t.Fatalf("foreground delete keeps the object with a finalizer: %v %+v", err, d)
	}
}

func newDeployment(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
		},
	}
}

// next receives one event or fails after a timeout.
func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	return watch.Event{}
}

// TestTypedWatches watches ConfigMaps, Pods and Deployments through the typed clients, including
// a 410 ERROR mid-watch, a watch from a compacted resourceVersion, and bookmarks.
func TestTypedWatches(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := testCtx(t)
	srv, cs := newServer(t, fakeapi.Config{})

	t.Run("configmaps", func(t *testing.T) { configMapWatchToExpiry(ctx, t, srv, cs) })

	t.Run("pods from a compacted resourceVersion", func(t *testing.T) {
		pods := cs.CoreV1().Pods("w")
		first, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p0"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < 4; i++ {
			if _, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i)}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := srv.Faults().Compact(srv.Revision()); err != nil {
			t.Fatal(err)
		}
		w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: first.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		ev := next(t, w)
		if ev.Type != watch.Error || !apierrors.IsResourceExpired(apierrors.FromObject(ev.Object)) {
			t.Fatalf("watch from a compacted RV: %v %+v, want ERROR 410", ev.Type, ev.Object)
		}
	})

	t.Run("deployments with bookmarks and watch-list", func(t *testing.T) {
		deps := cs.AppsV1().Deployments("w")
		for i := range 2 {
			if _, err := deps.Create(ctx, newDeployment(fmt.Sprintf("d%d", i), 1), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		w, err := deps.Watch(ctx, metav1.ListOptions{
			SendInitialEvents:    ptr.To(true),
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
			AllowWatchBookmarks:  true,
		})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		for i := range 2 {
			if ev := next(t, w); ev.Type != watch.Added || ev.Object.(*appsv1.Deployment).Name != fmt.Sprintf("d%d", i) {
				t.Fatalf("initial event %d: %v %+v", i, ev.Type, ev.Object)
			}
		}
		ev := next(t, w)
		d, ok := ev.Object.(*appsv1.Deployment)
		if ev.Type != watch.Bookmark || !ok || d.Annotations[metav1.InitialEventsAnnotationKey] != "true" {
			t.Fatalf("end of initial events: %v %+v", ev.Type, ev.Object)
		}
		srv.Faults().TriggerBookmarks()
		if ev := next(t, w); ev.Type != watch.Bookmark {
			t.Fatalf("triggered bookmark: %v", ev.Type)
		}
	})
}

// TestTypedFaults checks that injected request failures reach the typed client: a 500 once, a
// connection refused (a transport error, not a Status), and a 429 that client-go retries.
func TestTypedFaults(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := testCtx(t)
	srv, cs := newServer(t, fakeapi.Config{})
	cms := cs.CoreV1().ConfigMaps("a")
	srv.Faults().FailNext(fakeapi.VerbList, apierrors.NewInternalError(fmt.Errorf("boom")))
	if _, err := cms.List(ctx, metav1.ListOptions{}); !apierrors.IsInternalError(err) {
		t.Fatalf("list after FailNext(500): %v", err)
	}
	srv.Faults().FailNext(fakeapi.VerbGet, fakeapi.NewConnectionRefused())
	if _, err := cms.Get(ctx, "x", metav1.GetOptions{}); err == nil || apierrors.ReasonForError(err) != metav1.StatusReasonUnknown {
		t.Fatalf("get after connection refused: %v", err)
	}
	// A 429 with Retry-After: client-go's request retries it (after one second) and succeeds.
	srv.Faults().FailNext(fakeapi.VerbList, apierrors.NewTooManyRequests("slow down", 1))
	if _, err := cms.List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("list after one 429: %v (client-go retries on Retry-After)", err)
	}
	lists := 0
	for _, rq := range srv.Requests() {
		if rq.Verb == fakeapi.VerbList {
			lists++
		}
	}
	if lists != 3 {
		t.Fatalf("%d list requests, want 3 (the 500, the 429 and its retry)", lists)
	}
}

// configMapWatchToExpiry watches ConfigMaps of namespace w through a create, an update and a
// delete, then has the server close that watch with a 410: an ERROR event whose Status reads as
// Expired, then the stream's end.
func configMapWatchToExpiry(ctx context.Context, t *testing.T, srv *fakeapi.Server, cs *kubernetes.Clientset) {
	t.Helper()
	cms := cs.CoreV1().ConfigMaps("w")
	w, err := cms.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	c, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w); ev.Type != watch.Added || ev.Object.(*corev1.ConfigMap).ResourceVersion != c.ResourceVersion {
		t.Fatalf("first event %v %+v", ev.Type, ev.Object)
	}
	c.Data = map[string]string{"a": "b"}
	if _, err := cms.Update(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w); ev.Type != watch.Modified || ev.Object.(*corev1.ConfigMap).Data["a"] != "b" {
		t.Fatalf("second event %v %+v", ev.Type, ev.Object)
	}
	if err := cms.Delete(ctx, "c", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w); ev.Type != watch.Deleted {
		t.Fatalf("third event %v", ev.Type)
	}
	// A 410 mid-watch: the server closes the watch with an ERROR event.
	ids := srv.Faults().Watchers()
	if len(ids) != 1 {
		t.Fatalf("open watches %v", ids)
	}
	if err := srv.Faults().CloseWatch(ids[0], fakeapi.NewWatchError(410)); err != nil {
		t.Fatal(err)
	}
	ev := next(t, w)
	st, ok := ev.Object.(*metav1.Status)
	if ev.Type != watch.Error || !ok || st.Code != 410 || st.Reason != metav1.StatusReasonExpired {
		t.Fatalf("error event %v %+v", ev.Type, ev.Object)
	}
	if !apierrors.IsResourceExpired(apierrors.FromObject(ev.Object)) {
		t.Fatalf("FromObject(%+v) is not Expired", st)
	}
	if _, ok := <-w.ResultChan(); ok {
		t.Fatal("watch still open after the ERROR event")
	}
}
