package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/internal/fastpath"
)

// TestSharedEncodingsAreNeverStale: every response carrying an object (a write's answer, GET,
// LIST, each watcher's events) shows the version it names, though each version is encoded once
// and shared; a dry run's answer, which carries the live resourceVersion with content never
// stored, is not shared; a deleted and recreated object is a new object. It also checks the
// shared cache answered some of them, so it tests the cache and not only the encoder.
func TestSharedEncodingsAreNeverStale(t *testing.T) {
	_, h := newHandler(t, func(c *fakeapi.Config) { c.MaxWatchEvents = 1 << 10 })
	tr, err := NewTransport(h)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: tr}
	const base = sharedCMBase
	body := func(v, rv string) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","resourceVersion":%q},"data":{"k":%q}}`, rv, v)
	}
	// Two watchers from the start: each must see every version.
	var watchers []*json.Decoder
	for range 2 {
		resp, err := client.Get("http://informersim" + base + "?watch=true&resourceVersion=1")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		watchers = append(watchers, json.NewDecoder(resp.Body))
	}
	created := readSharedCM(t, h, "create", call{method: "POST", path: base, body: body("v1", "")}, 201)
	var versions []sharedCM // what each write answered: the versions the watchers must see, in order
	versions = append(versions, created)
	checkServesVersion(t, h, "created", created)
	cur := created
	for i := 2; i <= 4; i++ {
		cur = readSharedCM(t, h, "update", call{method: "PUT", path: base + "/c", body: body(fmt.Sprintf("v%d", i), cur.Metadata.ResourceVersion)}, 200)
		if cur.Data["k"] != fmt.Sprintf("v%d", i) {
			t.Fatalf("update %d answered %+v", i, cur)
		}
		versions = append(versions, cur)
		checkServesVersion(t, h, fmt.Sprintf("update %d", i), cur)
	}
	// A dry run answers content that was never stored, at the live resourceVersion: sharing
	// it would serve it to the next GET.
	dry := readSharedCM(t, h, "dry-run update", call{method: "PUT", path: base + "/c?dryRun=All", body: body("dry", cur.Metadata.ResourceVersion)}, 200)
	if dry.Data["k"] != "dry" || dry.Metadata.ResourceVersion != cur.Metadata.ResourceVersion {
		t.Fatalf("dry run answered %+v (live %+v)", dry, cur)
	}
	checkServesVersion(t, h, "after a dry run", cur)
	// Deleted and created again: same name, a new uid and resourceVersion.
	if w := do(h, call{method: "DELETE", path: base + "/c"}); w.Code != 200 {
		t.Fatal(w.Body)
	}
	again := readSharedCM(t, h, "create again", call{method: "POST", path: base, body: body("again", "")}, 201)
	versions = append(versions, again)
	checkServesVersion(t, h, "created again", again)

	for i, dec := range watchers {
		checkWatcherSawVersions(t, i, dec, versions)
	}
	// A plain build shares no encoding (internal/fastpath): the answers above are all it checks.
	if hits, misses := h.items.stats(); fastpath.Use(fastpath.SharedEncodings) && (hits == 0 || misses == 0) {
		t.Errorf("the shared encodings were looked up %d times with a hit and %d without: the test did not exercise the cache", hits, misses)
	}
}

// sharedCMBase is the collection TestSharedEncodingsAreNeverStale writes ConfigMap c in.
const sharedCMBase = "/api/v1/namespaces/a/configmaps"

// sharedCM is the part of a ConfigMap TestSharedEncodingsAreNeverStale compares: enough to tell
// one version from another.
type sharedCM struct {
	Metadata struct{ Name, ResourceVersion, UID string }
	Data     map[string]string
}

// readSharedCM makes the call, wants its status code, and decodes the ConfigMap it answered.
func readSharedCM(t *testing.T, h *Handler, what string, c call, wantCode int) sharedCM {
	t.Helper()
	w := do(h, c)
	if w.Code != wantCode {
		t.Fatalf("%s: %d %s", what, w.Code, w.Body)
	}
	var got sharedCM
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return got
}

