package clientgo

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo/internal/testobjects"
	"github.com/informersim/informersim/internal/fastpath"
	"github.com/informersim/informersim/kube"
	"github.com/informersim/informersim/sim/world"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	kubescheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// lentPair is what a typed conversion handed the read-only check: the object handed out and the
// copy it is compared with.
type lentPair struct{ obj, copy runtime.Object }

// keepingConversion is the Env informers' conversion to a Deployment with kept versions, whose
// read-only check records what it is lent (as bubble.lend: the copy given, else one it makes).
func keepingConversion(lent *[]lentPair) *typed {
	return &typed{scheme: kubescheme.Scheme, gvk: appsv1.SchemeGroupVersion.WithKind("Deployment"), versions: &convertedVersions{},
		lend: func(obj any, pristine runtime.Object) runtime.Object {
			if pristine == nil {
				pristine = obj.(runtime.Object).DeepCopyObject()
			}
			*lent = append(*lent, lentPair{obj.(runtime.Object), pristine})
			return pristine
		}}
}

// deploymentVersion is richDeployment as the apiserver hands it out: uid, resourceVersion and
// image as given, and its times (whose zone every copy shares).
func deploymentVersion(t *testing.T, uid, rv, image string) *unstructured.Unstructured {
	t.Helper()
	d := testobjects.RichDeployment()
	d.UID, d.ResourceVersion = types.UID(uid), rv
	d.CreationTimestamp = metav1.NewTime(time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC))
	d.ManagedFields[0].Time = &d.CreationTimestamp
	d.Spec.Template.Spec.Containers[0].Image = image
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: content}
}

