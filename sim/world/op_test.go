package world

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim"
)

// randomOp draws a valid op of any kind with every field its kind allows, values included that
// need quoting (spaces, quotes, '=', unicode, empty strings).
func randomOp(r *rand.Rand) Op {
	word := func() string {
		words := []string{"a", "web", "two words", `q"uote`, "x=y", "ünï", "", "back\\slash", "tab\tnew\nline", "0", "true"}
		return words[r.IntN(len(words))]
	}
	name := func() string { return []string{"a", "b-1", "cold-3", "x.y"}[r.IntN(4)] }
	kinds := OpKinds()
	kind := kinds[r.IntN(len(kinds))]
	op := Op{Kind: kind}
	switch kind {
	case OpCreate, OpUpdate, OpPatch, OpDelete:
		switch r.IntN(4) {
		case 1:
			op.Resource = configMaps
		case 2:
			op.Resource = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
		case 3:
			op.Resource = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
		}
		if r.IntN(2) == 0 {
			op.Namespace = []string{"default", "other"}[r.IntN(2)]
		}
		if r.IntN(4) != 0 {
			op.Name = name()
		}
		if kind == OpCreate && r.IntN(3) == 0 {
			op.GenerateName = "gen-"
		}
		if kind == OpPatch {
			op.PatchType = []types.PatchType{types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType, types.ApplyPatchType}[r.IntN(4)]
			op.Patch = `{"metadata":{"labels":{"v":"` + strconv.Itoa(r.IntN(9)) + `"}}}`
			break // a patch says its changes in Patch
		}
		if r.IntN(2) == 0 {
			op.Labels = map[string]string{}
			for range 1 + r.IntN(3) {
				op.Labels["app.kubernetes.io/"+name()] = word()
			}
		}
		if r.IntN(2) == 0 {
			op.Annotations = map[string]string{"note": word(), "k" + strconv.Itoa(r.IntN(9)): word()}
		}
		if kind == OpDelete {
			if r.IntN(2) == 0 {
				op.Propagation = []metav1.DeletionPropagation{metav1.DeletePropagationForeground, metav1.DeletePropagationBackground, metav1.DeletePropagationOrphan}[r.IntN(3)]
			}
			break // a delete ignores labels and annotations, and refuses the rest
		}
		switch r.IntN(3) {
		case 1:
			op.Finalizers = []string{}
		case 2:
			op.Finalizers = []string{"example.com/f1", "f2"}[:1+r.IntN(2)]
		}
		if r.IntN(2) == 0 {
			op.Content = map[string]any{
				"data": map[string]any{"k": word(), "n": int64(r.IntN(1000) - 500), "b": r.IntN(2) == 0},
				"spec": map[string]any{"list": []any{word(), int64(7), 2.5, nil, map[string]any{}}, "empty": []any{}},
			}
		}
	case OpCloseWatches:
		op.Code = []int32{0, 410, 500}[r.IntN(3)]
	case OpFailNext:
		op.Verb = fakeapi.Verb(1 + r.IntN(int(fakeapi.VerbWatch)))
		op.Code = []int32{429, 500, 410, 599, 400}[r.IntN(5)]
	case OpSleep:
		op.Duration = time.Duration(r.Int64N(int64(time.Hour)))
	case OpBurnRevisions:
		op.Count = r.IntN(3) * r.IntN(1000)
	case OpSlowConsumer:
		if r.IntN(2) == 0 {
			op.Informer = name()
		}
	case OpLagReplica, OpReinitReplica:
		op.Replica = r.IntN(3)
		if r.IntN(3) != 0 {
			op.Duration = time.Duration(r.Int64N(int64(time.Minute)))
		}
	case OpFreezeReplica, OpResumeReplica, OpRouteNext:
		op.Replica = r.IntN(3)
	case OpSlowController, OpStopController, OpStartController:
		op.Name = controllerNames[r.IntN(len(controllerNames))]
		if kind == OpSlowController {
			op.Duration = time.Duration(r.Int64N(int64(time.Minute)))
		}
	case OpSlowWebhook, OpRefuseWebhook, OpFailWebhook:
		if r.IntN(2) == 0 {
			op.Name = "vwidget.example.com"
		}
		switch kind {
		case OpSlowWebhook:
			op.Duration = 1 + time.Duration(r.Int64N(int64(time.Minute)))
		case OpFailWebhook:
			op.Code = 400 + r.Int32N(200)
		}
	case OpCrashRestart, OpConflict, OpSlowCall, OpStaleRead, OpHiddenChange:
		randomClientFault(r, &op)
	}
	return op
}

