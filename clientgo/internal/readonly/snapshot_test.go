package readonly

import (
	"maps"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/informersim/informersim/clientgo/internal/testobjects"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestSnapshotAnswersAsDeepEqual changes a lent object in each way a controller might, after the
// snapshot was taken, and checks that the snapshot never calls it unchanged when DeepEqual with
// its copy says it changed, and calls it unchanged when nothing was touched. Replacing a pointer
// or a map by an equal one is not a change for DeepEqual: the snapshot may then say "changed"
// (the check falls back to DeepEqual), never the reverse.
func TestSnapshotAnswersAsDeepEqual(t *testing.T) {
	mutations := []struct {
		name   string
		change func(d *appsv1.Deployment)
		equal  bool // DeepEqual with the copy still holds after the change
	}{
		{"nothing", func(*appsv1.Deployment) {}, true},
		{"a label's value", func(d *appsv1.Deployment) { d.Labels["tier"] = "back" }, false},
		{"a label added", func(d *appsv1.Deployment) { d.Labels["new"] = "x" }, false},
		{"a label deleted", func(d *appsv1.Deployment) { delete(d.Annotations, "note") }, false},
		{"labels replaced by an equal map", func(d *appsv1.Deployment) { d.Labels = map[string]string{"app": "web", "tier": "front"} }, true},
		{"labels emptied to nil", func(d *appsv1.Deployment) { d.Spec.Selector.MatchLabels = nil }, false},
		{"labels cleared", func(d *appsv1.Deployment) { clear(d.Labels) }, false},
		{"labels grown past a small map", func(d *appsv1.Deployment) {
			for i := range 9 {
				d.Labels["extra-"+strconv.Itoa(i)] = "x"
			}
		}, false},
		{"a label set to its value", func(d *appsv1.Deployment) { d.Labels["tier"] = "front" }, true},
		{"an entry in an empty map", func(d *appsv1.Deployment) { d.Spec.Template.Annotations["a"] = "b" }, false},
		{"a top-level string", func(d *appsv1.Deployment) { d.ResourceVersion = "8" }, false},
		{"a top-level number", func(d *appsv1.Deployment) { d.Status.Replicas = 4 }, false},
		{"a pointer's target", func(d *appsv1.Deployment) { *d.Spec.Replicas = 5 }, false},
		{"a pointer replaced by an equal one", func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To(int32(3)) }, true},
		{"a pointer set to nil", func(d *appsv1.Deployment) { d.Spec.Selector = nil }, false},
		{"a nested pointer's target", func(d *appsv1.Deployment) { *d.OwnerReferences[0].BlockOwnerDeletion = false }, false},
		{"a slice element's string", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28" }, false},
		{"a slice of strings' element", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Args[1] = "daemon on;" }, false},
		{"a slice appended to", func(d *appsv1.Deployment) {
			c := &d.Spec.Template.Spec.Containers[0]
			c.Env = append(c.Env, corev1.EnvVar{Name: "X"})
		}, false},
		{"a slice shortened", func(d *appsv1.Deployment) { d.Status.Conditions = d.Status.Conditions[:0] }, false},
		{"a byte of a byte slice", func(d *appsv1.Deployment) { d.ManagedFields[0].FieldsV1.Raw[3] = 'g' }, false},
		{"a string's bytes, in place", func(d *appsv1.Deployment) {
			// What only unsafe code can do. DeepEqual compares the bytes (the copy has bytes of
			// its own here: a generated DeepCopy shares them), so must the snapshot.
			b := unsafe.Slice(unsafe.StringData(d.Status.Conditions[0].Message), 2)
			b[0] = 'n'
		}, false},
		{"a quantity in a map of structs", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = resource.MustParse("2")
		}, false},
		{"a deep slice element", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Env[0].Value = "dev" }, false},
		{"a nil map of structs set", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		}, false},
		{"a nil pointer set", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Env[0].ValueFrom = &corev1.EnvVarSource{}
		}, false},
	}
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			d := testobjects.RichDeployment()
			if m.name == "a string's bytes, in place" {
				// A string of its own memory: a literal's bytes are read-only.
				d.Status.Conditions[0].Message = string([]byte("ok"))
			}
			cp := d.DeepCopy()
			if m.name == "a string's bytes, in place" {
				cp.Status.Conditions[0].Message = strings.Clone(d.Status.Conditions[0].Message)
			}
			s := Of(d, cp)
			if s == nil {
				t.Fatal("no snapshot of a Deployment")
			}
			m.change(d)
			deep := reflect.DeepEqual(d, cp)
			if deep != m.equal {
				t.Fatalf("DeepEqual after the change = %v, the test expects %v", deep, m.equal)
			}
			if s.Unchanged() && !deep {
				t.Errorf("the snapshot says unchanged, DeepEqual says changed")
			}
			if m.name == "nothing" && !s.Unchanged() {
				t.Errorf("the snapshot says changed, nothing was touched")
			}

			// The first comparison: the same change made before it, against a copy taken
			// before the change.
			d, cp = testobjects.RichDeployment(), nil
			if m.name == "a string's bytes, in place" {
				d.Status.Conditions[0].Message = string([]byte("ok"))
				cp = d.DeepCopy()
				cp.Status.Conditions[0].Message = strings.Clone(d.Status.Conditions[0].Message)
			} else {
				cp = d.DeepCopy()
			}
			m.change(d)
			v := Verified(d, cp)
			switch {
			case v != nil && !deep:
				t.Errorf("Verified finds the two equal, DeepEqual does not")
			case v != nil && !v.Unchanged():
				t.Errorf("the verified snapshot says changed at once")
			case v == nil && m.name == "nothing":
				t.Errorf("Verified cannot tell an untouched object from its copy")
			}
		})
	}
}

