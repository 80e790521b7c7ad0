package kube_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/fakeapi/rest"
	"github.com/informersim/informersim/kube"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// watchLines opens a watch of configmaps in namespace ns with accept, and returns each event as
// a line ("ADDED a 2", "ERROR 410 Expired") on a channel closed when the stream ends; a request
// refused before the stream is one line "HTTP code reason".
func watchLines(t *testing.T, h http.Handler, query, accept string) <-chan string {
	t.Helper()
	tr, _ := rest.NewTransport(h)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://x/api/v1/namespaces/ns/configmaps?watch=1&"+query, nil)
	req.Header.Set("Accept", accept)
	out := make(chan string, 64)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		var st metav1.Status
		body, _ := io.ReadAll(resp.Body)
		_ = json.Unmarshal(body, &st)
		out <- fmt.Sprintf("HTTP %d %s", resp.StatusCode, st.Reason)
		close(out)
		return out
	}
	pb := strings.HasPrefix(resp.Header.Get("Content-Type"), kube.ProtobufMediaType)
	if want := strings.HasPrefix(accept, kube.ProtobufMediaType); pb != want {
		t.Fatalf("watch Content-Type %q for Accept %q", resp.Header.Get("Content-Type"), accept)
	}
	line := func(typ string, obj runtime.Object) string {
		if st, ok := obj.(*metav1.Status); ok {
			return fmt.Sprintf("%s %d %s", typ, st.Code, st.Reason)
		}
		m, _ := obj.(metav1.Object)
		return fmt.Sprintf("%s %s %s", typ, m.GetName(), m.GetResourceVersion())
	}
	go func() {
		defer close(out)
		defer resp.Body.Close()
		if pb {
			raw := protobuf.NewRawSerializer(scheme.Scheme, scheme.Scheme)
			enc := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
			for {
				var n [4]byte
				if _, err := io.ReadFull(resp.Body, n[:]); err != nil {
					return
				}
				frame := make([]byte, binary.BigEndian.Uint32(n[:]))
				if _, err := io.ReadFull(resp.Body, frame); err != nil {
					return
				}
				var ev metav1.WatchEvent
				if _, _, err := raw.Decode(frame, &schema.GroupVersionKind{Version: "v1", Kind: "WatchEvent"}, &ev); err != nil {
					out <- "undecodable frame: " + err.Error()
					return
				}
				obj, _, err := enc.Decode(ev.Object.Raw, nil, nil)
				if err != nil {
					out <- "undecodable object: " + err.Error()
					return
				}
				out <- line(ev.Type, obj)
			}
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			var ev struct {
				Type   string          `json:"type"`
				Object json.RawMessage `json:"object"`
			}
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				out <- "undecodable line: " + err.Error()
				return
			}
			var obj runtime.Object = &unstructured.Unstructured{}
			if ev.Type == "ERROR" {
				obj = &metav1.Status{}
			}
			if err := json.Unmarshal(ev.Object, obj); err != nil {
				out <- "undecodable object: " + err.Error()
				return
			}
			out <- line(ev.Type, obj)
		}
	}()
	return out
}

// faultScript runs the same faults against watches negotiated with accept and returns what the
// client saw, line by line.
func faultScript(t *testing.T, accept string) []string {
	srv, err := fakeapi.New(fakeapi.Config{Replicas: 2})
	if err != nil {
		t.Fatal(err)
	}
	h, err := rest.NewHandler(srv, kube.RESTOptions())
	if err != nil {
		t.Fatal(err)
	}
	cms := srv.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("ns")
	ctx := context.Background()
	write := func(name, v string) {
		t.Helper()
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name}, "data": map[string]any{"v": v}}}
		if _, err := cms.Get(ctx, name, metav1.GetOptions{}); err == nil {
			_, err = cms.Update(ctx, u, metav1.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return
		}
		if _, err := cms.Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	take := func(ch <-chan string, n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			select {
			case l, ok := <-ch:
				if !ok {
					seen = append(seen, "END")
					return
				}
				seen = append(seen, l)
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: waited for line %d of %d; so far %q", accept, i+1, n, seen)
			}
		}
	}
	write("a", "1")
	w := watchLines(t, h, "resourceVersion=0", accept)
	take(w, 1) // the initial ADDED
	write("b", "1")
	write("a", "2")
	take(w, 2)
	// Replica lag: while replica 0 (which serves the watch) is frozen, a write does not reach the
	// watch; it arrives when the replica resumes.
	if err := srv.Replicas().Freeze(0); err != nil {
		t.Fatal(err)
	}
	write("c", "1")
	if err := srv.Replicas().Resume(0); err != nil {
		t.Fatal(err)
	}
	take(w, 1)
	// A clean close: the stream ends.
	srv.Faults().CloseAllWatches(nil)
	take(w, 1)
	// A failed watch request: a Status before any stream.
	srv.Faults().FailNext(fakeapi.VerbWatch, apierrors.NewInternalError(fmt.Errorf("boom")))
	take(watchLines(t, h, "resourceVersion=0", accept), 2)
	// Compaction: a watch from before the compacted revision is an ERROR 410 event.
	old := srv.Revision() - 2
	write("a", "3")
	if err := srv.Faults().Compact(srv.Revision()); err != nil {
		t.Fatal(err)
	}
	take(watchLines(t, h, fmt.Sprintf("resourceVersion=%d", old), accept), 2)
	// A 410 mid-watch.
	w = watchLines(t, h, fmt.Sprintf("resourceVersion=%d", srv.Revision()), accept)
	write("b", "2")
	take(w, 1)
	srv.Faults().CloseAllWatches(fakeapi.NewWatchError(410))
	take(w, 2)
	return seen
}

// Goal: every fault of the server reaches a protobuf watch exactly as it reaches a JSON one:
// the same events in the same order, the same ERROR statuses, the same ends of stream, for
// replica lag, a clean close, a failed request, compaction and a 410 mid-watch.
func TestFaultsReachProtobufWatchesAsJSON(t *testing.T) {
	js := faultScript(t, "application/json")
	pb := faultScript(t, kube.ProtobufMediaType+", application/json")
	want := []string{
		"ADDED a 2", "ADDED b 3", "MODIFIED a 4", "ADDED c 5", "END",
		"HTTP 500 InternalError", "END",
		"ERROR 410 Expired", "END",
		"MODIFIED b 7", "ERROR 410 Expired", "END",
	}
	if strings.Join(js, "\n") != strings.Join(want, "\n") {
		t.Errorf("JSON watches saw:\n%s\nwant:\n%s", strings.Join(js, "\n"), strings.Join(want, "\n"))
	}
	if strings.Join(pb, "\n") != strings.Join(js, "\n") {
		t.Errorf("protobuf watches saw:\n%s\nJSON ones:\n%s", strings.Join(pb, "\n"), strings.Join(js, "\n"))
	}
}
