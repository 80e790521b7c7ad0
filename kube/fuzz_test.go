package kube

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/fakeapi/rest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testclock "k8s.io/utils/clock/testing"
)

var (
	fuzzWriteMethods = []string{"PATCH", "PUT", "POST"}
	fuzzWritePaths   = []string{
		"/api/v1/namespaces/a/configmaps/c",
		"/api/v1/namespaces/a/pods/p",
		"/api/v1/namespaces/a/pods/p/status",
		"/apis/apps/v1/namespaces/a/deployments/d",
		"/apis/apps/v1/namespaces/a/deployments/d/status",
		"/apis/example.com/v1/namespaces/a/widgets/w",
		"/apis/example.com/v1/namespaces/a/widgets/w/status",
		"/api/v1/namespaces/a/configmaps/missing",
		"/api/v1/namespaces/a/configmaps",
		"/api/v1/nodes/n",
	}
	fuzzWriteTypes = []string{
		"application/strategic-merge-patch+json",
		"application/apply-patch+yaml",
		"application/json-patch+json",
		"application/merge-patch+json",
		"application/json",
		"application/apply-patch+cbor",
	}
)

// FuzzWrites sends arbitrary strategic merge patches, server-side applies and the other writes
// that record managedFields to a front with RESTOptions, over objects of built-in kinds and a
// custom resource. Whatever the body and the query: no panic, no 500 (nothing is injected, so a
// 500 is a bug), every error is a Status whose code is the HTTP code, and the server still
// answers afterwards.
//
//	cd kube && go test -run='^$' -fuzz=FuzzWrites -fuzztime=60s .
func FuzzWrites(f *testing.F) {
	seeds := []struct {
		method, path, ct uint8
		query, body      string
	}{
		{0, 3, 0, "", `{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"x:2"}]}}}}`},
		{0, 3, 0, "", `{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"b"},{"name":"a"}],"containers":[{"name":"b","image":"b"}]}}}}`},
		{0, 3, 0, "", `{"spec":{"template":{"spec":{"containers":[{"name":"a","$patch":"delete"}]}}}}`},
		{0, 3, 0, "", `{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}`},
		{0, 1, 0, "", `{"spec":{"volumes":[{"name":"v","emptyDir":{}},{"$patch":"replace"}]}}`},
		{0, 0, 0, "", `{"metadata":{"$deleteFromPrimitiveList/finalizers":["x/a"]},"data":{"$patch":"replace"}}`},
		{0, 0, 1, "fieldManager=m", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: v\n"},
		{0, 0, 1, "fieldManager=n&force=true", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"w"}}`},
		{0, 7, 1, "fieldManager=m", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"missing","uid":"x"}}`},
		{0, 4, 1, "fieldManager=s", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"status":{"replicas":2}}`},
		{0, 5, 1, "fieldManager=m&dryRun=All", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"a":[1,2]}}`},
		{0, 5, 0, "", `{}`},
		{0, 0, 2, "fieldManager=j", `[{"op":"add","path":"/data/x","value":"1"}]`},
		{0, 0, 3, "", `{"metadata":{"managedFields":[{"manager":"x","operation":"Apply"}]}}`},
		{1, 0, 4, "fieldManager=put", `{"metadata":{"name":"c","managedFields":[]},"data":{"a":"b"}}`},
		{2, 8, 4, "fieldManager=" + strings.Repeat("x", 130), `{"metadata":{"name":"c2"}}`},
		{0, 0, 1, "fieldManager=m", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"nope":1}`},
		{0, 9, 1, "fieldManager=m", `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"spec":{"unschedulable":true}}`},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.ct, s.query, s.body)
	}
	srv, err := fakeapi.New(fakeapi.Config{Clock: testclock.NewFakeClock(now), Resources: []fakeapi.Resource{widgets},
		MaxObjects: 2000, MaxLogEntries: 20000, MaxRecords: 1000})
	if err != nil {
		f.Fatal(err)
	}
	h, err := rest.NewHandler(srv, RESTOptions())
	if err != nil {
		f.Fatal(err)
	}
	for _, r := range []request{
		{method: "POST", path: "/api/v1/namespaces/a/configmaps", contentType: "application/json", body: `{"metadata":{"name":"c","finalizers":["x/a"]},"data":{"k":"v"}}`},
		{method: "POST", path: "/api/v1/namespaces/a/pods", contentType: "application/json", body: `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"a","image":"a"}],"volumes":[{"name":"v","emptyDir":{}}]}}`},
		{method: "POST", path: "/apis/apps/v1/namespaces/a/deployments", contentType: "application/json", body: `{"metadata":{"name":"d"},"spec":{"template":{"spec":{"containers":[{"name":"a","image":"x:1"}]}}}}`},
		{method: "PATCH", path: "/apis/example.com/v1/namespaces/a/widgets/w?fieldManager=setup", contentType: "application/apply-patch+yaml", body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"n":1}}`},
		{method: "POST", path: "/api/v1/nodes", contentType: "application/json", body: `{"metadata":{"name":"n"}}`},
	} {
		if code, body := send(f, h, r); code != 201 {
			f.Fatalf("setup %s: %d %v", r.path, code, body)
		}
	}
	f.Fuzz(func(t *testing.T, method, path, ct uint8, query, body string) {
		target := fuzzWritePaths[int(path)%len(fuzzWritePaths)]
		if query != "" {
			target += "?" + query
		}
		r, err := http.NewRequest(fuzzWriteMethods[int(method)%len(fuzzWriteMethods)], "http://informersim"+target, strings.NewReader(body))
		if err != nil {
			return // a query that does not make a URL never reaches a server
		}
		r.Header.Set("Content-Type", fuzzWriteTypes[int(ct)%len(fuzzWriteTypes)])
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code == http.StatusInternalServerError {
			t.Fatalf("500 for %s %s: %s", r.Method, r.URL, rec.Body)
		}
		if rec.Code >= 400 {
			var st metav1.Status
			if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || st.Kind != "Status" || int(st.Code) != rec.Code || st.Reason == "" {
				t.Fatalf("%s %s: HTTP %d with a body that is not a matching Status (%v): %s", r.Method, r.URL, rec.Code, err, rec.Body)
			}
		}
		if _, err := srv.Resource(widgets.GVR).List(context.Background(), metav1.ListOptions{}); err != nil {
			t.Fatalf("server broken after %s %s: %v", r.Method, r.URL, err)
		}
	})
}
