package realapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Side is one of the two servers compared: a base URL and a client for it, and the way to
// force a compaction of its store at a resourceVersion.
type Side struct {
	// Name is "real" or "informersim"; it names the side in reports.
	Name string
	// Base is the server's URL without a trailing slash (https://127.0.0.1:PORT).
	Base string
	// Client sends the requests (the real side's carries the admin's client certificate).
	Client *http.Client
	// Compact compacts the side's store at rev, a resourceVersion it answered: older
	// revisions are gone, so a watch or an exact list from one of them is 410.
	Compact func(ctx context.Context, rev string) error
	// Close releases what the side holds (the in-process server); nil when nothing.
	Close func()
}

// Request is one HTTP request, its path relative to the side's base.
type Request struct {
	Method, Path, ContentType, Accept, Body string
}

// Response is what a side answered: the code, the Warning headers, the body; for a watch, the
// events read (each a decoded JSON object, "type" and "object") and how the stream ended.
type Response struct {
	Code     int
	Warnings []string
	Body     []byte
	Events   []map[string]any
	// Ended says the server ended the watch stream before the events wanted were read.
	Ended bool
}

// requestTimeout bounds one request (a watch is bounded by its own wait).
const requestTimeout = 30 * time.Second

// Do sends req and reads the whole answer.
func (s *Side) Do(ctx context.Context, req Request) (Response, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	resp, err := s.send(ctx, req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s %s: reading the answer: %w", s.Name, req.Method, req.Path, err)
	}
	return Response{Code: resp.StatusCode, Warnings: resp.Header.Values("Warning"), Body: body}, nil
}

func (s *Side) send(ctx context.Context, req Request) (*http.Response, error) {
	if req.Method == "" || !strings.HasPrefix(req.Path, "/") {
		return nil, fmt.Errorf("realapi: a request needs a method and a path starting with /: %q %q", req.Method, req.Path)
	}
	var body io.Reader
	if req.Body != "" {
		body = strings.NewReader(req.Body)
	}
	r, err := http.NewRequestWithContext(ctx, req.Method, s.Base+req.Path, body)
	if err != nil {
		return nil, err
	}
	if req.ContentType != "" {
		r.Header.Set("Content-Type", req.ContentType)
	} else if req.Body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	if req.Accept != "" {
		r.Header.Set("Accept", req.Accept)
	} else {
		r.Header.Set("Accept", "application/json")
	}
	r.Header.Set("User-Agent", "realapi/v1.37.2")
	resp, err := s.Client.Do(r)
	if err != nil {
		return nil, fmt.Errorf("%s %s %s: %w", s.Name, req.Method, req.Path, err)
	}
	return resp, nil
}

// Watch is an open watch stream: its events arrive on a channel fed by one goroutine that ends
// with the stream.
type Watch struct {
	code     int
	warnings []string
	body     []byte // the answer, when it was not a stream (an error before the stream)
	events   chan map[string]any
	done     chan struct{}
	cancel   context.CancelFunc
	readErr  error
}

// OpenWatch starts a watch request and returns once the server answered its headers.
func (s *Side) OpenWatch(ctx context.Context, req Request) (*Watch, error) {
	ctx, cancel := context.WithCancel(ctx)
	resp, err := s.send(ctx, req)
	if err != nil {
		cancel()
		return nil, err
	}
	w := &Watch{code: resp.StatusCode, warnings: resp.Header.Values("Warning"), events: make(chan map[string]any, 1024), done: make(chan struct{}), cancel: cancel}
	if resp.StatusCode != http.StatusOK {
		w.body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		close(w.events)
		close(w.done)
		return w, nil
	}
	go func() {
		defer close(w.done)
		defer close(w.events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			var ev map[string]any
			if err := json.Unmarshal(line, &ev); err != nil {
				w.readErr = fmt.Errorf("a watch event that is not JSON: %q", line)
				return
			}
			w.events <- ev
		}
		if err := sc.Err(); err != nil && !errors.Is(err, context.Canceled) {
			w.readErr = err
		}
	}()
	return w, nil
}

// Read waits for want events (progress bookmarks not counted), the end of the stream or the
// wait, whichever comes first; then, when linger is set, it goes on reading for linger; then it
// stops the watch and returns what was read.
func (w *Watch) Read(want int, wait, linger time.Duration) Response {
	out := Response{Code: w.code, Warnings: w.warnings, Body: w.body}
	if w.code != http.StatusOK {
		return out
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for got := 0; got < want; {
		select {
		case ev, ok := <-w.events:
			if !ok {
				out.Ended = true
				w.Stop()
				return out
			}
			out.Events = append(out.Events, ev)
			if !IsProgressBookmark(ev) {
				got++
			}
		case <-timer.C:
			w.Stop()
			return out
		}
	}
	if linger > 0 {
		lingered := time.NewTimer(linger)
		defer lingered.Stop()
		for reading := true; reading; {
			select {
			case ev, ok := <-w.events:
				if !ok {
					out.Ended = true
					w.Stop()
					return out
				}
				out.Events = append(out.Events, ev)
			case <-lingered.C:
				reading = false
			}
		}
	}
	// An ERROR event ends a stream: wait for its end, so that both sides say so.
	if n := len(out.Events); n > 0 && out.Events[n-1]["type"] == "ERROR" {
		select {
		case _, ok := <-w.events:
			out.Ended = !ok
		case <-time.After(wait):
		}
	}
	w.Stop()
	return out
}

// Stop ends the watch and waits for its reader.
func (w *Watch) Stop() {
	w.cancel()
	<-w.done
}
