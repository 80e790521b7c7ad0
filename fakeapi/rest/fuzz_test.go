package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/informersim/informersim/fakeapi"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// flushCancel is a recorder that cancels the request once the handler flushes, so a fuzzed
// watch returns after its header (and whatever it wrote first) instead of streaming forever.
type flushCancel struct {
	*httptest.ResponseRecorder
	cancel context.CancelFunc
}

func (f flushCancel) Flush() { f.cancel() }

var fuzzMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}

// FuzzHandler sends arbitrary methods, paths, query strings, content types and bodies to the
// REST front of a server holding a few objects. Whatever the input: no panic, no 500 (nothing
// was injected, so a 500 is a bug in the front), every error is a Status whose code is the HTTP
// code, and the server still answers a list afterwards.
//
//	go test -run='^$' -fuzz=FuzzHandler -fuzztime=60s ./fakeapi/rest/
func FuzzHandler(f *testing.F) {
	seeds := []struct {
		method                uint8
		path, query, ct, body string
	}{
		{0, "/api/v1/namespaces/a/configmaps", "labelSelector=app%3Dx&limit=1", "", ""},
		{0, "/api/v1/namespaces/a/configmaps", "watch=true&resourceVersion=0&allowWatchBookmarks=true", "", ""},
		{0, "/api/v1/pods", "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan", "", ""},
		{0, "/api/v1/namespaces/a/pods", "fieldSelector=spec.nodeName%3Dn1&resourceVersion=2&resourceVersionMatch=Exact", "", ""},
		{1, "/api/v1/namespaces/a/configmaps", "dryRun=All", "application/json", cmBody},
		{1, "/apis/apps/v1/namespaces/a/deployments", "", "application/json", `{"metadata":{"generateName":"d-"},"spec":{"replicas":1}}`},
		{2, "/api/v1/namespaces/a/configmaps/c", "", "application/json", `{"metadata":{"name":"c","resourceVersion":"2"},"data":{"a":"b"}}`},
		{2, "/api/v1/namespaces/a/pods/p/status", "", "", `{"metadata":{"name":"p"},"status":{"phase":"Running"}}`},
		{3, "/api/v1/namespaces/a/configmaps/c", "", "application/json-patch+json", `[{"op":"add","path":"/data/x","value":"1"}]`},
		{3, "/apis/example.com/v1/namespaces/a/widgets/w", "", "application/merge-patch+json", `{"spec":{"n":1}}`},
		{4, "/api/v1/namespaces/a/pods/p", "gracePeriodSeconds=0", "", `{"propagationPolicy":"Foreground"}`},
		{4, "/api/v1/namespaces/a/configmaps", "labelSelector=app", "", ""},
		{0, "/apis/example.com", "", "", ""},
		{0, "/openapi/v3/apis/apps/v1", "", "", ""},
		{0, "/api/v1/namespaces/a/configmaps", "continue=eyJ", "", ""},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.query, s.ct, s.body)
	}
	srv, h := newHandler(f, func(c *fakeapi.Config) { // bounded: the fuzzer creates objects on every run
		c.MaxObjects, c.MaxLogEntries, c.MaxRecords = 2000, 20000, 1000
	})
	for _, c := range []call{
		{method: "POST", path: "/api/v1/namespaces/a/configmaps", body: cmBody},
		{method: "POST", path: "/api/v1/namespaces/a/pods", body: `{"metadata":{"name":"p","labels":{"app":"x"}},"spec":{"nodeName":"n1"}}`},
		{method: "POST", path: "/apis/example.com/v1/namespaces/a/widgets", body: `{"metadata":{"name":"w"}}`},
	} {
		if w := do(h, c); w.Code != 201 {
			f.Fatalf("setup %s: %d %s", c.path, w.Code, w.Body)
		}
	}
	f.Fuzz(func(t *testing.T, method uint8, path, query, ct, body string) {
		u := &url.URL{Scheme: "http", Host: "informersim", Path: path, RawQuery: query}
		if !strings.HasPrefix(path, "/") {
			u.Path = "/" + path
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r := httptest.NewRequestWithContext(ctx, fuzzMethods[int(method)%len(fuzzMethods)], "http://informersim/", strings.NewReader(body))
		r.URL = u
		if ct != "" {
			r.Header.Set("Content-Type", ct)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(flushCancel{rec, cancel}, r)
		if rec.Code == http.StatusInternalServerError {
			t.Fatalf("500 for %s %s: %s", r.Method, u, rec.Body)
		}
		if rec.Code >= 400 {
			var st metav1.Status
			if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || st.Kind != "Status" || int(st.Code) != rec.Code || st.Reason == "" {
				t.Fatalf("%s %s: HTTP %d with a body that is not a matching Status (%v): %s", r.Method, u, rec.Code, err, rec.Body)
			}
		}
		if _, err := srv.Resource(widgets.GVR).List(context.Background(), metav1.ListOptions{}); err != nil {
			t.Fatalf("server broken after %s %s: %v", r.Method, u, err)
		}
	})
}
