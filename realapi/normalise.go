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
// which other writers move, so only its order against the sequence's own writes is compared.
func (r *ranks) list(rv string) string {
	if rv == "" {
		return ""
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return "<not a number: " + rv + ">"
	}
	if n < r.max {
		return "<list-rv older than the sequence's writes>"
	}
	return "<list-rv>"
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
func Normalise(resp Response, r *ranks, volatile bool) any {
	out := map[string]any{"code": resp.Code}
	if len(resp.Warnings) > 0 {
		w := append([]string(nil), resp.Warnings...)
		sort.Strings(w)
		out["warnings"] = w
	}
	if resp.Events != nil || (resp.Code == 200 && resp.Body == nil) {
		evs := make([]any, len(resp.Events))
		for i, ev := range resp.Events {
			obj, _ := ev["object"].(map[string]any)
			evs[i] = map[string]any{"type": ev["type"], "object": normaliseObject(obj, r, volatile, ev["type"] == "BOOKMARK")}
		}
		out["events"] = evs
		out["ended"] = resp.Ended
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
	out["body"] = normaliseObject(m, r, volatile, false)
	return out
}

// normaliseObject normalises an object, a list, a table, a Status or a bookmark's object.
func normaliseObject(m map[string]any, r *ranks, volatile, bookmark bool) map[string]any {
	if m == nil {
		return nil
	}
	kind, _ := m["kind"].(string)
	listLike := bookmark || strings.HasSuffix(kind, "List") || kind == "Table"
	// The object's own revision is ranked before any it refers to.
	md, _ := m["metadata"].(map[string]any)
	rvToken := ""
	if rv, ok := md["resourceVersion"].(string); ok {
		switch {
		case listLike:
			rvToken = r.list(rv)
		case volatile:
			rvToken = "<rv>"
		default:
			rvToken = r.object(rv)
		}
	}
	out := normaliseValue(m, r, volatile).(map[string]any)
	if md != nil {
		omd := out["metadata"].(map[string]any)
		if _, ok := md["resourceVersion"].(string); ok {
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
			oi[i] = normaliseObject(im, r, volatile, false)
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
				out[k] = r.object(s) // metadata's is set again by normaliseObject
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
