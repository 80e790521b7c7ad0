package clientgo

import (
	"net/url"
	"strings"
)

// The transport looks at every request's path and query several times (is it static, a watch,
// a cache LIST, a write to one object). strings.Split and url.URL.Query allocated at each look:
// about 500 allocations of a sample-controller harness run. These give the same answers without.

// maxPathSegments is the most segments pathSegments splits into its caller's array: an object's
// subresource, /apis/GROUP/VERSION/namespaces/NS/RESOURCE/NAME/SUB, has eight.
const maxPathSegments = 10

// pathSegments returns strings.Split(strings.Trim(path, "/"), "/"), in buf while it has room.
func pathSegments(path string, buf *[maxPathSegments]string) []string {
	path = strings.Trim(path, "/")
	segs := buf[:0]
	for {
		i := strings.IndexByte(path, '/')
		if i < 0 {
			return append(segs, path)
		}
		segs = append(segs, path[:i])
		path = path[i+1:]
	}
}

// queryValue returns url.ParseQuery(rawQuery)'s first value of key, as URL.Query().Get(key)
// does, without building the map: pairs are read in turn, a pair with a semicolon skipped as
// ParseQuery skips it, and the whole query is parsed by ParseQuery when a pair has an escape
// (a '%' or a '+'), the only case in which its key and value are not its text, or when it has
// so many pairs that ParseQuery may refuse them all (its limit, GODEBUG urlmaxqueryparams, is
// 10,000 by default).
func queryValue(rawQuery, key string) string {
	if strings.Count(rawQuery, "&") >= 1000 {
		v, _ := url.ParseQuery(rawQuery)
		return v.Get(key)
	}
	for q := rawQuery; q != ""; {
		var pair string
		pair, q, _ = strings.Cut(q, "&")
		if strings.Contains(pair, ";") {
			continue
		}
		if strings.ContainsAny(pair, "%+") {
			v, _ := url.ParseQuery(rawQuery)
			return v.Get(key)
		}
		if k, v, _ := strings.Cut(pair, "="); k == key {
			return v
		}
	}
	return ""
}
