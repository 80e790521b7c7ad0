package fakeapi_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDeleteSetsTheCollectorsFinalizers: the finalizers a delete leaves for the garbage
// collector follow kube-apiserver's rule: an explicit policy decides and replaces the other
// collector finalizer, otherwise one already present stands.
func TestDeleteSetsTheCollectorsFinalizers(t *testing.T) {
	orphan, fg, bg := metav1.DeletePropagationOrphan, metav1.DeletePropagationForeground, metav1.DeletePropagationBackground
	yes := true
	for _, tc := range []struct {
		name   string
		first  metav1.DeleteOptions
		preset []string // finalizers the object is created with besides "keep"
		want   []string // finalizers after the deletes; nil means removed
	}{
		{"background", metav1.DeleteOptions{PropagationPolicy: &bg}, nil, nil},
		{"default", metav1.DeleteOptions{}, nil, nil},
		{"foreground", metav1.DeleteOptions{PropagationPolicy: &fg}, nil, []string{"keep", metav1.FinalizerDeleteDependents}},
		{"orphan", metav1.DeleteOptions{PropagationPolicy: &orphan}, nil, []string{"keep", metav1.FinalizerOrphanDependents}},
		{"orphanDependents", metav1.DeleteOptions{OrphanDependents: &yes}, nil, []string{"keep", metav1.FinalizerOrphanDependents}},
		{"foreground replaces orphan", metav1.DeleteOptions{PropagationPolicy: &fg}, []string{metav1.FinalizerOrphanDependents}, []string{"keep", metav1.FinalizerDeleteDependents}},
		{"explicit background drops orphan", metav1.DeleteOptions{PropagationPolicy: &bg}, []string{metav1.FinalizerOrphanDependents}, nil},
		{"default keeps a present orphan", metav1.DeleteOptions{}, []string{metav1.FinalizerOrphanDependents}, []string{"keep", metav1.FinalizerOrphanDependents}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := newServer()
			c := srv.Resource(configmaps).Namespace("ns")
			obj := configMap("x")
			obj.SetFinalizers(append([]string{"keep"}, tc.preset...))
			if _, err := c.Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := c.Delete(context.Background(), "x", tc.first); err != nil {
				t.Fatal(err)
			}
			got, err := c.Get(context.Background(), "x", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == nil {
				want = []string{"keep"}
			}
			if !slices.Equal(got.GetFinalizers(), want) {
				t.Fatalf("finalizers %q, want %q", got.GetFinalizers(), want)
			}
		})
	}
}

func TestDeleteOptionsValidated(t *testing.T) {
	srv, _ := newServer()
	c := srv.Resource(configmaps).Namespace("ns")
	if _, err := c.Create(context.Background(), configMap("x"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	orphan, odd := metav1.DeletePropagationOrphan, metav1.DeletionPropagation("Sideways")
	yes := true
	for _, opts := range []metav1.DeleteOptions{
		{OrphanDependents: &yes, PropagationPolicy: &orphan},
		{PropagationPolicy: &odd},
	} {
		err := c.Delete(context.Background(), "x", opts)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "DeleteOptions") {
			t.Errorf("delete with %+v: %v, want 422 on DeleteOptions", opts, err)
		}
	}
	if _, err := c.Get(context.Background(), "x", metav1.GetOptions{}); err != nil {
		t.Fatalf("a refused delete deleted: %v", err)
	}
}
