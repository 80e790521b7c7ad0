package kube

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestSupportsKeepsTheSchemesAnswer checks that the protobuf codec's kept answers are the
// scheme's, asked and asked again, for every kind of its scheme, kinds it lacks, a custom
// resource's, and the unversioned kinds the scheme knows in any group (more of those than the
// codec keeps: the kept answers stay bounded).
func TestSupportsKeepsTheSchemesAnswer(t *testing.T) {
	c := NewProtobufCodec()
	var kinds []schema.GroupVersionKind
	for gvk := range c.scheme.AllKnownTypes() {
		kinds = append(kinds, gvk)
	}
	kinds = append(kinds,
		schema.GroupVersionKind{Group: "samplecontroller.k8s.io", Version: "v1alpha1", Kind: "Foo"},
		schema.GroupVersionKind{Version: "v1", Kind: "NoSuchKind"},
		schema.GroupVersionKind{Group: "meta.k8s.io", Version: "v1", Kind: "Table"},
		schema.GroupVersionKind{Version: "v1"},
	)
	for i := range maxSupported + 100 {
		kinds = append(kinds, schema.GroupVersionKind{Group: fmt.Sprintf("g%d.example.com", i), Version: "v1", Kind: "Status"})
	}
	yes := 0
	for round := range 2 {
		for _, gvk := range kinds {
			want := gvk.Kind != "" && c.supports(gvk)
			if got := c.Supports(gvk); got != want {
				t.Fatalf("round %d: Supports(%v) = %v, the scheme says %v", round, gvk, got, want)
			}
			if want && round == 0 {
				yes++
			}
		}
	}
	if yes < 300 || yes == len(kinds) {
		t.Fatalf("%d of %d kinds supported: the test needs both answers", yes, len(kinds))
	}
	if len(c.supported) > maxSupported {
		t.Fatalf("%d answers kept, at most %d", len(c.supported), maxSupported)
	}
}
