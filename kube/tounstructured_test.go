package kube

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// Goal: toUnstructuredByPlan gives the maps apimachinery's converter gives (reflect.DeepEqual)
// for random objects of every type of client-go's scheme and of a custom resource's type with a
// field of every kind, or leaves the object to the converter, always when the converter errs;
// and leaves the object as it was. The plan must convert most of them. Fails with an omitempty
// or omitzero rule left out, a named simple kind offered to its own conversion in a struct
// field, bytes not in base64, a nil pointer written as absent, a fieldsV1 or a time converted
// otherwise.
func TestToUnstructuredAsTheConverter(t *testing.T) {
	types := testTypes()
	r := rand.New(rand.NewPCG(27, 28))
	cases, byPlan, errs := 0, 0, 0
	for range 6 {
		for _, typ := range types {
			obj := reflect.New(typ)
			fill(r, obj.Elem(), 0)
			keep := fmt.Sprintf("%#v", obj.Interface())
			want, wantErr := runtime.DefaultUnstructuredConverter.ToUnstructured(obj.Interface())
			got, ok := toUnstructuredByPlan(obj.Interface())
			cases++
			if fmt.Sprintf("%#v", obj.Interface()) != keep {
				t.Fatalf("%v: the conversion changed the object", typ)
			}
			if wantErr != nil {
				errs++
				if ok {
					t.Fatalf("%v: the plan converted what the converter refuses (%v)", typ, wantErr)
				}
				continue
			}
			if !ok {
				continue
			}
			byPlan++
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%v:\ngot  %#v\nwant %#v", typ, got, want)
			}
		}
	}
	t.Logf("%d objects of %d types: %d converted by the plan, %d refused by the converter", cases, len(types), byPlan, errs)
	if byPlan < cases*3/4 || errs == 0 {
		t.Fatalf("only %d of %d objects converted by the plan (%d errors)", byPlan, cases, errs)
	}
}
