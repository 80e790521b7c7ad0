package controlplane_test

import (
	"context"
	"fmt"
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
	// Its status says why it waits, with the namespace deleter's five conditions.
	conds, _, _ := unstructured.NestedSlice(e.get(namespaces, "", "team").Object, "status", "conditions")
	var got []string
	for _, c := range conds {
		m := c.(map[string]any)
		if m["lastTransitionTime"] == nil {
			t.Errorf("condition %v has no lastTransitionTime", m["type"])
		}
		got = append(got, fmt.Sprintf("%v=%v %v: %v", m["type"], m["status"], m["reason"], m["message"]))
	}
	want := []string{
		"NamespaceDeletionDiscoveryFailure=False ResourcesDiscovered: All resources successfully discovered",
		"NamespaceDeletionGroupVersionParsingFailure=False ParsedGroupVersions: All legacy kube types successfully parsed",
		"NamespaceDeletionContentFailure=False ContentDeleted: All content successfully deleted, may be waiting on finalization",
		"NamespaceContentRemaining=True SomeResourcesRemain: Some resources are remaining: configmaps. has 1 resource instances",
		"NamespaceFinalizersRemaining=True SomeFinalizerRemain: Some finalizers are remaining: example.com/hold in 1 resource instances",
	}
	if !slices.Equal(got, want) {
		t.Errorf("conditions of the terminating namespace:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The finalizer's owner lets go: the namespace finishes.
	held = e.get(configmaps, "team", "held")
	held.SetFinalizers(nil)
	if _, err := e.srv.Resource(configmaps).Namespace("team").Update(context.Background(), held, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// First the conditions say the content is gone, then the namespace goes.
	what, err := e.cp.Namespace.Step(context.Background(), e.clk.Now())
	if err != nil || what != "status of namespace team (content removed)" {
		t.Fatalf("the step after the last object went: %q %v", what, err)
	}
	if st, reason := nsCondition(e.get(namespaces, "", "team"), "NamespaceContentRemaining"); st != "False" || reason != "ContentRemoved" {
		t.Fatalf("NamespaceContentRemaining %s/%s once the content is gone", st, reason)
	}
	e.settle()
	if e.get(namespaces, "", "team") != nil {
		t.Fatal("an empty terminating namespace was not removed")
	}
	if e.get(configmaps, "other", "bystander") == nil {
		t.Fatal("deleting a namespace deleted another namespace's object")
	}
	// Two deletes (plain, and held marked), the conditions (content remains, then removed),
	// then the finalize write.
	if s := e.cp.Namespace.Stats(); s.Deletes != 2 || s.Writes != 5 {
		t.Errorf("namespace controller stats %+v, want 2 deletes of 5 writes", s)
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

// nsCondition returns the status and reason of ns's condition typ.
func nsCondition(ns *unstructured.Unstructured, typ string) (string, string) {
	conds, _, _ := unstructured.NestedSlice(ns.Object, "status", "conditions")
	for _, c := range conds {
		if m := c.(map[string]any); m["type"] == typ {
			return fmt.Sprint(m["status"]), fmt.Sprint(m["reason"])
		}
	}
	return "", ""
}

func cm(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	u.SetName(name)
	return u
}
