package clientgo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	kubescheme "k8s.io/client-go/kubernetes/scheme"
)

// Watches the controller opens itself (its reflectors, built by client-go's factories, by a
// generated factory, by dynamicinformer or metadatainformer, or over a bare ListWatch) are served
// by the REST front like any request, but their events are not pumped by a goroutine of the
// server as they happen: the driver hands them over one per step of the sim, so that the
// controller's reaction to one event (its reflector's store, its handlers, its workers' calls)
// is over, every goroutine blocked again, before the world takes its next step.
//
// The path of one event: a step of the world makes it ready in the fakeapi.Watcher; the driver,
// before its next step, schedules a delivery for every stream whose last event was taken
// (streams in the order they were opened); the delivery step pops one event into the stream's
// channel of capacity one; the REST front's watch loop, on its own goroutine, takes it, encodes
// it (protobuf or JSON, as negotiated) and writes it into the response body, a pipe the
// client's decoder reads. The next turn's synctest.Wait returns only when all of that, and what
// the controller does about it, is done.

// clientWatchTimeout is client-go's range of a reflector's watch timeout (reflector.go's
// defaultMinWatchTimeout and twice it), drawn from the process-wide math/rand: a timeoutSeconds
// in this range is drawn again from the seed.
const (
	minClientWatchTimeout = 5 * 60
	maxClientWatchTimeout = 10 * 60
)

// stepWatch is one watch the controller opened: a watch.Interface for the REST front's watch
// loop, fed by the driver.
type stepWatch struct {
	b     *bubble
	tr    *transport // the transport of the controller that opened it
	id    int
	label string // the request, for the trace
	w     *fakeapi.Watcher
	// out holds at most one event: the driver puts the next only once the last was taken.
	out chan watch.Event
	// scheduled and ended are the driver's: a delivery step is due; out is closed.
	scheduled, ended bool
	stopOnce         sync.Once
	// initial counts a watch-list's initial objects until its initial-events-end bookmark;
	// -1 once it is past (or for a watch that does not send initial events).
	initial int
	// view names the informer's view in bubble.views; initialKeys are a watch-list's initial
	// objects until its end bookmark.
	view        string
	initialKeys map[string]bool
}

func (sw *stepWatch) ResultChan() <-chan watch.Event { return sw.out }

// Stop is called by the REST front's watch loop when it returns (the client went away, or the
// stream ended); stopping the server's watch is a call, so it happens at a step like any other.
func (sw *stepWatch) Stop() {
	sw.stopOnce.Do(func() {
		key := "watch-stop " + sw.label
		if err := sw.b.do("watch-stop", key, nil, func() {
			sw.b.endStream(sw, "stopped by the client")
			sw.w.Stop()
		}); err != nil {
			sw.w.Stop() // the run is over: nothing is traced any more
		}
	})
}

// StreamKind counts the watches the world served for one kind of informer.
type StreamKind struct {
	// Resource is the watched resource ("deployments.apps/v1"), Namespace "" for all.
	Resource, Namespace string
	// Form is what the client asked for: "protobuf" (a typed client of a built-in kind), "json"
	// (a typed client of a custom resource, the dynamic client), "metadata"
	// (PartialObjectMetadata, the metadata client) or "table".
	Form string
	// WatchList: started with the streaming watch-list (sendInitialEvents) rather than a LIST.
	WatchList bool
	// Watches is how many watches were opened, Events how many events the world delivered on
	// them (bookmarks and ERROR events included).
	Watches, Events int
}

func (k StreamKind) String() string {
	s := k.Resource
	if k.Namespace != "" {
		s += " in " + k.Namespace
	}
	s += " (" + k.Form
	if k.WatchList {
		s += ", watch-list"
	}
	return s + ")"
}

// streamStats is the report's StreamKind table, keyed by StreamKind.String().
type streamStats struct {
	kinds map[string]*StreamKind
}

