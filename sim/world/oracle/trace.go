package oracle

import (
	"strconv"
	"strings"
	"time"

	"github.com/informersim/informersim/sim"
)

// Reading the world's narration (package world, narrate.go): the actor of an informer's event is
// "<informer>" (start, stop, synced), "<informer>/reflector", "<informer>/queue" or
// "<informer>/<handler>"; the fields are key=value pairs.

// field returns the value of e's field key.
func field(e sim.Event, key string) (string, bool) {
	for _, f := range e.Fields {
		if f.Key == key {
			return f.Value, true
		}
	}
	return "", false
}

// durField returns e's duration field key (Go syntax, "1.5s"), 0 when absent.
func durField(e sim.Event, key string) time.Duration {
	v, ok := field(e, key)
	if !ok {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return -1
	}
	return d
}

// splitActor splits "inf1/h1" into ("inf1", "h1"); "inf1" gives ("inf1", "").
func splitActor(actor string) (inf, part string) {
	if i := strings.IndexByte(actor, '/'); i >= 0 {
		return actor[:i], actor[i+1:]
	}
	return actor, ""
}

// handlerKinds are the narration kinds of a handler's actor.
var handlerKinds = map[string]bool{
	"register": true, "join": true, "remove": true, "synced": true,
	"OnAdd": true, "OnUpdate": true, "OnDelete": true,
}

// isHandlerEvent reports whether e is narrated by a handler's actor "<informer>/<handler>".
func isHandlerEvent(e sim.Event) bool {
	_, part := splitActor(e.Actor)
	return part != "" && part != "reflector" && part != "queue" && part != "net" && part != "watch" && handlerKinds[e.Kind]
}

// note is one notification in a canonical form, so what the queue buffered for a handler and
// what the handler was then given compare as strings: "add ns/a@2 init", "update ns/a 2->3",
// "delete ns/a@4 tomb".
type note struct {
	call string // add, update, delete
	key  string
	rv   string // the new (or deleted) object's RV
	old  string // an update's old RV
	init bool   // an add's isInInitialList
	tomb bool   // a delete's DeletedFinalStateUnknown
	sync bool   // an update with equal RVs
}

func (n note) String() string {
	switch n.call {
	case "add":
		if n.init {
			return "add " + n.key + "@" + n.rv + " init"
		}
		return "add " + n.key + "@" + n.rv
	case "update":
		return "update " + n.key + " " + n.old + "->" + n.rv
	case "delete":
		if n.tomb {
			return "delete " + n.key + "@" + n.rv + " tomb"
		}
		return "delete " + n.key + "@" + n.rv
	}
	return n.call + " " + n.key
}

// bufferNote reads a queue's "buffer" event: "buffer to=h1,h2 call=add obj=ns/a@2 init=true",
// "call=update obj=ns/a rv=2->3 sync=true", "call=delete obj=tomb(ns/a@3)". It also returns the
// handlers the notification was buffered for.
func bufferNote(e sim.Event) (note, []string) {
	n := note{}
	n.call, _ = field(e, "call")
	obj, _ := field(e, "obj")
	switch n.call {
	case "update":
		n.key = obj
		rv, _ := field(e, "rv")
		n.old, n.rv, _ = strings.Cut(rv, "->")
	default:
		if strings.HasPrefix(obj, "tomb(") && strings.HasSuffix(obj, ")") {
			n.tomb = true
			obj = obj[len("tomb(") : len(obj)-1]
		}
		n.key, n.rv = splitRef(obj)
	}
	n.init = boolField(e, "init")
	n.sync = boolField(e, "sync")
	var to []string
	if v, _ := field(e, "to"); v != "" && v != "-" {
		to = strings.Split(v, ",")
	}
	return n, to
}

// deliveredNote reads a handler's delivery: "OnAdd obj=ns/a rv=2 initial=true", "OnUpdate
// obj=ns/a rv=2->3 sync=true", "OnDelete obj=ns/a rv=3 tombstone=true".
func deliveredNote(e sim.Event) note {
	n := note{}
	n.key, _ = field(e, "obj")
	rv, _ := field(e, "rv")
	switch e.Kind {
	case "OnAdd":
		n.call, n.rv, n.init = "add", rv, boolField(e, "initial")
	case "OnUpdate":
		n.call = "update"
		n.old, n.rv, _ = strings.Cut(rv, "->")
		n.sync = n.old == n.rv
	case "OnDelete":
		n.call, n.rv, n.tomb = "delete", rv, boolField(e, "tombstone")
	}
	return n
}

// cacheRef reads a cache write's "obj=ns/a@3" or "obj=tomb(ns/a@3)".
func cacheRef(e sim.Event) (key, rv string, tomb bool) {
	obj, _ := field(e, "obj")
	if strings.HasPrefix(obj, "tomb(") && strings.HasSuffix(obj, ")") {
		tomb = true
		obj = obj[len("tomb(") : len(obj)-1]
	}
	key, rv = splitRef(obj)
	return key, rv, tomb
}

// splitRef splits "ns/a@3" at its last '@'.
func splitRef(ref string) (key, rv string) {
	if i := strings.LastIndexByte(ref, '@'); i >= 0 {
		return ref[:i], ref[i+1:]
	}
	return ref, ""
}

func boolField(e sim.Event, key string) bool {
	v, _ := field(e, key)
	return v == "true"
}

func intField(e sim.Event, key string) int {
	v, _ := field(e, key)
	n, err := strconv.Atoi(v)
	if err != nil {
		return -1
	}
	return n
}

// handlerList reads "h1,h2" ("-" for none) as a set.
func handlerList(v string) map[string]bool {
	out := map[string]bool{}
	if v == "" || v == "-" {
		return out
	}
	for _, h := range strings.Split(v, ",") {
		out[h] = true
	}
	return out
}
