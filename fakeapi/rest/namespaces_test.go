package rest

import (
	"context"
	"strings"
	"testing"
)

// Goal: EnsureNamespaces creates the system namespaces once (a second call changes nothing), and
// a namespace created through the front is Active, labelled with its name and finalized by
// kubernetes, whatever its body said, as kube-apiserver makes it.
func TestNamespaces(t *testing.T) {
	srv, h := newHandler(t)
	for i := 0; i < 2; i++ {
		if err := EnsureNamespaces(context.Background(), srv, SystemNamespaces...); err != nil {
			t.Fatal(err)
		}
	}
	w := do(h, call{method: "GET", path: "/api/v1/namespaces"})
	if n := strings.Count(w.Body.String(), `"phase":"Active"`); w.Code != 200 || n != 4 || !strings.Contains(w.Body.String(), `"name":"kube-system"`) {
		t.Fatalf("namespaces after two EnsureNamespaces: %d %s", w.Code, w.Body)
	}
	w = do(h, call{method: "POST", path: "/api/v1/namespaces", body: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"},"spec":{"finalizers":["example.com/x"]},"status":{"phase":"Terminating"}}`})
	body := w.Body.String()
	for _, want := range []string{`"kubernetes.io/metadata.name":"team"`, `"finalizers":["example.com/x","kubernetes"]`, `"status":{"phase":"Active"}`} {
		if w.Code != 201 || !strings.Contains(body, want) {
			t.Errorf("created namespace lacks %s: %d %s", want, w.Code, body)
		}
	}
	if err := EnsureNamespaces(context.Background(), nil, "x"); err == nil {
		t.Error("EnsureNamespaces(nil) gave no error")
	}
}
