package rest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/fakeapi"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	testclock "k8s.io/utils/clock/testing"
)

var widgets = fakeapi.Resource{
	GVR:  schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"},
	Kind: "Widget", Namespaced: true, Status: true, RequireResourceVersion: true,
}

func newHandler(t testing.TB, edits ...func(*fakeapi.Config)) (*fakeapi.Server, *Handler) {
	t.Helper()
	cfg := fakeapi.Config{
		Clock:     testclock.NewFakeClock(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)),
		Resources: []fakeapi.Resource{widgets},
	}
	for _, edit := range edits {
		edit(&cfg)
	}
	srv, err := fakeapi.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(srv, Options{MaxRequestBodyBytes: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	return srv, h
}

type call struct {
	method, path, contentType, accept, body string
}

// do serves one request through the handler directly (no goroutine) and returns the recorder.
func do(h http.Handler, c call) *httptest.ResponseRecorder {
	r := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
	if c.contentType != "" {
		r.Header.Set("Content-Type", c.contentType)
	}
	if c.accept != "" {
		r.Header.Set("Accept", c.accept)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// status decodes a Status body, failing if the body is not one.
func status(t *testing.T, w *httptest.ResponseRecorder) metav1.Status {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil || st.Kind != "Status" {
		t.Fatalf("body is not a Status (%v): %s", err, w.Body.String())
	}
	if int(st.Code) != w.Code {
		t.Fatalf("Status code %d, HTTP code %d", st.Code, w.Code)
	}
	return st
}

const cmBody = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"v"}}`

// TestBadInput: every kind of bad request gets kube-apiserver's status code and reason in a
// Status body.
func TestBadInput(t *testing.T) {
	_, h := newHandler(t)
	if w := do(h, call{method: "POST", path: "/api/v1/namespaces/a/configmaps", body: cmBody}); w.Code != 201 {
		t.Fatalf("setup create: %d %s", w.Code, w.Body)
	}
	if w := do(h, call{method: "POST", path: "/apis/example.com/v1/namespaces/a/widgets", body: `{"metadata":{"name":"w"}}`}); w.Code != 201 {
		t.Fatalf("setup create: %d %s", w.Code, w.Body)
	}
	big := `{"metadata":{"name":"big"},"data":{"k":"` + strings.Repeat("x", 1<<16) + `"}}`
	for _, tc := range []struct {
		name   string
		c      call
		code   int32
		reason metav1.StatusReason
	}{
		{"malformed JSON", call{method: "POST", path: "/api/v1/namespaces/a/configmaps", body: `{"metadata":`}, 400, metav1.StatusReasonBadRequest},
		{"JSON array body", call{method: "POST", path: "/api/v1/namespaces/a/configmaps", body: `[1,2]`}, 400, metav1.StatusReasonBadRequest},
		{"null body", call{method: "POST", path: "/api/v1/namespaces/a/configmaps", body: `null`}, 400, metav1.StatusReasonBadRequest},
		{"empty body", call{method: "POST", path: "/api/v1/namespaces/a/configmaps"}, 400, metav1.StatusReasonBadRequest},
		{"wrong kind for the URL", call{method: "POST", path: "/api/v1/namespaces/a/configmaps", body: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}`}, 400, metav1.StatusReasonBadRequest},
		{"wrong apiVersion for the URL", call{method: "POST", path: "/api/v1/namespaces/a/configmaps", body: `{"apiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"s"}}`}, 400, metav1.StatusReasonBadRequest},
		{"namespace mismatch", call{method: "POST", path: "/api/v1/namespaces/a/configmaps", body: `{"metadata":{"name":"s","namespace":"b"}}`}, 400, metav1.StatusReasonBadRequest},
		{"missing name on create", call{method: "POST", path: "/api/v1/namespaces/a/configmaps", body: `{"metadata":{}}`}, 422, metav1.StatusReasonInvalid},
		{"invalid name", call{method: "POST", path: "/api/v1/namespaces/a/configmaps", body: `{"metadata":{"name":"Not_Valid"}}`}, 422, metav1.StatusReasonInvalid},
		{"name mismatch on update", call{method: "PUT", path: "/api/v1/namespaces/a/configmaps/c", body: `{"metadata":{"name":"d"}}`}, 400, metav1.StatusReasonBadRequest},
		{"missing name on update", call{method: "PUT", path: "/api/v1/namespaces/a/configmaps/c", body: `{"metadata":{}}`}, 400, metav1.StatusReasonBadRequest},
		{"update without a name in the URL", call{method: "PUT", path: "/api/v1/namespaces/a/configmaps", body: cmBody}, 405, metav1.StatusReasonMethodNotAllowed},
		{"create at an object URL", call{method: "POST", path: "/api/v1/namespaces/a/configmaps/c", body: cmBody}, 405, metav1.StatusReasonMethodNotAllowed},
		{"create across namespaces", call{method: "POST", path: "/api/v1/configmaps", body: cmBody}, 405, metav1.StatusReasonMethodNotAllowed},
		{"oversized body", call{method: "POST", path: "/api/v1/namespaces/a/configmaps", body: big}, 413, metav1.StatusReasonRequestEntityTooLarge},
		{"protobuf body", call{method: "POST", path: "/api/v1/namespaces/a/configmaps", contentType: "application/vnd.kubernetes.protobuf", body: "k8s\x00"}, 415, metav1.StatusReasonUnsupportedMediaType},
		{"protobuf only accepted", call{method: "GET", path: "/api/v1/namespaces/a/configmaps", accept: "application/vnd.kubernetes.protobuf"}, 406, metav1.StatusReasonNotAcceptable},
		{"unknown resource", call{method: "GET", path: "/api/v1/namespaces/a/gadgets"}, 404, metav1.StatusReasonNotFound},
		{"unknown group version", call{method: "GET", path: "/apis/nope/v1/things"}, 404, metav1.StatusReasonNotFound},
		{"unknown subresource", call{method: "GET", path: "/api/v1/namespaces/a/pods/p/log"}, 404, metav1.StatusReasonNotFound},
		{"status of a kind without it", call{method: "GET", path: "/api/v1/namespaces/a/configmaps/c/status"}, 404, metav1.StatusReasonNotFound},
		{"namespaced object without namespace", call{method: "GET", path: "/api/v1/configmaps/c"}, 404, metav1.StatusReasonNotFound},
		{"cluster-scoped in a namespace", call{method: "GET", path: "/api/v1/namespaces/a/nodes"}, 404, metav1.StatusReasonNotFound},
		{"empty path segment", call{method: "GET", path: "/api/v1/namespaces//configmaps"}, 404, metav1.StatusReasonNotFound},
		{"missing object", call{method: "GET", path: "/api/v1/namespaces/a/configmaps/nope"}, 404, metav1.StatusReasonNotFound},
		{"bad label selector", call{method: "GET", path: "/api/v1/namespaces/a/configmaps?labelSelector=a%3D%3D%3Db"}, 400, metav1.StatusReasonBadRequest},
		{"unsupported field selector", call{method: "GET", path: "/api/v1/namespaces/a/configmaps?fieldSelector=spec.x%3Dy"}, 400, metav1.StatusReasonBadRequest},
		{"bad resourceVersion", call{method: "GET", path: "/api/v1/namespaces/a/configmaps?resourceVersion=abc"}, 400, metav1.StatusReasonBadRequest},
		{"bad resourceVersion on watch", call{method: "GET", path: "/api/v1/namespaces/a/configmaps?watch=1&resourceVersion=-3"}, 400, metav1.StatusReasonBadRequest},
		{"resourceVersionMatch without resourceVersion", call{method: "GET", path: "/api/v1/namespaces/a/configmaps?resourceVersionMatch=Exact"}, 422, metav1.StatusReasonInvalid},
		{"bad limit", call{method: "GET", path: "/api/v1/namespaces/a/configmaps?limit=ten"}, 400, metav1.StatusReasonBadRequest},
		{"bad timeoutSeconds", call{method: "GET", path: "/api/v1/namespaces/a/configmaps?watch=true&timeoutSeconds=soon"}, 400, metav1.StatusReasonBadRequest},
		{"bad continue token", call{method: "GET", path: "/api/v1/namespaces/a/configmaps?limit=1&continue=garbage"}, 400, metav1.StatusReasonBadRequest},
		{"too large resourceVersion", call{method: "GET", path: "/api/v1/namespaces/a/configmaps?resourceVersion=99999&resourceVersionMatch=NotOlderThan"}, 504, metav1.StatusReasonTimeout},
		{"bad patch JSON", call{method: "PATCH", path: "/api/v1/namespaces/a/configmaps/c", contentType: "application/merge-patch+json", body: `{`}, 400, metav1.StatusReasonBadRequest},
		{"json patch test fails", call{method: "PATCH", path: "/api/v1/namespaces/a/configmaps/c", contentType: "application/json-patch+json", body: `[{"op":"test","path":"/data/k","value":"zzz"}]`}, 422, metav1.StatusReasonInvalid},
		{"unknown patch type", call{method: "PATCH", path: "/api/v1/namespaces/a/configmaps/c", contentType: "text/plain", body: `{}`}, 415, metav1.StatusReasonUnsupportedMediaType},
		{"strategic merge on a custom resource", call{method: "PATCH", path: "/apis/example.com/v1/namespaces/a/widgets/w", contentType: "application/strategic-merge-patch+json", body: `{}`}, 415, metav1.StatusReasonUnsupportedMediaType},
		{"strategic merge on a built-in", call{method: "PATCH", path: "/api/v1/namespaces/a/configmaps/c", contentType: "application/strategic-merge-patch+json", body: `{}`}, 405, metav1.StatusReasonMethodNotAllowed},
		{"bad delete options", call{method: "DELETE", path: "/api/v1/namespaces/a/configmaps/c", body: `{"gracePeriodSeconds":"soon"}`}, 400, metav1.StatusReasonBadRequest},
		{"delete precondition", call{method: "DELETE", path: "/api/v1/namespaces/a/configmaps/c", body: `{"preconditions":{"resourceVersion":"1"}}`}, 409, metav1.StatusReasonConflict},
		{"custom resource update without resourceVersion", call{method: "PUT", path: "/apis/example.com/v1/namespaces/a/widgets/w", body: `{"metadata":{"name":"w"}}`}, 422, metav1.StatusReasonInvalid},
		{"method on discovery", call{method: "POST", path: "/api/v1"}, 405, metav1.StatusReasonMethodNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := do(h, tc.c)
			st := status(t, w)
			if st.Code != tc.code || st.Reason != tc.reason {
				t.Fatalf("got %d %s (%q), want %d %s", st.Code, st.Reason, st.Message, tc.code, tc.reason)
			}
		})
	}
}

