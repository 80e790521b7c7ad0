package kube_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/fakeapi/rest"
	"github.com/informersim/informersim/kube"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
)

var widgets = fakeapi.Resource{
	GVR:  schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"},
	Kind: "Widget", Namespaced: true,
}

func newFront(t testing.TB) (*fakeapi.Server, *rest.Handler) {
	t.Helper()
	srv, err := fakeapi.New(fakeapi.Config{Resources: []fakeapi.Resource{widgets}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := rest.NewHandler(srv, kube.RESTOptions())
	if err != nil {
		t.Fatal(err)
	}
	return srv, h
}

// pb encodes obj as kube-apiserver's protobuf body.
func pb(t testing.TB, obj runtime.Object) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(obj, &b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func serve(h http.Handler, method, path, contentType, accept string, body []byte) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, bytes.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		r.Header.Set("Accept", accept)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// Goal: bodies in protobuf decode to the objects JSON would give, responses come back in the
// envelope client-go reads, and custom resources stay JSON-only (415 for a protobuf body, JSON
// for a client that also accepts it, 406 for one that accepts only protobuf).
func TestProtobufBodies(t *testing.T) {
	_, h := newFront(t)
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: map[string]string{"a": "b"}}, Data: map[string]string{"k": "v"}}
	w := serve(h, "POST", "/api/v1/namespaces/ns/configmaps", kube.ProtobufMediaType, kube.ProtobufMediaType, pb(t, cm))
	if w.Code != 201 || w.Header().Get("Content-Type") != kube.ProtobufMediaType || !bytes.HasPrefix(w.Body.Bytes(), []byte("k8s\x00")) {
		t.Fatalf("create: %d %q %q", w.Code, w.Header().Get("Content-Type"), w.Body.String())
	}
	obj, _, err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Decode(w.Body.Bytes(), nil, nil)
	got, ok := obj.(*corev1.ConfigMap)
	if err != nil || !ok || got.Data["k"] != "v" || got.Labels["a"] != "b" || got.UID == "" || got.Namespace != "ns" {
		t.Fatalf("created %#v %v", obj, err)
	}
	// The same object read as JSON.
	w = serve(h, "GET", "/api/v1/namespaces/ns/configmaps/c", "", "application/json", nil)
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"data":{"k":"v"}`) {
		t.Fatalf("JSON get: %d %s", w.Code, w.Body)
	}
	// Tables have no protobuf form (kube-apiserver serves them in JSON): the JSON alternative is
	// taken, and without one it is 406; PartialObjectMetadata does have one.
	w = serve(h, "GET", "/api/v1/namespaces/ns/configmaps", "", kube.ProtobufMediaType+";as=Table;g=meta.k8s.io;v=v1, application/json;as=Table;g=meta.k8s.io;v=v1", nil)
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" || !strings.Contains(w.Body.String(), `"kind":"Table"`) {
		t.Fatalf("Table: %d %q %s", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	if w := serve(h, "GET", "/api/v1/namespaces/ns/configmaps", "", kube.ProtobufMediaType+";as=Table;g=meta.k8s.io;v=v1", nil); w.Code != 406 {
		t.Fatalf("Table in protobuf only: %d %s", w.Code, w.Body)
	}
	w = serve(h, "GET", "/api/v1/namespaces/ns/configmaps", "", kube.ProtobufMediaType+";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", nil)
	meta := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(meta); err != nil {
		t.Fatal(err)
	}
	if obj, _, err := protobuf.NewSerializer(meta, meta).Decode(w.Body.Bytes(), nil, nil); w.Code != 200 || err != nil {
		t.Fatalf("PartialObjectMetadataList in protobuf: %d %v %q", w.Code, err, w.Body)
	} else if l, ok := obj.(*metav1.PartialObjectMetadataList); !ok || len(l.Items) != 1 || l.Items[0].Name != "c" {
		t.Fatalf("PartialObjectMetadataList in protobuf: %#v", obj)
	}
	// A body of another kind: 400.
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	if w := serve(h, "POST", "/api/v1/namespaces/ns/configmaps", kube.ProtobufMediaType, "", pb(t, pod)); w.Code != 400 {
		t.Fatalf("a Pod posted as a ConfigMap: %d %s", w.Code, w.Body)
	}
	// Garbage: 400, a Status.
	if w := serve(h, "POST", "/api/v1/namespaces/ns/configmaps", kube.ProtobufMediaType, "", []byte("k8s\x00\xff\xff")); w.Code != 400 || !strings.Contains(w.Body.String(), `"kind":"Status"`) {
		t.Fatalf("garbage: %d %s", w.Code, w.Body)
	}
	// Custom resources.
	if w := serve(h, "POST", "/apis/example.com/v1/namespaces/ns/widgets", kube.ProtobufMediaType, "", pb(t, cm)); w.Code != 415 {
		t.Fatalf("protobuf widget: %d %s", w.Code, w.Body)
	}
	if w := serve(h, "GET", "/apis/example.com/v1/namespaces/ns/widgets", "", kube.ProtobufMediaType+", application/json", nil); w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("widget list with JSON as a fallback: %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	if w := serve(h, "GET", "/apis/example.com/v1/namespaces/ns/widgets", "", kube.ProtobufMediaType, nil); w.Code != 406 {
		t.Fatalf("widget list in protobuf only: %d %s", w.Code, w.Body)
	}
	// A protobuf DeleteOptions body (client-go's default): its precondition is honoured.
	wrongUID := types.UID("nope")
	del := &metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "DeleteOptions"}, Preconditions: &metav1.Preconditions{UID: &wrongUID}}
	if w := serve(h, "DELETE", "/api/v1/namespaces/ns/configmaps/c", kube.ProtobufMediaType, "", pb(t, del)); w.Code != 409 {
		t.Fatalf("delete with a failing precondition: %d %s", w.Code, w.Body)
	}
	del.Preconditions = nil
	if w := serve(h, "DELETE", "/api/v1/namespaces/ns/configmaps/c", kube.ProtobufMediaType, kube.ProtobufMediaType, pb(t, del)); w.Code != 200 || !bytes.HasPrefix(w.Body.Bytes(), []byte("k8s\x00")) {
		t.Fatalf("delete: %d %q", w.Code, w.Body)
	}
}

// Goal: a protobuf watch is kube-apiserver's stream: frames of a 4-byte big-endian length and a
// bare metav1.WatchEvent whose object is enveloped; a 410 after the stream started is an ERROR
// frame carrying the Status, then the stream ends.
func TestProtobufWatchFrames(t *testing.T) {
	srv, h := newFront(t)
	cms := srv.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("ns")
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}}}
	if _, err := cms.Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, _ := rest.NewTransport(h)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://x/api/v1/namespaces/ns/configmaps?watch=1&resourceVersion=0", nil)
	req.Header.Set("Accept", kube.ProtobufMediaType+", application/json")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != kube.ProtobufStreamMediaType {
		t.Fatalf("Content-Type %q", ct)
	}
	raw := protobuf.NewRawSerializer(scheme.Scheme, scheme.Scheme)
	enc := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	next := func() (string, runtime.Object) {
		t.Helper()
		var n [4]byte
		if _, err := io.ReadFull(resp.Body, n[:]); err != nil {
			t.Fatalf("frame length: %v", err)
		}
		frame := make([]byte, binary.BigEndian.Uint32(n[:]))
		if _, err := io.ReadFull(resp.Body, frame); err != nil {
			t.Fatalf("frame: %v", err)
		}
		var ev metav1.WatchEvent
		if _, _, err := raw.Decode(frame, &schema.GroupVersionKind{Version: "v1", Kind: "WatchEvent"}, &ev); err != nil {
			t.Fatalf("watch event: %v", err)
		}
		obj, _, err := enc.Decode(ev.Object.Raw, nil, nil)
		if err != nil {
			t.Fatalf("event object: %v", err)
		}
		return ev.Type, obj
	}
	if typ, obj := next(); typ != "ADDED" || obj.(*corev1.ConfigMap).Name != "a" {
		t.Fatalf("first event %s %#v", typ, obj)
	}
	srv.Faults().CloseAllWatches(apierrors.NewResourceExpired("too old resource version: 1 (2)"))
	typ, obj := next()
	st, ok := obj.(*metav1.Status)
	if typ != "ERROR" || !ok || st.Code != 410 || st.Reason != metav1.StatusReasonExpired {
		t.Fatalf("after the 410: %s %#v", typ, obj)
	}
	if n, err := resp.Body.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("the stream goes on after the ERROR event: %d %v", n, err)
	}
}

// Goal: an object that does not fit its kind's Go type (a string where an integer belongs) is
// refused as kube-apiserver refuses it, naming the field: a created or updated body with 400, a
// patch's result with 422 on "patch"; fields the type lacks are kept (fakeapi is schemaless); custom resources are not
// checked.
func TestTypeMisfitsRefused(t *testing.T) {
	_, h := newFront(t)
	dep := "/apis/apps/v1/namespaces/ns/deployments"
	for _, c := range []struct {
		method, path, ct, body string
		code                   int
	}{
		{"POST", dep, "application/json", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":"x"}}`, 400},
		{"POST", dep, "application/json", `{"metadata":{"name":"d"},"spec":{"replicas":1,"extra":true}}`, 201},
		{"PUT", dep + "/d", "application/json", `{"metadata":{"name":"d"},"spec":{"paused":"yes"}}`, 400},
		{"PATCH", dep + "/d", "application/merge-patch+json", `{"spec":{"replicas":"y"}}`, 422},
		{"PATCH", dep + "/d", "application/json-patch+json", `[{"op":"replace","path":"/spec/replicas","value":[1]}]`, 422},
		{"PATCH", dep + "/d", "application/strategic-merge-patch+json", `{"spec":{"template":{"spec":{"containers":[{"name":"c","ports":[{"containerPort":"http"}]}]}}}}`, 422},
		{"PATCH", dep + "/d", "application/merge-patch+json", `{"spec":{"replicas":3}}`, 200},
		{"POST", "/apis/example.com/v1/namespaces/ns/widgets", "application/json", `{"metadata":{"name":"w"},"spec":{"replicas":"x"}}`, 201},
	} {
		w := serve(h, c.method, c.path, c.ct, "", []byte(c.body))
		if w.Code != c.code {
			t.Errorf("%s %s %s: %d %s, want %d", c.method, c.path, c.body, w.Code, w.Body, c.code)
		}
		if c.code == 400 && !strings.Contains(w.Body.String(), "cannot be handled as a Deployment") {
			t.Errorf("%s %s: the 400 does not say why: %s", c.method, c.body, w.Body)
		}
		if c.code == 422 && !strings.Contains(w.Body.String(), `"field":"patch"`) {
			t.Errorf("%s %s: the 422 is not on the patch: %s", c.method, c.body, w.Body)
		}
	}
	// What was accepted reads back in protobuf.
	if w := serve(h, "GET", dep, "", kube.ProtobufMediaType, nil); w.Code != 200 {
		t.Errorf("protobuf list of what the checks let through: %d %s", w.Code, w.Body)
	}
}

