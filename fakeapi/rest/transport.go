package rest

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Transport is an in-process http.RoundTripper: each request is served by calling the handler
// directly, with no socket. A response is held in memory until the handler returns or flushes,
// as net/http's server buffers it: a plain response reaches the client whole, and a flushed one
// (a watch) streams through a pipe from its first flush on, so watches work. The front's own
// handler serves a request that cannot be a watch on the caller's goroutine; any other
// request, or any other handler, is served in a goroutine of its own. Closing a response body (or cancelling the request's context) ends the
// handler's request context. A transport fault injected into fakeapi (Faults.FailNext with a
// non-Status error such as fakeapi.NewConnectionRefused) is returned as RoundTrip's error, as a
// dialler would return it.
//
// Use it as client-go's rest.Config.Transport with any Host, e.g. "http://informersim".
type Transport struct {
	handler http.Handler
}

// NewTransport returns a Transport serving requests with h.
func NewTransport(h http.Handler) (*Transport, error) {
	if h == nil {
		return nil, errors.New("rest: nil http.Handler")
	}
	return &Transport{handler: h}, nil
}

// faultKey is the context key of the slot in which the handler leaves a transport fault.
type faultKey struct{}

type faultSlot struct {
	mu  sync.Mutex
	err error
}

func (s *faultSlot) set(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

func (s *faultSlot) get() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// RoundTrip serves req and returns once the handler has returned or flushed its response. A
// handler serving in a goroutine returns when the response is complete or the client closed the
// body or cancelled the request. A request whose context ends before the response is handed
// over gets the context's error.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	slot := &faultSlot{}
	own, isOwn := t.handler.(*Handler)
	var inner *http.Request
	if isOwn {
		// The front never changes a request, so a shallow copy is enough (Clone copies the
		// header and URL of every request).
		inner = req.WithContext(context.WithValue(ctx, faultKey{}, slot))
	} else {
		inner = req.Clone(context.WithValue(ctx, faultKey{}, slot))
	}
	if inner.Body == nil {
		inner.Body = http.NoBody
	}
	if inner.Host == "" {
		inner.Host = req.URL.Host
	}
	inner.RequestURI = req.URL.RequestURI()
	inner.RemoteAddr = "127.0.0.1:0"
	var rw *responseWriter
	var body *responseBody
	if isOwn && !mayStream(req) {
		// A request that cannot become a watch is served on the caller's goroutine: a
		// goroutine and its hand-over cost more than most requests' own work. Flush does
		// nothing in this mode (whole): the response is complete when the handler returns.
		rw = &responseWriter{header: http.Header{}, whole: true}
		own.ServeHTTP(rw, inner)
		rw.WriteHeader(http.StatusOK)
		if err := cmp.Or(ctx.Err(), slot.get()); err != nil {
			cancel()
			return nil, err
		}
		body = &responseBody{r: bytes.NewReader(rw.buffered), cancel: cancel}
	} else {
		pr, pw := io.Pipe()
		rw = &responseWriter{header: http.Header{}, stream: pw, ready: make(chan struct{})}
		go func() {
			defer rw.finish()
			t.handler.ServeHTTP(rw, inner)
		}()
		select {
		case <-rw.ready:
		case <-ctx.Done():
			cancel()
			_ = pr.Close() // a handler that streams later gets an error on its next write
			return nil, ctx.Err()
		}
		if err := cmp.Or(ctx.Err(), slot.get()); err != nil {
			cancel()
			_ = pr.Close()
			return nil, err
		}
		body = &responseBody{cancel: cancel, pipe: pr}
		switch {
		case !rw.streaming: // complete
			body.r = bytes.NewReader(rw.buffered)
		case len(rw.buffered) > 0: // what was written before the first flush, then the stream
			body.r = io.MultiReader(bytes.NewReader(rw.buffered), pr)
		default:
			body.r = pr
		}
	}
	return &http.Response{
		Status:        strconv.Itoa(rw.code) + " " + http.StatusText(rw.code),
		StatusCode:    rw.code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rw.sent,
		Body:          body,
		ContentLength: -1,
		Request:       req,
	}, nil
}

// mayStream reports whether req may be a watch, the only request the front answers with a
// stream. It errs on the side of yes: any "watch" in the query.
func mayStream(req *http.Request) bool {
	return strings.Contains(req.URL.RawQuery, "watch")
}

// responseWriter is the handler's side of an in-process response. Until the handler returns
// or flushes, it collects the response; then it hands over status, header and what was
// written (closing ready), and from a flush on, writes go through the pipe to the client. Only
// the handler's goroutine writes its fields before ready is closed; RoundTrip reads them after.
type responseWriter struct {
	header    http.Header // the handler's working header
	sent      http.Header // the header as it was when the status was written, as net/http sends it
	code      int
	whole     bool           // served on the caller's goroutine: never streams
	buffered  []byte         // the body written before the hand-over
	streaming bool           // flushed: writes go to stream
	stream    *io.PipeWriter // the handler's side of the stream
	once      sync.Once
	ready     chan struct{}
}

func (w *responseWriter) Header() http.Header { return w.header }

// WriteHeader takes the status and a snapshot of the header; later calls are ignored, as by
// net/http.
func (w *responseWriter) WriteHeader(code int) {
	if w.sent == nil {
		w.code, w.sent = code, w.header.Clone()
	}
}

// Write collects p before the hand-over. After a flush it blocks until the client reads, so a
// slow watch client slows the handler as TCP would.
func (w *responseWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.streaming {
		return w.stream.Write(p)
	}
	w.buffered = append(w.buffered, p...)
	return len(p), nil
}

// AdoptBody implements BodyAdopter: it takes body as the whole response, without the copy
// Write makes, when nothing was written yet and the response will not stream: a LIST's body is
// megabytes, built for this response alone or shared read-only (an item of the encoding cache),
// and the reader only reads it. The capacity is cut to the length so that a later Write copies rather than writing into
// memory that may be shared. It reports whether it took the body; if not, the caller writes it.
// The caller has written the header (handOver).
func (w *responseWriter) AdoptBody(body []byte) bool {
	if w.streaming || len(w.buffered) > 0 {
		return false
	}
	w.buffered = body[:len(body):len(body)]
	return true
}

// Flush implements http.Flusher: the first flush hands the response over and turns the rest of
// it into a stream; writes after it go straight to the reader, so later flushes do nothing.
func (w *responseWriter) Flush() {
	if w.whole {
		return
	}
	w.once.Do(func() {
		w.streaming = true
		w.handOver()
	})
}

// finish ends the response when the handler returns: a response never flushed is handed over
// whole; a stream is closed, which the client reads as the end of the body.
func (w *responseWriter) finish() {
	w.once.Do(w.handOver)
	_ = w.stream.Close()
}

func (w *responseWriter) handOver() {
	w.WriteHeader(http.StatusOK)
	close(w.ready)
}

// responseBody is the client's side; Close ends the handler's request context.
type responseBody struct {
	r      io.Reader
	pipe   *io.PipeReader // nil for a response served on the caller's goroutine
	cancel context.CancelFunc
}

func (b *responseBody) Read(p []byte) (int, error) { return b.r.Read(p) }

func (b *responseBody) Close() error {
	b.cancel()
	if b.pipe == nil {
		return nil
	}
	return b.pipe.Close()
}
