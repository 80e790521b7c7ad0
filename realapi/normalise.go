package realapi

import (
	"encoding/json"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// ranks maps one side's resourceVersions, within one sequence, to their rank in order of first
// appearance ("rv1", "rv2", ...), so that two servers whose revisions differ (the real one
// counts every write of the cluster) compare equal when their writes are in the same order.
type ranks struct {
	byRV map[string]string
	max  uint64 // the greatest ranked revision
}

func newRanks() *ranks { return &ranks{byRV: map[string]string{}} }

// object is the token of an object's resourceVersion.
func (r *ranks) object(rv string) string {
	if rv == "" {
		return ""
	}
	if t, ok := r.byRV[rv]; ok {
		return t
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return "<not a number: " + rv + ">"
	}
	t := "rv" + strconv.Itoa(len(r.byRV)+1)
	r.byRV[rv] = t
	r.max = max(r.max, n)
	return t
}

// list is the token of a list's or bookmark's resourceVersion: a revision of the whole store,
// which other writers move, so only its order against the sequence's own writes (floor, the
// greatest revision ranked before the answer) is compared. It is never ranked itself: a list
// newer than every write of the sequence (writes elsewhere moved the store) would otherwise
// raise the floor above the sequence's writes, and an exact list at the sequence's last write,
// which kube-apiserver answers at exactly that revision, would look older than them.
func (r *ranks) list(rv string, floor uint64) string {
	if rv == "" {
		return ""
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return "<not a number: " + rv + ">"
	}
	if n < floor {
		return "<list-rv older than the sequence's writes>"
	}
	return "<list-rv>"
}

// revision is rv as a number, 0 when it is none.
func revision(rv any) uint64 {
	s, _ := rv.(string)
	n, _ := strconv.ParseUint(s, 10, 64)
	return n
}

// timeFields hold timestamps, which differ between any two runs.
var timeFields = map[string]bool{
	"creationTimestamp": true, "deletionTimestamp": true, "time": true, "lastTransitionTime": true,
	"lastUpdateTime": true, "eventTime": true, "firstTimestamp": true, "lastTimestamp": true,
	"deprecatedFirstTimestamp": true, "deprecatedLastTimestamp": true, "lastObservedTime": true,
	"renewTime": true, "acquireTime": true, "lastHeartbeatTime": true,
}

var (
	uuidPattern   = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	numberPattern = regexp.MustCompile(`\b[0-9]{1,19}\b`)
)

// Normalise is resp in the form compared: code, warnings, the body or the watch events, with
// uids, times, generated names and resourceVersions replaced (doc.go). volatile drops what
// controllers write asynchronously (status, resourceVersion, their annotations and managers).
// A list's revision is checked against every revision ranked so far; a watch's events are
// checked in stream order (NormaliseWatch).
func Normalise(resp Response, r *ranks, volatile bool) any {
	return normalise(resp, r, volatile, r.max)
}

// NormaliseWatch is Normalise for a watch opened when floor was the greatest revision ranked:
// the writes a watch step makes while it is open are ranked before its events are read, and a
// bookmark only has to be no older than what came before it in the stream.
func NormaliseWatch(resp Response, r *ranks, volatile bool, floor uint64) any {
	return normalise(resp, r, volatile, floor)
}

// initialEventsEnd is the annotation of the bookmark that ends a watch-list's initial events.
const initialEventsEnd = "k8s.io/initial-events-end"

func normalise(resp Response, r *ranks, volatile bool, floor uint64) any {
	out := map[string]any{"code": resp.Code}
	if len(resp.Warnings) > 0 {
		w := append([]string(nil), resp.Warnings...)
		sort.Strings(w)
		out["warnings"] = w
	}
	if resp.Events != nil || (resp.Code == 200 && resp.Body == nil) {
		normaliseEvents(out, resp, r, volatile, floor)
		return out
	}
	var body any
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		out["body"] = "<not JSON: " + strings.TrimSpace(string(resp.Body)) + ">"
		return out
	}
	m, ok := body.(map[string]any)
	if !ok {
		out["body"] = body
		return out
	}
	out["body"] = normaliseObject(m, r, volatile, false, r.max)
	return out
}

// normaliseEvents puts a watch's events into out, in stream order. Each bookmark's revision is
// checked against floor and every event before it. A plain bookmark (not the one ending a
// watch-list's initial events) that passes is counted under progressBookmarks instead of being
// kept in place: kube-apiserver sends one when its watch cache's one-second dispatch tick finds
// the watcher due and the cache's revision newer than what the watch sent, so how many fall
// within a read, and where, is its clock's (IsProgressBookmark). One that fails stays in
// place, its token saying so, and differs.
func normaliseEvents(out map[string]any, resp Response, r *ranks, volatile bool, floor uint64) {
	evs := make([]any, 0, len(resp.Events))
	progress := 0
	for _, ev := range resp.Events {
		obj, _ := ev["object"].(map[string]any)
		bookmark := ev["type"] == "BOOKMARK"
		n := normaliseObject(obj, r, volatile, bookmark, floor)
		if md, ok := obj["metadata"].(map[string]any); ok && !bookmark {
			floor = max(floor, revision(md["resourceVersion"]))
		}
		if nmd, _ := n["metadata"].(map[string]any); IsProgressBookmark(ev) && nmd["resourceVersion"] == "<list-rv>" {
			progress++
			continue
		}
		evs = append(evs, map[string]any{"type": ev["type"], "object": n})
	}
	out["events"] = evs
	out["progressBookmarks"] = progress
	out["ended"] = resp.Ended
}

