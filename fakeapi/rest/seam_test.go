package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/informersim/informersim/fakeapi"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// testCodec is a Codec for "application/x-test": JSON behind a "T:" prefix, for the built-in
// kinds and the meta.k8s.io kinds only (as protobuf), watch events each on a line of their own.
type testCodec struct{}

const testMediaType = "application/x-test"

func (testCodec) MediaType() string       { return testMediaType }
func (testCodec) StreamMediaType() string { return testMediaType + ";stream=watch" }
func (testCodec) Supports(gvk schema.GroupVersionKind) bool {
	if gvk.Group == metav1.GroupName {
		return true
	}
	for _, r := range fakeapi.BuiltinResources() {
		if r.GVR.GroupVersion().WithKind(r.Kind) == gvk {
			return true
		}
	}
	return false
}

func (testCodec) Encode(obj runtime.Object) ([]byte, error) {
	var v any = obj
	if u, ok := obj.(*unstructured.Unstructured); ok {
		v = u.Object
	}
	if l, ok := obj.(*unstructured.UnstructuredList); ok {
		v = map[string]any{"kind": l.GetKind(), "items": len(l.Items)}
	}
	b, err := json.Marshal(v)
	return append([]byte("T:"), b...), err
}

func (testCodec) Decode(body []byte, gvk schema.GroupVersionKind, into runtime.Object) error {
	rest, ok := bytes.CutPrefix(body, []byte("T:"))
	if !ok {
		return errors.New("no T: prefix")
	}
	if u, ok := into.(*unstructured.Unstructured); ok {
		if err := json.Unmarshal(rest, &u.Object); err != nil {
			return err
		}
		if u.GroupVersionKind() != gvk {
			return fmt.Errorf("kind %v, want %v", u.GroupVersionKind(), gvk)
		}
		return nil
	}
	return json.Unmarshal(rest, into)
}

func (c testCodec) EncodeWatchEvent(typ watch.EventType, obj runtime.Object) ([]byte, error) {
	b, err := c.Encode(obj)
	return append([]byte(string(typ)+" "), append(b, '\n')...), err
}

// labelPatcher is a Patcher that sets the label the patch body names ("key=value"), and counts
// its calls.
type labelPatcher struct {
	calls atomic.Int32
}

func (p *labelPatcher) Patch(_ context.Context, req *PatchRequest) (*unstructured.Unstructured, error) {
	p.calls.Add(1)
	k, v, ok := strings.Cut(string(req.Patch), "=")
	if !ok {
		return nil, errors.New("want key=value")
	}
	if req.Current == nil {
		if req.Type != types.ApplyYAMLPatchType {
			return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, req.Name)
		}
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(req.GVK.GroupVersion().String())
		u.SetKind(req.GVK.Kind)
		u.SetLabels(map[string]string{k: v})
		return u, nil
	}
	out := req.Current.DeepCopy()
	labels := out.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[k] = v
	out.SetLabels(labels)
	return out, nil
}

func newSeamHandler(t *testing.T, opts Options) (*fakeapi.Server, *Handler) {
	t.Helper()
	srv, _ := newHandler(t)
	h, err := NewHandler(srv, opts)
	if err != nil {
		t.Fatal(err)
	}
	return srv, h
}