// randomClientFault sets a client fault's fields: its client, and a slow call's delay or a
// stale read's replica.
func randomClientFault(r *rand.Rand, op *Op) {
	op.Client = []string{"controller", "c-1", "x.y"}[r.IntN(3)]
	switch op.Kind {
	case OpSlowCall:
		op.Duration = time.Duration(r.Int64N(int64(time.Minute)))
	case OpStaleRead:
		op.Replica = r.IntN(3)
	}
}

// Goal: an op is data: its String form parses back to the same op (item 6 of issue 8), over
// ops of every kind with every field set or not. Method: 5,000 random valid ops; Parse each
// String and compare with reflect.DeepEqual. Empty label and annotation maps are not drawn:
// String prints them like nil, and Parse reads nil.
func TestOpStringParsesBack(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	kinds := map[OpKind]int{}
	for i := range 5000 {
		op := randomOp(r)
		if _, err := op.validate(); err != nil {
			t.Fatalf("op %d: the generator drew an invalid op %s: %v", i, op, err)
		}
		kinds[op.Kind]++
		s := op.String()
		got, err := Parse(s)
		if err != nil {
			t.Fatalf("op %d: Parse(%s): %v", i, s, err)
		}
		if !reflect.DeepEqual(got, op) {
			t.Fatalf("op %d: Parse(op.String()) != op\n string: %s\n    got: %#v\n   want: %#v", i, s, got, op)
		}
	}
	for _, k := range OpKinds() {
		if kinds[k] == 0 {
			t.Errorf("no %s op drawn", k)
		}
	}
}

// Goal: Parse refuses what is not an op, with a message naming the problem.
func TestParseRefusesBadInput(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "empty op"},
		{"explode name=a", `unknown op kind "explode"`},
		{"create name", `field "name" has no value`},
		{"create name=a name=b", `given twice`},
		{"create colour=red", `unknown field`},
		{`create name="a`, "bad quoted value"},
		{`create name="a"b`, "text after the quoted value"},
		{"create resource=pods", "want version/resource"},
		{"create content={", "content"},
		{"fail-next verb=shout code=500", `unknown verb "shout"`},
		{"close-watches code=abc", `field "code"`},
		{"sleep duration=soon", `field "duration"`},
		{"sleep duration=-1s", "negative Duration"},
		{"patch name=a patchType=merge", "empty Patch"},
		{"patch name=a patchType=yaml patch=x", `unknown PatchType "yaml"`},
		{"compact name=a", "only for writes"},
		{"lag-replica by=1s", "needs field replica="},
		{"lag-replica replica=0", "needs field by="},
		{"lag-replica replica=-1 by=1s", "negative Replica"},
		{"reinit-replica replica=0 not-ready=-1s", "negative Duration"},
		{"burn-revisions n=-3", "negative Count"},
		{"sleep by=1s", "sleep takes its Duration as duration="},
		{"route-next replica=1 code=410", "Code is only for close-watches, fail-next and fail-webhook"},
		{"slow-consumer informer=a/b", "invalid Informer name"},
		{"create name=a code=410", "Code is only"},
		{`patch name=a label:x=y patchType=merge patch="{}"`, "a patch says its changes in Patch"},
		{`patch name=a content="{}" patchType=merge patch="{}"`, "a patch says its changes in Patch"},
		{`delete name=a content="{\"data\":{}}"`, "a delete only names its object"},
		{`delete name=a finalizers=f`, "a delete only names its object"},
		{"delete name=a propagation=cascade", `unknown Propagation "cascade"`},
		{"create name=a propagation=Orphan", "Propagation is only for delete"},
		{"conflict", "needs field client="},
		{"crash-restart client=a/b", "invalid Client name"},
		{"slow-call client=c", "needs field by="},
		{"stale-read client=c replica=-1", "negative Replica"},
	} {
		_, err := Parse(c.in)
		if err == nil || !strings.HasPrefix(err.Error(), "world: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want an error starting \"world: \" and containing %q", c.in, err, c.want)
		}
	}
}

