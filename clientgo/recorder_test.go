package clientgo

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// TestRecorderAnswersAsHTTPTest checks the transport's recorder against
// httptest.ResponseRecorder, which it replaces, on what handlers do: a status and a body, a body
// alone (its type sniffed), several writes, a body handed over and one written after it, a
// header set after the status, nothing at all, an error with its own header, a Content-Length
// that is not a number. client-go must get the same response: status, header, body and length.
func TestRecorderAnswersAsHTTPTest(t *testing.T) {
	adopt := func(w http.ResponseWriter, body []byte) {
		if a, ok := w.(interface{ AdoptBody([]byte) bool }); ok && a.AdoptBody(body) {
			return
		}
		_, _ = w.Write(body)
	}
	handlers := map[string]func(w http.ResponseWriter){
		"status and body": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "2")
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte("{}"))
		},
		"body alone":     func(w http.ResponseWriter) { _, _ = w.Write([]byte("<html>hi</html>")) },
		"several writes": func(w http.ResponseWriter) { _, _ = w.Write([]byte("a")); _, _ = w.Write([]byte("bc")) },
		"empty write":    func(w http.ResponseWriter) { _, _ = w.Write(nil) },
		"nothing":        func(http.ResponseWriter) {},
		"status only":    func(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) },
		"transfer-coding": func(w http.ResponseWriter) {
			w.Header().Set("Transfer-Encoding", "chunked")
			_, _ = w.Write([]byte("x"))
		},
		"handed over": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf")
			w.Header().Set("Content-Length", " 3 ")
			w.WriteHeader(http.StatusOK)
			adopt(w, []byte("k8s"))
		},
		"handed over, then written": func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusOK)
			adopt(w, []byte("ab"))
			_, _ = w.Write([]byte("cd"))
		},
		"written, then handed over": func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("ab"))
			adopt(w, []byte("cd"))
		},
		"header after status": func(w http.ResponseWriter) {
			w.Header().Set("X-A", "1")
			w.WriteHeader(http.StatusConflict)
			w.Header().Set("X-B", "2")
			w.Header().Set("X-A", "changed")
			_, _ = w.Write([]byte("late"))
		},
		"error": func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Content-Length", "x")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"kind":"Status"}`))
		},
	}
	type answer struct {
		Status     string
		StatusCode int
		Proto      string
		Major      int
		Minor      int
		Header     http.Header
		Body       string
		Length     int64
	}
	answerOf := func(r *http.Response) answer {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Fatal(err)
		}
		return answer{r.Status, r.StatusCode, r.Proto, r.ProtoMajor, r.ProtoMinor, r.Header, string(body), r.ContentLength}
	}
	for name, h := range handlers {
		want := httptest.NewRecorder()
		h(want)
		got := newRecorder()
		h(got)
		if g, w := answerOf(got.Result()), answerOf(want.Result()); !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\ngot  %+v\nwant %+v", name, g, w)
		}
	}
	// A handed-over body is taken as it is; what is written after it never reaches its memory,
	// even where the slice has room.
	body := append(make([]byte, 0, 8), "ab"...)
	r := newRecorder()
	r.WriteHeader(http.StatusOK)
	if !r.AdoptBody(body) {
		t.Fatal("the recorder did not take the body")
	}
	_, _ = r.Write([]byte("cd"))
	if string(body[:4]) != "ab\x00\x00" || string(r.body) != "abcd" {
		t.Errorf("after a write, the handed-over body's memory holds %q and the response %q", body[:4], r.body)
	}
}

// TestReadBodyIsReadAll checks readBody against io.ReadAll: bodies of several sizes, with their
// size, without it, and with a size that is wrong either way, read in small pieces or at once;
// a reader's error is returned as ReadAll returns it.
func TestReadBodyIsReadAll(t *testing.T) {
	for _, n := range []int{0, 1, 7, 511, 512, 513, 4096, 70000} {
		data := bytes.Repeat([]byte("0123456789"), n/10+1)[:n]
		for _, size := range []int64{int64(n), -1, 0, int64(n) / 2, int64(n) + 5} {
			for _, half := range []bool{false, true} {
				var r io.Reader = bytes.NewReader(data)
				if half {
					r = iotest.HalfReader(r)
				}
				got, err := readBody(r, size)
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("%d bytes, size %d, half %v: %q, %v", n, size, half, got, err)
				}
			}
		}
	}
	boom := errors.New("boom")
	for _, size := range []int64{-1, 5, 100} {
		r := io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom))
		got, err := readBody(r, size)
		want, wantErr := io.ReadAll(io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom)))
		if !errors.Is(err, boom) || !errors.Is(wantErr, boom) || !bytes.Equal(got, want) {
			t.Fatalf("size %d: %q, %v; ReadAll %q, %v", size, got, err, want, wantErr)
		}
	}
}
