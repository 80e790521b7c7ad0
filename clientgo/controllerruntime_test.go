package clientgo_test

import (
	"context"
	"testing"
	"time"

	"github.com/informersim/informersim/fakeapi"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// TestControllerRuntimeClientAndCache uses controller-runtime's client (typed, unstructured and
// metadata-only) and its informer cache over the REST front: create, get, list with a selector,
// update with a conflict, status update, delete, and a cache that follows writes through its
// watches.
func TestControllerRuntimeClientAndCache(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, cfg := widgetREST(t)
	scheme := builtinScheme(t)
	scheme.AddKnownTypes(widgetGV, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(scheme, widgetGV)
	c, err := ctrlclient.New(cfg, ctrlclient.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}

	// The client: CRUD, a conflict, a status update; then lists of three kinds.
	deploymentThroughClient(ctx, t, c)
	listsThroughClient(ctx, t, c)

	// The cache: it syncs, then follows writes through its watches.
	informers, err := ctrlcache.New(cfg, ctrlcache.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	cctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- informers.Start(cctx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("cache: %v", err)
		}
	}()
	if !informers.WaitForCacheSync(ctx) {
		t.Fatal("cache did not start")
	}
	var cached corev1.ConfigMapList
	if err := informers.List(ctx, &cached, ctrlclient.InNamespace("a")); err != nil || len(cached.Items) != 1 {
		t.Fatalf("cache list: %v %d items", err, len(cached.Items))
	}
	var w Widget
	if err := informers.Get(ctx, ctrlclient.ObjectKey{Namespace: "a", Name: "u1"}, &w); err != nil {
		t.Fatalf("cache get of a widget: %v", err)
	}
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "c3"}}); err != nil {
		t.Fatal(err)
	}
	w.Spec.Size = 5
	if err := c.Update(ctx, &w); err != nil {
		t.Fatal(err)
	}
	srv.Faults().CloseAllWatches(fakeapi.NewWatchError(410)) // the cache relists and still converges
	if err := c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "c2"}}); err != nil {
		t.Fatal(err)
	}
	for {
		var now corev1.ConfigMapList
		var cw Widget
		err1 := informers.List(ctx, &now, ctrlclient.InNamespace("a"))
		err2 := informers.Get(ctx, ctrlclient.ObjectKey{Namespace: "a", Name: "u1"}, &cw)
		if err1 == nil && err2 == nil && len(now.Items) == 1 && now.Items[0].Name == "c3" && cw.Spec.Size == 5 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("cache did not follow the writes: %v %v %+v size %d", err1, err2, now.Items, cw.Spec.Size)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// deploymentThroughClient takes a Deployment through controller-runtime's typed client: create,
// get, update (generation 2), a stale update that must conflict, a status update that leaves the
// spec alone, and a merge patch.
func deploymentThroughClient(ctx context.Context, t *testing.T, c ctrlclient.Client) {
	t.Helper()
	dep := newDeployment("web", 1)
	dep.Namespace = "a"
	if err := c.Create(ctx, dep); err != nil {
		t.Fatal(err)
	}
	var got appsv1.Deployment
	if err := c.Get(ctx, ctrlclient.ObjectKey{Namespace: "a", Name: "web"}, &got); err != nil || got.Generation != 1 {
		t.Fatalf("get: %v %+v", err, got.ObjectMeta)
	}
	stale := got.DeepCopy()
	got.Spec.Replicas = ptr.To[int32](4)
	if err := c.Update(ctx, &got); err != nil || got.Generation != 2 {
		t.Fatalf("update: %v generation %d", err, got.Generation)
	}
	stale.Spec.Replicas = ptr.To[int32](7)
	if err := c.Update(ctx, stale); !apierrors.IsConflict(err) {
		t.Fatalf("stale update: %v, want Conflict", err)
	}
	got.Status.ObservedGeneration, got.Status.ReadyReplicas = 2, 4
	if err := c.Status().Update(ctx, &got); err != nil || got.Status.ReadyReplicas != 4 || *got.Spec.Replicas != 4 {
		t.Fatalf("status update: %v %+v", err, got.Status)
	}
	patch := ctrlclient.MergeFrom(got.DeepCopy())
	got.Labels = map[string]string{"tier": "front"}
	if err := c.Patch(ctx, &got, patch); err != nil || got.Labels["tier"] != "front" {
		t.Fatalf("merge patch: %v %+v", err, got.Labels)
	}
}

// listsThroughClient leaves namespace a with ConfigMap c2 and Widget u1 (what the cache of
// TestControllerRuntimeClientAndCache starts from), checking on the way a list with a label
// selector, an unstructured create of a custom resource and a metadata-only list.
func listsThroughClient(ctx context.Context, t *testing.T, c ctrlclient.Client) {
	t.Helper()
	for _, name := range []string{"c1", "c2"} {
		if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: name, Labels: map[string]string{"n": name}}}); err != nil {
			t.Fatal(err)
		}
	}
	var cms corev1.ConfigMapList
	if err := c.List(ctx, &cms, ctrlclient.InNamespace("a"), ctrlclient.MatchingLabels{"n": "c2"}); err != nil || len(cms.Items) != 1 || cms.Items[0].Name != "c2" {
		t.Fatalf("list with selector: %v %+v", err, cms.Items)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(widgetGV.WithKind("Widget"))
	u.SetNamespace("a")
	u.SetName("u1")
	if err := c.Create(ctx, u); err != nil {
		t.Fatalf("unstructured create of a custom resource: %v", err)
	}
	meta := &metav1.PartialObjectMetadataList{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
	if err := c.List(ctx, meta, ctrlclient.InNamespace("a")); err != nil || len(meta.Items) != 2 {
		t.Fatalf("metadata-only list: %v %+v", err, meta.Items)
	}
	if err := c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "c1"}}); err != nil {
		t.Fatal(err)
	}
}
