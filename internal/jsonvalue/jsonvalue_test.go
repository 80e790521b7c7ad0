package jsonvalue

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/informersim/informersim/internal/jsonvalue/jsonvaluetest"
)

// TestEqualIsDeepEqual checks Equal against reflect.DeepEqual on random pairs, on a value
// against itself (the shared-pointer shortcut, NaN included) and on shared subtrees.
func TestEqualIsDeepEqual(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 200000; i++ {
		a, b := jsonvaluetest.Random(r, 0), jsonvaluetest.Random(r, 0)
		if i%3 == 0 {
			b = a
		}
		if got, want := Equal(a, b), reflect.DeepEqual(a, b); got != want {
			t.Fatalf("Equal(%#v, %#v) = %v, DeepEqual = %v", a, b, got, want)
		}
		wa := map[string]any{"spec": a, "metadata": map[string]any{"name": "n"}}
		wb := map[string]any{"spec": b, "metadata": map[string]any{"name": "n"}}
		if got, want := MapsEqual(wa, wb), reflect.DeepEqual(wa, wb); got != want {
			t.Fatalf("MapsEqual(%#v, %#v) = %v, DeepEqual = %v", wa, wb, got, want)
		}
	}
}
