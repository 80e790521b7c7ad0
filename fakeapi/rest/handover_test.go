package rest

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestHandedOverBodiesStayIntact: the in-process transport takes some bodies without copying
// them (handOver: a shared item, a codec's result, a large JSON list's buffer). A response read
// only after later requests were served must still hold its own bytes: a body in a pooled
// buffer, reused by the next request, must have been copied. It fails with writeBody handing
// over the pooled buffer, and with a handed-over buffer also returned to the pool.
func TestHandedOverBodiesStayIntact(t *testing.T) {
	_, h := newHandler(t)
	tr, err := NewTransport(h)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: tr}
	const base = "http://informersim/api/v1/namespaces/a/configmaps"
	create := func(name string, size int) {
		t.Helper()
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"k":%q}}`, name, strings.Repeat(name[:1], size))
		resp, err := client.Post(base, "application/json", strings.NewReader(body))
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("create %s: %v %v", name, err, resp)
		}
		resp.Body.Close()
	}
	get := func(path string) *http.Response {
		t.Helper()
		resp, err := client.Get(base + path)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %v %v", path, err, resp)
		}
		return resp
	}
	read := func(resp *http.Response) string {
		t.Helper()
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// Small lists (pooled buffers), an object (a shared item), and lists over handOverBuffer
	// (handed over), each answered before the next request and read after all of them.
	type pending struct {
		what, want string
		resp       *http.Response
	}
	var all []pending
	const big = 50_000 // under the handler's request limit; 21 of them make a list over handOverBuffer
	for i, c := range []struct {
		name    string
		n, size int
	}{{"a", 1, 10}, {"b", 1, 20}, {"c", handOverBuffer/big + 1, big}, {"d", 1, 30}, {"e", 3, big}} {
		for j := range c.n {
			create(fmt.Sprintf("%s%d", c.name, j), c.size)
		}
		name := c.name + "0"
		// The answers a fresh request gives now, read at once, are what the held ones must say.
		wantList, wantObj := read(get("")), read(get("/"+name))
		all = append(all, pending{fmt.Sprintf("LIST %d", i), wantList, get("")}, pending{"GET " + name, wantObj, get("/" + name)})
	}
	// Served after all of the above: reuses whatever buffers they left in the pool.
	for range 3 {
		read(get(""))
	}
	for _, p := range all {
		if got := read(p.resp); got != p.want {
			t.Errorf("%s read late: %d bytes, differs from the %d it answered when served (first differing byte %d)", p.what, len(got), len(p.want), firstDiff(got, p.want))
		}
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
