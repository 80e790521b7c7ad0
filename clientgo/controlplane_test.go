package clientgo_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim/world"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// clusterSetup writes, at time zero, an owner ConfigMap with a dependent that blocks its
// deletion and a Deployment of 3 replicas; one second later the owner is deleted (background).
// A write into a namespace nobody created is refused as kube-apiserver refuses it.
func clusterSetup(w *world.World) error {
	if err := w.Apply(world.Op{Kind: world.OpCreate, Resource: cmsGVR, Name: "owner"}); err != nil {
		return err
	}
	owner, err := w.Server().Resource(cmsGVR).Namespace("default").Get(context.Background(), "owner", metav1.GetOptions{})
	if err != nil {
		return err
	}
	// A world op carries no owner references: the dependent is written to the apiserver directly.
	dep := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	dep.SetName("dep")
	dep.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: owner.GetUID(), BlockOwnerDeletion: ptrTo(true)}})
	if _, err := w.Server().Resource(cmsGVR).Namespace("default").Create(context.Background(), dep, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := w.Apply(world.Op{Kind: world.OpCreate, Resource: depsGVR, Name: "web",
		Content: map[string]any{"spec": map[string]any{"replicas": int64(3)}}}); err != nil {
		return err
	}
	err = w.Apply(world.Op{Kind: world.OpCreate, Resource: cmsGVR, Namespace: "nope", Name: "x"})
	if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), `namespaces "nope" not found`) {
		return fmt.Errorf("a world write into a namespace nobody created: %v, want 404 namespaces \"nope\" not found", err)
	}
	// A scripted write into a namespace nobody created is refused too, with no error to Setup:
	// the Report counts both.
	_, err = w.Script(time.Second, world.Op{Kind: world.OpDelete, Resource: cmsGVR, Name: "owner"},
		world.Op{Kind: world.OpCreate, Resource: cmsGVR, Namespace: "ghost", Name: "y"})
	return err
}

// probe is a controller whose constructor makes a few calls through client-go and keeps their
// answers, then does nothing.
type probe struct {
	namespaces []string
	createErr  error
}

func (p *probe) Run(ctx context.Context, _ int) error { <-ctx.Done(); return nil }

func (p *probe) new(ctx context.Context, env *clientgo.Env) (clientgo.Controller, error) {
	nss, err := env.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, ns := range nss.Items {
		p.namespaces = append(p.namespaces, ns.Name+"="+string(ns.Status.Phase))
	}
	_, p.createErr = env.Client.CoreV1().ConfigMaps("nope").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	return p, nil
}

// cascaded says the dependent went with its owner and the Deployment reports its replicas.
func cascaded(srv *fakeapi.Server) error {
	if _, err := srv.Resource(cmsGVR).Namespace("default").Get(context.Background(), "dep", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		return fmt.Errorf("the dependent outlives its owner (%v)", err)
	}
	web, err := srv.Resource(depsGVR).Namespace("default").Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		return err
	}
	if n, _, _ := unstructuredInt(web.Object, "status", "availableReplicas"); n != 3 {
		return fmt.Errorf("Deployment web: %d replicas available, want 3", n)
	}
	return nil
}

func ptrTo[T any](v T) *T { return &v }

func unstructuredInt(obj map[string]any, path ...string) (int64, bool, error) {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0, false, nil
		}
		cur = m[p]
	}
	n, ok := cur.(int64)
	return n, ok, nil
}

