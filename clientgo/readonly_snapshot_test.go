package clientgo

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// richDeployment has a field of every shape the snapshot handles: maps (labels, a resource
// list of Quantities), pointers, slices of structs, strings, bytes, an inline array of the
// Quantity's big number, a RawExtension's interface.
func richDeployment() *appsv1.Deployment {
	block := true
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "shop", ResourceVersion: "7", Generation: 2,
			Labels:      map[string]string{"app": "web", "tier": "front"},
			Annotations: map[string]string{"note": "hello"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "example.com/v1", Kind: "Site", Name: "site", UID: "u-1", BlockOwnerDeletion: &block,
			}},
			ManagedFields: []metav1.ManagedFieldsEntry{{
				Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "apps/v1",
				FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:replicas":{}}}`)},
			}},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptrTo(int32(3)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: "nginx:1.27", Args: []string{"-g", "daemon off;"},
					Env: []corev1.EnvVar{{Name: "MODE", Value: "prod"}},
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("1.5Gi"),
					}},
				}}},
			},
		},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration: 2, Replicas: 3,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Message: "ok"}},
		},
	}
}

func ptrTo[T any](v T) *T { return &v }

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
		{"a top-level string", func(d *appsv1.Deployment) { d.ResourceVersion = "8" }, false},
		{"a top-level number", func(d *appsv1.Deployment) { d.Status.Replicas = 4 }, false},
		{"a pointer's target", func(d *appsv1.Deployment) { *d.Spec.Replicas = 5 }, false},
		{"a pointer replaced by an equal one", func(d *appsv1.Deployment) { d.Spec.Replicas = ptrTo(int32(3)) }, true},
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
		{"a nil pointer set", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Env[0].ValueFrom = &corev1.EnvVarSource{}
		}, false},
	}
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			d := richDeployment()
			if m.name == "a string's bytes, in place" {
				// A string of its own memory: a literal's bytes are read-only.
				d.Status.Conditions[0].Message = string([]byte("ok"))
			}
			cp := d.DeepCopy()
			if m.name == "a string's bytes, in place" {
				cp.Status.Conditions[0].Message = strings.Clone(d.Status.Conditions[0].Message)
			}
			s := snapshotOf(d, cp)
			if s == nil {
				t.Fatal("no snapshot of a Deployment")
			}
			m.change(d)
			deep := reflect.DeepEqual(d, cp)
			if deep != m.equal {
				t.Fatalf("DeepEqual after the change = %v, the test expects %v", deep, m.equal)
			}
			if s.unchanged() && !deep {
				t.Errorf("the snapshot says unchanged, DeepEqual says changed")
			}
			if m.name == "nothing" && !s.unchanged() {
				t.Errorf("the snapshot says changed, nothing was touched")
			}
		})
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
		{"an array element's string", 1, false, func(c *chain) { c.Arr[1].S = "y" }},
	} {
		a, b := build(tc.n, tc.cycle), build(tc.n, tc.cycle)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: the two builds differ", tc.name)
		}
		s := snapshotOf(a, b)
		if s == nil || !s.unchanged() {
			t.Fatalf("%s: no snapshot, or changed before any change", tc.name)
		}
		tc.change(a)
		if reflect.DeepEqual(a, b) {
			t.Fatalf("%s: DeepEqual does not see the change", tc.name)
		}
		if s.unchanged() {
			t.Errorf("%s: the snapshot says unchanged, DeepEqual says changed", tc.name)
		}
	}
}
