package fakeapi_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/informersim/informersim/fakeapi"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	testclock "k8s.io/utils/clock/testing"
)

var deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

func deployment(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"replicas": int64(1)}}}
	u.SetName(name)
	return u
}

func namespace(name string, finalizers ...string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace"}}
	u.SetName(name)
	if len(finalizers) > 0 {
		_ = unstructured.SetNestedStringSlice(u.Object, finalizers, "spec", "finalizers")
	}
	return u
}

// wantNamespaceNotFound checks err is kube-apiserver's answer to a write into the missing
// namespace ns: the 404 of the NamespaceLifecycle plugin's GET of the namespace, as is.
func wantNamespaceNotFound(t *testing.T, what string, err error, ns string) {
	t.Helper()
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		t.Fatalf("%s: %v, want the 404 of namespaces %q", what, err, ns)
	}
	want := metav1.Status{Status: metav1.StatusFailure, Code: 404, Reason: metav1.StatusReasonNotFound,
		Message: `namespaces "` + ns + `" not found`, Details: &metav1.StatusDetails{Name: ns, Kind: "namespaces"}}
	got := se.Status()
	got.TypeMeta = metav1.TypeMeta{}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("%s: status (-want +got):\n%s", what, d)
	}
}

// TestRequireNamespaces: with Config.RequireNamespaces, a create, an update, a patch and a
// status write into a namespace that does not exist are refused as kube-apiserver's
// NamespaceLifecycle refuses them (404 namespaces "x" not found, before validation), a delete
// is not; without it (a simulation's server) nothing is refused.
func TestRequireNamespaces(t *testing.T) {
	ctx := context.Background()
	clk := testclock.NewFakeClock(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))
	srv, err := fakeapi.New(fakeapi.Config{Clock: clk, RequireNamespaces: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = srv.Resource(configmaps).Namespace("nope").Create(ctx, configMap("x"), metav1.CreateOptions{})
	wantNamespaceNotFound(t, "create", err, "nope")
	_, err = srv.Resource(configmaps).Namespace("nope").Create(ctx, configMap("Not_A_Name"), metav1.CreateOptions{})
	wantNamespaceNotFound(t, "create with an invalid name (admission runs first)", err, "nope")
	if _, err := srv.Resource(configmaps).Namespace("nope").Get(ctx, "x", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a refused create created: %v", err)
	}
	// Cluster-scoped objects are not checked.
	if _, err := srv.Resource(fakeapi.NamespacesGVR).Create(ctx, namespace("team"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	team := srv.Resource(configmaps).Namespace("team")
	for _, name := range []string{"a", "b", "c"} {
		if _, err := team.Create(ctx, configMap(name), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create in an existing namespace: %v", err)
		}
	}
	// A namespace without spec.finalizers goes at once and leaves its objects behind (nothing
	// but the namespace controller empties it): writes to them are now refused, deletes are not.
	if err := srv.Resource(fakeapi.NamespacesGVR).Delete(ctx, "team", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	a, err := team.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a.Object["data"] = map[string]any{"k": "changed"}
	_, err = team.Update(ctx, a, metav1.UpdateOptions{})
	wantNamespaceNotFound(t, "update", err, "team")
	_, err = team.Patch(ctx, "b", types.MergePatchType, []byte(`{"data":{"k":"patched"}}`), metav1.PatchOptions{})
	wantNamespaceNotFound(t, "patch", err, "team")
	if err := team.Delete(ctx, "c", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete in a missing namespace: %v", err)
	}
	// A status write (deployments have /status) is an update too.
	deps := srv.Resource(deploymentsGVR).Namespace("nope")
	_, err = deps.UpdateStatus(ctx, deployment("web"), metav1.UpdateOptions{})
	if !apierrors.IsNotFound(err) { // the object is looked up first: deployments "web" not found
		t.Fatalf("status write of a missing object: %v", err)
	}

	// Off: a simulation's writers use namespaces nobody created.
	plain, _ := newServer()
	if _, err := plain.Resource(configmaps).Namespace("nope").Create(ctx, configMap("x"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create without RequireNamespaces: %v", err)
	}
}

// TestStatusWriteInAMissingNamespace: a /status write of an object whose namespace is gone is
// refused by admission like any update.
func TestStatusWriteInAMissingNamespace(t *testing.T) {
	ctx := context.Background()
	srv, err := fakeapi.New(fakeapi.Config{RequireNamespaces: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Resource(fakeapi.NamespacesGVR).Create(ctx, namespace("team"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deps := srv.Resource(deploymentsGVR).Namespace("team")
	d, err := deps.Create(ctx, deployment("web"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Resource(fakeapi.NamespacesGVR).Delete(ctx, "team", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	d.Object["status"] = map[string]any{"replicas": int64(1)}
	_, err = deps.UpdateStatus(ctx, d, metav1.UpdateOptions{})
	wantNamespaceNotFound(t, "status write", err, "team")
}

// TestCreateInATerminatingNamespaceNamesTheRequest: the 403 of a create in a terminating
// namespace names the object as the plugin does, a generateName create by its prefix (the name
// is drawn after admission), and comes before AlreadyExists.
func TestCreateInATerminatingNamespaceNamesTheRequest(t *testing.T) {
	ctx := context.Background()
	srv, _ := newServer()
	if _, err := srv.Resource(fakeapi.NamespacesGVR).Create(ctx, namespace("team", fakeapi.NamespaceFinalizer), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	team := srv.Resource(configmaps).Namespace("team")
	if _, err := team.Create(ctx, configMap("x"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := srv.Resource(fakeapi.NamespacesGVR).Delete(ctx, "team", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	gen := configMap("")
	gen.SetGenerateName("cm-")
	for _, tc := range []struct {
		obj  *unstructured.Unstructured
		want string
	}{
		{gen, `configmaps "cm-" is forbidden: unable to create new content in namespace team because it is being terminated`},
		{configMap("x"), `configmaps "x" is forbidden: unable to create new content in namespace team because it is being terminated`},
	} {
		_, err := team.Create(ctx, tc.obj, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) || err.Error() != tc.want {
			t.Errorf("create: %v, want %q", err, tc.want)
		}
	}
}
