package fakeapi

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	testclock "k8s.io/utils/clock/testing"
)

var (
	podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	cmGVR   = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	nodeGVR = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	depGVR  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	epoch   = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	bg      = context.Background()
)

func newTestServer(t testing.TB, edit func(*Config)) (*Server, *testclock.FakeClock) {
	t.Helper()
	clk := testclock.NewFakeClock(epoch)
	cfg := Config{Clock: clk}
	if edit != nil {
		edit(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s, clk
}

func obj(kind, ns, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"k": "v"}}}
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	if labels != nil {
		u.SetLabels(labels)
	}
	return u
}

func cm(ns, name string, labels map[string]string) *unstructured.Unstructured {
	u := obj("ConfigMap", ns, name, labels)
	u.SetAPIVersion("v1")
	return u
}

func mustCreate(t testing.TB, s *Server, gvr schema.GroupVersionResource, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	out, err := s.Resource(gvr).Namespace(u.GetNamespace()).Create(bg, u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s: %v", u.GetName(), err)
	}
	return out
}

func mustUpdate(t testing.TB, s *Server, gvr schema.GroupVersionResource, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	out, err := s.Resource(gvr).Namespace(u.GetNamespace()).Update(bg, u, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update %s: %v", u.GetName(), err)
	}
	return out
}

func mustDelete(t testing.TB, s *Server, gvr schema.GroupVersionResource, ns, name string) {
	t.Helper()
	if err := s.Resource(gvr).Namespace(ns).Delete(bg, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete %s: %v", name, err)
	}
}

func mustWatch(t testing.TB, s *Server, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) *Watcher {
	t.Helper()
	w, err := s.OpenWatch(gvr, ns, opts)
	if err != nil {
		t.Fatalf("watch %+v: %v", opts, err)
	}
	return w
}

// drain pulls every ready event and renders each as "TYPE key rv" (bookmarks: "BOOKMARK rv",
// plus " end" when annotated; errors: "ERROR code reason").
func drain(w *Watcher) []string {
	var out []string
	for {
		ev, ok := w.Next()
		if !ok {
			return out
		}
		out = append(out, render(ev))
	}
}

func render(ev watch.Event) string {
	switch o := ev.Object.(type) {
	case *metav1.Status:
		return fmt.Sprintf("ERROR %d %s", o.Code, o.Reason)
	case *unstructured.Unstructured:
		if ev.Type == watch.Bookmark {
			s := "BOOKMARK " + o.GetResourceVersion()
			if o.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
				s += " end"
			}
			return s
		}
		key := o.GetName()
		if o.GetNamespace() != "" {
			key = o.GetNamespace() + "/" + key
		}
		return fmt.Sprintf("%s %s %s", ev.Type, key, o.GetResourceVersion())
	}
	return fmt.Sprintf("%s %T", ev.Type, ev.Object)
}

func names(l *unstructured.UnstructuredList) string {
	var ns []string
	for _, it := range l.Items {
		ns = append(ns, it.GetName()+"@"+it.GetResourceVersion())
	}
	return strings.Join(ns, ",")
}

// wantStatus checks err is a StatusError with code and reason.
func wantStatus(t testing.TB, err error, code int32, reason metav1.StatusReason) *apierrors.StatusError {
	t.Helper()
	se, ok := err.(*apierrors.StatusError)
	if !ok {
		t.Fatalf("error %v (%T), want a StatusError %d %s", err, err, code, reason)
	}
	if got := se.ErrStatus.Code; got != code {
		t.Fatalf("code %d (%v), want %d", got, err, code)
	}
	if got := se.ErrStatus.Reason; got != reason {
		t.Fatalf("reason %q (%v), want %q", got, err, reason)
	}
	return se
}

func ptr[T any](v T) *T { return &v }
