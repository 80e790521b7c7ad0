package record

import (
	"strconv"
	"strings"
	"time"

	"github.com/informersim/informersim/sim/world/narration"
)

// fieldType is the JSON type a trace field's value is given in the document.
type fieldType int

const (
	typeString   fieldType = iota
	typeInt                // a JSON integer
	typeBool               // true or false
	typeDuration           // a Go duration string ("1.5s"), kept as text
	typeList               // a comma-separated list of names; "-" is the empty list
	typeRV                 // a resourceVersion, "" (none given), or an update's "a->b" as {"from": a, "to": b}
	typeObject             // an object reference, as {"key", "resource", "rv", "tombstone"}
)

// fieldTypes types the trace's field keys (package sim/world/narration declares the world's; the
// others are the apiserver's requests, faults and the scenarios' workqueues). A key not listed
// stays a string, so a new field is never lost, only untyped until it is listed here (and in
// docs/run.schema.json).
var fieldTypes = map[string]fieldType{
	"at": typeInt, narration.FieldCode: typeInt, narration.FieldItems: typeInt, "len": typeInt, "limit": typeInt,
	narration.FieldLost: typeInt, narration.FieldN: typeInt, "replica": typeInt, "requeues": typeInt,
	narration.FieldSnapshot: typeInt, narration.FieldWatch: typeInt, "watches": typeInt,

	"bookmarks": typeBool, narration.FieldInit: typeBool, narration.FieldInitial: typeBool,
	"sendInitialEvents": typeBool, narration.FieldSync: typeBool, narration.FieldTombstone: typeBool,
	narration.FieldHosted: typeBool,

	"by": typeDuration, narration.FieldCheck: typeDuration, narration.FieldDelay: typeDuration,
	"not-ready": typeDuration, narration.FieldRequested: typeDuration, narration.FieldResync: typeDuration,
	"timeout": typeDuration,

	narration.FieldTo: typeList, narration.FieldDue: typeList, narration.FieldDeltas: typeList,

	narration.FieldRV:  typeRV,
	narration.FieldObj: typeObject,
}

// ObjectRef is an "obj" field as a typed value: "pods/default/a" (the apiserver's, with the
// resource), "default/a@2" (an informer's, with the resourceVersion it holds) or
// "tomb(default/b@3)" (a DeletedFinalStateUnknown carrying the last state the cache held).
type ObjectRef struct {
	Key       string `json:"key"`
	Resource  string `json:"resource,omitempty"`
	RV        *int64 `json:"rv,omitempty"`
	Tombstone bool   `json:"tombstone,omitempty"`
}

// RVChange is an update's "a->b": the resourceVersion it replaced and the new one.
type RVChange struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// typedValue converts one field; a value that does not parse as its key's type is an error
// (the trace and this table disagree, which must not pass unnoticed).
func typedValue(key, v string) (any, error) {
	switch fieldTypes[key] {
	case typeInt:
		return strconv.ParseInt(v, 10, 64)
	case typeBool:
		return strconv.ParseBool(v)
	case typeDuration:
		if _, err := time.ParseDuration(v); err != nil {
			return nil, err
		}
		return v, nil
	case typeList:
		if key == narration.FieldDeltas {
			return strings.Split(v, ","), nil
		}
		return append([]string{}, narration.ParseHandlerList(v)...), nil
	case typeRV:
		if v == "" {
			// A request without a resourceVersion (the most recent, from any replica).
			return "", nil
		}
		if strings.Contains(v, "->") {
			from, to := narration.ParseRVChange(v)
			f, err1 := strconv.ParseInt(from, 10, 64)
			t, err2 := strconv.ParseInt(to, 10, 64)
			if err1 != nil || err2 != nil {
				return nil, errBadValue
			}
			return RVChange{From: f, To: t}, nil
		}
		return strconv.ParseInt(v, 10, 64)
	case typeObject:
		return parseObjectRef(v, false)
	}
	return v, nil
}

type valueError string

func (e valueError) Error() string { return string(e) }

const errBadValue = valueError("not a value of its field's type")

// parseObjectRef reads an "obj" value (narration.Ref's form, or narration.CommitRef's for the
// apiserver's commits: withResource) and checks it: a key with at most one '/', a numeric
// resourceVersion when there is one.
func parseObjectRef(v string, withResource bool) (ObjectRef, error) {
	var r ObjectRef
	if strings.HasPrefix(v, "tomb(") != strings.HasSuffix(v, ")") {
		return r, errBadValue
	}
	key, rv, tomb := narration.ParseRef(v)
	r.Tombstone = tomb
	if rv != "" || strings.Contains(v, "@") {
		n, err := strconv.ParseInt(rv, 10, 64)
		if err != nil {
			return r, err
		}
		r.RV = &n
	}
	if withResource {
		res, _, ok := strings.Cut(key, "/")
		if !ok || res == "" {
			return r, errBadValue
		}
		r.Resource, key = res, narration.CommitKey(key)
	}
	if n := strings.Count(key, "/"); key == "" || n > 1 || strings.HasPrefix(key, "/") || strings.HasSuffix(key, "/") {
		return r, errBadValue
	}
	r.Key = key
	return r, nil
}
