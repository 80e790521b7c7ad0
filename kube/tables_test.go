package kube

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCustomResourceTables: `kubectl get` of a custom resource shows its definition's
// additionalPrinterColumns, as kube-apiserver's table convertor fills them, ages counted on the
// fake apiserver's clock (the objects were created at its now: 0s).
func TestCustomResourceTables(t *testing.T) {
	_, h := newFront(t)
	installCronTabs(t, h)
	if code, body := send(t, h, request{method: "POST", path: cronTabs, body: `{"apiVersion":"stable.example.org/v1","kind":"CronTab","metadata":{"name":"c1"},"spec":{"cronSpec":"* * * * *"}}`}); code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, body)
	}
	r := httptest.NewRequest("GET", cronTabs, nil)
	r.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io, application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var tbl metav1.Table
	if err := json.Unmarshal(w.Body.Bytes(), &tbl); err != nil || w.Code != http.StatusOK {
		t.Fatalf("table: %d %s", w.Code, w.Body)
	}
	var names []string
	for _, c := range tbl.ColumnDefinitions {
		names = append(names, c.Name+":"+c.Type)
	}
	if diff := cmp.Diff([]string{"Name:string", "Spec:string", "Replicas:integer", "Age:date"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if len(tbl.Rows) != 1 {
		t.Fatalf("rows: %+v", tbl.Rows)
	}
	if diff := cmp.Diff([]any{"c1", "* * * * *", float64(1), "0s"}, tbl.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}

// TestBuiltinTables: `kubectl get` of built-in kinds gets kube-apiserver's printer columns:
// a namespace's STATUS, a ConfigMap's DATA count, a Deployment's READY ratio and its wide
// columns, an event's columns through both event APIs (one store), ages counted from the
// server's clock; a kind without a printer keeps the default Name and Age.
func TestBuiltinTables(t *testing.T) {
	_, h := newFront(t)
	for _, c := range []request{
		{method: "POST", path: "/api/v1/namespaces", body: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ns"}}`},
		{method: "POST", path: "/api/v1/namespaces/ns/configmaps", body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1","b":"2"},"binaryData":{"z":"AA=="}}`},
		{method: "POST", path: "/apis/apps/v1/namespaces/ns/deployments", body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":3,"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"web","image":"nginx"},{"name":"log","image":"busybox"}]}}}}`},
		{method: "POST", path: "/apis/events.k8s.io/v1/namespaces/ns/events", body: `{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e"},"regarding":{"kind":"Deployment","name":"d"},"reason":"Scaled","note":"scaled up ","type":"Normal","action":"Scale","reportingController":"ctl","reportingInstance":"ctl-1","eventTime":"1999-12-31T23:58:07.000000Z"}`},
		{method: "POST", path: "/api/v1/namespaces/ns/serviceaccounts", body: `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"sa"}}`},
		{method: "POST", path: "/apis/rbac.authorization.k8s.io/v1/namespaces/ns/roles", body: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"r"}}`},
	} {
		c.contentType = "application/json"
		if code, st := send(t, h, c); code != 201 {
			t.Fatalf("%s: %d %v", c.path, code, st)
		}
	}
	table := func(path string) (cols []string, cells []any) {
		t.Helper()
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		var tbl metav1.Table
		if err := json.Unmarshal(w.Body.Bytes(), &tbl); err != nil || w.Code != 200 {
			t.Fatalf("%s: %d %s", path, w.Code, w.Body)
		}
		for _, c := range tbl.ColumnDefinitions {
			if c.Description == "" {
				t.Errorf("%s: column %s has no description", path, c.Name)
			}
			cols = append(cols, c.Name)
		}
		if len(tbl.Rows) != 1 {
			t.Fatalf("%s: %d rows", path, len(tbl.Rows))
		}
		return cols, tbl.Rows[0].Cells
	}
	for _, tc := range []struct {
		path        string
		cols, cells string
	}{
		{"/api/v1/namespaces?fieldSelector=metadata.name%3Dns", "Name Status Age", "ns Active 0s"},
		{"/api/v1/namespaces/ns/configmaps", "Name Data Age", "c 3 0s"},
		{"/apis/apps/v1/namespaces/ns/deployments", "Name Ready Up-to-date Available Age Containers Images Selector", "d 0/3 0 0 0s web,log nginx,busybox a=b"},
		{"/api/v1/namespaces/ns/events", "Last Seen Type Reason Object Subobject Source Message First Seen Count Name", "2m Normal Scaled deployment/d  ctl, ctl-1 scaled up 2m 1 e"},
		{"/apis/events.k8s.io/v1/namespaces/ns/events", "Last Seen Type Reason Object Subobject Source Message First Seen Count Name", "2m Normal Scaled deployment/d  ctl, ctl-1 scaled up 2m 1 e"},
		{"/api/v1/namespaces/ns/serviceaccounts", "Name Age", "sa 0s"},
		{"/apis/rbac.authorization.k8s.io/v1/namespaces/ns/roles", "Name Created At", "r 2000-01-01T00:00:07Z"},
	} {
		cols, cells := table(tc.path)
		if got := strings.Join(cols, " "); got != tc.cols {
			t.Errorf("%s: columns %q, want %q", tc.path, got, tc.cols)
		}
		var parts []string
		for _, c := range cells {
			parts = append(parts, fmt.Sprint(c))
		}
		if got := strings.Join(parts, " "); got != tc.cells {
			t.Errorf("%s: cells %q, want %q", tc.path, got, tc.cells)
		}
	}
}
