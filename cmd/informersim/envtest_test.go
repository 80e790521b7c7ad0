//go:build serve

package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Goal: a kubebuilder project's envtest setup runs against `informersim serve` unchanged, as a
// user runs it with USE_EXISTING_CLUSTER=true and serve's kubeconfig in KUBECONFIG:
// controller-runtime's envtest installs a directory of CRDs (creating them, then polling
// discovery until served) and its client then creates custom resources that the server
// defaults and validates by their schema.
func TestServeEnvtestExistingCluster(t *testing.T) {
	crds := t.TempDir()
	if err := os.WriteFile(filepath.Join(crds, "example.org_gadgets.yaml"), []byte(crdManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, _, code := startServing(t, ctx, cancel, "-addr=127.0.0.1:0", "-kubeconfig="+kubeconfig)
	t.Setenv("USE_EXISTING_CLUSTER", "true")
	t.Setenv("KUBECONFIG", kubeconfig)

	// What a kubebuilder v4 scaffold's suite_test.go does in BeforeSuite.
	env := &envtest.Environment{CRDDirectoryPaths: []string{crds}, ErrorIfCRDPathMissing: true}
	start := time.Now()
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest.Environment.Start: %v", err)
	}
	t.Logf("envtest started against informersim serve, CRDs installed, in %v", time.Since(start))
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.org/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g1", "namespace": "default"},
		"spec":     map[string]any{},
	}}
	if err := c.Create(ctx, g); err != nil {
		t.Fatalf("create a gadget: %v", err)
	}
	if size, _, _ := unstructured.NestedInt64(g.Object, "spec", "size"); size != 2 {
		t.Errorf("the created gadget's spec.size is %d, want the schema's default 2: %v", size, g.Object)
	}
	bad := g.DeepCopy()
	bad.SetName("g2")
	bad.SetResourceVersion("")
	_ = unstructured.SetNestedField(bad.Object, int64(0), "spec", "size")
	if err := c.Create(ctx, bad); !apierrors.IsInvalid(err) {
		t.Errorf("create of an invalid gadget: %v, want Invalid", err)
	}
	if err := env.Stop(); err != nil {
		t.Errorf("envtest.Environment.Stop: %v", err)
	}
	cancel()
	if c := <-code; c != 0 {
		t.Errorf("serve exit %d", c)
	}
}