func (st *streamStats) kind(k StreamKind) *StreamKind {
	if st.kinds == nil {
		st.kinds = map[string]*StreamKind{}
	}
	key := k.String()
	if p, ok := st.kinds[key]; ok {
		return p
	}
	p := &k
	st.kinds[key] = p
	return p
}

// sorted returns the kinds by name.
func (st *streamStats) sorted() []StreamKind {
	out := make([]StreamKind, 0, len(st.kinds))
	for _, k := range st.kinds {
		out = append(out, *k)
	}
	slices.SortFunc(out, func(a, b StreamKind) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// formOf is the representation a watch request asks for, from its Accept header.
func formOf(accept string) string {
	switch {
	case strings.Contains(accept, "as=PartialObjectMetadata"):
		return "metadata"
	case strings.Contains(accept, "as=Table"):
		return "table"
	case strings.Contains(accept, "protobuf"):
		return "protobuf"
	}
	return "json"
}

// resourceName is gvr as the report names it: "deployments.apps/v1", "pods/v1".
func resourceName(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return gvr.Resource + "/" + gvr.Version
	}
	return gvr.Resource + "." + gvr.Group + "/" + gvr.Version
}

// watchKey is a watch request's content for ordering calls: its URL without timeoutSeconds and timeout
// (client-go draws that from the process-wide math/rand; the world draws it again) and what it
// accepts.
func watchKey(r *http.Request) string {
	q := r.URL.Query()
	q.Del("timeoutSeconds")
	q.Del("timeout") // the client's request timeout, set from the same draw
	return "WATCH " + r.URL.Path + "?" + q.Encode() + " " + r.Header.Get("Accept")
}

// transportKey is the context key of the transport a watch request came through (the REST front
// is shared by every life of the controller; each has its transport).
type transportKey struct{}

// openWatch is the REST front's Options.Watch: the watch is opened by the transport of the
// request (serveWatch puts it in the request's context).
func openWatch(r *http.Request, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (watch.Interface, error) {
	t, ok := r.Context().Value(transportKey{}).(*transport)
	if !ok {
		return nil, fmt.Errorf("clientgo: a watch request that did not come through the harness's transport: %s", r.URL)
	}
	return t.openWatch(r, gvr, ns, opts)
}

// openWatch opens the server's watch at a step, as a call of the controller, and returns the
// stream the driver will feed.
func (t *transport) openWatch(r *http.Request, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (watch.Interface, error) {
	b := t.b
	var sw *stepWatch
	var werr error
	var latency func() time.Duration
	if t.latency != nil {
		latency = func() time.Duration { return t.latency(r) + b.hz.slowBy("WATCH "+r.URL.Path) }
	}
	if t.crashed.Load() {
		return nil, errCrashed
	}
	err := b.do("WATCH", watchKey(r), latency, func() {
		if opts.TimeoutSeconds != nil {
			if v := *opts.TimeoutSeconds; v >= minClientWatchTimeout && v <= maxClientWatchTimeout {
				v = minClientWatchTimeout + b.s.Rand(StreamController).Int64N(maxClientWatchTimeout-minClientWatchTimeout+1)
				opts.TimeoutSeconds = &v
				b.timeoutsRedrawn++
			}
		}
		label := r.Method + " " + strings.TrimPrefix(watchKey(r), "WATCH ")
		// Lent, not copied for each event: the REST front only encodes the objects
		// (docs/performance-rest.md); the request is recorded as OpenWatch records it.
		w, err := b.w.Server().ListerWatcher(gvr, ns).OpenWatchLent(opts)
		if err != nil {
			werr = err
			b.s.Emit(ControllerActor, "watch-refused", sim.F("request", label), sim.F("error", err.Error()))
			return
		}
		b.nextStream++
		kind := b.streams.kind(StreamKind{Resource: resourceName(gvr), Namespace: ns, Form: formOf(r.Header.Get("Accept")),
			WatchList: opts.SendInitialEvents != nil && *opts.SendInitialEvents})
		kind.Watches++
		sw = &stepWatch{b: b, tr: t, id: b.nextStream, label: label, w: w, out: make(chan watch.Event, 1), initial: -1}
		sw.view = viewKey(gvr, ns, kind.Form)
		b.noteView(sw.view, gvr)
		if kind.WatchList {
			sw.initial, sw.initialKeys = 0, map[string]bool{}
		}
		b.open = append(b.open, openStream{sw: sw, kind: kind})
		b.s.Emit(ControllerActor, "watch-open", sim.F("stream", strconv.Itoa(sw.id)), sim.F("request", label),
			sim.F("watch", strconv.FormatUint(w.ID(), 10)))
	})
	if err != nil {
		return nil, err
	}
	return sw, werr
}

// openStream is an open stream and its line in the report.
type openStream struct {
	sw   *stepWatch
	kind *StreamKind
}

// pumpStreams schedules, on the driver, a delivery step for every open stream whose last event
// was taken and whose watch has the next (or has ended), in the order the streams were opened.
func (ws *watches) pumpStreams() {
	b := ws.b
	for _, o := range b.open {
		sw := o.sw
		if sw.scheduled || sw.ended || len(sw.out) > 0 || !sw.w.Ready() {
			continue
		}
		sw.scheduled = true
		kind := o.kind
		b.s.AfterFunc(0, ControllerActor, "watch-event", func() { b.deliver(sw, kind) })
	}
}

// deliver hands the stream's next event to the REST front's watch loop, or ends the stream.
func (ws *watches) deliver(sw *stepWatch, kind *StreamKind) {
	b := ws.b
	sw.scheduled = false
	if sw.ended {
		return
	}
	ev, ok := sw.w.Next()
	if !ok {
		if sw.w.Done() {
			b.endStream(sw, "closed by the server: "+sw.w.CloseReason().String())
		}
		return
	}
	kind.Events++
	key, keyErr := metaOf(ev.Object)
	switch {
	case sw.initial >= 0 && ev.Type == watch.Added && keyErr == nil:
		sw.initial++
		sw.initialKeys[key] = true
	case sw.initial >= 0 && ev.Type == watch.Bookmark && initialEventsEnd(ev.Object):
		if sw.initial >= 2 && !b.seeded {
			b.unorderedBatches++
		}
		b.replaceView(sw.view, sw.initialKeys)
		if b.listedAt == nil {
			b.listedAt = map[string]time.Duration{}
		}
		b.listedAt[sw.view] = b.s.Now() // the watch-list's start is over: its resync timer starts
		sw.initial, sw.initialKeys = -1, nil
	case (ev.Type == watch.Added || ev.Type == watch.Modified) && keyErr == nil:
		if v := b.views[sw.view]; v != nil {
			v[key] = true
		}
	case ev.Type == watch.Deleted && keyErr == nil:
		delete(b.views[sw.view], key)
	}
	b.controllerWoken()
	sw.out <- ev // empty: the driver puts one only when the last was taken
	fields := []sim.Field{sim.F("stream", strconv.Itoa(sw.id)), sim.F("type", string(ev.Type))}
	if m, err := metaOf(ev.Object); err == nil {
		fields = append(fields, sim.F("key", m), sim.F("rv", rvOf(ev.Object)))
	}
	b.s.Emit(ControllerActor, "watch-event", fields...)
	b.w.Settle()
}

// endStream closes the stream's channel, so the REST front's watch loop ends its response.
func (ws *watches) endStream(sw *stepWatch, why string) {
	b := ws.b
	if sw.ended {
		return
	}
	sw.ended = true
	b.controllerWoken()
	close(sw.out)
	b.open = slices.DeleteFunc(b.open, func(o openStream) bool { return o.sw == sw })
	b.s.Emit(ControllerActor, "watch-end", sim.F("stream", strconv.Itoa(sw.id)), sim.F("why", why))
}

// streamsQuiet reports whether no open stream has an event on its way.
func (ws *watches) streamsQuiet() bool {
	b := ws.b
	for _, o := range b.open {
		if o.sw.scheduled || len(o.sw.out) > 0 || o.sw.w.Ready() {
			return false
		}
	}
	return true
}

// endStreams ends every open stream when the run is over.
func (ws *watches) endStreams() {
	b := ws.b
	for len(b.open) > 0 {
		sw := b.open[0].sw
		b.endStream(sw, "the run is over")
		sw.w.Stop()
	}
}

// serveWatch serves a watch request: the REST front runs on a goroutine of its own for the
// stream's life, opening the watch through openWatch and writing each event the driver hands it
// into a pipe; the response returns once the front has written its header.
func (t *transport) serveWatch(req *http.Request, inner *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(context.WithValue(req.Context(), transportKey{}, t))
	inner = inner.WithContext(ctx)
	pr, pw := io.Pipe()
	rw := &streamWriter{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	go func() {
		defer pw.Close()
		t.handler.ServeHTTP(rw, inner)
		rw.WriteHeader(http.StatusOK) // a front that wrote nothing: an empty stream
	}()
	<-rw.ready
	return &http.Response{
		Status: fmt.Sprintf("%d %s", rw.code, http.StatusText(rw.code)), StatusCode: rw.code,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: rw.header, Body: &streamBody{pr: pr, cancel: cancel}, ContentLength: -1, Request: req,
	}, nil
}

// streamWriter is the REST front's http.ResponseWriter for a watch: the header once, then the
// body into a pipe. It flushes by construction (a pipe write returns once read).
type streamWriter struct {
	header    http.Header
	code      int
	pw        *io.PipeWriter
	ready     chan struct{}
	readyOnce sync.Once
}

func (w *streamWriter) Header() http.Header { return w.header }

func (w *streamWriter) WriteHeader(code int) {
	w.readyOnce.Do(func() {
		w.code = code
		w.header = w.header.Clone()
		close(w.ready)
	})
}

func (w *streamWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.pw.Write(p)
}

// Flush makes the writer an http.Flusher, which the front's watch loop asks for.
func (w *streamWriter) Flush() {}

// streamBody is the response body of a watch: closing it is the client going away.
type streamBody struct {
	pr     *io.PipeReader
	cancel context.CancelFunc
}

func (b *streamBody) Read(p []byte) (int, error) { return b.pr.Read(p) }

func (b *streamBody) Close() error {
	b.cancel()
	return b.pr.Close()
}

// metaOf is the namespace/name of an event's object, for the trace.
func metaOf(obj runtime.Object) (string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", err
	}
	if m.GetNamespace() == "" {
		return m.GetName(), nil
	}
	return m.GetNamespace() + "/" + m.GetName(), nil
}

func rvOf(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetResourceVersion()
}

// WatchesServed is the number of watches the world served to the controller's own informers
// (each start and each rewatch of a reflector is one).
func (d *Diagnostics) WatchesServed() int {
	n := 0
	for _, k := range d.Streams {
		n += k.Watches
	}
	return n
}

// initialEventsEnd reports whether a bookmark is a watch-list's initial-events-end one.
func initialEventsEnd(obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	return err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
}

// viewKey names an informer's view: its resource, namespace and form.
func viewKey(gvr schema.GroupVersionResource, ns, form string) string {
	return resourceName(gvr) + " " + ns + " " + form
}

// replaceView sets an informer's view to keys, the objects of a LIST or of a watch-list's start,
// counting an unordered batch when two objects or more of the old view are gone: client-go's
// Replace hands their tombstones to the handlers in the order of a Go map (its cache's keys).
func (ws *watches) replaceView(view string, keys map[string]bool) {
	b := ws.b
	if b.views == nil {
		b.views = map[string]map[string]bool{}
	}
	gone := 0
	for k := range b.views[view] {
		if !keys[k] {
			gone++
		}
	}
	if gone >= 2 && !b.seeded {
		b.unorderedBatches++
		b.s.Emit(ControllerActor, "unordered-relist", sim.F("view", view), sim.F("gone", strconv.Itoa(gone)))
	}
	b.views[view] = keys
}

// noteList updates an informer's view with a LIST the world served (a collection's GET), from
// the response's body: JSON, or protobuf decoded with client-go's scheme, and returns the view
// ("" for a GET of one object). A body it cannot read forgets the view (nothing is counted for
// it). The LIST's instant is the view's listedAt, moved on by the response's latency.
func (ws *watches) noteList(req *http.Request, body []byte, contentType string) string {
	b := ws.b
	gvr, ns, ok := collectionOf(req.URL.Path)
	if !ok {
		return ""
	}
	view := viewKey(gvr, ns, formOf(req.Header.Get("Accept")))
	b.noteView(view, gvr)
	keys, err := listKeys(body, contentType)
	if err != nil {
		delete(b.views, view)
		delete(b.listedAt, view)
		return ""
	}
	b.noteControllerRuntimeList(view, keys)
	b.replaceView(view, keys)
	if b.listedAt == nil {
		b.listedAt = map[string]time.Duration{}
	}
	b.listedAt[view] = b.s.Now()
	return view
}

// collectionOf parses a collection's path: /api/v1[/namespaces/NS]/RESOURCE or
// /apis/GROUP/VERSION[/namespaces/NS]/RESOURCE.
func collectionOf(path string) (schema.GroupVersionResource, string, bool) {
	var buf [maxPathSegments]string
	parts := pathSegments(path, &buf)
	var gvr schema.GroupVersionResource
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		gvr.Version, parts = parts[1], parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		gvr.Group, gvr.Version, parts = parts[1], parts[2], parts[3:]
	default:
		return gvr, "", false
	}
	switch {
	case len(parts) == 1:
		gvr.Resource = parts[0]
		return gvr, "", true
	case len(parts) == 3 && parts[0] == "namespaces":
		gvr.Resource = parts[2]
		return gvr, parts[1], true
	}
	return gvr, "", false
}

// listKeys returns the namespace/name of every item of a list body.
func listKeys(body []byte, contentType string) (map[string]bool, error) {
	keys := map[string]bool{}
	if strings.Contains(contentType, "protobuf") {
		obj, _, err := kubescheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
		if err != nil {
			return nil, err
		}
		items, err := meta.ExtractList(obj)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			k, err := metaOf(it)
			if err != nil {
				return nil, err
			}
			keys[k] = true
		}
		return keys, nil
	}
	var list struct {
		Items []struct {
			Metadata struct{ Namespace, Name string }
		}
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, err
	}
	for _, it := range list.Items {
		k := it.Metadata.Name
		if it.Metadata.Namespace != "" {
			k = it.Metadata.Namespace + "/" + k
		}
		keys[k] = true
	}
	return keys, nil
}

// createdName is the name of the object a create answered with.
func createdName(body []byte, contentType string) (string, error) {
	if strings.Contains(contentType, "protobuf") {
		obj, _, err := kubescheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
		if err != nil {
			return "", err
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return "", err
		}
		return m.GetName(), nil
	}
	var o struct{ Metadata struct{ Name string } }
	if err := json.Unmarshal(body, &o); err != nil {
		return "", err
	}
	return o.Metadata.Name, nil
}

// noteView remembers the resource of an informer's view.
func (ws *watches) noteView(view string, gvr schema.GroupVersionResource) {
	b := ws.b
	if b.viewGVR == nil {
		b.viewGVR = map[string]schema.GroupVersionResource{}
	}
	b.viewGVR[view] = gvr
}

// endStreamsOf ends the streams a crashed controller's transport opened.
func (ws *watches) endStreamsOf(t *transport) {
	b := ws.b
	for i := 0; i < len(b.open); {
		sw := b.open[i].sw
		if sw.tr != t {
			i++
			continue
		}
		b.endStream(sw, "the controller crashed")
		sw.w.Stop()
	}
}
