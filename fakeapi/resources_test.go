package fakeapi

import (
	"context"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// TestAddAndRemoveResource follows a resource through the life a CustomResourceDefinition gives
// it: not served (404), added (served, in Config), refused removal while it holds an object,
// removed once empty (404 again, gone from Config, a watch opened before it delivers what it held
// and nothing of the next life), added again empty and with another scope.
func TestAddAndRemoveResource(t *testing.T) {
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	s, _ := newTestServer(t, nil)
	ctx := context.Background()
	if _, err := s.Resource(widgets).List(ctx, metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("list before AddResource: %v, want NotFound", err)
	}
	if err := s.AddResource(Resource{GVR: widgets, Kind: "Widget", Namespaced: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddResource(Resource{GVR: widgets, Kind: "Widget"}); err == nil || !strings.Contains(err.Error(), "already served") {
		t.Errorf("second AddResource: %v", err)
	}
	if !slices.ContainsFunc(s.Config().Resources, func(r Resource) bool { return r.GVR == widgets && r.Names == NameSubdomain }) {
		t.Errorf("Config().Resources lacks the added resource with its defaults")
	}
	u := obj("Widget", "ns", "w1", nil)
	u.SetAPIVersion("example.com/v1")
	mustCreate(t, s, widgets, u)
	w := mustWatch(t, s, widgets, "", metav1.ListOptions{ResourceVersion: "1"})
	if err := s.RemoveResource(widgets); err == nil || !strings.Contains(err.Error(), "still holds 1 objects") {
		t.Errorf("RemoveResource with an object: %v", err)
	}
	mustDelete(t, s, widgets, "ns", "w1")
	if err := s.RemoveResource(widgets); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveResource(widgets); err == nil {
		t.Errorf("second RemoveResource succeeded")
	}
	if _, err := s.Resource(widgets).Namespace("ns").Get(ctx, "w1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after RemoveResource: %v, want NotFound", err)
	}
	if slices.ContainsFunc(s.Config().Resources, func(r Resource) bool { return r.GVR == widgets }) {
		t.Errorf("Config().Resources still lists the removed resource")
	}
	if err := s.AddResource(Resource{GVR: widgets, Kind: "Widget"}); err != nil {
		t.Fatal(err)
	}
	l, err := s.Resource(widgets).List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 0 {
		t.Fatalf("list after a new life: %v items, %v", len(l.Items), err)
	}
	again := obj("Widget", "", "w2", nil)
	again.SetAPIVersion("example.com/v1")
	mustCreate(t, s, widgets, again)
	var got []watch.EventType
	for {
		ev, ok := w.Next()
		if !ok {
			break
		}
		got = append(got, ev.Type)
	}
	if want := []watch.EventType{watch.Added, watch.Deleted}; !slices.Equal(got, want) {
		t.Errorf("the old watch saw %v, want %v", got, want)
	}
	if err := s.AddResource(Resource{GVR: schema.GroupVersionResource{Resource: "x"}}); err == nil {
		t.Errorf("AddResource accepted a resource without a version and a kind")
	}
}