// Goal: ops write any served resource with full content, cluster-scoped ones too, and every
// write is narrated, including writes made through the apiserver's client API by a test and by
// a user actor. Method: apply creates, updates, patches and deletes with labels, annotations,
// finalizers, generateName and data on configmaps, nodes and deployments; read the objects
// back; count the apiserver's narration lines.
func TestOpsWriteAnyResourceWithContent(t *testing.T) {
	nodes := schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	w, err := New(1, Config{DefaultResource: configMaps})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	get := func(gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
		t.Helper()
		rc := w.Server().Resource(gvr)
		if ns != "" {
			rc = rc.Namespace(ns)
		}
		u, err := rc.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get %s %s/%s: %v", gvr.Resource, ns, name, err)
		}
		return u
	}
	for _, s := range []string{
		`create name=cm label:app=web annotation:note="two words" finalizers=example.com/keep content="{\"data\":{\"k\":\"v\"}}"`,
		`update name=cm label:tier=db content="{\"data\":{\"k\":\"v2\"}}"`,
		`patch name=cm patchType=merge patch="{\"data\":{\"p\":\"1\"}}"`,
		`create resource=v1/nodes name=n1 label:zone=a content="{\"spec\":{\"unschedulable\":true}}"`,
		`create resource=apps/v1/deployments ns=other generateName=web- content="{\"spec\":{\"replicas\":3}}"`,
		`delete name=cm`,
	} {
		op, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Apply(op); err != nil {
			t.Fatalf("Apply(%s): %v", op, err)
		}
	}
	cm := get(configMaps, "default", "cm")
	if cm.GetDeletionTimestamp() == nil || cm.GetLabels()["app"] != "web" || cm.GetLabels()["tier"] != "db" ||
		cm.GetAnnotations()["note"] != "two words" || !reflect.DeepEqual(cm.GetFinalizers(), []string{"example.com/keep"}) {
		t.Errorf("configmap after create, update, patch, delete: %v", cm.Object)
	}
	if data, _, _ := unstructured.NestedStringMap(cm.Object, "data"); !reflect.DeepEqual(data, map[string]string{"k": "v2", "p": "1"}) {
		t.Errorf("configmap data %v", data)
	}
	if n := get(nodes, "", "n1"); n.GetNamespace() != "" || n.GetLabels()["zone"] != "a" {
		t.Errorf("node %v", n.Object)
	}
	if err := w.Apply(Op{Kind: OpCreate, Resource: nodes, Namespace: "default", Name: "n2"}); err == nil || !strings.Contains(err.Error(), "cluster-scoped") {
		t.Errorf("a namespaced op on nodes: %v, want a cluster-scoped error", err)
	}
	list, err := w.Server().Snapshot(deployments, "other", metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || !strings.HasPrefix(list.Items[0].GetName(), "web-") {
		t.Fatalf("deployments: %v %v", list, err)
	}
	if r, _, _ := unstructured.NestedInt64(list.Items[0].Object, "spec", "replicas"); r != 3 {
		t.Errorf("deployment replicas %d", r)
	}
	// Writes through the client API: one from the test, one from a user actor.
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetName("by-test")
	if _, err := w.Server().Resource(configMaps).Namespace("default").Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	done := false
	if err := w.AddActor(&funcActor{name: "writer", ready: func() bool { return !done }, run: func() {
		done = true
		v := u.DeepCopy()
		v.SetName("by-actor")
		if _, err := w.Server().Resource(configMaps).Namespace("default").Create(ctx, v, metav1.CreateOptions{}); err != nil {
			panic(err)
		}
	}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Sim().RunFor(time.Second); err != nil {
		t.Fatal(err)
	}
	narration := sim.Narrate(w.Sim().Trace().Events())
	if !strings.Contains(w.Sim().Trace().String(), "writer") {
		t.Errorf("no step of the user actor in the trace:\n%s", w.Sim().Trace())
	}
	if strings.Contains(narration, "write-error") {
		t.Errorf("a refused op was narrated:\n%s", narration)
	}
	for _, want := range []string{
		"apiserver: ADDED obj=configmaps/default/cm rv=2",
		"apiserver: MODIFIED obj=configmaps/default/cm rv=3",
		"apiserver: MODIFIED obj=configmaps/default/cm rv=4",
		"apiserver: ADDED obj=nodes/n1 rv=5",
		"apiserver: ADDED obj=deployments/other/web-",
		"apiserver: MODIFIED obj=configmaps/default/cm rv=7", // the delete waits on its finalizer
		"apiserver: ADDED obj=configmaps/default/by-test rv=8",
		"apiserver: ADDED obj=configmaps/default/by-actor rv=9",
	} {
		if !strings.Contains(narration, want) {
			t.Errorf("narration lacks %q:\n%s", want, narration)
		}
	}
}

// funcActor is a user actor made of functions: it offers "run" while ready says so.
type funcActor struct {
	name  string
	ready func() bool
	run   func()
}

func (a *funcActor) Name() string { return a.name }

func (a *funcActor) Actions(add func(sim.Action)) {
	if a.ready() {
		add(sim.Action{Name: "run", Run: a.run})
	}
}

// phase and ready are named types such as typed API objects use (corev1.PodPhase...).
type (
	phase string
	ready bool
)

// Goal: Content takes the Go values a user writes (map[string]string, []string, every integer
// and float kind, named string types, pointers, []byte, nested maps and slices, values with
// their own MarshalJSON or MarshalText such as resource.Quantity and metav1.Time) and the object
// holds them in unstructured's form, as encoding/json would write them; the world converts a
// copy, so changing the caller's maps after Apply or Script changes nothing. Method: create,
// update and script with such content; read the objects back and compare with the JSON form.
func TestOpContentTakesGoValues(t *testing.T) {
	w, err := New(1, Config{DefaultResource: configMaps})
	if err != nil {
		t.Fatal(err)
	}
	replicas := int32(3)
	var noPointer *int
	content := map[string]any{
		"data": map[string]string{"k": "v"},
		"spec": map[string]any{
			"replicas": 3, "max": &replicas, "none": noPointer, "ratio": float32(0.1), "half": 0.5,
			"small": int8(-8), "big": uint64(1 << 62), "u": uint16(7), "count": json.Number("12"), "pi": json.Number("3.25"),
			"ports": []int32{80, 443}, "pair": [2]int{1, 2}, "tags": []string{"a", "b"}, "phase": phase("Running"),
			"ok": ready(true), "secret": []byte("pw"), "limits": map[phase]int64{"cpu": 2},
			"nested":   []any{map[string]string{"x": "y"}, []map[string]any{{"n": uint(1)}}},
			"emptyMap": map[string]string{}, "nilMap": map[string]string(nil), "nilList": []string(nil),
			"cpu": resource.MustParse("1500m"), "port": intstr.FromInt32(8080), "portName": intstr.FromString("http"),
			"since": metav1.NewTime(time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)), "noTime": (*metav1.Time)(nil),
			"raw": json.RawMessage(`{"a":[1,2.5]}`), "ip": net.ParseIP("10.0.0.1"),
		},
	}
	want := map[string]any{
		"data": map[string]any{"k": "v"},
		"spec": map[string]any{
			"replicas": int64(3), "max": int64(3), "none": nil, "ratio": 0.1, "half": 0.5,
			"small": int64(-8), "big": int64(1 << 62), "u": int64(7), "count": int64(12), "pi": 3.25,
			"ports": []any{int64(80), int64(443)}, "pair": []any{int64(1), int64(2)}, "tags": []any{"a", "b"}, "phase": "Running",
			"ok": true, "secret": "cHc=", "limits": map[string]any{"cpu": int64(2)},
			"nested":   []any{map[string]any{"x": "y"}, []any{map[string]any{"n": int64(1)}}},
			"emptyMap": map[string]any{}, "nilMap": nil, "nilList": nil,
			"cpu": "1500m", "port": int64(8080), "portName": "http",
			"since": "2026-11-23T03:00:00Z", "noTime": nil,
			"raw": map[string]any{"a": []any{int64(1), 2.5}}, "ip": "10.0.0.1",
		},
	}
	get := func(name string) map[string]any {
		t.Helper()
		u, err := w.Server().Resource(configMaps).Namespace("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return map[string]any{"data": u.Object["data"], "spec": u.Object["spec"]}
	}
	if err := w.Apply(Op{Kind: OpCreate, Name: "a", Content: content}); err != nil {
		t.Fatalf("Apply(create with Go values): %v", err)
	}
	if got := get("a"); !reflect.DeepEqual(got, want) {
		t.Errorf("object a holds\n %#v\nwant\n %#v", got, want)
	}
	// An update replaces each top-level field it names with its converted value.
	if err := w.Apply(Op{Kind: OpUpdate, Name: "a", Content: map[string]any{"data": map[string]string{"k": "v2"}}}); err != nil {
		t.Fatalf("Apply(update with Go values): %v", err)
	}
	if got := get("a")["data"]; !reflect.DeepEqual(got, map[string]any{"k": "v2"}) {
		t.Errorf("data after the update: %#v", got)
	}
	// A script keeps the ops as they were: the caller's maps change afterwards, the object not.
	data := map[string]string{"k": "scripted"}
	labels := map[string]string{"app": "web"}
	if _, err := w.Script(time.Second, Op{Kind: OpCreate, Name: "b", Labels: labels, Content: map[string]any{"data": data, "spec": content["spec"]}}); err != nil {
		t.Fatal(err)
	}
	data["k"], labels["app"] = "changed", "changed"
	content["spec"].(map[string]any)["replicas"] = 4
	if err := w.Sim().RunFor(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	if got := get("b"); !reflect.DeepEqual(got, map[string]any{"data": map[string]any{"k": "scripted"}, "spec": want["spec"]}) {
		t.Errorf("scripted object b holds %#v", got)
	}
	u, _ := w.Server().Resource(configMaps).Namespace("default").Get(context.Background(), "b", metav1.GetOptions{})
	if u.GetLabels()["app"] != "web" {
		t.Errorf("scripted object b has labels %v, want the ones given to Script", u.GetLabels())
	}
}

// panicky is a value whose MarshalJSON panics.
type panicky struct{}

func (panicky) MarshalJSON() ([]byte, error) { panic("no JSON today") }

// Goal: content that cannot be JSON is refused before anything happens, with an error that
// names the value's path and type, never a panic; with several bad values the error names the
// first in key order, the same one every run. Method: Apply and Script such ops; check the
// error, that the apiserver's revision did not move and that nothing was scheduled; repeat the
// two-bad-values case 100 times (Go's map order changes between iterations).
func TestOpContentRefusesWhatIsNotJSON(t *testing.T) {
	w, err := New(1, Config{DefaultResource: configMaps})
	if err != nil {
		t.Fatal(err)
	}
	type point struct{ X int }
	loop := map[string]any{}
	loop["self"] = loop
	for _, c := range []struct {
		name    string
		content map[string]any
		want    string
	}{
		{"channel", map[string]any{"data": make(chan int)}, `Content["data"]: chan int cannot be a JSON value`},
		{"func deep", map[string]any{"spec": map[string]any{"list": []any{1, func() {}}}}, `Content["spec"]["list"][1]: func() cannot be a JSON value`},
		{"struct", map[string]any{"spec": map[string]any{"at": point{1}}}, `Content["spec"]["at"]: world.point is a struct`},
		{"complex", map[string]any{"spec": []complex64{1}}, `Content["spec"][0]: complex64 cannot be a JSON value`},
		{"int keys", map[string]any{"spec": map[int]string{1: "a"}}, `Content["spec"]: map[int]string has keys of type int, not strings`},
		{"overflow", map[string]any{"spec": map[string]uint64{"n": 1 << 63}}, `Content["spec"]["n"]: uint64 9223372036854775808 overflows int64`},
		{"NaN", map[string]any{"spec": math.NaN()}, `Content["spec"]: NaN is not a JSON number`},
		{"infinity", map[string]any{"spec": []float32{float32(math.Inf(1))}}, `Content["spec"][0]: +Inf is not a JSON number`},
		{"bad number", map[string]any{"spec": json.Number("twelve")}, `Content["spec"]: json.Number "twelve" is not a number`},
		{"cycle", map[string]any{"spec": loop}, "nested deeper than 64 levels"},
		{"bad raw JSON", map[string]any{"spec": map[string]any{"raw": json.RawMessage(`{bad`)}}, `Content["spec"]["raw"]: json.RawMessage: invalid character`},
		{"panicking marshaller", map[string]any{"spec": []any{panicky{}}}, `Content["spec"][0]: world.panicky: marshalling it panicked: no JSON today`},
		{"two bad values", map[string]any{"zeta": make(chan int), "beta": []any{func() {}}, "alpha": "ok"}, `Content["beta"][0]: func()`},
	} {
		for range 100 {
			before := w.Server().Revision()
			for _, err := range []error{
				w.Apply(Op{Kind: OpCreate, Name: "a", Content: c.content}),
				errOf(w.Script(0, Op{Kind: OpCreate, Name: "ok"}, Op{Kind: OpUpdate, Name: "a", Content: c.content})),
			} {
				if err == nil || !strings.HasPrefix(err.Error(), "world: op ") || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("%s: %v, want an error starting \"world: op \" and containing %q", c.name, err, c.want)
				}
			}
			if after := w.Server().Revision(); after != before || !w.Quiet() {
				t.Fatalf("%s: a refused op changed the world: revision %d -> %d, quiet %v", c.name, before, after, w.Quiet())
			}
			if c.name != "two bad values" {
				break
			}
		}
	}
}

// Goal: an op whose fields its kind would silently drop is refused, with an error that says
// what the kind takes: no Kind at all, metadata or Content on a patch, Content or Finalizers on a
// delete; nothing happens. A delete's Labels and Annotations stay accepted and ignored (the
// generator's deletes carry labels). Method: Apply each; compare the error and the revision.
func TestApplyRefusesFieldsItsKindDrops(t *testing.T) {
	w, err := New(1, Config{DefaultResource: configMaps})
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, w, Op{Kind: OpCreate, Name: "a"})
	merge := func(op Op) Op { op.PatchType, op.Patch = types.MergePatchType, `{"data":{"k":"v"}}`; return op }
	for _, c := range []struct {
		op   Op
		want string
	}{
		{Op{Name: "a"}, "world: unknown op kind OpKind(0) (want one of: create, update, patch, delete, close-watches, compact, fail-next, sleep, burn-revisions"},
		{Op{Kind: 42}, "world: unknown op kind OpKind(42)"},
		{merge(Op{Kind: OpPatch, Name: "a", Labels: map[string]string{"x": "y"}}), "world: op patch: Labels, Annotations, Finalizers and Content are for create and update; a patch says its changes in Patch"},
		{merge(Op{Kind: OpPatch, Name: "a", Annotations: map[string]string{"x": "y"}}), "a patch says its changes in Patch"},
		{merge(Op{Kind: OpPatch, Name: "a", Finalizers: []string{}}), "a patch says its changes in Patch"},
		{merge(Op{Kind: OpPatch, Name: "a", Content: map[string]any{"data": map[string]string{"k": "v"}}}), "a patch says its changes in Patch"},
		{Op{Kind: OpDelete, Name: "a", Content: map[string]any{}}, "world: op delete: Finalizers and Content are for create and update; a delete only names its object"},
		{Op{Kind: OpDelete, Name: "a", Finalizers: []string{"f"}}, "a delete only names its object"},
	} {
		before := w.Server().Revision()
		if err := w.Apply(c.op); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Apply(%s) = %v, want an error containing %q", c.op, err, c.want)
		}
		if after := w.Server().Revision(); after != before {
			t.Errorf("Apply(%s) was refused but wrote: revision %d -> %d", c.op, before, after)
		}
	}
	if err := w.Apply(Op{Kind: OpDelete, Name: "a", Labels: map[string]string{"v": "1"}}); err != nil {
		t.Errorf("a delete with labels, as the generator makes: %v", err)
	}
}
