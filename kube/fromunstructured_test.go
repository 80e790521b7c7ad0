package kube

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/kubernetes/scheme"
)

// sampleDeployment is a Deployment as the sample controller's harness run hands it to the Env's
// informers: written by the REST front (managedFields), its status by the workload stand-in.
const sampleDeployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"creationTimestamp":"2000-01-01T00:00:17Z","generation":1,
"managedFields":[{"apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:ownerReferences":{".":{},
"k:{\"uid\":\"40873102-8752-424d-ad33-327486e8a973\"}":{}}},"f:spec":{".":{},"f:replicas":{},"f:selector":{},"f:strategy":{},
"f:template":{".":{},"f:metadata":{".":{},"f:labels":{".":{},"f:app":{},"f:controller":{}}},"f:spec":{".":{},"f:containers":{".":{},
"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:name":{},"f:resources":{}}}}}}},"manager":"samplecontroller.test","operation":"Update",
"time":"2000-01-01T00:00:17Z"}],"name":"dep-4","namespace":"default","ownerReferences":[{"apiVersion":"samplecontroller.k8s.io/v1alpha1",
"blockOwnerDeletion":true,"controller":true,"kind":"Foo","name":"foo-4","uid":"40873102-8752-424d-ad33-327486e8a973"}],
"resourceVersion":"58","uid":"4efebe63-145d-4725-abdb-2a2bf10f8001"},"spec":{"replicas":4,"selector":{"matchLabels":{"app":"nginx",
"controller":"foo-4"}},"strategy":{},"template":{"metadata":{"labels":{"app":"nginx","controller":"foo-4"}},"spec":{"containers":[
{"image":"nginx:latest","name":"nginx","resources":{}}]}}},"status":{"availableReplicas":4,"conditions":[{"lastTransitionTime":
"2000-01-01T00:00:17Z","lastUpdateTime":"2000-01-01T00:00:17Z","message":"Deployment has minimum availability.","reason":
"MinimumReplicasAvailable","status":"True","type":"Available"},{"lastTransitionTime":"2000-01-01T00:00:17Z","lastUpdateTime":
"2000-01-01T00:00:17Z","message":"ReplicaSet \"dep-4\" has successfully progressed.","reason":"NewReplicaSetAvailable",
"status":"True","type":"Progressing"}],"observedGeneration":1,"readyReplicas":4,"replicas":4,"updatedReplicas":4}}`

// unstructuredJSON decodes JSON text into fakeapi's form (integers as int64).
func unstructuredJSON(t testing.TB, text string) map[string]any {
	t.Helper()
	var u unstructured.Unstructured
	if err := u.UnmarshalJSON([]byte(text)); err != nil {
		t.Fatal(err)
	}
	return u.Object
}

// foo is a custom resource's Go type, shaped as the sample controller's Foo, with a field of each
// kind and self-decoding type a custom resource may have.
type foo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		DeploymentName string `json:"deploymentName"`
		Replicas       *int32 `json:"replicas"`
	} `json:"spec"`
	Status struct {
		AvailableReplicas int32 `json:"availableReplicas"`
	} `json:"status"`
	Odd oddFields `json:"odd"`
}

type oddFields struct {
	Small    int8                        `json:"small"`
	Count    uint16                      `json:"count"`
	Ratio    float32                     `json:"ratio"`
	Weight   float64                     `json:"weight"`
	On       *bool                       `json:"on"`
	Mode     corev1.PullPolicy           `json:"mode"`
	Port     intstr.IntOrString          `json:"port"`
	Size     resource.Quantity           `json:"size"`
	At       *metav1.Time                `json:"at"`
	Micro    metav1.MicroTime            `json:"micro"`
	Took     metav1.Duration             `json:"took"`
	Managed  metav1.FieldsV1             `json:"managed"`
	Raw      runtime.RawExtension        `json:"raw"`
	Data     []byte                      `json:"data"`
	Names    []string                    `json:"names"`
	ByName   map[corev1.ResourceName]int `json:"byName"`
	Tags     map[string]string           `json:"tags"`
	Extra    map[string]any              `json:"extra"`
	Anything any                         `json:"anything"`
	Nested   []oddFields                 `json:"nested"`
	NoTag    string
	Dash     string `json:"-"`
	Array    [2]int `json:"array"`
}

// testTypes are the custom resource's type, then every Go type of client-go's scheme once, in
// the order of their first kind's name.
func testTypes() []reflect.Type {
	types := []reflect.Type{reflect.TypeFor[foo]()}
	known := scheme.Scheme.AllKnownTypes()
	gvks := make([]string, 0, len(known))
	byGVK := map[string]reflect.Type{}
	for gvk, typ := range known {
		gvks = append(gvks, gvk.String())
		byGVK[gvk.String()] = typ
	}
	slices.Sort(gvks)
	seen := map[reflect.Type]bool{}
	for _, g := range gvks {
		if typ := byGVK[g]; !seen[typ] {
			seen[typ] = true
			types = append(types, typ)
		}
	}
	return types
}

// byConverter is apimachinery's converter into a new value of typ, a panic taken as an error.
func byConverter(content map[string]any, typ reflect.Type) (out any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	out = reflect.New(typ).Interface()
	return out, runtime.DefaultUnstructuredConverter.FromUnstructured(content, out)
}

// byPlan is FromUnstructured into a new value of typ, a panic taken as an error; fast says
// whether the plan converted it (without the converter).
func byPlan(content map[string]any, typ reflect.Type) (out any, fast bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	if p := planOf(typ); p.decode != nil {
		fast = p.decode(content, reflect.New(typ).Elem())
	}
	out = reflect.New(typ).Interface()
	return out, fast, FromUnstructured(content, out)
}

// Goal: FromUnstructured converts every built-in kind of client-go's scheme and a custom
// resource's type as apimachinery's converter does: on random objects turned to maps by the
// converter, and on those maps with odd values put in (nulls, values of another JSON type or of
// a Go type JSON does not make, fractional and zoned times, numbers too large for their field,
// floats into integers, bad base64 and quantities, unknown fields), it gives the same value
// (reflect.DeepEqual) or an error as the converter does, and leaves the maps as they were. The plan must have
// converted many objects itself and left many to the converter.
func TestFromUnstructuredAsTheConverter(t *testing.T) {
	types := testTypes()
	r := rand.New(rand.NewPCG(25, 26))
	cases, fast, slow, mangled, failed := 0, 0, 0, 0, 0
	for round := range 6 {
		for _, typ := range types {
			obj := reflect.New(typ)
			fill(r, obj.Elem(), 0)
			content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj.Interface())
			if err != nil {
				continue // a random fieldsV1 or RawExtension that is not JSON
			}
			if round > 0 {
				for range r.IntN(4) + 1 {
					mangleValue(r, content, 0)
				}
				mangled++
			}
			before := deepCopyValue(content)
			want, wantErr := byConverter(content, typ)
			got, tookPlan, err := byPlan(content, typ)
			cases++
			// The error, when there is one, is the converter's own (FromUnstructured hands the
			// object to it); its message may name any of a map's wrong values, in the order of
			// that map's iteration, so only whether there is one is compared.
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("%v from %v: error %v, the converter's %v", typ, content, err, wantErr)
			}
			if !reflect.DeepEqual(content, before) {
				t.Fatalf("%v: the conversion changed its maps", typ)
			}
			if err != nil {
				failed++
				if tookPlan {
					t.Fatalf("%v from %v: the plan converted what the converter refuses (%v)", typ, content, wantErr)
				}
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%v from %v:\ngot  %#v\nwant %#v", typ, content, got, want)
			}
			if tookPlan {
				fast++
			} else {
				slow++
			}
		}
	}
	t.Logf("%d objects of %d types (%d with odd values): %d converted by the plan, %d by the converter, %d errors", cases, len(types), mangled, fast, slow, failed)
	if fast < cases/4 || slow < 20 || failed < 20 {
		t.Fatalf("%d of %d objects converted by the plan, %d by the converter, %d errors: both paths and the errors must be exercised", fast, cases, slow, failed)
	}
}

// Goal: the forms the harness meets take the plan (not the converter): a Deployment as the sample
// controller's run has it, a ConfigMap, a Pod with quantities, ports and probes, an Event's
// MicroTime, a Secret's bytes, a custom resource.
func TestFromUnstructuredTakesThePlan(t *testing.T) {
	for _, c := range []struct {
		text string
		typ  reflect.Type
	}{
		{sampleDeployment, reflect.TypeFor[appsv1.Deployment]()},
		{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"a":"b","n":null}},"data":{"k":"v"},"binaryData":{"b":"aGk="}}`, reflect.TypeFor[corev1.ConfigMap]()},
		{`{"kind":"Pod","metadata":{"name":"p","creationTimestamp":null,"deletionGracePeriodSeconds":30},"spec":{"containers":[{"name":"c",
			"ports":[{"containerPort":80}],"resources":{"limits":{"cpu":"100m","memory":"1Gi"},"requests":{"cpu":2}},
			"readinessProbe":{"httpGet":{"port":"http"}},"livenessProbe":{"tcpSocket":{"port":8080}}}]},"status":{"startTime":"2026-11-26T15:04:05Z"}}`, reflect.TypeFor[corev1.Pod]()},
		{`{"kind":"Event","metadata":{"name":"e"},"eventTime":"2026-11-26T15:04:05.123456Z","count":3}`, reflect.TypeFor[corev1.Event]()},
		{`{"kind":"Secret","metadata":{"name":"s"},"data":{"k":"aGVsbG8=","e":""},"immutable":true}`, reflect.TypeFor[corev1.Secret]()},
		{`{"kind":"Foo","metadata":{"name":"foo-4","generation":1},"spec":{"deploymentName":"dep-4","replicas":4},"status":{"availableReplicas":4},"extra":{"x":1}}`, reflect.TypeFor[foo]()},
	} {
		content := unstructuredJSON(t, c.text)
		want, wantErr := byConverter(content, c.typ)
		got, fast, err := byPlan(content, c.typ)
		if err != nil || wantErr != nil {
			t.Fatalf("%v: %v, the converter's %v", c.typ, err, wantErr)
		}
		if !fast {
			t.Errorf("%v: left to the converter", c.typ)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v:\ngot  %#v\nwant %#v", c.typ, got, want)
		}
	}
}

