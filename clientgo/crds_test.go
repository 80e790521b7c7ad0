package clientgo_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/fakeapi"
	fakerest "github.com/informersim/informersim/fakeapi/rest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// gadgetsCRD is a CustomResourceDefinition as kubebuilder writes one into config/crd/bases.
const gadgetsCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.org
spec:
  group: example.org
  names: {kind: Gadget, listKind: GadgetList, plural: gadgets, singular: gadget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, minimum: 1, default: 2}
`

// TestHarnessInstallsCRDs: Cluster.CRDs, read from a directory of manifests, are installed before
// the controller starts; its main creates a custom resource with a dynamic client, which the
// apiserver defaults by the schema, and refuses one the schema forbids.
func TestHarnessInstallsCRDs(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "example.org_gadgets.yaml"), []byte(gadgetsCRD), 0o644); err != nil {
		t.Fatal(err)
	}
	crds, err := fakerest.ReadDefinitions(dir)
	if err != nil {
		t.Fatal(err)
	}
	gadgets := schema.GroupVersionResource{Group: "example.org", Version: "v1", Resource: "gadgets"}
	gadget := func(name string, spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.org/v1", "kind": "Gadget", "metadata": map[string]any{"name": name}, "spec": spec,
		}}
	}
	refused := ""
	cfg := clientgo.Config{
		Seed:    1,
		Cluster: clientgo.Cluster{CRDs: crds},
		Controller: clientgo.Main(func(ctx context.Context, c *rest.Config) error {
			dc, err := dynamic.NewForConfig(c)
			if err != nil {
				return err
			}
			if _, err := dc.Resource(gadgets).Namespace("default").Create(ctx, gadget("g1", map[string]any{}), metav1.CreateOptions{}); err != nil {
				return err
			}
			_, err = dc.Resource(gadgets).Namespace("default").Create(ctx, gadget("g2", map[string]any{"size": int64(0)}), metav1.CreateOptions{})
			refused = fmt.Sprint(err)
			<-ctx.Done()
			return nil
		}),
		Checks: clientgo.Checks{Outcome: func(srv *fakeapi.Server) error {
			l, err := srv.Snapshot(gadgets, "", metav1.ListOptions{})
			if err != nil {
				return err
			}
			if len(l.Items) != 1 {
				return fmt.Errorf("%d gadgets, want g1", len(l.Items))
			}
			if size, _, _ := unstructured.NestedInt64(l.Items[0].Object, "spec", "size"); size != 2 {
				return fmt.Errorf("g1's spec.size is %d, want the default 2", size)
			}
			return nil
		}},
	}
	if rep, err := clientgo.Run(t, cfg); err != nil {
		t.Fatalf("%v\n%s", err, rep.Failure)
	}
	if !strings.Contains(refused, "spec.size in body should be greater than or equal to 1") {
		t.Errorf("the invalid gadget's create: %s", refused)
	}
}
