package clientgo_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gadgetsCRDWithColumns is gadgetsCRD with a short name and a printer column.
var gadgetsCRDWithColumns = strings.Replace(strings.Replace(gadgetsCRD,
	"plural: gadgets, singular: gadget}", "plural: gadgets, singular: gadget, shortNames: [gd]}", 1),
	"    subresources: {status: {}}\n", "    subresources: {status: {}}\n    additionalPrinterColumns:\n    - {name: Size, type: integer, jsonPath: .spec.size}\n", 1)

// TestKubectlCRDs runs the real kubectl against `informersim serve` through a custom resource's
// life as a kubebuilder project's user lives it: `kubectl apply -f config/crd/bases`, `kubectl
// wait --for=condition=Established`, objects applied and defaulted by the schema, listed by
// short name with the printer columns, an invalid one and one with an unknown field refused
// (kubectl validates on the server, strictly), and the definition deleted with its objects.
func TestKubectlCRDs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	srv := startServe(t, ctx)
	command, run := srv.kubectl(t, ctx)
	expect := func(got, want string) {
		t.Helper()
		if got != want {
			t.Fatalf("kubectl printed %q, want %q", got, want)
		}
	}
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(srv.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("bases/example.org_gadgets.yaml", gadgetsCRDWithColumns)
	expect(run("apply", "-f", filepath.Join(srv.dir, "bases")), "customresourcedefinition.apiextensions.k8s.io/gadgets.example.org created")
	expect(run("wait", "--for=condition=Established", "crd/gadgets.example.org", "--timeout=10s"),
		"customresourcedefinition.apiextensions.k8s.io/gadgets.example.org condition met")

	expect(run("apply", "-f", write("g1.yaml", "apiVersion: example.org/v1\nkind: Gadget\nmetadata: {name: g1}\nspec: {}\n")), "gadget.example.org/g1 created")
	expect(run("get", "gd", "g1", "-o", "jsonpath={.spec.size}"), "2")
	if out := run("get", "gadgets"); !strings.HasPrefix(out, "NAME   SIZE") || !strings.Contains(out, "g1     2") {
		t.Errorf("kubectl get gadgets printed:\n%s", out)
	}
	if out, err := command("apply", "-f", write("g2.yaml", "apiVersion: example.org/v1\nkind: Gadget\nmetadata: {name: g2}\nspec: {size: 0}\n")).CombinedOutput(); err == nil ||
		!strings.Contains(string(out), "spec.size in body should be greater than or equal to 1") {
		t.Errorf("kubectl apply of an invalid gadget: %v\n%s", err, out)
	}
	if out, err := command("apply", "-f", write("g3.yaml", "apiVersion: example.org/v1\nkind: Gadget\nmetadata: {name: g3}\nspec: {colour: red}\n")).CombinedOutput(); err == nil ||
		!strings.Contains(string(out), `unknown field "spec.colour"`) {
		t.Errorf("kubectl apply of a gadget with an unknown field: %v\n%s", err, out)
	}

	expect(run("delete", "crd", "gadgets.example.org"), `customresourcedefinition.apiextensions.k8s.io "gadgets.example.org" deleted`)
	// kubectl's discovery cache still names the resource: the list is a 404, as from a cluster.
	if out, err := command("get", "gadgets").CombinedOutput(); err == nil || !strings.Contains(string(out), `Error from server (NotFound): Unable to list "example.org/v1, Resource=gadgets"`) {
		t.Errorf("kubectl get gadgets after the definition's deletion: %v\n%s", err, out)
	}
}