// Goal: a Codec is chosen from Accept (in quality order) and Content-Type for the kinds it
// supports; custom resources fall back to JSON or get 406/415, as from kube-apiserver; with no
// codec the front is JSON only.
func TestCodecNegotiation(t *testing.T) {
	_, h := newSeamHandler(t, Options{Codecs: []Codec{testCodec{}}})
	_, plain := newHandler(t)
	cm := "T:" + cmBody
	for _, tc := range []struct {
		name   string
		h      *Handler
		c      call
		code   int
		ctype  string
		prefix string
	}{
		{"create in the codec", h, call{method: "POST", path: "/api/v1/namespaces/ns/configmaps", contentType: testMediaType, accept: testMediaType + ", application/json", body: cm}, 201, testMediaType, `T:{"apiVersion":"v1"`},
		{"get in the codec", h, call{method: "GET", path: "/api/v1/namespaces/ns/configmaps/c", accept: testMediaType}, 200, testMediaType, `T:{`},
		{"q prefers JSON", h, call{method: "GET", path: "/api/v1/namespaces/ns/configmaps/c", accept: testMediaType + ";q=0.5, application/json"}, 200, "application/json", `{"apiVersion"`},
		{"list in the codec", h, call{method: "GET", path: "/api/v1/namespaces/ns/configmaps", accept: testMediaType}, 200, testMediaType, `T:{"items":1,"kind":"ConfigMapList"}`},
		{"table in the codec", h, call{method: "GET", path: "/api/v1/namespaces/ns/configmaps", accept: testMediaType + ";as=Table;g=meta.k8s.io;v=v1"}, 200, testMediaType, `T:{"kind":"Table"`},
		{"custom resource falls back to JSON", h, call{method: "GET", path: "/apis/example.com/v1/widgets", accept: testMediaType + ", application/json"}, 200, "application/json", `{"apiVersion"`},
		{"custom resource codec only: 406", h, call{method: "GET", path: "/apis/example.com/v1/widgets", accept: testMediaType}, 406, "application/json", `{`},
		{"custom resource body in the codec: 415", h, call{method: "POST", path: "/apis/example.com/v1/namespaces/ns/widgets", contentType: testMediaType, body: "T:{}"}, 415, "application/json", `{`},
		{"no codec: 406", plain, call{method: "GET", path: "/api/v1/namespaces/ns/configmaps", accept: testMediaType}, 406, "application/json", `{`},
		{"no codec: 415", plain, call{method: "POST", path: "/api/v1/namespaces/ns/configmaps", contentType: testMediaType, body: cm}, 415, "application/json", `{`},
		{"no codec: delete options in it 415", plain, call{method: "DELETE", path: "/api/v1/namespaces/ns/configmaps/c", contentType: testMediaType, body: "T:{}"}, 415, "application/json", `{`},
		{"malformed codec body: 400", h, call{method: "POST", path: "/api/v1/namespaces/ns/configmaps", contentType: testMediaType, body: cmBody}, 400, "application/json", `{`},
		{"delete options in the codec", h, call{method: "DELETE", path: "/api/v1/namespaces/ns/configmaps/c", contentType: testMediaType, accept: testMediaType, body: `T:{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"nope"}}`}, 409, "application/json", `{`},
		{"delete in the codec", h, call{method: "DELETE", path: "/api/v1/namespaces/ns/configmaps/c", contentType: testMediaType, accept: testMediaType, body: `T:{"kind":"DeleteOptions","apiVersion":"v1"}`}, 200, testMediaType, `T:{"kind":"Status"`},
	} {
		w := do(tc.h, tc.c)
		if w.Code != tc.code || w.Header().Get("Content-Type") != tc.ctype || !strings.HasPrefix(w.Body.String(), tc.prefix) {
			t.Errorf("%s: %d %q %s; want %d %q %s...", tc.name, w.Code, w.Header().Get("Content-Type"), w.Body.String(), tc.code, tc.ctype, tc.prefix)
		}
	}
}

// Goal: a watch negotiated in a codec streams its events in the codec's framing and stream type.
func TestCodecWatch(t *testing.T) {
	srv, h := newSeamHandler(t, Options{Codecs: []Codec{testCodec{}}})
	cms := srv.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("ns")
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}}}
	if _, err := cms.Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr, _ := NewTransport(h)
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://x/api/v1/namespaces/ns/configmaps?watch=1&resourceVersion=0", nil)
	req.Header.Set("Accept", testMediaType)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != testMediaType+";stream=watch" {
		t.Fatalf("watch Content-Type %q", ct)
	}
	buf := make([]byte, 4096)
	n, _ := resp.Body.Read(buf)
	if got := string(buf[:n]); !strings.HasPrefix(got, `ADDED T:{"apiVersion":"v1","kind":"ConfigMap"`) {
		t.Fatalf("first frame %q", got)
	}
}

