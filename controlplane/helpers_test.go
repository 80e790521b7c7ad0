package controlplane_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/fakeapi"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	testclock "k8s.io/utils/clock/testing"
)

var (
	configmaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	nodes      = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	events     = schema.GroupVersionResource{Version: "v1", Resource: "events"}
	namespaces = fakeapi.NamespacesGVR
)

type env struct {
	t   *testing.T
	srv *fakeapi.Server
	clk *testclock.FakeClock
	cp  *controlplane.ControlPlane
}

func newEnv(t *testing.T, extra ...fakeapi.Resource) *env {
	t.Helper()
	clk := testclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	srv, err := fakeapi.New(fakeapi.Config{Clock: clk, Resources: extra})
	if err != nil {
		t.Fatal(err)
	}
	cp, err := controlplane.New(srv, controlplane.Config{})
	if err != nil {
		t.Fatal(err)
	}
	checkLending(t, srv)
	return &env{t: t, srv: srv, clk: clk, cp: cp}
}

// checkLending fails t, at its end, if anything changed an object srv lent: the components
// read lent lists (controlplane's base.list) and must never write into them.
func checkLending(t *testing.T, srv *fakeapi.Server) {
	t.Cleanup(func() {
		if err := srv.Lending().Check(); err != nil {
			t.Errorf("an object the server lent was changed: %v", err)
		}
	})
}

// ref is an owner reference to obj.
func ref(obj *unstructured.Unstructured, block bool) metav1.OwnerReference {
	r := metav1.OwnerReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Name: obj.GetName(), UID: obj.GetUID()}
	if block {
		r.BlockOwnerDeletion = &block
	}
	return r
}

func (e *env) create(gvr schema.GroupVersionResource, ns, name string, owners ...metav1.OwnerReference) *unstructured.Unstructured {
	e.t.Helper()
	kind := map[string]string{"configmaps": "ConfigMap", "nodes": "Node", "namespaces": "Namespace"}[gvr.Resource]
	if kind == "" {
		kind = "Widget"
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": gvr.GroupVersion().String(), "kind": kind}}
	u.SetName(name)
	if len(owners) > 0 {
		u.SetOwnerReferences(owners)
	}
	c := e.srv.Resource(gvr)
	if ns != "" {
		c = c.Namespace(ns)
	}
	out, err := c.Create(context.Background(), u, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
	return out
}

func (e *env) delete(gvr schema.GroupVersionResource, ns, name string, opts metav1.DeleteOptions) {
	e.t.Helper()
	c := e.srv.Resource(gvr)
	if ns != "" {
		c = c.Namespace(ns)
	}
	if err := c.Delete(context.Background(), name, opts); err != nil {
		e.t.Fatalf("delete %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
}

// get returns the object or nil when it is gone.
func (e *env) get(gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	e.t.Helper()
	c := e.srv.Resource(gvr)
	if ns != "" {
		c = c.Namespace(ns)
	}
	u, err := c.Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

// settle runs the control plane at the current time until it has nothing to do.
func (e *env) settle() {
	e.t.Helper()
	if err := e.cp.Settle(context.Background(), e.clk.Now(), 1000); err != nil {
		e.t.Fatal(err)
	}
}

func ownerUIDs(u *unstructured.Unstructured) []types.UID {
	var out []types.UID
	for _, r := range u.GetOwnerReferences() {
		out = append(out, r.UID)
	}
	return out
}

func policy(p metav1.DeletionPropagation) metav1.DeleteOptions {
	return metav1.DeleteOptions{PropagationPolicy: &p}
}

func ptr[T any](v T) *T { return &v }

func metav1OwnerRef(apiVersion, kind, name, uid string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid)}
}

func unstructuredString(obj map[string]any, path ...string) (string, bool, error) {
	return unstructured.NestedString(obj, path...)
}

func errorsAs(err error, target *apierrors.APIStatus) bool { return errors.As(err, target) }

// replicatedEnv is newEnv on a server with the given replicas, its control plane configured by
// cfg.
func replicatedEnv(t *testing.T, replicas int, cfg controlplane.Config) (*env, *fakeapi.Server) {
	t.Helper()
	e := newEnv(t)
	srv, err := fakeapi.New(fakeapi.Config{Clock: e.clk, Replicas: replicas})
	if err != nil {
		t.Fatal(err)
	}
	checkLending(t, srv)
	e.srv = srv
	if e.cp, err = controlplane.New(srv, cfg); err != nil {
		t.Fatal(err)
	}
	return e, srv
}