// converted is what the conversion of u must hand out: FromUnstructured's Deployment.
func converted(t *testing.T, u *unstructured.Unstructured) *appsv1.Deployment {
	t.Helper()
	var d appsv1.Deployment
	if err := kube.FromUnstructured(u.Object, &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

// Goal: a version converted again is handed out from the kept conversion, as a new object of the
// informer's own that is what converting it gives, shares no memory with what was handed out
// before or with the kept copy, and is lent to the read-only check with the kept copy; a
// controller that changed what it was handed changed only its own object. Another
// resourceVersion, uid, namespace or name of the object is converted anew. Fails when the key
// leaves out the resourceVersion (or the uid), or the kept copy is the object handed out.
func TestConvertedVersionsAreCopies(t *testing.T) {
	var lent []lentPair
	conv := keepingConversion(&lent)
	v1 := deploymentVersion(t, "u-1", "7", "nginx:1.27")
	first, err := conv.transform(v1.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	if want := converted(t, v1); !reflect.DeepEqual(first, want) {
		t.Fatalf("first conversion:\n%#v\nwant\n%#v", first, want)
	}
	// The controller writes into what it was handed (the read-only check would fail the run).
	d := first.(*appsv1.Deployment)
	d.Labels["app"] = "changed"
	d.Spec.Template.Spec.Containers[0].Args[0] = "changed"
	d.Spec.Replicas = ptr.To(int32(99))
	for i := range 3 {
		again, err := conv.transform(v1.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		if want := converted(t, v1); !reflect.DeepEqual(again, want) {
			t.Fatalf("conversion %d of the version:\n%#v\nwant\n%#v", i+2, again, want)
		}
		if again == first || sharesMemory(reflect.ValueOf(again), reflect.ValueOf(first), 0) {
			t.Fatalf("conversion %d shares memory with the first object handed out", i+2)
		}
		last := lent[len(lent)-1]
		if last.obj != again || sharesMemory(reflect.ValueOf(again), reflect.ValueOf(last.copy), 0) || !reflect.DeepEqual(again, last.copy) {
			t.Fatalf("conversion %d: the read-only check was not lent it with an equal copy of its own", i+2)
		}
		again.(*appsv1.Deployment).Annotations["note"] = "changed too"
	}
	if hits, misses := conv.versions.counts(); hits != 3 || misses != 1 {
		t.Fatalf("%d conversions kept, %d converted: want 3 and 1", hits, misses)
	}

	// Other versions of the object, and other objects with its version.
	others := map[string]*unstructured.Unstructured{
		"a later resourceVersion": deploymentVersion(t, "u-1", "8", "nginx:1.28"),
		"a re-created object":     deploymentVersion(t, "u-2", "7", "nginx:1.29"),
	}
	otherNS := deploymentVersion(t, "u-1", "7", "nginx:1.30")
	otherNS.SetNamespace("other")
	others["another namespace"] = otherNS
	otherName := deploymentVersion(t, "u-1", "7", "nginx:1.31")
	otherName.SetName("other")
	others["another name"] = otherName
	for what, u := range others {
		got, err := conv.transform(u.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		if want := converted(t, u); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: handed out\n%#v\nwant\n%#v", what, got.(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Image, want.Spec.Template.Spec.Containers[0].Image)
		}
	}

	// Without a uid or a resourceVersion an object is no committed version: converted each time.
	bare := deploymentVersion(t, "", "7", "nginx:1.27")
	for range 2 {
		if _, err := conv.transform(bare.DeepCopy()); err != nil {
			t.Fatal(err)
		}
	}
	if hits, _ := conv.versions.counts(); hits != 3 {
		t.Fatalf("an object without a uid was handed out from a kept conversion (%d hits)", hits)
	}
}

// Goal: a transform the controller set gets its own object each time, before it changes it: a
// version converted again reaches it as converted, whatever it did to the first one.
func TestConvertedVersionsUnderATransform(t *testing.T) {
	var lent []lentPair
	conv := keepingConversion(&lent)
	var seen []*appsv1.Deployment
	conv.user = func(obj any) (any, error) {
		d := obj.(*appsv1.Deployment)
		seen = append(seen, d.DeepCopy())
		d.Labels["transformed"] = fmt.Sprint(len(seen))
		d.ManagedFields = nil
		return d, nil
	}
	v := deploymentVersion(t, "u-1", "7", "nginx:1.27")
	want := converted(t, v)
	for i := range 3 {
		out, err := conv.transform(v.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(seen[i], want) {
			t.Fatalf("conversion %d reached the transform as\n%#v\nwant\n%#v", i+1, seen[i], want)
		}
		if got := out.(*appsv1.Deployment).Labels["transformed"]; got != fmt.Sprint(i+1) {
			t.Fatalf("conversion %d: the transform's result was not handed out (label %q)", i+1, got)
		}
	}
	if hits, _ := conv.versions.counts(); hits != 2 {
		t.Fatalf("%d kept conversions handed out, want 2", hits)
	}
}

// Goal: the kept conversions are bounded (two generations of keptConversions), and a version
// found in the older generation is kept on.
func TestConvertedVersionsBounded(t *testing.T) {
	c := &convertedVersions{}
	key := func(i int) versionKey { return versionKey{name: "o", uid: "u", rv: fmt.Sprint(i)} }
	obj := &corev1.ConfigMap{Data: map[string]string{"k": "v"}}
	c.keep(key(0), obj)
	for i := 1; i < 3*keptConversions; i++ {
		c.keep(key(i), obj)
		if i%(keptConversions/2) == 0 {
			if handed, _ := c.copyOf(key(0)); handed == nil {
				t.Fatalf("after %d versions, the first one, looked up all along, is no longer kept", i)
			}
		}
	}
	if n := c.kept.Len(); n > 2*keptConversions {
		t.Fatalf("%d conversions kept, more than %d", n, 2*keptConversions)
	}
	if handed, _ := c.copyOf(key(1)); handed != nil {
		t.Fatal("a version never looked up again is still kept after 3 generations")
	}
}

// shallowCopied is a Go type whose DeepCopyObject shares its map: its kept conversions would hand
// a controller's changes on.
type shallowCopied struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Data              map[string]string `json:"data"`
}

func (s *shallowCopied) DeepCopyObject() runtime.Object { c := *s; return &c }

// Goal: a Go type whose DeepCopyObject shares memory (or does not copy everything) is not kept:
// each version is converted each time. Fails when copiesFaithfully trusts every type.
func TestConvertedVersionsNeedAFaithfulDeepCopy(t *testing.T) {
	gv := metav1.SchemeGroupVersion.WithKind("ShallowCopied").GroupVersion()
	scheme := runtime.NewScheme()
	scheme.AddKnownTypeWithName(gv.WithKind("ShallowCopied"), &shallowCopied{})
	var lent []lentPair
	conv := keepingConversion(&lent)
	conv.scheme, conv.gvk = scheme, gv.WithKind("ShallowCopied")
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "s", "uid": "u", "resourceVersion": "3"}, "data": map[string]any{"k": "v"}}}
	first, err := conv.transform(u.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	first.(*shallowCopied).Data["k"] = "changed"
	for range 2 {
		again, err := conv.transform(u.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		if got := again.(*shallowCopied).Data["k"]; got != "v" {
			t.Fatalf("a version converted again has data %q: a change to an object handed out was handed on", got)
		}
		again.(*shallowCopied).Data["k"] = "changed again"
	}
	if !copyTrust.has(reflect.TypeFor[*shallowCopied]()) {
		t.Fatal("the shallow DeepCopyObject was trusted")
	}
	if copyTrust.has(reflect.TypeFor[*appsv1.Deployment]()) {
		t.Fatal("a Deployment's generated DeepCopyObject was not trusted")
	}
}

// relistMutator is a controller whose Deployment handler writes into the new object of an
// update notification that repeats a version it already had (a relist's), if mutate.
type relistMutator struct {
	env     *Env
	mutate  bool
	repeats int
}

func (c *relistMutator) Run(ctx context.Context, _ int) error {
	<-ctx.Done()
	return nil
}

// Goal: an object handed out from a kept conversion is checked by the read-only check as any
// other: a controller that writes into the objects a relist hands its handler (versions its
// informer converted before) fails the run with the read-only-objects violation, and the same
// run without the write passes, having handed out kept conversions. Fails when a kept version
// is lent with the object handed out as its own copy.
func TestKeptVersionsStayReadOnly(t *testing.T) {
	for _, mutate := range []bool{false, true} {
		c := &relistMutator{mutate: mutate}
		cfg := Config{
			Seed: 5,
			Setup: func(w *world.World) error {
				for i := range 3 {
					content := map[string]any{"spec": map[string]any{"replicas": int64(i + 1),
						"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
						"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
							"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx"}}}}}}
					if err := w.Apply(world.Op{Kind: world.OpCreate, Name: fmt.Sprintf("web-%d", i), Content: content}); err != nil {
						return err
					}
				}
				_, err := w.Script(2*time.Second, world.Op{Kind: world.OpCloseWatches, Code: 410})
				return err
			},
			Cluster: Cluster{World: world.Config{DefaultResource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}}},
			Controller: Constructor{Workers: 1, New: func(ctx context.Context, env *Env) (Controller, error) {
				c.env = env
				_, err := env.KubeInformers.Apps().V1().Deployments().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
					UpdateFunc: func(oldObj, newObj any) {
						o, n := oldObj.(*appsv1.Deployment), newObj.(*appsv1.Deployment)
						if o.ResourceVersion != n.ResourceVersion || o == n {
							return
						}
						c.repeats++
						if c.mutate {
							n.Labels = map[string]string{"touched": "yes"}
						}
					},
				})
				return c, err
			}},
			Phases: Phases{FaultsFor: time.Minute},
		}
		_, err := Run(t, cfg)
		if c.env == nil {
			t.Fatalf("mutate=%v: the controller was never built: %v", mutate, err)
		}
		hits, _ := c.env.b.conversions.counts()
		if c.repeats == 0 || (fastpath.On && hits == 0) { // a plain build keeps no conversion
			t.Fatalf("mutate=%v: %d repeated versions notified, %d kept conversions handed out: the relist did not hand out kept versions", mutate, c.repeats, hits)
		}
		var v *world.Violation
		switch {
		case !mutate && err != nil:
			t.Fatalf("without the write: %v", err)
		case mutate && !(errors.As(err, &v) && v.Oracle == world.OracleReadOnlyObjects):
			t.Fatalf("writing into a relisted object: %v, want the read-only-objects violation", err)
		}
	}
}