// checkServesVersion: GET and LIST of the collection answer want's version of ConfigMap c, not an
// older one (or a dry run's) a shared encoding could still hold.
func checkServesVersion(t *testing.T, h *Handler, step string, want sharedCM) {
	t.Helper()
	base := sharedCMBase
	if got := readSharedCM(t, h, step+": GET", call{method: "GET", path: base + "/c"}, 200); got.Data["k"] != want.Data["k"] || got.Metadata.ResourceVersion != want.Metadata.ResourceVersion {
		t.Fatalf("%s: GET answered %+v, want %+v", step, got, want)
	}
	w := do(h, call{method: "GET", path: base})
	var l struct{ Items []sharedCM }
	if err := json.Unmarshal(w.Body.Bytes(), &l); err != nil || len(l.Items) != 1 || l.Items[0].Data["k"] != want.Data["k"] || l.Items[0].Metadata.UID != want.Metadata.UID {
		t.Fatalf("%s: LIST answered %s (%v), want %+v", step, w.Body, err, want)
	}
}

// checkWatcherSawVersions: watcher i saw every version in order, as ADDED, MODIFIED..., then the
// deletion of the last update, then the object created again as ADDED.
func checkWatcherSawVersions(t *testing.T, i int, dec *json.Decoder, versions []sharedCM) {
	t.Helper()
	var got []string
	for range len(versions) + 1 { // the DELETED event too
		var ev struct {
			Type   string
			Object sharedCM
		}
		if err := dec.Decode(&ev); err != nil {
			t.Fatalf("watcher %d: %v", i, err)
		}
		got = append(got, ev.Type+" "+ev.Object.Data["k"]+" "+ev.Object.Metadata.ResourceVersion)
	}
	var want []string
	for j, v := range versions {
		typ := "MODIFIED"
		if j == 0 || j == len(versions)-1 {
			typ = "ADDED"
		}
		if j == len(versions)-1 {
			want = append(want, got[j]) // the DELETED event, checked below
		}
		want = append(want, typ+" "+v.Data["k"]+" "+v.Metadata.ResourceVersion)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("watcher %d saw\n%q\nwant\n%q", i, got, want)
	}
	if del := got[len(versions)-1]; del[:len("DELETED v4")] != "DELETED v4" {
		t.Errorf("watcher %d: %q where the deletion of v4 belongs", i, del)
	}
}

// TestEncodingCacheIsBounded: the cache keeps at most two generations of its limit, and an
// entry read again is kept while others go.
func TestEncodingCacheIsBounded(t *testing.T) {
	c := newEncodingCache(4)
	key := func(i int) encKey { return encKey{name: fmt.Sprint(i), rv: "1"} }
	c.put(key(0), []byte("0"))
	for i := 1; i < 100; i++ {
		c.put(key(i), []byte(fmt.Sprint(i)))
		if _, ok := c.get(key(0)); !ok {
			t.Fatalf("entry 0, read after every put, was dropped at put %d", i)
		}
		if n := c.byVersion.Len(); n > 8 {
			t.Fatalf("%d entries held with a limit of 4", n)
		}
	}
	if _, ok := c.get(key(50)); ok {
		t.Error("entry 50, never read, is still held after 49 more puts")
	}
	if b, ok := c.get(key(99)); !ok || string(b) != "99" {
		t.Errorf("the last entry: %q %v", b, ok)
	}
}

