package rest

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEventsOneStoreTwoVersions: an event written through core/v1 is read, listed, selected,
// watched, patched and deleted through events.k8s.io/v1 with its fields renamed as
// kube-apiserver converts them, and the other way round: one object, one uid, one
// resourceVersion.
func TestEventsOneStoreTwoVersions(t *testing.T) {
	_, h := newHandler(t)
	created := coreEventThroughV1(t, h)
	v1EventThroughCore(t, h)
	eventsSelected(t, h)
	eventPatchedWatchedDeleted(t, h, created["metadata"].(map[string]any)["resourceVersion"].(string))
}

// The collection of namespace ns's events in each version.
const (
	coreEvents = "/api/v1/namespaces/ns/events"
	v1Events   = "/apis/events.k8s.io/v1/namespaces/ns/events"
)

// eventObj makes the call, which must succeed, and decodes the object it answered.
func eventObj(t *testing.T, h *Handler, c call) map[string]any {
	t.Helper()
	w := do(h, c)
	if w.Code >= 300 {
		t.Fatalf("%s %s: %d %s", c.method, c.path, w.Code, w.Body)
	}
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// coreEventThroughV1 creates event old through core/v1 and reads it through events.k8s.io/v1:
// the same uid and resourceVersion, the fields renamed. It returns the created object.
func coreEventThroughV1(t *testing.T, h *Handler) map[string]any {
	t.Helper()
	core, v1 := coreEvents, v1Events
	created := eventObj(t, h, call{method: "POST", path: core, body: `{"apiVersion":"v1","kind":"Event","metadata":{"name":"old"},
		"involvedObject":{"kind":"Pod","name":"p","namespace":"ns"},"reason":"Pulled","message":"pulled it","type":"Normal",
		"source":{"component":"kubelet"},"count":3,"firstTimestamp":"2026-01-01T00:00:00Z","lastTimestamp":"2026-01-01T00:01:00Z","reportingComponent":"kubelet"}`})
	seen := eventObj(t, h, call{method: "GET", path: v1 + "/old"})
	md, cmd := seen["metadata"].(map[string]any), created["metadata"].(map[string]any)
	if md["uid"] != cmd["uid"] || md["resourceVersion"] != cmd["resourceVersion"] {
		t.Errorf("not the same object: %v against %v", md, cmd)
	}
	delete(seen, "metadata")
	want := map[string]any{"apiVersion": "events.k8s.io/v1", "kind": "Event",
		"regarding": map[string]any{"kind": "Pod", "name": "p", "namespace": "ns"}, "reason": "Pulled", "note": "pulled it", "type": "Normal",
		"deprecatedSource": map[string]any{"component": "kubelet"}, "deprecatedCount": float64(3), "reportingController": "kubelet",
		"deprecatedFirstTimestamp": "2026-01-01T00:00:00Z", "deprecatedLastTimestamp": "2026-01-01T00:01:00Z",
		"eventTime": nil} // events.k8s.io/v1's type always writes it
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("a core event through events.k8s.io/v1 (-want +got):\n%s", diff)
	}
	return created
}

// v1EventThroughCore creates event new through events.k8s.io/v1 and reads it through core/v1:
// renamed back, with none of events.k8s.io's own names, and core/v1's always-written fields.
func v1EventThroughCore(t *testing.T, h *Handler) {
	t.Helper()
	core, v1 := coreEvents, v1Events
	eventObj(t, h, call{method: "POST", path: v1, body: `{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"new"},
		"regarding":{"kind":"Pod","name":"q","namespace":"ns"},"reason":"Checked","note":"fine","type":"Warning","action":"Check",
		"reportingController":"example.com/c","reportingInstance":"c-1","eventTime":"2026-01-01T00:00:00.000000Z"}`})
	back := eventObj(t, h, call{method: "GET", path: core + "/new"})
	for k, v := range map[string]any{"apiVersion": "v1", "message": "fine", "reportingComponent": "example.com/c", "reportingInstance": "c-1", "action": "Check"} {
		if back[k] != v {
			t.Errorf("the new event through core/v1: %s = %v, want %v", k, back[k], v)
		}
	}
	if io, _ := back["involvedObject"].(map[string]any); io["name"] != "q" {
		t.Errorf("involvedObject %v", back["involvedObject"])
	}
	for _, k := range []string{"regarding", "note", "reportingController"} {
		if _, ok := back[k]; ok {
			t.Errorf("core/v1 shows the events.k8s.io field %s", k)
		}
	}
	// Written as core/v1's type writes what it always has, unset.
	for k, v := range map[string]any{"firstTimestamp": nil, "lastTimestamp": nil, "source": map[string]any{}} {
		if got, ok := back[k]; !ok || !cmp.Equal(got, v) {
			t.Errorf("the new event through core/v1: %s = %v (present %v), want %v", k, got, ok, v)
		}
	}
}

