package informer

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// This file holds the counterparts of client-go reflector tests (informer.md §12.3) that the
// other reflector test files do not restate under their own name.

// client-go TestCloseWatchChannelOnError: an Error event in the stream makes the Reflector end
// the stream and the goroutine driver stop the watcher; the informer then relists and watches
// again (a new watcher).
func TestCloseWatchChannelOnError(t *testing.T) {
	lw := newInfLW()
	lw.set("p1")
	e := newInfRunEnv(lw, SharedIndexInformerOptions{})
	e.start()
	defer e.stop()
	infEventually(t, "synced and watching", func() bool { return e.inf.HasSynced() && lw.openWatchers() == 1 })
	st := apierrors.NewInternalError(errTest).Status()
	lw.inject(watch.Event{Type: watch.Error, Object: &st})
	infEventually(t, "the watcher stopped", func() bool { return lw.openWatchers() == 0 })
}

var errTest = errors.New("informer test: injected")

// client-go TestRunUntil and TestReflectorWatchStoppedAfter: cancelling Run stops the Reflector
// and stops the open watcher.
func TestRunUntilStopsWatcher(t *testing.T) {
	lw := newInfLW()
	e := newInfRunEnv(lw, SharedIndexInformerOptions{})
	e.start()
	infEventually(t, "an open watch", func() bool { return lw.openWatchers() == 1 })
	e.stop()
	if n := lw.openWatchers(); n != 0 {
		t.Errorf("%d watchers open after Run returned, want 0", n)
	}
}

// client-go TestReflectorHandleWatchStoppedBefore/After and TestReflectorStopWatch: once the
// Reflector is stopped, a stream event ends the stream (the driver stops the watcher), its close
// is ignored, and nothing more is requested; a stopped-before-start Reflector asks for nothing.
func TestReflectorHandleWatchStopped(t *testing.T) {
	before := newReflHarness(t, nil)
	before.r.Stop()
	before.noRequest()
	if !before.r.Stopped() {
		t.Error("Stopped false after Stop")
	}

	h := newReflHarness(t, nil)
	h.r.Start()
	h.listAndWatch(reflList("1", ""))
	h.r.Stop()
	if !h.r.WatchEvent(reflEvent(watch.Added, reflPod("a", "2"))) {
		t.Error("WatchEvent after Stop: continue, want stop")
	}
	h.r.WatchClosed() // ignored, no panic
	h.noRequest()
	if ops := h.store.take(); len(ops) != 1 {
		t.Errorf("store calls %v, want only the replace", ops)
	}
}

// client-go TestReflectorWatchListPageSize (the LIST page size, not the watch-list): an explicit
// page size is the Limit of every page, RV "0" first and continuation pages at "".
func TestReflectorWatchListPageSize(t *testing.T) {
	h := newReflHarness(t, func(o *ReflectorOptions) { o.PageSize = 2 })
	h.r.Start()
	if got := h.next(RequestList); got.Limit != 2 || got.ResourceVersion != "0" {
		t.Fatalf("first page %+v, want limit 2 at rv 0", got)
	}
	h.r.ListDone(reflList("9", "next", reflPod("a", "1"), reflPod("b", "2")), nil)
	if got := h.next(RequestList); got.Limit != 2 || got.Continue != "next" || got.ResourceVersion != "" {
		t.Fatalf("second page %+v, want limit 2, continue, rv \"\"", got)
	}
	h.r.ListDone(reflList("", "", reflPod("c", "3")), nil)
	if ops := h.store.take(); len(ops) != 1 || ops[0] != "replace [a@1 b@2 c@3] rv=9" {
		t.Errorf("store calls %v", ops)
	}
}

// client-go TestGetTypeDescriptionFromObject and TestGetExpectedGVKFromObject: an unstructured
// expected type with a GVK is described (and checked) by its GVK, any other by its Go type; no
// expected type is "<unspecified>".
func TestTypeDescriptionAndExpectedGVK(t *testing.T) {
	withGVK := &unstructured.Unstructured{}
	withGVK.SetGroupVersionKind(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
	for _, c := range []struct {
		name    string
		obj     *unstructured.Unstructured
		typed   bool
		want    string
		wantGVK *schema.GroupVersionKind
	}{
		{"nil", nil, false, "<unspecified>", nil},
		{"typed", nil, true, "*v1.PartialObjectMetadata", nil},
		{"unstructured without GVK", &unstructured.Unstructured{}, false, "*unstructured.Unstructured", nil},
		{"unstructured with GVK", withGVK, false, "apps/v1, Kind=Deployment", &schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}},
	} {
		var got string
		var gvk *schema.GroupVersionKind
		switch {
		case c.typed:
			got, gvk = typeDescription(&metav1.PartialObjectMetadata{}), expectedGVK(&metav1.PartialObjectMetadata{})
		case c.obj == nil:
			got, gvk = typeDescription(nil), expectedGVK(nil)
		default:
			got, gvk = typeDescription(c.obj), expectedGVK(c.obj)
		}
		if got != c.want {
			t.Errorf("%s: description %q, want %q", c.name, got, c.want)
		}
		if (gvk == nil) != (c.wantGVK == nil) || gvk != nil && *gvk != *c.wantGVK {
			t.Errorf("%s: GVK %v, want %v", c.name, gvk, c.wantGVK)
		}
	}
}
