package kube

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
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