// eventsSelected lists both events through both versions, with each version's field selectors;
// a core/v1 field label on events.k8s.io/v1 is refused.
func eventsSelected(t *testing.T, h *Handler) {
	t.Helper()
	core, v1 := coreEvents, v1Events
	for _, tc := range []struct{ path, want string }{
		{core, "new old"}, {v1, "new old"},
		{v1 + "?fieldSelector=regarding.name%3Dq", "new"},
		{v1 + "?fieldSelector=reportingController%3Dkubelet", "old"},
		{core + "?fieldSelector=involvedObject.name%3Dp", "old"},
	} {
		l := eventObj(t, h, call{method: "GET", path: tc.path})
		var names string
		for _, it := range l["items"].([]any) {
			if names != "" {
				names += " "
			}
			names += it.(map[string]any)["metadata"].(map[string]any)["name"].(string)
		}
		if names != tc.want {
			t.Errorf("GET %s: %q, want %q", tc.path, names, tc.want)
		}
	}
	if w := do(h, call{method: "GET", path: v1 + "?fieldSelector=involvedObject.name%3Dp"}); w.Code != 400 || status(t, w).Message != "field label not supported: involvedObject.name" {
		t.Errorf("a core label on events.k8s.io/v1: %d %s", w.Code, w.Body)
	}
}

// eventPatchedWatchedDeleted watches events.k8s.io/v1 from rv while old is patched through core/v1,
// then patches and deletes old through events.k8s.io/v1 and reads the effect through core/v1.
func eventPatchedWatchedDeleted(t *testing.T, h *Handler, rv string) {
	t.Helper()
	core, v1 := coreEvents, v1Events
	// A watch on events.k8s.io/v1 sees a patch made through core/v1, in its own version.
	tr, _ := NewTransport(h)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://x"+v1+"?watch=1&resourceVersion="+rv, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	patched := eventObj(t, h, call{method: "PATCH", path: core + "/old", contentType: "application/merge-patch+json", body: `{"message":"changed"}`})
	sc := bufio.NewScanner(resp.Body)
	var ev struct {
		Type   string
		Object map[string]any
	}
	for sc.Scan() {
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Object["metadata"].(map[string]any)["resourceVersion"] == patched["metadata"].(map[string]any)["resourceVersion"] {
			break
		}
	}
	if ev.Type != "MODIFIED" || ev.Object["note"] != "changed" || ev.Object["apiVersion"] != "events.k8s.io/v1" {
		t.Errorf("the watch's event: %s %v", ev.Type, ev.Object)
	}

	// A patch through events.k8s.io/v1 changes what core/v1 reads; a delete through it removes
	// the event from both.
	eventObj(t, h, call{method: "PATCH", path: v1 + "/old", contentType: "application/merge-patch+json", body: `{"note":"again","deprecatedCount":4}`})
	if got := eventObj(t, h, call{method: "GET", path: core + "/old"}); got["message"] != "again" || got["count"] != float64(4) || got["note"] != nil {
		t.Errorf("after a patch through events.k8s.io/v1: %v", got)
	}
	if w := do(h, call{method: "DELETE", path: v1 + "/old"}); w.Code != 200 {
		t.Fatalf("delete: %d %s", w.Code, w.Body)
	}
	if w := do(h, call{method: "GET", path: core + "/old"}); w.Code != 404 {
		t.Errorf("after the delete through events.k8s.io/v1: %d", w.Code)
	}
}
