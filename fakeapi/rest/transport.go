package rest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// Transport is an in-process http.RoundTripper: each request is served by calling the handler
// directly, with no socket. Responses stream through a pipe, so watches work; closing a response
// body (or cancelling the request's context) ends the handler's request context. A transport
// fault injected into fakeapi (Server.FailNext with a non-Status error such as
// fakeapi.NewConnectionRefused) is returned as RoundTrip's error, as a dialler would return it.
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

// RoundTrip serves req with the handler in a goroutine and returns once the handler has written
// its header (or returned). The goroutine ends when the handler returns, which it does when the
// response is complete or the client closed the body or cancelled the request.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	slot := &faultSlot{}
	inner := req.Clone(context.WithValue(ctx, faultKey{}, slot))
	if inner.Body == nil {
		inner.Body = http.NoBody
	}
	if inner.Host == "" {
		inner.Host = req.URL.Host
	}
	inner.RequestURI = req.URL.RequestURI()
	inner.RemoteAddr = "127.0.0.1:0"
	pr, pw := io.Pipe()
	rw := &pipeWriter{header: http.Header{}, body: pw, ready: make(chan struct{})}
	go func() {
		defer func() {
			rw.markReady(http.StatusOK)
			_ = pw.Close()
		}()
		t.handler.ServeHTTP(rw, inner)
	}()
	select {
	case <-rw.ready:
	case <-ctx.Done():
		cancel()
		_ = pr.Close()
		return nil, ctx.Err()
	}
	if err := slot.get(); err != nil {
		cancel()
		_ = pr.Close()
		return nil, err
	}
	return &http.Response{
		Status:        strconv.Itoa(rw.code) + " " + http.StatusText(rw.code),
		StatusCode:    rw.code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rw.sent,
		Body:          &pipeBody{r: pr, cancel: cancel},
		ContentLength: -1,
		Request:       req,
	}, nil
}

// pipeWriter is the handler's side of an in-process response.
type pipeWriter struct {
	header http.Header // the handler's working header
	sent   http.Header // a snapshot taken by WriteHeader, read by RoundTrip after ready
	code   int
	body   *io.PipeWriter
	once   sync.Once
	ready  chan struct{}
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(code int) { w.markReady(code) }

func (w *pipeWriter) markReady(code int) {
	w.once.Do(func() {
		w.code, w.sent = code, w.header.Clone()
		close(w.ready)
	})
}

// Write blocks until the client reads, so a slow client slows the handler as TCP would.
func (w *pipeWriter) Write(p []byte) (int, error) {
	w.markReady(http.StatusOK)
	return w.body.Write(p)
}

// Flush implements http.Flusher; writes go straight to the reader, so there is nothing to do.
func (w *pipeWriter) Flush() {}

// pipeBody is the client's side; Close ends the handler's request context.
type pipeBody struct {
	r      *io.PipeReader
	cancel context.CancelFunc
}

func (b *pipeBody) Read(p []byte) (int, error) { return b.r.Read(p) }

func (b *pipeBody) Close() error {
	b.cancel()
	return b.r.Close()
}
