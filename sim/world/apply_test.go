package world

import (
	"fmt"
	"reflect"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// mergeWithAccessors is what an OpUpdate did before mergeMetadataStrings: the labels and
// annotations read with the getters, merged, and written back with the setters.
func mergeWithAccessors(u *unstructured.Unstructured, labels, annotations map[string]string) {
	l := u.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	for k, v := range labels {
		l[k] = v
	}
	u.SetLabels(l)
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	for k, v := range annotations {
		ann[k] = v
	}
	gen, _ := strconv.Atoi(ann["sim/gen"])
	ann["sim/gen"] = strconv.Itoa(gen + 1)
	u.SetAnnotations(ann)
}

// Goal: an update's merge of labels and annotations leaves the very object the getters and
// setters did, on well-formed and malformed metadata alike. Method: every combination of a set
// of metadata shapes (missing, nil, not a map, maps with nil, non-string and ordinary values,
// "sim/gen" absent, numeric or not) and of the op's labels and annotations, merged both ways,
// compared with reflect.DeepEqual.
func TestMergeMetadataStringsIsGetAndSet(t *testing.T) {
	fields := []any{
		"absent", nil, "text", map[string]any{}, map[string]any{"a": "1", "b": nil},
		map[string]any{"a": "1", "n": int64(3)}, map[string]any{"sim/gen": "4", "x": "y"},
		map[string]any{"sim/gen": "four"}, map[string]any{"a": map[string]any{"b": "c"}},
	}
	var metas []any
	metas = append(metas, "absent", nil, "not a map", map[string]any{"name": "p"})
	for _, l := range fields {
		for _, a := range fields {
			md := map[string]any{"name": "p"}
			if l != "absent" {
				md["labels"] = l
			}
			if a != "absent" {
				md["annotations"] = a
			}
			metas = append(metas, md)
		}
	}
	adds := []map[string]string{nil, {}, {"a": "2", "new": "v"}, {"sim/gen": "9"}, {"sim/gen": "zz"}}
	cases := 0
	for i, md := range metas {
		for j, labels := range adds {
			for k, annotations := range adds {
				obj := map[string]any{"apiVersion": "v1", "kind": "Pod"}
				if md != "absent" {
					obj["metadata"] = md
				}
				want := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
				mergeWithAccessors(want, labels, annotations)
				got := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
				mergeMetadataStrings(got, "labels", labels, false)
				mergeMetadataStrings(got, "annotations", annotations, true)
				if !reflect.DeepEqual(got.Object, want.Object) {
					t.Fatalf("metadata %d, labels %d, annotations %d: merged\n%s\nthe accessors\n%s", i, j, k, show(got.Object), show(want.Object))
				}
				cases++
			}
		}
	}
	t.Logf("%d cases", cases)
}

func show(v any) string { return fmt.Sprintf("%#v", v) }