// TestProtobufWatchEndsWith410Status: a protobuf watch from a revision that compaction removed
// ends with one ERROR frame whose object is a Status envelope as kube-apiserver writes it: the
// protobuf magic, a runtime.Unknown typed apiVersion v1, kind Status, and inside a Status with
// code 410 and reason Expired; then the stream ends. Read byte by byte, not through a decoder
// that would fill a missing kind in.
func TestProtobufWatchEndsWith410Status(t *testing.T) {
	srv, h := newFront(t)
	cms := srv.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("ns")
	for _, name := range []string{"a", "b", "c"} {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}}}
		if _, err := cms.Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.Faults().Compact(srv.Revision()); err != nil {
		t.Fatal(err)
	}
	w := serve(h, "GET", "/api/v1/namespaces/ns/configmaps?watch=1&resourceVersion=1", "", kube.ProtobufMediaType, nil)
	if w.Code != 200 || w.Header().Get("Content-Type") != kube.ProtobufStreamMediaType {
		t.Fatalf("watch from a compacted revision: %d %q %s", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	body := w.Body.Bytes()
	if len(body) < 4 {
		t.Fatalf("no frame: %q", body)
	}
	n := binary.BigEndian.Uint32(body[:4])
	if int(n) != len(body)-4 {
		t.Fatalf("one frame of %d bytes expected, the stream has %d after its length", n, len(body)-4)
	}
	var ev metav1.WatchEvent
	if err := ev.Unmarshal(body[4:]); err != nil {
		t.Fatalf("the frame is not a WatchEvent: %v", err)
	}
	if ev.Type != "ERROR" {
		t.Fatalf("event type %q, want ERROR", ev.Type)
	}
	magic := []byte{0x6b, 0x38, 0x73, 0x00}
	if !bytes.HasPrefix(ev.Object.Raw, magic) {
		t.Fatalf("the event's object lacks the protobuf magic: % x", ev.Object.Raw[:min(8, len(ev.Object.Raw))])
	}
	var unk runtime.Unknown
	if err := unk.Unmarshal(ev.Object.Raw[len(magic):]); err != nil {
		t.Fatalf("the event's object is not a runtime.Unknown: %v", err)
	}
	if unk.APIVersion != "v1" || unk.Kind != "Status" {
		t.Fatalf("the envelope says apiVersion %q kind %q, want v1 Status", unk.APIVersion, unk.Kind)
	}
	var st metav1.Status
	if err := st.Unmarshal(unk.Raw); err != nil {
		t.Fatalf("the envelope's body is not a Status: %v", err)
	}
	if st.Code != 410 || st.Reason != metav1.StatusReasonExpired || st.Status != metav1.StatusFailure || st.Message == "" {
		t.Fatalf("the Status: code %d reason %q status %q message %q; want 410 Expired Failure with a message", st.Code, st.Reason, st.Status, st.Message)
	}
}
