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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	ctrlrecorder "sigs.k8s.io/controller-runtime/pkg/recorder"
)

// applyClient is controller-runtime's client over clientgo.RESTConfig (kube/'s front, client-go's
// default content types).
func applyClient(t *testing.T) (*fakeapi.Server, ctrlclient.Client) {
	t.Helper()
	srv, cfg := widgetREST(t)
	c, err := ctrlclient.New(cfg, ctrlclient.Options{Scheme: builtinScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

// builtinScheme is a scheme of client-go's built-in types.
func builtinScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}

// managersOf lists the managedFields of obj as "manager/operation[/subresource]".
func managersOf(obj metav1.Object) []string {
	var out []string
	for _, e := range obj.GetManagedFields() {
		s := e.Manager + "/" + string(e.Operation)
		if e.Subresource != "" {
			s += "/" + e.Subresource
		}
		out = append(out, s)
	}
	return out
}

// TestControllerRuntimeApply writes with controller-runtime's client.Apply (server-side apply
// with client-go's apply configurations): an apply that creates, a second owner's conflict
// and ForceOwnership, the status subresource's own manager, and a custom resource applied
// from an unstructured object.
func TestControllerRuntimeApply(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, c := applyClient(t)

	cm := corev1ac.ConfigMap("settings", "a").WithData(map[string]string{"level": "1"})
	if err := c.Apply(ctx, cm, ctrlclient.FieldOwner("ctrl")); err != nil {
		t.Fatalf("apply that creates: %v", err)
	}
	var got corev1.ConfigMap
	if err := c.Get(ctx, ctrlclient.ObjectKey{Namespace: "a", Name: "settings"}, &got); err != nil || got.Data["level"] != "1" {
		t.Fatalf("get: %v %+v", err, got.Data)
	}
	if m := managersOf(&got); len(m) != 1 || m[0] != "ctrl/Apply" {
		t.Fatalf("managers %v", m)
	}
	other := corev1ac.ConfigMap("settings", "a").WithData(map[string]string{"level": "2"})
	err := c.Apply(ctx, other, ctrlclient.FieldOwner("other"))
	var se apierrors.APIStatus
	if !apierrors.IsConflict(err) || !asStatus(err, &se) || len(se.Status().Details.Causes) != 1 || se.Status().Details.Causes[0].Field != ".data.level" {
		t.Fatalf("conflicting apply: %v, want a 409 naming .data.level", err)
	}
	if err := c.Apply(ctx, other, ctrlclient.FieldOwner("other"), ctrlclient.ForceOwnership); err != nil {
		t.Fatalf("forced apply: %v", err)
	}
	if err := c.Get(ctx, ctrlclient.ObjectKey{Namespace: "a", Name: "settings"}, &got); err != nil || got.Data["level"] != "2" {
		t.Fatalf("after the forced apply: %v %+v", err, got.Data)
	}

	// A Deployment, then its status through the status subresource: two managers.
	labels := map[string]string{"app": "web"}
	dep := appsv1ac.Deployment("web", "a").WithSpec(appsv1ac.DeploymentSpec().
		WithReplicas(2).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(corev1ac.PodSpec().
			WithContainers(corev1ac.Container().WithName("app").WithImage("nginx:1")))))
	if err := c.Apply(ctx, dep, ctrlclient.FieldOwner("ctrl")); err != nil {
		t.Fatalf("apply of a deployment: %v", err)
	}
	st := appsv1ac.Deployment("web", "a").WithStatus(appsv1ac.DeploymentStatus().WithReadyReplicas(2).WithObservedGeneration(1))
	if err := c.Status().Apply(ctx, st, ctrlclient.FieldOwner("ctrl-status")); err != nil {
		t.Fatalf("status apply: %v", err)
	}
	var d appsv1.Deployment
	if err := c.Get(ctx, ctrlclient.ObjectKey{Namespace: "a", Name: "web"}, &d); err != nil {
		t.Fatal(err)
	}
	if d.Status.ReadyReplicas != 2 || *d.Spec.Replicas != 2 || d.Spec.Template.Spec.Containers[0].Image != "nginx:1" {
		t.Fatalf("deployment %+v %+v", d.Spec, d.Status)
	}
	if m := managersOf(&d); len(m) != 2 || m[0] != "ctrl/Apply" || m[1] != "ctrl-status/Apply/status" {
		t.Fatalf("managers %v", m)
	}

	// A custom resource, applied from an unstructured object (deduced schema).
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "a"},
		"spec":     map[string]any{"size": int64(3)},
	}}
	if err := c.Apply(ctx, ctrlclient.ApplyConfigurationFromUnstructured(w), ctrlclient.FieldOwner("ctrl")); err != nil {
		t.Fatalf("apply of a custom resource: %v", err)
	}
	out := &unstructured.Unstructured{}
	out.SetGroupVersionKind(widgetGV.WithKind("Widget"))
	if err := c.Get(ctx, ctrlclient.ObjectKey{Namespace: "a", Name: "w"}, out); err != nil {
		t.Fatal(err)
	}
	if size, _, _ := unstructured.NestedInt64(out.Object, "spec", "size"); size != 3 {
		t.Fatalf("widget %v", out.Object)
	}
}