// TestRetryAfter: a 429 carries Retry-After, which client-go's retry loop honours.
func TestRetryAfter(t *testing.T) {
	srv, h := newHandler(t)
	srv.Faults().FailNext(fakeapi.VerbList, fakeapi.NewWatchError(429))
	w := do(h, call{method: "GET", path: "/api/v1/pods"})
	if st := status(t, w); st.Code != 429 || st.Reason != metav1.StatusReasonTooManyRequests || w.Header().Get("Retry-After") != "1" {
		t.Fatalf("got %d %s, Retry-After %q", st.Code, st.Reason, w.Header().Get("Retry-After"))
	}
	srv.Replicas().SetReady(0, false)
	w = do(h, call{method: "GET", path: "/api/v1/pods?watch=true"})
	if st := status(t, w); st.Code != 429 || w.Header().Get("Retry-After") == "" {
		t.Fatalf("watch on a replica that is not ready: %d, Retry-After %q", st.Code, w.Header().Get("Retry-After"))
	}
}

// TestDiscovery: the legacy discovery documents list every served resource with its scope,
// verbs and status subresource.
func TestDiscovery(t *testing.T) {
	_, h := newHandler(t)
	var versions metav1.APIVersions
	decode(t, do(h, call{method: "GET", path: "/api"}), &versions)
	if len(versions.Versions) != 1 || versions.Versions[0] != "v1" {
		t.Fatalf("/api: %+v", versions)
	}
	var groups metav1.APIGroupList
	decode(t, do(h, call{method: "GET", path: "/apis"}), &groups)
	n := len(groups.Groups)
	if n != 19 || groups.Groups[0].Name != "apiregistration.k8s.io" || groups.Groups[1].Name != "apps" || groups.Groups[2].Name != "events.k8s.io" ||
		groups.Groups[n-1].Name != "example.com" || groups.Groups[n-1].PreferredVersion.GroupVersion != "example.com/v1" {
		t.Fatalf("/apis: %+v", groups)
	}
	var group metav1.APIGroup
	decode(t, do(h, call{method: "GET", path: "/apis/example.com"}), &group)
	if group.Name != "example.com" || len(group.Versions) != 1 {
		t.Fatalf("/apis/example.com: %+v", group)
	}
	var rl metav1.APIResourceList
	decode(t, do(h, call{method: "GET", path: "/apis/example.com/v1"}), &rl)
	var names []string
	for _, r := range rl.APIResources {
		names = append(names, r.Name)
	}
	if strings.Join(names, ",") != "widgets,widgets/status" || !rl.APIResources[0].Namespaced || rl.APIResources[0].Kind != "Widget" || len(rl.APIResources[0].Verbs) != 8 {
		t.Fatalf("/apis/example.com/v1: %+v", rl)
	}
	decode(t, do(h, call{method: "GET", path: "/api/v1"}), &rl)
	found := false
	for _, r := range rl.APIResources {
		found = found || r.Name == "configmaps" && len(r.ShortNames) == 1 && r.ShortNames[0] == "cm"
	}
	if !found {
		t.Fatalf("/api/v1 has no configmaps with short name cm: %+v", rl)
	}
}