// TestVerifiedSnapshotAnswersAsDeepEqual: what DeepEqual tells apart by more than the bytes
// (nil and empty slices and maps, a NaN, a function, a difference in a map, an interface or past
// the depth limit) is never found equal by Verified.
func TestVerifiedSnapshotAnswersAsDeepEqual(t *testing.T) {
	type withFloat struct {
		Name string
		F    *float64
	}
	type withFunc struct{ F func() }
	type shapes struct {
		S []string
		M map[string]string
		N map[string]int
		I any
		P *chain
	}
	nan1, nan2 := math.NaN(), math.NaN()
	f := func() {}
	deepChain := func(last string) *chain {
		head := &chain{}
		c := head
		for i := range 2 * maxSnapshotDepth {
			c.Next = &chain{Name: strconv.Itoa(i)}
			c = c.Next
		}
		c.Name = last
		return head
	}
	for _, tc := range []struct {
		name string
		a, b any
	}{
		{"a NaN", &withFloat{F: &nan1}, &withFloat{F: &nan2}},
		{"a function", &withFunc{F: f}, &withFunc{F: f}},
		{"a nil and an empty slice", &shapes{S: nil}, &shapes{S: []string{}}},
		{"an empty and a nil slice", &shapes{S: []string{}}, &shapes{S: nil}},
		{"a nil and an empty string map", &shapes{M: nil}, &shapes{M: map[string]string{}}},
		{"string maps, a value", &shapes{M: map[string]string{"a": "1"}}, &shapes{M: map[string]string{"a": "2"}}},
		{"string maps, a key", &shapes{M: map[string]string{"a": "1"}}, &shapes{M: map[string]string{"b": "1"}}},
		{"a nil and an empty map", &shapes{N: nil}, &shapes{N: map[string]int{}}},
		{"maps, a value", &shapes{N: map[string]int{"a": 1}}, &shapes{N: map[string]int{"a": 2}}},
		{"interfaces", &shapes{I: 1}, &shapes{I: int64(1)}},
		{"a nil and a set pointer", &shapes{}, &shapes{P: &chain{}}},
		{"past the depth limit", &shapes{P: deepChain("a")}, &shapes{P: deepChain("b")}},
	} {
		if reflect.DeepEqual(tc.a, tc.b) {
			t.Fatalf("%s: the two are DeepEqual", tc.name)
		}
		if v := Verified(tc.a, tc.b); v != nil {
			t.Errorf("%s: Verified finds the two equal, DeepEqual does not", tc.name)
		}
	}
	// Equal ones are told equal, past what the bytes show: the same strings in other memory,
	// equal maps and interfaces.
	a := &shapes{S: []string{"x", strings.Clone("y")}, M: map[string]string{"k": "v"}, N: map[string]int{"n": 1}, I: "i", P: &chain{Name: "c"}}
	b := &shapes{S: []string{"x", strings.Clone("y")}, M: map[string]string{"k": "v"}, N: map[string]int{"n": 1}, I: "i", P: &chain{Name: "c"}}
	if v := Verified(a, b); v == nil || !v.Unchanged() {
		t.Errorf("Verified cannot tell two equal values equal")
	}
}

