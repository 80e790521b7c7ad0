package clientgo_test

import (
	"context"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/fakeapi"
	fakerest "github.com/informersim/informersim/fakeapi/rest"
	"github.com/informersim/informersim/kube"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// applyClient is controller-runtime's client over a REST front with every feature of kube/.
func applyClient(t *testing.T) (*fakeapi.Server, ctrlclient.Client) {
	t.Helper()
	srv, err := fakeapi.New(fakeapi.Config{Resources: []fakeapi.Resource{
		clientgo.CustomResource(widgetGV.WithKind("Widget"), "widgets", true, true),
	}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := fakerest.NewHandler(srv, kube.RESTOptions())
	if err != nil {
		t.Fatal(err)
	}
	tr, err := fakerest.NewTransport(h)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &rest.Config{Host: clientgo.Host, Transport: tr, QPS: -1,
		ContentConfig: rest.ContentConfig{ContentType: "application/json"}}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := ctrlclient.New(cfg, ctrlclient.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
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