func decode(t *testing.T, w *httptest.ResponseRecorder, into any) {
	t.Helper()
	if w.Code != 200 {
		t.Fatalf("HTTP %d: %s", w.Code, w.Body)
	}
	if err := json.Unmarshal(w.Body.Bytes(), into); err != nil {
		t.Fatal(err)
	}
}

// TestTablesAndMetadata: kubectl's Table and the metadata clients' PartialObjectMetadata.
func TestTablesAndMetadata(t *testing.T) {
	_, h := newHandler(t)
	do(h, call{method: "POST", path: "/api/v1/namespaces/a/configmaps", body: cmBody})
	var tbl metav1.Table
	decode(t, do(h, call{method: "GET", path: "/api/v1/namespaces/a/configmaps", accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}), &tbl)
	if tbl.Kind != "Table" || len(tbl.ColumnDefinitions) != 2 || len(tbl.Rows) != 1 || tbl.Rows[0].Cells[0] != "c" || tbl.Rows[0].Cells[1] != "0s" {
		t.Fatalf("table %+v", tbl)
	}
	var pl metav1.PartialObjectMetadataList
	decode(t, do(h, call{method: "GET", path: "/api/v1/namespaces/a/configmaps", accept: "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"}), &pl)
	if pl.Kind != "PartialObjectMetadataList" || len(pl.Items) != 1 || pl.Items[0].Name != "c" || pl.Items[0].Kind != "PartialObjectMetadata" {
		t.Fatalf("partial list %+v", pl)
	}
}