// TestLentItemsFollowTheirVersions: a LIST's items are found by their content's identity once
// encoded (contentKey), and each item is still the encoding of the object it stands for after
// some objects changed and some went away. It fails with items stored under another object's
// content, and when the key names the list's slot instead of the content (no hits).
func TestLentItemsFollowTheirVersions(t *testing.T) {
	_, h := newHandler(t)
	const base = "/api/v1/namespaces/a/configmaps"
	const n = 40
	want := map[string]string{} // name -> data value
	write := func(method, path, name, v, rv string, code int) {
		t.Helper()
		meta := fmt.Sprintf(`"name":%q`, name)
		if rv != "" {
			meta += fmt.Sprintf(`,"resourceVersion":%q`, rv)
		}
		w := do(h, call{method: method, path: path, body: fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{%s},"data":{"k":%q}}`, meta, v)})
		if w.Code != code {
			t.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
		}
		want[name] = v
	}
	type item struct {
		Metadata struct{ Name, ResourceVersion string }
		Data     map[string]string
	}
	list := func(step string) map[string]item {
		t.Helper()
		w := do(h, call{method: "GET", path: base})
		var l struct{ Items []item }
		if err := json.Unmarshal(w.Body.Bytes(), &l); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		got := map[string]item{}
		for _, it := range l.Items {
			got[it.Metadata.Name] = it
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d items, want %d", step, len(got), len(want))
		}
		for name, v := range want {
			if got[name].Data["k"] != v {
				t.Fatalf("%s: %s holds %q, want %q", step, name, got[name].Data["k"], v)
			}
		}
		return got
	}
	for i := range n {
		write("POST", base, fmt.Sprintf("c%02d", i), fmt.Sprintf("v%d-0", i), "", 201)
	}
	first := list("first LIST")
	hits, _ := h.items.stats()
	list("second LIST")
	// A plain build shares no encoding (internal/fastpath): the LISTs' answers are all it checks.
	if again, _ := h.items.stats(); fastpath.Use(fastpath.SharedEncodings) && again-hits < n {
		t.Fatalf("the second LIST of %d unchanged objects found %d items in the cache", n, again-hits)
	}
	if got := h.items.byContent.Len(); fastpath.Use(fastpath.SharedEncodings) && got != n {
		t.Fatalf("%d items held by content after two LISTs of %d objects", got, n)
	}
	for i := 0; i < n; i += 3 {
		name := fmt.Sprintf("c%02d", i)
		write("PUT", base+"/"+name, name, fmt.Sprintf("v%d-1", i), first[name].Metadata.ResourceVersion, 200)
	}
	for i := 1; i < n; i += 7 {
		name := fmt.Sprintf("c%02d", i)
		if w := do(h, call{method: "DELETE", path: base + "/" + name}); w.Code != 200 {
			t.Fatalf("delete %s: %d %s", name, w.Code, w.Body)
		}
		delete(want, name)
	}
	list("after updates and deletions")
	list("once more")
}

// TestFinalizerRemovalAnswerIsNotShared: a patch that removes the last finalizer of an object
// being deleted deletes it instead of storing the change, and answers the object as patched,
// at the stored resourceVersion, as kube-apiserver does. That answer is no committed version:
// served from the shared encodings, it was the stored object before the patch (the one the GET
// before it encoded), a difference the differential suite against kube-apiserver found in the
// ordinary build but not in the plain one.
func TestFinalizerRemovalAnswerIsNotShared(t *testing.T) {
	_, h := newHandler(t)
	const base = sharedCMBase
	created := readSharedCM(t, h, "create", call{method: "POST", path: base,
		body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","finalizers":["example.com/hold"]},"data":{"k":"v1"}}`}, 201)
	if w := do(h, call{method: "DELETE", path: base + "/c"}); w.Code != 200 {
		t.Fatalf("delete: %d %s", w.Code, w.Body)
	}
	held := readSharedCM(t, h, "GET while held", call{method: "GET", path: base + "/c"}, 200)
	if held.Metadata.UID != created.Metadata.UID || held.Data["k"] != "v1" {
		t.Fatalf("GET while held answered %+v", held)
	}
	w := do(h, call{method: "PATCH", path: base + "/c", contentType: "application/merge-patch+json",
		body: `{"metadata":{"finalizers":null},"data":{"k":"v2"}}`})
	if w.Code != 200 {
		t.Fatalf("patch: %d %s", w.Code, w.Body)
	}
	var answer struct {
		Metadata struct {
			ResourceVersion, DeletionTimestamp string
			Finalizers                         []string
		}
		Data map[string]string
	}
	if err := json.Unmarshal(w.Body.Bytes(), &answer); err != nil {
		t.Fatal(err)
	}
	if answer.Data["k"] != "v2" || len(answer.Metadata.Finalizers) != 0 || answer.Metadata.DeletionTimestamp == "" ||
		answer.Metadata.ResourceVersion != held.Metadata.ResourceVersion {
		t.Errorf("the patch that removed the last finalizer answered %s; want the object as patched (data k=v2, no finalizers, deletionTimestamp set) at resourceVersion %s",
			w.Body, held.Metadata.ResourceVersion)
	}
	if w := do(h, call{method: "GET", path: base + "/c"}); w.Code != 404 {
		t.Errorf("GET after the last finalizer went: %d %s, want 404", w.Code, w.Body)
	}
}
