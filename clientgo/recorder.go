package clientgo

import (
	"bytes"
	"io"
	"net/http"
	"net/textproto"
	"strconv"

	fakerest "github.com/informersim/informersim/fakeapi/rest"
)

// recorder records the REST front's answer to a request the transport serves whole (any but a
// watch or a static document), giving client-go the http.Response that
// httptest.ResponseRecorder's Result gives, at less cost per request: it takes the bodies the
// front hands over without copying them (fakerest.BodyAdopter), copies any other body once at
// its size, and hands the header over at WriteHeader instead of cloning it (the front, the
// only handler here, sets no header once it has written the status; a change after that is
// ignored, as net/http ignores it). It does not model trailers, which the front never sends.
type recorder struct {
	header http.Header // the handler's working header
	sent   http.Header // the header as it was when the status was written
	code   int
	body   []byte
	// adopted says body is a body the front handed over: it must not be written into.
	adopted bool
}

var _ fakerest.BodyAdopter = (*recorder)(nil)

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }

// WriteHeader takes the status and the header; later calls are ignored, as by net/http.
func (r *recorder) WriteHeader(code int) {
	if r.sent != nil {
		return
	}
	r.code, r.sent = code, r.header
	r.header = http.Header{} // what the handler sets from now on is not sent
}

// Write collects p, after writing the header as net/http's server would: with the Content-Type
// sniffed from p if the handler set none (httptest's recorder does the same).
func (r *recorder) Write(p []byte) (int, error) {
	if r.sent == nil {
		if _, has := r.header["Content-Type"]; !has && r.header.Get("Transfer-Encoding") == "" {
			r.header.Set("Content-Type", http.DetectContentType(p))
		}
		r.WriteHeader(http.StatusOK)
	}
	if r.adopted || r.body == nil {
		// The first write (or one after an adopted body, which must stay as it is): a new slice
		// of the size written, later writes grow it.
		r.body, r.adopted = append(bytes.Clone(r.body), p...), false
		return len(p), nil
	}
	r.body = append(r.body, p...)
	return len(p), nil
}

// AdoptBody implements fakerest.BodyAdopter: it takes body as the whole response when nothing
// was written yet.
func (r *recorder) AdoptBody(body []byte) bool {
	if r.sent == nil || r.body != nil {
		return false
	}
	r.body, r.adopted = body, true
	return true
}

// Result returns the response as httptest.ResponseRecorder's Result returns it (without
// trailers): the status written (200 if none), the header as it was then, the body and its
// Content-Length.
func (r *recorder) Result() *http.Response {
	if r.sent == nil {
		r.WriteHeader(http.StatusOK)
	}
	return &http.Response{
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		StatusCode:    r.code,
		Status:        statusLine(r.code),
		Header:        r.sent,
		Body:          io.NopCloser(bytes.NewReader(r.body)),
		ContentLength: contentLength(r.sent.Get("Content-Length")),
	}
}

// statusLine is the Status of a response with code, as httptest writes it ("%03d %s").
func statusLine(code int) string {
	s := strconv.Itoa(code)
	for len(s) < 3 {
		s = "0" + s
	}
	return s + " " + http.StatusText(code)
}

// contentLength parses a Content-Length header as httptest's recorder does: -1 when absent or
// invalid.
func contentLength(cl string) int64 {
	cl = textproto.TrimString(cl)
	if cl == "" {
		return -1
	}
	n, err := strconv.ParseUint(cl, 10, 63)
	if err != nil {
		return -1
	}
	return int64(n)
}
