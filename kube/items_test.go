package kube_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/informersim/informersim/kube"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

func toUnstructured(t *testing.T, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// TestItemsAssembleWhatEncodeWrites: a body, a list and a watch event built around items (what
// the REST front shares between responses) are byte for byte what encoding the whole object or
// list writes, for several kinds and list metadata.
func TestItemsAssembleWhatEncodeWrites(t *testing.T) {
	c := kube.NewProtobufCodec()
	pod := func(i int) runtime.Object {
		return &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "a", ResourceVersion: fmt.Sprint(10 + i), Labels: map[string]string{"i": fmt.Sprint(i)}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img", Args: []string{"a", "b"}}}},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning},
		}
	}
	objects := []runtime.Object{
		pod(1),
		&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "c", ResourceVersion: "7"}, Data: map[string]string{"k": "v", "a": "b"}},
		&appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: metav1.ObjectMeta{Name: "d", Generation: 3}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)}},
		&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "n"}},
	}
	for _, obj := range objects {
		u := toUnstructured(t, obj)
		item, err := c.EncodeItem(u)
		if err != nil {
			t.Fatal(err)
		}
		want, err := c.Encode(u)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.ItemBody(u.GroupVersionKind(), item)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: ItemBody %x (%v), Encode %x", u.GetKind(), got, err, want)
		}
		for _, typ := range []watch.EventType{watch.Added, watch.Modified, watch.Deleted} {
			want, err := c.EncodeWatchEvent(typ, u)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.ItemWatchEvent(typ, u.GroupVersionKind(), item)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s %s: ItemWatchEvent %x (%v), EncodeWatchEvent %x", typ, u.GetKind(), got, err, want)
			}
		}
	}

	remaining := int64(4)
	for _, meta := range []metav1.ListMeta{{ResourceVersion: "30"}, {ResourceVersion: "31", Continue: "tok", RemainingItemCount: &remaining}, {}} {
		for _, n := range []int{0, 1, 3, 200} {
			l := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "PodList"}}
			l.SetResourceVersion(meta.ResourceVersion)
			l.SetContinue(meta.Continue)
			l.SetRemainingItemCount(meta.RemainingItemCount)
			items := make([][]byte, n)
			for i := range n {
				u := toUnstructured(t, pod(i))
				l.Items = append(l.Items, *u)
				var err error
				if items[i], err = c.EncodeItem(u); err != nil {
					t.Fatal(err)
				}
			}
			want, err := c.Encode(l)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.ItemList(l.GroupVersionKind(), meta, items)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("PodList of %d, %+v: ItemList %x (%v), Encode %x", n, meta, got, err, want)
			}
		}
	}
	// A kind that is not a list is refused, not guessed.
	if _, err := c.ItemList(corev1.SchemeGroupVersion.WithKind("Pod"), metav1.ListMeta{}, nil); err == nil {
		t.Error("ItemList of a Pod: no error")
	}
}
