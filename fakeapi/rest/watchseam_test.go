package rest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/informersim/informersim/fakeapi"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// TestWatchSeam: with Options.Watch set, the front streams what the opener's watch.Interface
// yields (in the order it yields it, ending when its channel closes), never opening a watch of
// its own; the opener gets the watch's resource, namespace and options; its error is a Status.
func TestWatchSeam(t *testing.T) {
	srv, err := fakeapi.New(fakeapi.Config{Resources: []fakeapi.Resource{widgets}})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		gvr  schema.GroupVersionResource
		ns   string
		opts metav1.ListOptions
	}
	fake := watch.NewFakeWithChanSize(3, false)
	h, err := NewHandler(srv, Options{Watch: func(r *http.Request, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (watch.Interface, error) {
		got.gvr, got.ns, got.opts = gvr, ns, opts
		if opts.LabelSelector == "refuse" {
			return nil, apierrors.NewResourceExpired("too old resource version: 1 (5)")
		}
		return fake, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	obj := func(name, rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("example.com/v1")
		u.SetKind("Widget")
		u.SetNamespace("ns")
		u.SetName(name)
		u.SetResourceVersion(rv)
		return u
	}
	fake.Add(obj("b", "7"))
	fake.Modify(obj("a", "8"))
	fake.Stop() // closes the channel: the stream ends after the two events
	w := do(h, call{method: "GET", path: "/apis/example.com/v1/namespaces/ns/widgets?watch=true&resourceVersion=5&timeoutSeconds=42"})
	if w.Code != http.StatusOK {
		t.Fatalf("watch: %d %s", w.Code, w.Body)
	}
	if got.gvr != widgets.GVR || got.ns != "ns" || got.opts.ResourceVersion != "5" || got.opts.TimeoutSeconds == nil || *got.opts.TimeoutSeconds != 42 {
		t.Errorf("the opener got %v %q %+v", got.gvr, got.ns, got.opts)
	}
	lines := strings.Split(strings.TrimSpace(w.Body.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"type":"ADDED"`) || !strings.Contains(lines[0], `"name":"b"`) ||
		!strings.Contains(lines[1], `"type":"MODIFIED"`) || !strings.Contains(lines[1], `"name":"a"`) {
		t.Errorf("stream:\n%s", w.Body)
	}
	if ids := srv.Faults().Watchers(); len(ids) != 0 {
		t.Errorf("the front opened watches of its own: %v", ids)
	}

	w = do(h, call{method: "GET", path: "/apis/example.com/v1/widgets?watch=1&labelSelector=refuse"})
	if w.Code != http.StatusGone || !strings.Contains(w.Body.String(), `"reason":"Expired"`) {
		t.Errorf("refused watch: %d %s", w.Code, w.Body)
	}
	if got.ns != "" {
		t.Errorf("a watch across namespaces reached the opener with namespace %q", got.ns)
	}
}