// IsProgressBookmark says a watch event is a bookmark that does not end a watch-list's initial
// events: it only tells the revision the stream has reached.
func IsProgressBookmark(ev map[string]any) bool {
	if ev["type"] != "BOOKMARK" {
		return false
	}
	obj, _ := ev["object"].(map[string]any)
	md, _ := obj["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	return ann[initialEventsEnd] != "true"
}

// normaliseObject normalises an object, a list, a table, a Status or a bookmark's object; a
// list's or bookmark's revision is checked against floor (ranks.list).
func normaliseObject(m map[string]any, r *ranks, volatile, bookmark bool, floor uint64) map[string]any {
	if m == nil {
		return nil
	}
	kind, _ := m["kind"].(string)
	listLike := bookmark || strings.HasSuffix(kind, "List") || kind == "Table"
	// The object's own revision is ranked before any it refers to.
	md, _ := m["metadata"].(map[string]any)
	rvToken := ""
	rv, hasRV := md["resourceVersion"].(string)
	if hasRV {
		switch {
		case listLike:
			rvToken = r.list(rv, floor)
		case volatile:
			rvToken = "<rv>"
		default:
			rvToken = r.object(rv)
		}
	}
	// Its metadata without the revision just tokenised: normaliseValue ranks every revision it
	// meets as an object's, and a list's is not one.
	in := m
	if hasRV {
		in = make(map[string]any, len(m))
		for k, v := range m {
			in[k] = v
		}
		mdc := make(map[string]any, len(md))
		for k, v := range md {
			if k != "resourceVersion" {
				mdc[k] = v
			}
		}
		in["metadata"] = mdc
	}
	out := normaliseValue(in, r, volatile).(map[string]any)
	if md != nil {
		omd := out["metadata"].(map[string]any)
		if hasRV {
			omd["resourceVersion"] = rvToken
		}
		if c, ok := md["continue"].(string); ok && c != "" {
			omd["continue"] = "<continue>"
		}
		if gen, ok := md["generateName"].(string); ok && gen != "" {
			if name, ok := md["name"].(string); ok && strings.HasPrefix(name, gen) && len(name) > len(gen) {
				omd["name"] = gen + "<random>"
			}
		}
		if volatile {
			volatileMetadata(omd)
		}
	}
	if volatile {
		delete(out, "status")
	}
	if kind == "Status" {
		if msg, ok := out["message"].(string); ok {
			out["message"] = normaliseMessage(msg, r)
		}
		if d, ok := out["details"].(map[string]any); ok {
			if name, ok := d["name"].(string); ok {
				d["name"] = normaliseMessage(name, r)
			}
		}
	}
	if kind == "Table" {
		normaliseTable(out)
	}
	if items, ok := m["items"].([]any); ok {
		oi := make([]any, len(items))
		for i, it := range items {
			im, _ := it.(map[string]any)
			oi[i] = normaliseObject(im, r, volatile, false, floor)
		}
		out["items"] = oi
	}
	return out
}

// volatileMetadata drops what the workload controllers add to an object's metadata.
func volatileMetadata(md map[string]any) {
	if a, ok := md["annotations"].(map[string]any); ok {
		delete(a, "deployment.kubernetes.io/revision")
		if len(a) == 0 {
			delete(md, "annotations")
		}
	}
	if mf, ok := md["managedFields"].([]any); ok {
		var keep []any
		for _, e := range mf {
			em, _ := e.(map[string]any)
			if em["subresource"] == "status" && em["operation"] == "Update" {
				continue // a controller's status write
			}
			keep = append(keep, e)
		}
		md["managedFields"] = keep
	}
}

// normaliseValue replaces uids and times anywhere in v; a reference's resourceVersion (an
// event's involvedObject) is ranked as an object's.
func normaliseValue(v any, r *ranks, volatile bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys) // revisions are ranked in a fixed order
		for _, key := range keys {
			val := x[key]
			k := uuidPattern.ReplaceAllString(key, "<uid>") // managedFields' keys name uids
			switch s, isString := val.(string); {
			case k == "uid" && isString && s != "":
				out[k] = "<uid>"
			case timeFields[k] && isString && s != "":
				out[k] = "<time>"
			case k == "resourceVersion" && isString && s != "" && !volatile:
				out[k] = r.object(s) // an object's metadata or a reference (involvedObject)
			case k == "resourceVersion" && isString && s != "":
				out[k] = "<rv>"
			case k == "items":
				out[k] = val // normaliseObject does the items
			default:
				out[k] = normaliseValue(val, r, volatile)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normaliseValue(e, r, volatile)
		}
		return out
	}
	return v
}

// normaliseMessage replaces uids and the revisions ranked so far in an error message; other
// numbers that look like revisions (a compacted revision) become N.
func normaliseMessage(msg string, r *ranks) string {
	msg = uuidPattern.ReplaceAllString(msg, "<uid>")
	return numberPattern.ReplaceAllStringFunc(msg, func(n string) string {
		if t, ok := r.byRV[n]; ok {
			return t
		}
		if len(n) >= 2 {
			return "N"
		}
		return n
	})
}

// normaliseTable replaces the cells of age columns (their text counts wall time).
func normaliseTable(t map[string]any) {
	cols, _ := t["columnDefinitions"].([]any)
	var ages []int
	for i, c := range cols {
		cm, _ := c.(map[string]any)
		if cm["type"] == "date" || cm["name"] == "Age" || cm["name"] == "Last Seen" || cm["name"] == "First Seen" {
			ages = append(ages, i)
		}
	}
	rows, _ := t["rows"].([]any)
	for _, row := range rows {
		rm, _ := row.(map[string]any)
		cells, _ := rm["cells"].([]any)
		for _, i := range ages {
			if i < len(cells) && cells[i] != nil {
				cells[i] = "<age>"
			}
		}
	}
}
