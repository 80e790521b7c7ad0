package kube

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

var (
	deploymentKind = Kind{GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Builtin: true, Status: true}
	podKind        = Kind{GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Builtin: true, Status: true}
	configMapKind  = Kind{GVK: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Builtin: true}
	now            = time.Date(2000, 1, 1, 0, 0, 7, 0, time.UTC)
)

func mustJSON(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad JSON %s: %v", s, err)
	}
	return m
}

// smpCases are strategic merge patches of built-in kinds covering the features kube-apiserver
// has: merge keys, $patch directives, $setElementOrder, $retainKeys, primitive lists, nested
// maps. Each is checked against strategicpatch.StrategicMergePatch with the kind's Go type.
var smpCases = []struct {
	name, original, patch string
	typed                 any
}{
	{"deployment: one container's image by merge key",
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"ns"},"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"a","image":"a:1"},{"name":"b","image":"b:1"}]}}}}`,
		`{"spec":{"template":{"spec":{"containers":[{"name":"b","image":"b:2"}]}}}}`, &appsv1.Deployment{}},
	{"deployment: a container added, order kept by $setElementOrder",
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"ns"},"spec":{"template":{"spec":{"containers":[{"name":"a","image":"a:1"},{"name":"b","image":"b:1"}]}}}}`,
		`{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"c"},{"name":"b"},{"name":"a"}],"containers":[{"name":"c","image":"c:1"}]}}}}`, &appsv1.Deployment{}},
	{"deployment: $patch delete of a container",
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"ns"},"spec":{"template":{"spec":{"containers":[{"name":"a","image":"a:1"},{"name":"b","image":"b:1"}]}}}}`,
		`{"spec":{"template":{"spec":{"containers":[{"name":"a","$patch":"delete"}]}}}}`, &appsv1.Deployment{}},
	{"deployment: env merged by name, ports by containerPort",
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"ns"},"spec":{"template":{"spec":{"containers":[{"name":"a","image":"a:1","env":[{"name":"X","value":"1"},{"name":"Y","value":"2"}],"ports":[{"containerPort":80,"protocol":"TCP"}]}]}}}}`,
		`{"spec":{"template":{"spec":{"containers":[{"name":"a","env":[{"name":"Y","value":"3"},{"name":"Z","value":"4"}],"ports":[{"containerPort":443,"protocol":"TCP"}]}]}}}}`, &appsv1.Deployment{}},
	{"deployment: $retainKeys drops rollingUpdate for Recreate",
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"ns"},"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1}}}}`,
		`{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}`, &appsv1.Deployment{}},
	{"pod: volume added by name",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"a","image":"a"}],"volumes":[{"name":"v1","emptyDir":{}}]}}`,
		`{"spec":{"volumes":[{"name":"v2","configMap":{"name":"cm"}}]}}`, &corev1.Pod{}},
	{"pod: volumes replaced with $patch replace",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"},"spec":{"volumes":[{"name":"v1","emptyDir":{}},{"name":"v2","emptyDir":{}}]}}`,
		`{"spec":{"volumes":[{"name":"v3","emptyDir":{}},{"$patch":"replace"}]}}`, &corev1.Pod{}},
	{"pod: a volume's source changed with $retainKeys",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"},"spec":{"volumes":[{"name":"v1","emptyDir":{}}]}}`,
		`{"spec":{"volumes":[{"name":"v1","$retainKeys":["name","configMap"],"configMap":{"name":"cm"}}]}}`, &corev1.Pod{}},
	{"nested maps: a label set, one deleted, an annotation added",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns","labels":{"a":"1","b":"2"}},"data":{"k":"v"}}`,
		`{"metadata":{"labels":{"a":null,"c":"3"},"annotations":{"x":"y"}},"data":{"k2":"v2"}}`, &corev1.ConfigMap{}},
	{"map replaced with $patch replace",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns"},"data":{"a":"1","b":"2"}}`,
		`{"data":{"$patch":"replace","c":"3"}}`, &corev1.ConfigMap{}},
	{"finalizers: primitive list merged, one deleted",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns","finalizers":["x/a","x/b"]}}`,
		`{"metadata":{"finalizers":["x/c"],"$deleteFromPrimitiveList/finalizers":["x/a"]}}`, &corev1.ConfigMap{}},
	{"directives: $retainKeys and $setElementOrder applied and dropped",
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"ns"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"a","image":"a"}]}}}}`,
		`{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"},"template":{"spec":{"$setElementOrder/containers":[{"name":"b"}],"containers":[{"name":"b","image":"b"}]}}}}`, &appsv1.Deployment{}},
	{"pod: tolerations (atomic list) replaced whole",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"},"spec":{"tolerations":[{"key":"a","operator":"Exists"}]}}`,
		`{"spec":{"tolerations":[{"key":"b","operator":"Exists"}]}}`, &corev1.Pod{}},
}