// TestHarnessRunsTheControlPlane: under the harness, by default, kube-controller-manager's
// stand-ins run (the collector deletes a dependent of a deleted owner, workload status reports
// a Deployment's replicas) and the Report says what they did; the apiserver starts with the
// system namespaces and refuses a create in a namespace that does not exist with
// kube-apiserver's Status, to client-go and to the world's own writes. Cluster.ControlPlane.Off
// turns the stand-ins off: nothing cascades, no status moves, and the Report says so. The
// Report counts the world's own writes refused for a missing namespace (Setup's mistakes).
func TestHarnessRunsTheControlPlane(t *testing.T) {
	p := &probe{}
	var w *world.World
	cfg := clientgo.Config{
		Seed:       3,
		Setup:      func(ww *world.World) error { w = ww; return clusterSetup(ww) },
		Controller: clientgo.Constructor{New: p.new},
		Phases:     clientgo.Phases{FaultsFor: 5 * time.Second},
		Checks:     clientgo.Checks{Outcome: cascaded},
	}
	rep, err := clientgo.Run(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"default=Active", "kube-node-lease=Active", "kube-public=Active", "kube-system=Active"}; !slices.Equal(p.namespaces, want) {
		t.Errorf("namespaces at the start: %q, want %q", p.namespaces, want)
	}
	var se apierrors.APIStatus
	if !errors.As(p.createErr, &se) {
		t.Fatalf("client-go's create in a namespace that does not exist: %v, want kube-apiserver's 404", p.createErr)
	}
	want := metav1.Status{Status: metav1.StatusFailure, Code: 404, Reason: metav1.StatusReasonNotFound,
		Message: `namespaces "nope" not found`, Details: &metav1.StatusDetails{Name: "nope", Kind: "namespaces"}}
	if d := cmp.Diff(want, se.Status()); d != "" {
		t.Errorf("the Status client-go got (-want +got):\n%s", d)
	}
	cp := rep.Diagnostics.ControlPlane
	if cp == nil {
		t.Fatalf("the report says no control plane ran: %v", rep)
	}
	if cp.GarbageCollector.Deletes != 1 || cp.WorkloadStatus.Writes < 1 {
		t.Errorf("control plane counts %+v, want the collector's one delete and a status write", *cp)
	}
	if got := w.ControlPlane().GC.Stats(); got != cp.GarbageCollector {
		t.Errorf("the report's collector counts %+v are not the world's %+v", cp.GarbageCollector, got)
	}
	if !strings.Contains(rep.String(), ", control plane: collector 1 deletes of ") {
		t.Errorf("the report's line does not tell the control plane: %v", rep)
	}
	if rep.Diagnostics.MissingNamespaceWrites != 2 || !strings.HasSuffix(rep.String(), ", 2 world writes refused: their namespace does not exist") {
		t.Errorf("%d world writes into missing namespaces counted, want 2: %v", rep.Diagnostics.MissingNamespaceWrites, rep)
	}
	t.Logf("%v", rep)

	// Off: the dependent stays, the Deployment has no status, the report says none ran.
	off := cfg
	off.Cluster.ControlPlane.Off, off.Checks.Outcome = true, nil
	rep, err = clientgo.Run(t, off)
	if err != nil {
		t.Fatal(err)
	}
	if err := cascaded(w.Server()); err == nil || !strings.Contains(err.Error(), "the dependent outlives its owner") {
		t.Errorf("without the control plane: %v, want the dependent left behind", err)
	}
	if rep.Diagnostics.ControlPlane != nil || !strings.Contains(rep.String(), ", no control plane") || w.ControlPlane() != nil {
		t.Errorf("without the control plane the report says %v", rep)
	}

	// Off and configured at once is a contradiction; the world's own field is the harness's.
	both := cfg
	both.Cluster.ControlPlane = clientgo.ControlPlane{Off: true, Config: controlplane.Config{StaleReads: true}}
	if _, err := clientgo.Run(t, both); err == nil || !strings.Contains(err.Error(), "Off with a Config") {
		t.Errorf("ControlPlane Off with a Config: %v", err)
	}
	worlds := cfg
	worlds.Cluster.World.ControlPlane = &controlplane.Config{}
	if _, err := clientgo.Run(t, worlds); err == nil || !strings.Contains(err.Error(), "World.ControlPlane must be nil") {
		t.Errorf("World.ControlPlane set: %v", err)
	}
}