// Goal: a patch type with a Patcher is computed by it under the server's lock (one patch in the
// record, the faults injected for patches), creates for apply, and keeps fakeapi's answers
// without one.
func TestPatcher(t *testing.T) {
	p := &labelPatcher{}
	srv, h := newSeamHandler(t, Options{Patchers: map[types.PatchType]Patcher{
		types.StrategicMergePatchType: p, types.ApplyYAMLPatchType: p,
	}})
	smp, apply := string(types.StrategicMergePatchType), string(types.ApplyYAMLPatchType)
	if w := do(h, call{method: "POST", path: "/api/v1/namespaces/ns/configmaps", body: cmBody}); w.Code != 201 {
		t.Fatalf("create %d %s", w.Code, w.Body)
	}
	w := do(h, call{method: "PATCH", path: "/api/v1/namespaces/ns/configmaps/c", contentType: smp, body: "a=1"})
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"labels":{"a":"1"}`) {
		t.Fatalf("strategic merge patch: %d %s", w.Code, w.Body)
	}
	recs := srv.Requests()
	if last := recs[len(recs)-1]; last.Verb != fakeapi.VerbPatch || last.Name != "c" || last.Code != 0 {
		t.Errorf("the patch was recorded as %+v, want one patch of c", last)
	}
	// A failure injected for patches reaches it before the Patcher is asked.
	srv.Faults().FailNext(fakeapi.VerbPatch, apierrors.NewTooManyRequests("injected", 1))
	calls := p.calls.Load()
	if w := do(h, call{method: "PATCH", path: "/api/v1/namespaces/ns/configmaps/c", contentType: smp, body: "b=2"}); w.Code != 429 || p.calls.Load() != calls {
		t.Fatalf("injected failure: %d %s after %d calls", w.Code, w.Body, p.calls.Load()-calls)
	}
	// Apply creates a missing object (201); a strategic merge patch of one is 404.
	if w := do(h, call{method: "PATCH", path: "/api/v1/namespaces/ns/configmaps/new?fieldManager=m", contentType: apply, body: "c=3"}); w.Code != 201 || !strings.Contains(w.Body.String(), `"name":"new"`) {
		t.Fatalf("apply of a missing object: %d %s", w.Code, w.Body)
	}
	if w := do(h, call{method: "PATCH", path: "/api/v1/namespaces/ns/configmaps/none", contentType: smp, body: "c=3"}); w.Code != 404 {
		t.Fatalf("strategic merge patch of a missing object: %d %s", w.Code, w.Body)
	}
	// A patcher's plain error is a 400 Status.
	if w := do(h, call{method: "PATCH", path: "/api/v1/namespaces/ns/configmaps/c", contentType: smp, body: "nonsense"}); w.Code != 400 {
		t.Fatalf("patcher error: %d %s", w.Code, w.Body)
	} else {
		status(t, w)
	}
	// Custom resources: strategic merge is still 415 (no patch strategy) even with a Patcher.
	if w := do(h, call{method: "PATCH", path: "/apis/example.com/v1/namespaces/ns/widgets/x", contentType: smp, body: "a=1"}); w.Code != 415 {
		t.Fatalf("strategic merge patch of a custom resource: %d %s", w.Code, w.Body)
	}
	// Without a Patcher: fakeapi's 405.
	_, plain := newHandler(t)
	do(plain, call{method: "POST", path: "/api/v1/namespaces/ns/configmaps", body: cmBody})
	if w := do(plain, call{method: "PATCH", path: "/api/v1/namespaces/ns/configmaps/c", contentType: smp, body: "{}"}); w.Code != 405 {
		t.Fatalf("no patcher: %d %s", w.Code, w.Body)
	}
}

// Goal: bad seams are errors of NewHandler, not panics later.
func TestSeamValidation(t *testing.T) {
	srv, _ := newHandler(t)
	for name, opts := range map[string]Options{
		"nil codec":         {Codecs: []Codec{nil}},
		"twice":             {Codecs: []Codec{testCodec{}, testCodec{}}},
		"json":              {Codecs: []Codec{jsonCodec{}}},
		"nil patcher":       {Patchers: map[types.PatchType]Patcher{types.StrategicMergePatchType: nil}},
		"unknown type":      {Patchers: map[types.PatchType]Patcher{"text/plain": &labelPatcher{}}},
		"fakeapi's own one": {Patchers: map[types.PatchType]Patcher{types.MergePatchType: &labelPatcher{}}},
	} {
		if _, err := NewHandler(srv, opts); err == nil {
			t.Errorf("%s: NewHandler accepted it", name)
		}
	}
}

type jsonCodec struct{ testCodec }

func (jsonCodec) MediaType() string { return "application/json" }

// liveRecorder is a FieldTracker that keeps the live object of each write and stores the object
// as it is.
type liveRecorder struct{ live []*unstructured.Unstructured }

func (l *liveRecorder) Track(_ context.Context, req *TrackRequest) (*unstructured.Unstructured, error) {
	l.live = append(l.live, req.Live)
	return req.Object, nil
}

// TestTrackerReadsTheStoredObject checks that an update and a JSON or merge patch hand the
// tracker the stored object itself, lent read-only (fakeapi.Mutation's LendTo), not a copy: its
// content is the map a lending list of the server hands out.
func TestTrackerReadsTheStoredObject(t *testing.T) {
	rec := &liveRecorder{}
	srv, h := newSeamHandler(t, Options{Tracker: rec})
	if w := do(h, call{method: "POST", path: "/api/v1/namespaces/ns/configmaps", body: cmBody}); w.Code != 201 {
		t.Fatalf("create %d %s", w.Code, w.Body)
	}
	writes := []call{
		{method: "PUT", path: "/api/v1/namespaces/ns/configmaps/c", body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns"},"data":{"k":"2"}}`},
		{method: "PATCH", path: "/api/v1/namespaces/ns/configmaps/c", contentType: string(types.MergePatchType), body: `{"data":{"k":"3"}}`},
		{method: "PATCH", path: "/api/v1/namespaces/ns/configmaps/c", contentType: string(types.JSONPatchType), body: `[{"op":"replace","path":"/data/k","value":"4"}]`},
	}
	for _, c := range writes {
		list, err := srv.ListerWatcher(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "ns").ListLent(metav1.ListOptions{})
		if err != nil || len(list.Items) != 1 {
			t.Fatalf("list: %v, %d items", err, len(list.Items))
		}
		stored := list.Items[0].Object
		if w := do(h, c); w.Code != 200 {
			t.Fatalf("%s %s: %d %s", c.method, c.contentType, w.Code, w.Body)
		}
		live := rec.live[len(rec.live)-1]
		if live == nil || fmt.Sprintf("%p", live.Object) != fmt.Sprintf("%p", stored) {
			t.Errorf("%s %s: the tracker was handed a copy, not the stored object", c.method, c.contentType)
		}
	}
	if err := srv.Lending().Check(); err != nil {
		t.Errorf("Lending.Check = %v", err)
	}
}

// TestCreateAnswerIsLent checks that a create's answer, which the front only encodes, is the
// stored object lent to the front (fakeapi.ResourceClient.CreateLent), not a copy: a change
// made to the stored object afterwards is reported with the front among its holders.
func TestCreateAnswerIsLent(t *testing.T) {
	srv, h := newSeamHandler(t, Options{})
	if w := do(h, call{method: "POST", path: "/api/v1/namespaces/ns/configmaps", body: cmBody}); w.Code != 201 {
		t.Fatalf("create %d %s", w.Code, w.Body)
	}
	lw := srv.ListerWatcher(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "ns")
	lw.Name = "the test"
	list, err := lw.ListLent(metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list: %v, %d items", err, len(list.Items))
	}
	list.Items[0].SetLabels(map[string]string{"changed": "yes"})
	var me *fakeapi.MutationError
	if err := srv.Lending().Check(); !errors.As(err, &me) || !slices.Equal(me.Holders, []string{createLender, "the test"}) {
		t.Fatalf("Lending.Check = %v, want a change to an object held by the front's create and the test", err)
	}
}
