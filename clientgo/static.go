package clientgo

import (
	"net/http"
	"net/http/httptest"
	"strings"
)

// Discovery, version, OpenAPI and health requests are answered on the caller's goroutine, at
// once, rather than as calls the driver serves at a step. Their answers are the REST front's
// fixed documents (the resources a run serves are fixed when it starts), so when they are
// answered changes nothing the world or the controller can see. Serving them as calls deadlocks
// controller-runtime: its RESTMapper and its cache's informer map discover a group while
// holding a sync.Mutex, and a goroutine waiting for a sync.Mutex is not durably blocked, so the
// driver's synctest.Wait would wait for it forever while the holder waits for the driver. They
// are counted in Report.Diagnostics.StaticRequests and do not appear in the trace.

// isStatic reports whether a request reads one of the front's fixed documents: GET of /,
// /version, /healthz, /livez, /readyz, /openapi/..., /api, /api/VERSION, /apis, /apis/GROUP or
// /apis/GROUP/VERSION.
func isStatic(req *http.Request) bool {
	if req.Method != http.MethodGet {
		return false
	}
	path := strings.Trim(req.URL.Path, "/")
	if path == "" {
		return true
	}
	var buf [maxPathSegments]string
	segs := pathSegments(path, &buf)
	switch segs[0] {
	case "version", "healthz", "livez", "readyz":
		return len(segs) == 1
	case "openapi":
		return true
	case "api":
		return len(segs) <= 2
	case "apis":
		return len(segs) <= 3
	}
	return false
}

// serveStatic answers a static request on the caller's goroutine. The front's documents are
// read-only once it is built, so this may run while the driver takes a step.
func (t *transport) serveStatic(req, inner *http.Request) *http.Response {
	t.b.staticRequests.Add(1)
	rec := httptest.NewRecorder()
	t.handler.ServeHTTP(rec, inner)
	resp := rec.Result()
	resp.Request = req
	return resp
}