func asStatus(err error, into *apierrors.APIStatus) bool {
	s, ok := err.(apierrors.APIStatus)
	if ok {
		*into = s
	}
	return ok
}

// copier is a reconciler that keeps a copy of every ConfigMap labelled copy=yes, written with
// server-side apply, and records an event on the source with both of controller-runtime's
// recorders (events.k8s.io/v1, and core/v1 through client-go's EventBroadcaster, whose
// correlator counts a repeated event with a strategic merge patch).
type copier struct {
	c      ctrlclient.Client
	events ctrlrecorder.EventRecorder
	legacy record.EventRecorder
}

func (r *copier) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var src corev1.ConfigMap
	if err := r.c.Get(ctx, req.NamespacedName, &src); err != nil {
		return reconcile.Result{}, ctrlclient.IgnoreNotFound(err)
	}
	if src.Labels["copy"] != "yes" {
		return reconcile.Result{}, nil
	}
	dst := corev1ac.ConfigMap(src.Name+"-copy", src.Namespace).WithData(src.Data)
	if err := r.c.Apply(ctx, dst, ctrlclient.FieldOwner("copier"), ctrlclient.ForceOwnership); err != nil {
		return reconcile.Result{}, err
	}
	r.events.Eventf(&src, nil, corev1.EventTypeNormal, "Copied", "Copy", "copied to %s-copy", src.Name)
	r.legacy.Eventf(&src, corev1.EventTypeNormal, "Copied", "copied to %s-copy", src.Name)
	return reconcile.Result{}, nil
}

// TestControllerRuntimeManagerApplyAndEvents runs a controller-runtime manager whose reconciler
// writes with client.Apply and records events: the copy follows its source through two
// changes, owned by the reconciler's field manager, and both kinds of events are listable, the
// core/v1 one counted twice by the broadcaster's correlator (a strategic merge patch).
func TestControllerRuntimeManagerApplyAndEvents(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, cfg := widgetREST(t)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := manager.New(cfg, manager.Options{
		Scheme:                 builtinScheme(t),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &copier{c: mgr.GetClient(), events: mgr.GetEventRecorder("copier"), legacy: mgr.GetEventRecorderFor("copier")} //nolint:staticcheck // the legacy recorder is the one whose correlator patches
	if err := builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Complete(r); err != nil {
		t.Fatal(err)
	}
	mgrCtx, stopMgr := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mgrCtx) }()
	defer func() {
		stopMgr()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}()

	cms := cs.CoreV1().ConfigMaps("default")
	src := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "src", Namespace: "default", Labels: map[string]string{"copy": "yes"}}, Data: map[string]string{"v": "1"}}
	if _, err := cms.Create(ctx, src, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			select {
			case <-ctx.Done():
				t.Fatalf("%s: not within the test's deadline", what)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	copyHas := func(v string) func() bool {
		return func() bool {
			got, err := cms.Get(ctx, "src-copy", metav1.GetOptions{})
			return err == nil && got.Data["v"] == v
		}
	}
	waitFor("the copy", copyHas("1"))
	if _, err := cms.Patch(ctx, "src", types.StrategicMergePatchType, []byte(`{"data":{"v":"2"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("the copy of the change", copyHas("2"))
	got, err := cms.Get(ctx, "src-copy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := managersOf(got); len(m) != 1 || m[0] != "copier/Apply" {
		t.Errorf("the copy's managers %v, want copier/Apply", m)
	}
	waitFor("a core/v1 event counted twice", func() bool {
		l, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, e := range l.Items {
			if e.Reason == "Copied" && e.InvolvedObject.Name == "src" && e.Count >= 2 {
				return true
			}
		}
		return false
	})
	waitFor("an events.k8s.io/v1 event", func() bool {
		l, err := cs.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, e := range l.Items {
			if e.Reason == "Copied" && e.Action == "Copy" && e.Regarding.Name == "src" && e.ReportingController == "copier" {
				return true
			}
		}
		return false
	})
}
