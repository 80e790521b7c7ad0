package world

import (
	"context"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

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
	kind := OpKind(1 + r.IntN(int(OpSleep)))
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
		if r.IntN(2) == 0 {
			op.Labels = map[string]string{}
			for range 1 + r.IntN(3) {
				op.Labels["app.kubernetes.io/"+name()] = word()
			}
		}
		if r.IntN(2) == 0 {
			op.Annotations = map[string]string{"note": word(), "k" + strconv.Itoa(r.IntN(9)): word()}
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
		if kind == OpPatch {
			op.PatchType = []types.PatchType{types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType, types.ApplyPatchType}[r.IntN(4)]
			op.Patch = `{"metadata":{"labels":{"v":"` + strconv.Itoa(r.IntN(9)) + `"}}}`
		}
	case OpCloseWatches:
		op.Code = []int32{0, 410, 500}[r.IntN(3)]
	case OpFailNext:
		op.Verb = fakeapi.Verb(1 + r.IntN(int(fakeapi.VerbWatch)))
		op.Code = []int32{429, 500, 410, 599, 400}[r.IntN(5)]
	case OpSleep:
		op.Duration = time.Duration(r.Int64N(int64(time.Hour)))
	}
	return op
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
		if err := op.validate(); err != nil {
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
	for k := OpCreate; k <= OpSleep; k++ {
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
		{"create name=a code=410", "Code is only"},
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