// Goal: FromUnstructured refuses what it cannot convert into with an error, never a panic, and
// zeroes what it converts into (the converter's result for a new object).
func TestFromUnstructuredInputs(t *testing.T) {
	content := map[string]any{"metadata": map[string]any{"name": "x"}}
	var nilCM *corev1.ConfigMap
	for _, out := range []any{nil, corev1.ConfigMap{}, nilCM} {
		if err := FromUnstructured(content, out); err == nil {
			t.Errorf("FromUnstructured into %#v: no error", out)
		}
	}
	used := &corev1.ConfigMap{Data: map[string]string{"old": "x"}, ObjectMeta: metav1.ObjectMeta{Namespace: "ns"}}
	if err := FromUnstructured(content, used); err != nil {
		t.Fatal(err)
	}
	if want := (&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}); !reflect.DeepEqual(used, want) {
		t.Errorf("into a used object: %#v, want %#v", used, want)
	}
}

// Goal: each odd value in each field of a custom resource's type (a field of every kind and of
// each self-decoding type) converts as by the converter: the same value, or an error when it
// errs. Fails with the plan taking a float into an integer, an integer into a float32 or an
// IntOrString past int32, a []string as a JSON list, a nil string in a map as absent...
func TestFromUnstructuredOddForms(t *testing.T) {
	fields := reflect.TypeFor[oddFields]()
	fast, errs := 0, 0
	for i := range fields.NumField() {
		name, _ := jsonName(fields.Field(i))
		for j, odd := range oddValues {
			for _, nested := range []bool{false, true} {
				odds := map[string]any{name: odd()}
				if nested {
					odds = map[string]any{"nested": []any{nil, map[string]any{name: odd()}}}
				}
				content := map[string]any{"kind": "Foo", "metadata": map[string]any{"name": "f"}, "odd": odds}
				before := deepCopyValue(content)
				want, wantErr := byConverter(content, reflect.TypeFor[foo]())
				got, tookPlan, err := byPlan(content, reflect.TypeFor[foo]())
				if (err != nil) != (wantErr != nil) {
					t.Fatalf("%s = odd value %d (%#v): error %v, the converter's %v", name, j, odd(), err, wantErr)
				}
				if !reflect.DeepEqual(content, before) {
					t.Fatalf("%s = odd value %d: the conversion changed its maps", name, j)
				}
				if err != nil {
					errs++
					continue
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s = odd value %d (%#v):\ngot  %#v\nwant %#v", name, j, odd(), got, want)
				}
				if tookPlan {
					fast++
				}
			}
		}
	}
	t.Logf("%d cases: %d by the plan, %d errors", 2*fields.NumField()*len(oddValues), fast, errs)
}

// fill sets v, settable, to random content: strings, numbers, times, quantities, fieldsV1, bytes,
// pointers, slices and maps, down to a depth.
func fill(r *rand.Rand, v reflect.Value, depth int) {
	if depth > 9 {
		return
	}
	switch v.Type() {
	case reflect.TypeFor[metav1.Time]():
		if r.IntN(4) > 0 {
			v.Set(reflect.ValueOf(metav1.NewTime(randomTime(r))))
		}
		return
	case reflect.TypeFor[metav1.MicroTime]():
		if r.IntN(4) > 0 {
			v.Set(reflect.ValueOf(metav1.NewMicroTime(randomTime(r))))
		}
		return
	case reflect.TypeFor[resource.Quantity]():
		v.Set(reflect.ValueOf(resource.MustParse([]string{"0", "1", "100m", "1Gi", "2.5", "1e3", "-7", "500Mi"}[r.IntN(8)])))
		return
	case reflect.TypeFor[intstr.IntOrString]():
		if r.IntN(2) == 0 {
			v.Set(reflect.ValueOf(intstr.FromInt32(r.Int32N(100000) - 10)))
		} else {
			v.Set(reflect.ValueOf(intstr.FromString([]string{"http", "25%", "", "é"}[r.IntN(4)])))
		}
		return
	case reflect.TypeFor[metav1.FieldsV1]():
		v.Set(reflect.ValueOf(metav1.FieldsV1{Raw: []byte(randomFieldsV1(r, 0))}))
		return
	case reflect.TypeFor[runtime.RawExtension]():
		if r.IntN(2) == 0 {
			v.Set(reflect.ValueOf(runtime.RawExtension{Raw: []byte(`{"a":1,"b":["x",null]}`)}))
		}
		return
	}
	if v.Kind() != reflect.Pointer && reflect.PointerTo(v.Type()).Implements(unmarshalerType) {
		return // another self-decoding type (a Duration...): left zero
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(randomString(r))
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(r.IntN(200)) - 20)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(r.IntN(200)))
	case reflect.Float32, reflect.Float64:
		v.SetFloat([]float64{0, 1, 1.5, -2.25, 1e6}[r.IntN(5)])
	case reflect.Pointer:
		if r.IntN(3) > 0 {
			p := reflect.New(v.Type().Elem())
			fill(r, p.Elem(), depth+1)
			v.Set(p)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			if r.IntN(3) > 0 {
				b := make([]byte, r.IntN(6))
				for i := range b {
					b[i] = byte(r.IntN(256))
				}
				v.SetBytes(b)
			}
			return
		}
		switch r.IntN(4) {
		case 0: // nil
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			s := reflect.MakeSlice(v.Type(), 1+r.IntN(2), 3)
			for i := range s.Len() {
				fill(r, s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String || r.IntN(4) == 0 {
			return
		}
		m := reflect.MakeMap(v.Type())
		for range r.IntN(3) {
			k := reflect.New(v.Type().Key()).Elem()
			k.SetString(randomString(r) + "k")
			e := reflect.New(v.Type().Elem()).Elem()
			fill(r, e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Interface:
		if v.NumMethod() == 0 && r.IntN(2) == 0 {
			v.Set(reflect.ValueOf([]any{"s", int64(3), 1.5, true, map[string]any{"a": []any{int64(1), nil}}, []any{}}[r.IntN(6)]))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && r.IntN(5) > 0 {
				fill(r, v.Field(i), depth+1)
			}
		}
	}
}

func randomTime(r *rand.Rand) time.Time {
	zone := []*time.Location{time.UTC, time.FixedZone("x", 3600), time.Local}[r.IntN(3)]
	return time.Date(1999+r.IntN(40), time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), []int{0, 0, 123456789}[r.IntN(3)], zone)
}

func randomString(r *rand.Rand) string {
	return []string{"", "a", "nginx:latest", "a<b&c>", `q"u\o`, "é", "\u2028", "\xff", "2000-01-01T00:00:17Z", "100m", "True", "k:{\"name\":\"x\"}"}[r.IntN(12)]
}

// oddValues are values mangleValue puts into an object's maps: JSON's own of each type, numbers
// out of range, floats with and without a fraction, times in other forms, quantities, base64 and
// not, and values of Go types JSON decoding never makes.
var oddValues = []func() any{
	func() any { return nil },
	func() any { return "x" },
	func() any { return "" },
	func() any { return int64(7) },
	func() any { return int64(-1) },
	func() any { return int64(1 << 40) },
	func() any { return float64(1.5) },
	func() any { return float64(2) },
	func() any { return float64(1e30) },
	func() any { return true },
	func() any { return map[string]any{} },
	func() any { return map[string]any{"zz": int64(1), "f:a": map[string]any{}} },
	func() any { return map[string]any(nil) },
	func() any { return []any{} },
	func() any { return []any{nil, "a"} },
	func() any { return []any(nil) },
	func() any { return "2026-11-26T15:04:05.5Z" },
	func() any { return "2026-11-26T16:04:05+01:00" },
	func() any { return "2000-01-01T00:00:17Z" },
	func() any { return "2026-02-30T00:00:00Z" },
	func() any { return "2026-11-26t15:04:05z" },
	func() any { return "yesterday" },
	func() any { return "1Gi" },
	func() any { return "aGVsbG8=" },
	func() any { return "not base64!" },
	func() any { return "a<b" },
	func() any { return 3 },
	func() any { return int32(3) },
	func() any { return []string{"a"} },
	func() any { return map[string]string{"a": "b"} },
	func() any { return json.Number("4") },
}

// mangleValue puts an odd value somewhere into v: replacing a map's entry or a slice's element,
// or adding an unknown field.
func mangleValue(r *rand.Rand, v any, depth int) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 || r.IntN(8) == 0 {
			x[[]string{"zzUnknown", "metadata", "spec", "status", "time", "fieldsV1"}[r.IntN(6)]] = oddValues[r.IntN(len(oddValues))]()
			return
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		k := keys[r.IntN(len(keys))]
		if child := x[k]; depth < 12 && r.IntN(3) > 0 && isContainer(child) {
			mangleValue(r, child, depth+1)
			return
		}
		x[k] = oddValues[r.IntN(len(oddValues))]()
	case []any:
		if len(x) == 0 {
			return
		}
		i := r.IntN(len(x))
		if depth < 12 && r.IntN(3) > 0 && isContainer(x[i]) {
			mangleValue(r, x[i], depth+1)
			return
		}
		x[i] = oddValues[r.IntN(len(oddValues))]()
	}
}

func isContainer(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) > 0
	case []any:
		return len(x) > 0
	}
	return false
}