// TestListMetadataByKind: a custom resource's list carries continue even on its last page ("",
// as kube-apiserver writes the unstructured lists it serves them in), with the remaining count
// on an earlier page; a built-in kind's typed list leaves an empty continue out.
func TestListMetadataByKind(t *testing.T) {
	_, h := newHandler(t)
	for _, name := range []string{"w1", "w2"} {
		if w := do(h, call{method: "POST", path: "/apis/example.com/v1/namespaces/a/widgets", body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"` + name + `"}}`}); w.Code != http.StatusCreated {
			t.Fatalf("create %s: %d %s", name, w.Code, w.Body)
		}
	}
	do(h, call{method: "POST", path: "/api/v1/namespaces/a/configmaps", body: cmBody})
	listMeta := func(path string) map[string]any {
		t.Helper()
		var l struct{ Metadata map[string]any }
		decode(t, do(h, call{method: "GET", path: path}), &l)
		return l.Metadata
	}
	md := listMeta("/apis/example.com/v1/namespaces/a/widgets")
	if c, ok := md["continue"]; !ok || c != "" || md["resourceVersion"] == "" {
		t.Errorf("a custom resource's last page: %v", md)
	}
	md = listMeta("/apis/example.com/v1/namespaces/a/widgets?limit=1")
	if c, _ := md["continue"].(string); c == "" || md["remainingItemCount"] != float64(1) {
		t.Errorf("a custom resource's first page of two: %v", md)
	}
	md = listMeta("/api/v1/namespaces/a/configmaps")
	if _, ok := md["continue"]; ok || md["resourceVersion"] == "" {
		t.Errorf("a built-in kind's list: %v", md)
	}
}

// TestTransportWatchAndFaults streams a watch through the in-process transport: events as they
// happen, an ERROR event for a fault, the end of the stream, and a transport fault as an error.
func TestTransportWatchAndFaults(t *testing.T) {
	srv, h := newHandler(t)
	tr, err := NewTransport(h)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: tr}
	resp, err := client.Get("http://informersim/api/v1/namespaces/a/configmaps?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("watch response %d %v", resp.StatusCode, resp.Header)
	}
	dec := json.NewDecoder(resp.Body)
	if w := do(h, call{method: "POST", path: "/api/v1/namespaces/a/configmaps", body: cmBody}); w.Code != 201 {
		t.Fatal(w.Body)
	}
	var ev struct {
		Type   string
		Object map[string]any
	}
	if err := dec.Decode(&ev); err != nil || ev.Type != "ADDED" || ev.Object["kind"] != "ConfigMap" {
		t.Fatalf("first event %v %+v", err, ev)
	}
	srv.Faults().CloseAllWatches(fakeapi.NewWatchError(410))
	if err := dec.Decode(&ev); err != nil || ev.Type != "ERROR" || ev.Object["code"] != float64(410) || ev.Object["reason"] != "Expired" {
		t.Fatalf("error event %v %+v", err, ev)
	}
	if err := dec.Decode(&ev); err != io.EOF {
		t.Fatalf("after the ERROR event: %v, want EOF", err)
	}
	srv.Faults().FailNext(fakeapi.VerbGet, fakeapi.NewConnectionRefused())
	if _, err := client.Get("http://informersim/api/v1/namespaces/a/configmaps/c"); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("transport fault: %v, want connection refused", err)
	}
}

// TestListenerDropsConnectionOnTransportFault: over a real socket, a transport fault drops the
// connection (the client sees an error, not a Status).
func TestListenerDropsConnectionOnTransportFault(t *testing.T) {
	srv, h := newHandler(t)
	l, err := Listen("127.0.0.1:0", h)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	resp, err := http.Get(l.URL() + "/api/v1/namespaces/a/configmaps")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("list: %v %v", err, resp)
	}
	resp.Body.Close()
	srv.Faults().FailNext(fakeapi.VerbList, fakeapi.NewConnectionRefused())
	if resp, err := http.Get(l.URL() + "/api/v1/namespaces/a/configmaps"); err == nil {
		resp.Body.Close()
		t.Fatalf("list after a transport fault: HTTP %d, want a dropped connection", resp.StatusCode)
	}
	if _, err := Listen("127.0.0.1:-1", h); err == nil || !strings.HasPrefix(err.Error(), "rest: ") {
		t.Fatalf("Listen on a bad address: %v", err)
	}
}

func TestConstructorsRefuseBadInput(t *testing.T) {
	if _, err := NewHandler(nil, Options{}); err == nil || !strings.HasPrefix(err.Error(), "rest: ") {
		t.Errorf("NewHandler(nil): %v", err)
	}
	srv, _ := newHandler(t)
	if _, err := NewHandler(srv, Options{MaxRequestBodyBytes: -1}); err == nil {
		t.Error("NewHandler with a negative body limit: no error")
	}
	if _, err := NewTransport(nil); err == nil {
		t.Error("NewTransport(nil): no error")
	}
	if _, err := Listen("127.0.0.1:0", nil); err == nil {
		t.Error("Listen with a nil handler: no error")
	}
}

// TestReplicaFaultsOverHTTP: a frozen watch cache serves stale RV=0 lists while consistent lists
// read the store, and a reinitialised replica ends open watch streams and answers 429 with
// Retry-After while it is not ready, as through the in-process ListerWatcher.
func TestReplicaFaultsOverHTTP(t *testing.T) {
	srv, h := newHandler(t)
	tr, _ := NewTransport(h)
	client := &http.Client{Transport: tr}
	count := func(query string) int {
		t.Helper()
		var l struct{ Items []any }
		decode(t, do(h, call{method: "GET", path: "/api/v1/namespaces/a/configmaps" + query}), &l)
		return len(l.Items)
	}
	do(h, call{method: "POST", path: "/api/v1/namespaces/a/configmaps", body: cmBody})
	srv.Replicas().Freeze(0)
	do(h, call{method: "POST", path: "/api/v1/namespaces/a/configmaps", body: `{"metadata":{"name":"c2"}}`})
	if stale, fresh := count("?resourceVersion=0"), count(""); stale != 1 || fresh != 2 {
		t.Fatalf("frozen cache: RV=0 list has %d items (want 1, stale), consistent list %d (want 2)", stale, fresh)
	}
	srv.Replicas().Resume(0)

	var l metav1.List
	decode(t, do(h, call{method: "GET", path: "/api/v1/namespaces/a/configmaps"}), &l)
	resp, err := client.Get("http://informersim/api/v1/namespaces/a/configmaps?watch=true&resourceVersion=" + l.ResourceVersion)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	srv.Replicas().Reinit(0, time.Minute)
	if rest, err := io.ReadAll(resp.Body); err != nil || len(rest) != 0 {
		t.Fatalf("watch stream after a reinit: %v, %q (want a clean end)", err, rest)
	}
	w := do(h, call{method: "GET", path: "/api/v1/namespaces/a/configmaps?watch=true"})
	if st := status(t, w); st.Code != 429 || w.Header().Get("Retry-After") == "" {
		t.Fatalf("watch on a reinitialising replica: %d %s, Retry-After %q", st.Code, st.Reason, w.Header().Get("Retry-After"))
	}
}

// TestTransportAnswersAsHandler: over the in-process transport, a request gets the status,
// header and body the handler writes, whether the transport serves it on the caller's
// goroutine (the front's own handler, a request that cannot stream) or in a goroutine (any
// other handler); a request whose context is cancelled gets the context's error.
func TestTransportAnswersAsHandler(t *testing.T) {
	_, h := newHandler(t)
	if w := do(h, call{method: "POST", path: "/api/v1/namespaces/a/configmaps", body: cmBody}); w.Code != 201 {
		t.Fatal(w.Body)
	}
	wrapped := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) })
	calls := []call{
		{method: "GET", path: "/api/v1/namespaces/a/configmaps"},
		{method: "GET", path: "/api/v1/namespaces/a/configmaps/c"},
		{method: "GET", path: "/api/v1/namespaces/a/configmaps/nope"},
		{method: "PUT", path: "/api/v1/namespaces/a/configmaps/c", body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"<w>"}}`},
		{method: "PUT", path: "/api/v1/namespaces/a/configmaps/c", body: `{"metadata":`},
		{method: "GET", path: "/api/v1/namespaces/a/configmaps", accept: "application/vnd.kubernetes.protobuf"},
		{method: "GET", path: "/version"},
	}
	for _, handler := range []http.Handler{h, wrapped} {
		tr, err := NewTransport(handler)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range calls {
			want := do(h, c)
			req, _ := http.NewRequest(c.method, "http://informersim"+c.path, strings.NewReader(c.body))
			if c.accept != "" {
				req.Header.Set("Accept", c.accept)
			}
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatalf("%s %s: %v", c.method, c.path, err)
			}
			body, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if err != nil || resp.StatusCode != want.Code || string(body) != want.Body.String() ||
				resp.Header.Get("Content-Type") != want.Header().Get("Content-Type") ||
				resp.Header.Get("Content-Length") != want.Header().Get("Content-Length") {
				t.Fatalf("%T %s %s: %d %v %q (%v), want %d %v %q", handler, c.method, c.path, resp.StatusCode, resp.Header, body, err,
					want.Code, want.Header(), want.Body.String())
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://informersim/api/v1/namespaces/a/configmaps", nil)
		if resp, err := tr.RoundTrip(req); !errors.Is(err, context.Canceled) {
			t.Fatalf("%T: a cancelled request: %v %v, want context.Canceled", handler, resp, err)
		}
	}
}
