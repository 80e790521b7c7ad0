package timeline

import (
	"strconv"
	"strings"
	"time"
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

// fieldTypes types the trace's field keys. A key not listed stays a string, so a new field is
// never lost, only untyped until it is listed here (and in docs/run.schema.json).
var fieldTypes = map[string]fieldType{
	"at": typeInt, "code": typeInt, "items": typeInt, "len": typeInt, "limit": typeInt,
	"lost": typeInt, "n": typeInt, "replica": typeInt, "requeues": typeInt, "snapshot": typeInt,
	"watch": typeInt, "watches": typeInt,

	"bookmarks": typeBool, "init": typeBool, "initial": typeBool, "sendInitialEvents": typeBool,
	"sync": typeBool, "tombstone": typeBool,

	"by": typeDuration, "check": typeDuration, "delay": typeDuration, "not-ready": typeDuration,
	"requested": typeDuration, "resync": typeDuration, "timeout": typeDuration,

	"to": typeList, "due": typeList, "deltas": typeList,

	"rv":  typeRV,
	"obj": typeObject,
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
		if v == "-" || v == "" {
			return []string{}, nil
		}
		return strings.Split(v, ","), nil
	case typeRV:
		if v == "" {
			// A request without a resourceVersion (the most recent, from any replica).
			return "", nil
		}
		if from, to, ok := strings.Cut(v, "->"); ok {
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

// parseObjectRef reads an "obj" value; withResource says it starts with the resource (the
// apiserver's references do).
func parseObjectRef(v string, withResource bool) (ObjectRef, error) {
	var r ObjectRef
	if inner, ok := strings.CutPrefix(v, "tomb("); ok {
		inner, ok = strings.CutSuffix(inner, ")")
		if !ok {
			return r, errBadValue
		}
		r.Tombstone = true
		v = inner
	}
	if key, rv, ok := strings.Cut(v, "@"); ok {
		n, err := strconv.ParseInt(rv, 10, 64)
		if err != nil {
			return r, err
		}
		r.RV = &n
		v = key
	}
	// The apiserver names the resource first: "pods/default/a"; a cluster-scoped object's
	// reference has no namespace ("nodes/n1" from the apiserver, "n1" from an informer).
	if withResource {
		res, rest, ok := strings.Cut(v, "/")
		if !ok || res == "" {
			return r, errBadValue
		}
		r.Resource, v = res, rest
	}
	if n := strings.Count(v, "/"); v == "" || n > 1 || strings.HasPrefix(v, "/") || strings.HasSuffix(v, "/") {
		return r, errBadValue
	}
	r.Key = v
	return r, nil
}