// deepCopyValue copies the maps and slices of an unstructured value, whatever their Go types.
func deepCopyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return x
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopyValue(e)
		}
		return out
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopyValue(e)
		}
		return out
	case []string:
		return slices.Clone(x)
	case map[string]string:
		out := make(map[string]string, len(x))
		for k, e := range x {
			out[k] = e
		}
		return out
	}
	return v
}

// BenchmarkFromUnstructured: the sample controller's Deployment to its Go type by
// apimachinery's converter and by FromUnstructured, and a DeepCopy of the result:
//
//	cd kube && go test -run='^$' -bench=FromUnstructured -benchmem .
func BenchmarkFromUnstructured(b *testing.B) {
	content := unstructuredJSON(b, sampleDeployment)
	b.Run("converter", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, &appsv1.Deployment{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("plan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := FromUnstructured(content, &appsv1.Deployment{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	var d appsv1.Deployment
	if err := FromUnstructured(content, &d); err != nil {
		b.Fatal(err)
	}
	b.Run("deepcopy", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = d.DeepCopyObject()
		}
	})
}

// FuzzFromUnstructured: any JSON object, decoded into fakeapi's form, converts into a Deployment,
// a Pod, an Event and the custom resource's type as by the converter: the same value or an error
// when it errs.
//
//	cd kube && go test -run='^$' -fuzz=FuzzFromUnstructured -fuzztime=30s .
func FuzzFromUnstructured(f *testing.F) {
	f.Add([]byte(sampleDeployment))
	f.Add([]byte(`{"metadata":{"name":"x","labels":{"a":null}},"spec":{"replicas":1.0,"template":{"spec":{"containers":[{"ports":[{"containerPort":80}],"resources":{"limits":{"cpu":"1"}}}]}}}}`))
	f.Add([]byte(`{"eventTime":"2026-11-26T15:04:05.123456Z","odd":{"port":"http","size":2,"data":"aGk=","nested":[{"small":300}]}}`))
	types := []reflect.Type{reflect.TypeFor[appsv1.Deployment](), reflect.TypeFor[corev1.Pod](), reflect.TypeFor[corev1.Event](), reflect.TypeFor[foo]()}
	f.Fuzz(func(t *testing.T, data []byte) {
		var content map[string]any
		if err := utiljson.Unmarshal(data, &content); err != nil || content == nil {
			return // integers as int64, as fakeapi holds them
		}
		for _, typ := range types {
			before := deepCopyValue(content)
			want, wantErr := byConverter(content, typ)
			got, _, err := byPlan(content, typ)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("%v: error %v, the converter's %v", typ, err, wantErr)
			}
			if !reflect.DeepEqual(content, before) {
				t.Fatalf("%v: the conversion changed its maps", typ)
			}
			if err == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("%v:\ngot  %#v\nwant %#v", typ, got, want)
			}
		}
	})
}
