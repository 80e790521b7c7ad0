package rest

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"sync"
)

// Warnings: kube-apiserver answers a request with Warning headers (RFC 7234, code 299, agent
// "-") for what it accepted but would have the client know, such as the fields it dropped from a
// custom resource under fieldValidation=Warn, its default; client-go hands them to its warning
// handler (kubectl prints them). The front collects the warnings of a write while serving it
// (AddWarning, for the seam's Admission, Patchers and FieldTracker) and sends them with the
// answer.

// maxWarnings bounds the warnings of one request (kube-apiserver truncates past a few KiB).
const maxWarnings = 100

type warningsKey struct{}

// warnings are one request's, in the order added, without duplicates.
type warnings struct {
	mu    sync.Mutex
	texts []string
}

// withWarnings returns r with a collector of warnings in its context.
func withWarnings(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), warningsKey{}, &warnings{}))
}

// AddWarning adds a warning to the answer of the request whose context ctx is (a context the
// front handed to Admission, a Patcher or a FieldTracker); elsewhere it does nothing.
func AddWarning(ctx context.Context, text string) {
	ws, _ := ctx.Value(warningsKey{}).(*warnings)
	if ws == nil || text == "" {
		return
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if len(ws.texts) < maxWarnings && !slices.Contains(ws.texts, text) {
		ws.texts = append(ws.texts, text)
	}
}

// writeWarnings sets the Warning headers of the warnings collected for r.
func writeWarnings(w http.ResponseWriter, r *http.Request) {
	ws, _ := r.Context().Value(warningsKey{}).(*warnings)
	if ws == nil {
		return
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, t := range ws.texts {
		w.Header().Add("Warning", "299 - "+strconv.Quote(t))
	}
}
