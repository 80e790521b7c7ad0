package kube

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// randomEntry draws a managedFields entry: mostly in the form the field manager writes, sometimes
// in another one (a time with an offset or fractions of a second, a null time, an unknown key, a
// number for a string, an empty string, fieldsV1 with a leaf that is not a map), so that both of
// stampTimes' paths are taken.
func randomEntry(r *rand.Rand) map[string]any {
	e := map[string]any{
		"manager":    []string{"kubectl", "controller", "Go-http-client"}[r.IntN(3)],
		"operation":  []string{"Update", "Apply"}[r.IntN(2)],
		"apiVersion": "v1",
		"fieldsType": "FieldsV1",
		"fieldsV1":   map[string]any{"f:data": map[string]any{fmt.Sprintf("f:k%d", r.IntN(2)): map[string]any{}}},
	}
	switch r.IntN(16) {
	case 0: // no time
	case 1:
		e["time"] = nil
	case 2:
		e["time"] = "2000-01-01T00:00:07+00:00" // now, not in the canonical form
	case 3:
		e["time"] = "2000-01-01T00:00:07.5Z"
	default:
		e["time"] = fmt.Sprintf("2000-01-01T00:00:0%dZ", r.IntN(9))
	}
	switch r.IntN(40) {
	case 0:
		e["subresource"] = "status"
	case 1:
		e["unknown"] = "x"
	case 2:
		e["manager"] = int64(7)
	case 3:
		e["fieldsV1"] = map[string]any{"f:data": "not a map"}
	case 4:
		delete(e, "fieldsV1")
	case 5:
		e["fieldsV1"] = nil
	case 6:
		e["time"] = "yesterday"
	case 7:
		e["subresource"] = ""
	}
	return e
}

func objectWithEntries(entries []map[string]any) *unstructured.Unstructured {
	items := make([]any, len(entries))
	for i, e := range entries {
		items[i] = e
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "namespace": "ns", "managedFields": items},
	}}
}

// TestStampTimesAsTyped checks that stampTimes, which compares and stamps the entries' maps when
// they are canonical, writes the same object as the typed comparison (stampTypedTimes, the way
// every write took before) on random pairs of live and written lists, where the written list
// shares some entries with the live one.
func TestStampTimesAsTyped(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	rawPaths := 0
	for i := range 3000 {
		live := make([]map[string]any, r.IntN(4))
		for j := range live {
			live[j] = randomEntry(r)
		}
		written := make([]map[string]any, r.IntN(4))
		for j := range written {
			if len(live) > 0 && r.IntN(2) == 0 {
				written[j] = runtime.DeepCopyJSONValue(live[r.IntN(len(live))]).(map[string]any)
			} else {
				written[j] = randomEntry(r)
			}
		}
		var liveObj *unstructured.Unstructured
		if r.IntN(5) > 0 {
			liveObj = objectWithEntries(live)
		}
		fast, typed := objectWithEntries(written), objectWithEntries(written).DeepCopy()
		fast = fast.DeepCopy()
		stampTimes(liveObj, fast, now)
		stampTypedTimes(liveObj, typed, now.UTC().Truncate(time.Second))
		if got, want := fast.Object, typed.Object; !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: live %v, written %v:\nstampTimes gives %v\nthe typed comparison %v", i, live, written, got, want)
		}
		if _, ok := canonicalEntries(objectWithEntries(written)); ok {
			if _, ok := canonicalEntries(liveObj); ok {
				rawPaths++
			}
		}
	}
	t.Logf("%d of 3000 cases took the canonical path", rawPaths)
	// Both paths must have been taken often for the comparison to say anything.
	if rawPaths < 300 || rawPaths > 2700 {
		t.Fatalf("%d of 3000 cases took the canonical path, want between 300 and 2700", rawPaths)
	}
}