// TestStrategicMergePatchMatchesApimachinery checks each case against
// strategicpatch.StrategicMergePatch on the same inputs.
func TestStrategicMergePatchMatchesApimachinery(t *testing.T) {
	w := &writer{fields: newFieldManagers(nil)}
	for _, tc := range smpCases {
		t.Run(tc.name, func(t *testing.T) {
			want, err := strategicpatch.StrategicMergePatch([]byte(tc.original), []byte(tc.patch), tc.typed)
			if err != nil {
				t.Fatalf("StrategicMergePatch: %v", err)
			}
			live := &unstructured.Unstructured{Object: mustJSON(t, tc.original)}
			k := Kind{GVK: live.GroupVersionKind(), Builtin: true}
			want = withoutDollarKeys(t, want)
			got, err := w.strategicMergePatch(k, live, []byte(tc.patch), "test", now)
			if err != nil {
				t.Fatal(err)
			}
			unstructured.RemoveNestedField(got.Object, "metadata", "managedFields")
			gotJSON, _ := json.Marshal(got.Object)
			if diff := cmp.Diff(mustJSON(t, string(want)), mustJSON(t, string(gotJSON))); diff != "" {
				t.Errorf("patched (-apimachinery +ours):\n%s", diff)
			}
			if live.Object["metadata"].(map[string]any)["managedFields"] != nil || string(mustMarshal(live.Object)) != string(mustMarshal(mustJSON(t, tc.original))) {
				t.Error("the patch changed the live object")
			}
		})
	}
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func TestStrategicMergePatchErrors(t *testing.T) {
	w := &writer{fields: newFieldManagers(nil)}
	live := &unstructured.Unstructured{Object: mustJSON(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"strategy":{"type":"RollingUpdate"}}}`)}
	for _, tc := range []struct {
		name, patch string
		code        int32
	}{
		{"not JSON", `{`, 400},
		{"a list, not an object", `[1]`, 400},
		{"null", `null`, 400},
		{"$retainKeys without a key the patch sets", `{"spec":{"strategy":{"$retainKeys":["type"],"rollingUpdate":{}}}}`, 400},
		{"a list of lists", `{"spec":{"template":{"spec":{"containers":[[{"name":"a"}]]}}}}`, 422},
		{"unknown $patch directive", `{"spec":{"$patch":"explode"}}`, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := w.strategicMergePatch(deploymentKind, live, []byte(tc.patch), "m", now)
			if se, ok := err.(apierrors.APIStatus); !ok || se.Status().Code != tc.code {
				t.Fatalf("error %v, want a Status with code %d", err, tc.code)
			}
		})
	}
	cr := Kind{GVK: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}}
	if _, err := w.strategicMergePatch(cr, live, []byte(`{}`), "m", now); !apierrors.IsUnsupportedMediaType(err) {
		t.Errorf("custom resource: %v, want 415", err)
	}
}

func toUnstructured(t testing.TB, obj runtime.Object) *unstructured.Unstructured {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// managers lists obj's managedFields as "manager/operation/subresource" and the fields of each
// as JSON, for comparisons.
func managers(t testing.TB, obj *unstructured.Unstructured) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, e := range obj.GetManagedFields() {
		key := e.Manager + "/" + string(e.Operation)
		if e.Subresource != "" {
			key += "/" + e.Subresource
		}
		if e.Time == nil || !e.Time.Time.Equal(now) {
			t.Errorf("entry %s has time %v, want the server's %v", key, e.Time, now)
		}
		out[key] = string(e.FieldsV1.Raw)
	}
	return out
}

// TestApplyCreateUpdateConflictForce walks server-side apply through its cases: an apply that
// creates, a second manager's apply conflicting (409 naming the field and the owner), the same
// forced, an Update manager recorded beside them, and an apply that changes nothing.
func TestApplyCreateUpdateConflictForce(t *testing.T) {
	w := &writer{fields: newFieldManagers(nil)}
	cfg := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns","labels":{"app":"x"}},"data":{"k":"1"}}`
	created, err := w.apply(configMapKind, nil, []byte(cfg), "alice", false, now)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := managers(t, created), map[string]string{
		"alice/Apply": `{"f:data":{"f:k":{}},"f:metadata":{"f:labels":{"f:app":{}}}}`,
	}; !cmp.Equal(got, want) {
		t.Errorf("managedFields after create:\n%s", cmp.Diff(want, got))
	}
	created.SetUID("u-1") // stored, as fakeapi would
	created.SetResourceVersion("2")

	// YAML works as JSON does; bob sets data.k too: a conflict with alice.
	bob := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: ns\ndata:\n  k: \"2\"\n  other: \"y\"\n"
	_, err = w.apply(configMapKind, created, []byte(bob), "bob", false, now)
	se, ok := err.(*apierrors.StatusError)
	if !ok || se.ErrStatus.Code != 409 || se.ErrStatus.Details == nil || len(se.ErrStatus.Details.Causes) != 1 {
		t.Fatalf("conflicting apply: %v, want a 409 with one cause", err)
	}
	if c := se.ErrStatus.Details.Causes[0]; c.Type != "FieldManagerConflict" || c.Field != ".data.k" || c.Message != `conflict with "alice"` {
		t.Errorf("cause %+v", c)
	}
	forced, err := w.apply(configMapKind, created, []byte(bob), "bob", true, now)
	if err != nil {
		t.Fatal(err)
	}
	if got := forced.Object["data"]; !cmp.Equal(got, map[string]any{"k": "2", "other": "y"}) {
		t.Errorf("forced data %v", got)
	}
	if got, want := managers(t, forced), map[string]string{
		"alice/Apply": `{"f:metadata":{"f:labels":{"f:app":{}}}}`,
		"bob/Apply":   `{"f:data":{"f:k":{},"f:other":{}}}`,
	}; !cmp.Equal(got, want) {
		t.Errorf("managedFields after the forced apply:\n%s", cmp.Diff(want, got))
	}

	// An update by another client is an Update manager of what it changed.
	edited := forced.DeepCopy()
	edited.Object["data"].(map[string]any)["third"] = "z"
	tracked, err := w.track(configMapKind, forced, edited, "kubectl-edit", now)
	if err != nil {
		t.Fatal(err)
	}
	if got := managers(t, tracked)["kubectl-edit/Update"]; got != `{"f:data":{"f:third":{}}}` {
		t.Errorf("Update manager fields %s", got)
	}

	// Applying the same configuration again changes nothing, managedFields included.
	again, err := w.apply(configMapKind, tracked, []byte(bob), "bob", false, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tracked.Object, again.Object); diff != "" {
		t.Errorf("a repeated apply changed the object:\n%s", diff)
	}

	for _, tc := range []struct{ name, patch string }{
		{"not YAML", "a: [\n"},
		{"wrong version", `{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"c"}}`},
		{"managedFields set", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","managedFields":[{"manager":"x"}]}}`},
		{"field not in the schema", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"nope":1}`},
	} {
		if _, err := w.apply(configMapKind, created, []byte(tc.patch), "bob", false, now); !apierrors.IsBadRequest(err) {
			t.Errorf("%s: %v, want 400", tc.name, err)
		}
	}
}

// TestApplyStatusResetFields checks kube-apiserver's reset fields: an apply to the main
// resource owns no status field, an apply to /status owns no spec field.
func TestApplyStatusResetFields(t *testing.T) {
	w := &writer{fields: newFieldManagers(nil)}
	cfg := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"ns"},"spec":{"replicas":2},"status":{"replicas":5}}`
	main, err := w.apply(deploymentKind, nil, []byte(cfg), "ctl", false, now)
	if err != nil {
		t.Fatal(err)
	}
	if got := managers(t, main)["ctl/Apply"]; got != `{"f:spec":{"f:replicas":{}}}` {
		t.Errorf("main apply owns %s, want spec.replicas only", got)
	}
	main.SetUID("u")
	statusKind := deploymentKind
	statusKind.Subresource = "status"
	st, err := w.apply(statusKind, main, []byte(cfg), "ctl-status", false, now)
	if err != nil {
		t.Fatal(err)
	}
	if got := managers(t, st)["ctl-status/Apply/status"]; got != `{"f:status":{"f:replicas":{}}}` {
		t.Errorf("status apply owns %s, want status.replicas only", got)
	}
	if _, err := w.fields.get(Kind{GVK: configMapKind.GVK, Builtin: true, Subresource: "status"}); err == nil {
		t.Error("a field manager for /status of a kind without one")
	}
}

// withoutDollarKeys is doc without the keys that start with "$": the directives
// StrategicMergePatch leaves where the object had nothing to merge them with, which
// kube-apiserver's decode into the Go type drops (no field of a built-in kind starts with "$").
func withoutDollarKeys(t testing.TB, doc []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if strings.HasPrefix(k, "$") {
					delete(x, k)
				} else {
					walk(e)
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return mustMarshal(v)
}
