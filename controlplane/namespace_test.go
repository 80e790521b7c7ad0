package controlplane_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/informersim/informersim/fakeapi"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// createNamespace creates ns as kube-apiserver's strategy makes it: Active, with the kubernetes
// finalizer in spec.finalizers.
func (e *env) createNamespace(name string) {
	e.t.Helper()
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"finalizers": []any{fakeapi.NamespaceFinalizer}},
		"status":   map[string]any{"phase": "Active"},
	}}
	if _, err := e.srv.Resource(namespaces).Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func TestNamespaceDeletionWaitsForItsContentsAndTheirFinalizers(t *testing.T) {
	e := newEnv(t)
	e.createNamespace("team")
	e.createNamespace("other")
	e.create(configmaps, "team", "plain")
	held := e.create(configmaps, "team", "held")
	held.SetFinalizers([]string{"example.com/hold"})
	if _, err := e.srv.Resource(configmaps).Namespace("team").Update(context.Background(), held, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.create(configmaps, "other", "bystander")
	e.delete(namespaces, "", "team", metav1.DeleteOptions{})
	ns := e.get(namespaces, "", "team")
	if ns == nil || ns.GetDeletionTimestamp() == nil {
		t.Fatalf("a namespace with the kubernetes finalizer is removed at once: %v", ns)
	}
	if phase, _, _ := unstructured.NestedString(ns.Object, "status", "phase"); phase != "Terminating" {
		t.Fatalf("phase %q, want Terminating", phase)
	}
	// A write to the terminating namespace that keeps spec.finalizers does not delete it.
	ns.SetLabels(map[string]string{"touched": "yes"})
	if _, err := e.srv.Resource(namespaces).Update(context.Background(), ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if e.get(namespaces, "", "team") == nil {
		t.Fatal("an update of a terminating namespace with spec.finalizers deleted it")
	}
	// New content is refused while it terminates, with kube-apiserver's 403.
	_, err := e.srv.Resource(configmaps).Namespace("team").Create(context.Background(), cm("late"), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "unable to create new content in namespace team because it is being terminated") {
		t.Fatalf("create in a terminating namespace: %v", err)
	}
	var se apierrors.APIStatus
	if !errorsAs(err, &se) || se.Status().Details == nil || !slices.ContainsFunc(se.Status().Details.Causes, func(c metav1.StatusCause) bool { return c.Type == "NamespaceTerminating" }) {
		t.Fatalf("no NamespaceTerminating cause: %v", err)
	}
	e.settle()
	if e.get(configmaps, "team", "plain") != nil {
		t.Fatal("the namespace controller left an object in the terminating namespace")
	}
	if got := e.get(configmaps, "team", "held"); got == nil || got.GetDeletionTimestamp() == nil {
		t.Fatalf("the object held by a finalizer: %v", got)
	}
	if e.get(namespaces, "", "team") == nil {
		t.Fatal("the namespace went while an object in it was held by a finalizer")
	}
	// The finalizer's owner lets go: the namespace finishes.
	held = e.get(configmaps, "team", "held")
	held.SetFinalizers(nil)
	if _, err := e.srv.Resource(configmaps).Namespace("team").Update(context.Background(), held, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.settle()
	if e.get(namespaces, "", "team") != nil {
		t.Fatal("an empty terminating namespace was not removed")
	}
	if e.get(configmaps, "other", "bystander") == nil {
		t.Fatal("deleting a namespace deleted another namespace's object")
	}
	// Two deletes (plain, and held marked), then the finalize write.
	if s := e.cp.Namespace.Stats(); s.Deletes != 2 || s.Writes != 3 {
		t.Errorf("namespace controller stats %+v, want 2 deletes of 3 writes", s)
	}
	// Its name is free again.
	e.createNamespace("team")
	e.create(configmaps, "team", "again")
}

func TestSystemNamespacesCannotBeDeleted(t *testing.T) {
	e := newEnv(t)
	for _, name := range []string{"default", "kube-system", "kube-public"} {
		e.createNamespace(name)
		err := e.srv.Resource(namespaces).Delete(context.Background(), name, metav1.DeleteOptions{})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "this namespace may not be deleted") {
			t.Errorf("delete namespace %s: %v", name, err)
		}
	}
	e.createNamespace("kube-node-lease") // not protected, as in kube-apiserver
	e.delete(namespaces, "", "kube-node-lease", metav1.DeleteOptions{})
	e.settle()
	if e.get(namespaces, "", "kube-node-lease") != nil {
		t.Error("kube-node-lease was not deleted")
	}
}

func cm(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	u.SetName(name)
	return u
}
