package kube

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkCustomResourceCreate measures a create through the front: of a custom resource of a
// definition (pruned, defaulted, validated with its schema and CEL rules: "crd") and of one the
// configuration declares, schemaless ("declared").
func BenchmarkCustomResourceCreate(b *testing.B) {
	for _, tc := range []struct{ name, path, body string }{
		{"crd", cronTabs, `{"apiVersion":"stable.example.org/v1","kind":"CronTab","metadata":{"name":"c%d"},"spec":{"cronSpec":"* * * * *","image":"a","replicas":2}}`},
		{"declared", "/apis/example.com/v1/namespaces/default/widgets", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w%d"},"spec":{"cronSpec":"* * * * *","image":"a","replicas":2}}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			_, h := newFront(b)
			installCronTabs(b, h)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				r := httptest.NewRequest("POST", tc.path, strings.NewReader(fmt.Sprintf(tc.body, i)))
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != http.StatusCreated {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
		})
	}
}