// chain is a type whose values can point at themselves, or run deeper than the snapshot goes.
type chain struct {
	Name string
	Next *chain
	Any  any
	Arr  [2]struct{ S string }
}

// TestSnapshotOfChainsCyclesAndInterfaces: pointers deeper than maxSnapshotDepth and cycles are
// compared by DeepEqual, interfaces too, strings in inline arrays by their bytes.
func TestSnapshotOfChainsCyclesAndInterfaces(t *testing.T) {
	build := func(n int, cycle bool) *chain {
		head := &chain{Name: "n0", Any: map[string]any{"k": "v"}}
		head.Arr[1].S = "x"
		last := head
		for i := 1; i < n; i++ {
			last.Next = &chain{Name: "n" + strconv.Itoa(i)}
			last = last.Next
		}
		if cycle {
			last.Next = head
		}
		return head
	}
	nth := func(c *chain, n int) *chain {
		for range n {
			c = c.Next
		}
		return c
	}
	for _, tc := range []struct {
		name   string
		n      int
		cycle  bool
		change func(c *chain)
	}{
		{"a name beyond the depth", 100, false, func(c *chain) { nth(c, 90).Name = "z" }},
		{"a name in a cycle", 3, true, func(c *chain) { nth(c, 2).Name = "z" }},
		{"inside an interface", 3, true, func(c *chain) { c.Any.(map[string]any)["k"] = "w" }},
		{"a nil interface set", 3, false, func(c *chain) { nth(c, 1).Any = "set" }},
		{"an array element's string", 1, false, func(c *chain) { c.Arr[1].S = "y" }},
	} {
		a, b := build(tc.n, tc.cycle), build(tc.n, tc.cycle)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: the two builds differ", tc.name)
		}
		s := Of(a, b)
		if s == nil || !s.Unchanged() {
			t.Fatalf("%s: no snapshot, or changed before any change", tc.name)
		}
		tc.change(a)
		if reflect.DeepEqual(a, b) {
			t.Fatalf("%s: DeepEqual does not see the change", tc.name)
		}
		if s.Unchanged() {
			t.Errorf("%s: the snapshot says unchanged, DeepEqual says changed", tc.name)
		}
	}
}

// servedDeployment is a Deployment as the sample controller's informer hands it out: made by
// the controller (labels, a selector, an owner reference, one container), then given its
// metadata, managed fields and status by the apiserver and the control plane.
func servedDeployment() *appsv1.Deployment {
	labels := map[string]string{"app": "nginx", "controller": "foo-1"}
	t := metav1.NewTime(time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC))
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name: "foo-1-deploy", Namespace: "default", UID: "2c3f8a52-7d0e-4c1b-9a57-5d1e0f6b3a21", ResourceVersion: "41",
			Generation: 2, CreationTimestamp: t, Labels: maps.Clone(labels),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "samplecontroller.k8s.io/v1alpha1", Kind: "Foo", Name: "foo-1",
				UID: "0a1b2c3d-0000-4000-8000-000000000001", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
			ManagedFields: []metav1.ManagedFieldsEntry{{
				Manager: "samplecontroller", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1", Time: &t,
				FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{".":{},"f:app":{},"f:controller":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"0a1b2c3d-0000-4000-8000-000000000001\"}":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{},"f:controller":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`)},
			}},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: maps.Clone(labels)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(labels)},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:latest"}}},
			},
		},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable", Message: "Deployment has minimum availability.", LastUpdateTime: t, LastTransitionTime: t},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable", Message: `ReplicaSet "foo-1-deploy" has successfully progressed.`, LastUpdateTime: t, LastTransitionTime: t},
			},
		},
	}
}

// BenchmarkSnapshotUnchanged is the read-only check's comparison of a served Deployment that
// did not change (what almost every comparison of a run is), and the first comparison's
// DeepEqual and snapshot, for scale.
func BenchmarkSnapshotUnchanged(b *testing.B) {
	d := servedDeployment()
	cp := d.DeepCopy()
	b.Run("unchanged", func(b *testing.B) {
		s := Of(d, cp)
		for b.Loop() {
			if !s.Unchanged() {
				b.Fatal("changed")
			}
		}
	})
	b.Run("DeepEqual+Of", func(b *testing.B) {
		for b.Loop() {
			if !reflect.DeepEqual(d, cp) || Of(d, cp) == nil {
				b.Fatal("changed")
			}
		}
	})
	b.Run("Verified", func(b *testing.B) {
		for b.Loop() {
			if Verified(d, cp) == nil {
				b.Fatal("not verified")
			}
		}
	})
}
