package scenarios

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/informersim/informersim/sim/world"
)

// Directive is one parsed line of a scenario file: a command, its arguments and the input lines
// under it (the text between the directive and its "----"). Its String form parses back to an
// equal Directive (ParseDirective), so a run built in code can be written out as a file.
type Directive struct {
	// Cmd is the directive's name: "informer", "create", "run"...
	Cmd string
	// Args are the arguments in the order written, as datadriven reads them
	// (key, key=value or key=(v1, v2)).
	Args []datadriven.CmdArg
	// Input is the text under the directive, before "----"; most directives take none.
	Input string
	// Op is set for the directives that are world ops (every world.OpKind but sleep: the
	// writes and the faults): the op world.Parse read from the line.
	Op *world.Op
}

// argKind is what an argument's value must look like.
type argKind int

const (
	argString argKind = iota + 1
	argInt            // a non-negative decimal integer
	argDur            // a Go duration, not negative: 1s, 250ms
	argBool           // true or false; a bare key means true
	argList           // one value or (v1, v2, ...)
	argEnum           // one of spec.enum
	argFlag           // a bare key, no value
)

type argSpec struct {
	key      string
	kind     argKind
	required bool
	enum     []string
}

type directiveSpec struct {
	name string
	args []argSpec
	// text: the arguments are free words (caption).
	text bool
	// op: the line is a world op (world.Parse reads it).
	op bool
	// input: the directive reads its input block (content JSON for create and update).
	input bool
	help  string
}

// opDirectives are the directives that are world ops: every kind but sleep (a scenario moves
// time with run). A new kind of op is a new directive without a change here.
var opDirectives = func() []string {
	var names []string
	for _, k := range world.OpKinds() {
		if k != world.OpSleep {
			names = append(names, k.String())
		}
	}
	return names
}()

// specs lists every directive of the language, in the order the package documentation gives them.
var specs = func() map[string]*directiveSpec {
	m := map[string]*directiveSpec{}
	add := func(d *directiveSpec) { m[d.name] = d }
	str := func(k string) argSpec { return argSpec{key: k, kind: argString} }
	req := func(a argSpec) argSpec { a.required = true; return a }
	dur := func(k string) argSpec { return argSpec{key: k, kind: argDur} }
	num := func(k string) argSpec { return argSpec{key: k, kind: argInt} }
	boolean := func(k string) argSpec { return argSpec{key: k, kind: argBool} }
	enum := func(k string, vals ...string) argSpec { return argSpec{key: k, kind: argEnum, enum: vals} }
	list := func(k string) argSpec { return argSpec{key: k, kind: argList} }
	flag := func(k string) argSpec { return argSpec{key: k, kind: argFlag} }

	// The world and the story.
	add(&directiveSpec{name: "world", help: "build the world (first directive only)", args: []argSpec{
		num("seed"), enum("policy", "random", "fifo", "pct"), num("pct-depth"), num("replicas"),
		dur("min-latency"), dur("max-latency"), dur("bookmark-interval"), dur("compaction-interval"),
		num("watch-cache-history"), num("max-watch-events"), num("max-in-flight"), dur("rv-wait"),
	}})
	add(&directiveSpec{name: "legend", help: "print the legend of the narration"})
	add(&directiveSpec{name: "caption", text: true, help: "a caption between phases: the words after the directive"})

	// Objects and faults: the world's ops.
	for _, name := range opDirectives {
		add(&directiveSpec{name: name, op: true, input: name == "create" || name == "update",
			help: "a world op (world.Parse syntax: a write or a fault); create and update take optional content JSON as input"})
	}

	add(&directiveSpec{name: "populate", args: []argSpec{req(num("n")), str("prefix"), str("ns"), str("label")},
		help: "create n pods at once (their n writes are summarised in one line)"})

	// Informers and handlers.
	add(&directiveSpec{name: "informer", help: "build an informer (not started)", args: []argSpec{
		req(str("name")), str("resource"), str("ns"), str("labels"), str("fields"), dur("resync"),
		enum("queue", "realfifo", "realfifo-nonatomic", "deltafifo"), boolean("batch"), enum("mode", "list-watch", "watch-list"),
		enum("transform", "drop-annotations", "drop-content"), list("indexers"),
	}})
	add(&directiveSpec{name: "factory", help: "a SharedInformerFactory (informer.md §9) whose informers the world hosts", args: []argSpec{
		req(str("name")), str("ns"), dur("resync"), list("resources"),
	}})
	add(&directiveSpec{name: "for-resource", args: []argSpec{req(str("factory")), req(str("resource"))},
		help: "ask a factory for a resource's informer (created on first use, shared after)"})
	add(&directiveSpec{name: "start", args: []argSpec{req(str("informer"))}, help: "start an informer"})
	add(&directiveSpec{name: "stop", args: []argSpec{req(str("informer"))}, help: "stop an informer"})
	add(&directiveSpec{name: "restart", args: []argSpec{req(str("informer")), req(str("as"))},
		help: "stop an informer and start a new one with the same options and handlers, named as"})
	add(&directiveSpec{name: "handler", help: "register a handler (late join after start)", args: []argSpec{
		req(str("informer")), req(str("name")), dur("resync"), dur("slow"), str("filter"), flag("mutates"),
	}})
	add(&directiveSpec{name: "remove-handler", args: []argSpec{req(str("informer")), req(str("name"))},
		help: "unregister a handler; its buffered notifications are dropped"})
	add(&directiveSpec{name: "add-indexers", args: []argSpec{req(str("informer")), req(list("indexers"))},
		help: "add indexers to an informer, before or after start"})
	add(&directiveSpec{name: "workqueue", help: "a rate-limited workqueue fed by a handler, with workers", args: []argSpec{
		req(str("name")), req(str("informer")), num("workers"), dur("work"), num("fail"),
	}})
	add(&directiveSpec{name: "controller", help: "a controller: handler, workqueue, workers reconciling pods into configmaps", args: []argSpec{
		req(str("name")), req(str("informer")), num("workers"), dur("work"),
	}})

	// Time and scheduling.
	add(&directiveSpec{name: "run", help: "run the simulation", args: []argSpec{
		dur("for"), enum("until", "converged", "synced", "event"), str("informer"), str("event"), dur("budget"), num("steps"), list("show"),
	}})
	add(&directiveSpec{name: "generate", help: "start a seeded random workload", args: []argSpec{
		num("ops"), boolean("disruptions"), boolean("faults"), dur("max-interval"),
	}})
	add(&directiveSpec{name: "faults", args: []argSpec{req(boolean("on"))}, help: "turn the fault points on or off"})

	// Inspection.
	add(&directiveSpec{name: "cache", args: []argSpec{req(str("informer")), str("index"), str("value"), flag("full")},
		help: "an informer's cache (or one index value)"})
	add(&directiveSpec{name: "log", args: []argSpec{req(str("handler")), flag("new")}, help: "what a handler was told"})
	add(&directiveSpec{name: "queue", args: []argSpec{str("informer"), str("workqueue")}, help: "an informer's queue and handler buffers, or a workqueue"})
	add(&directiveSpec{name: "rv", args: []argSpec{req(str("informer"))}, help: "the Reflector's last synced RV and the apiserver's revision"})
	add(&directiveSpec{name: "requests", args: []argSpec{str("client"), flag("all")}, help: "the apiserver's request record (new ones unless all)"})
	add(&directiveSpec{name: "objects", args: []argSpec{str("resource"), str("ns")}, help: "the apiserver's objects"})
	add(&directiveSpec{name: "oracles", help: "the oracles' verdicts now"})
	return m
}()

// DirectiveNames returns every directive name, sorted.
func DirectiveNames() []string {
	names := make([]string, 0, len(specs))
	for n := range specs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ParseDirective reads one directive line (and its input block) of the scenario language. It
// never panics; a malformed line gets an error saying which directive and what was expected.
func ParseDirective(line, input string) (Directive, error) {
	if strings.ContainsAny(line, "\n\r") {
		return Directive{}, errors.New("scenarios: expected one directive line, got a line break in it")
	}
	cmd, args, err := datadriven.ParseLine(line)
	if err != nil {
		return Directive{}, fmt.Errorf("scenarios: %v", err)
	}
	if cmd == "" {
		return Directive{}, errors.New("scenarios: empty directive")
	}
	return newDirective(cmd, args, input)
}

// newDirective checks cmd and args against the language and builds the Directive.
func newDirective(cmd string, args []datadriven.CmdArg, input string) (Directive, error) {
	d := Directive{Cmd: cmd, Args: args, Input: input}
	spec, ok := specs[cmd]
	if !ok {
		return d, fmt.Errorf("scenarios: unknown directive %q (expected one of: %s)", cmd, strings.Join(DirectiveNames(), ", "))
	}
	if spec.text {
		return d, stable(d)
	}
	if input != "" && !spec.input {
		return d, fmt.Errorf("scenarios: directive %q takes no input lines", cmd)
	}
	if spec.op {
		op, err := world.Parse(rejoin(cmd, args))
		if err != nil {
			return d, fmt.Errorf("scenarios: directive %q: %v", cmd, err)
		}
		if input != "" {
			content, err := parseContent(input)
			if err != nil {
				return d, fmt.Errorf("scenarios: directive %q: input: expected the object's content as a JSON object: %v", cmd, err)
			}
			op.Content = content
		}
		d.Op = &op
		return d, stable(d)
	}
	seen := map[string]bool{}
	for _, a := range args {
		as := spec.arg(a.Key)
		if as == nil {
			return d, fmt.Errorf("scenarios: directive %q: unknown argument %q (expected %s)", cmd, a.Key, spec.argNames())
		}
		if seen[a.Key] {
			return d, fmt.Errorf("scenarios: directive %q: argument %q given twice", cmd, a.Key)
		}
		seen[a.Key] = true
		if err := as.check(a); err != nil {
			return d, fmt.Errorf("scenarios: directive %q: argument %q: %v", cmd, a.Key, err)
		}
	}
	for _, as := range spec.args {
		if as.required && !seen[as.key] {
			return d, fmt.Errorf("scenarios: directive %q: missing argument %s=", cmd, as.key)
		}
	}
	return d, stable(d)
}

// stable checks that d's line reads back as itself, so that every accepted directive has a text
// form that parses back (values with spaces around them, or a lone value in parentheses, would
// print differently from how they were written).
func stable(d Directive) error {
	line := d.Line()
	cmd, args, err := datadriven.ParseLine(line)
	if err == nil && rejoin(cmd, args) == line {
		if d.Op == nil {
			if cmd == d.Cmd && slices.EqualFunc(args, d.Args, func(a, b datadriven.CmdArg) bool {
				return a.Key == b.Key && slices.Equal(a.Vals, b.Vals)
			}) {
				return nil
			}
			return fmt.Errorf("scenarios: directive %q: expected plain values (no spaces inside or around a value, no parentheses around a lone value); it would read back differently from %q", d.Cmd, line)
		}
		if op, err := world.Parse(line); err == nil && op.String() == line {
			return nil
		}
	}
	return fmt.Errorf("scenarios: directive %q: expected plain values (no spaces inside or around a value, no parentheses around a lone value); it would print as %q", d.Cmd, line)
}

func (s *directiveSpec) arg(key string) *argSpec {
	for i := range s.args {
		if s.args[i].key == key {
			return &s.args[i]
		}
	}
	return nil
}

func (s *directiveSpec) argNames() string {
	if len(s.args) == 0 {
		return "no arguments"
	}
	var b []string
	for _, a := range s.args {
		b = append(b, a.key)
	}
	return strings.Join(b, ", ")
}

func (a *argSpec) check(arg datadriven.CmdArg) error {
	if a.kind == argFlag {
		if len(arg.Vals) != 0 {
			return errors.New("expected a bare flag without a value")
		}
		return nil
	}
	if a.kind == argBool && len(arg.Vals) == 0 {
		return nil
	}
	if a.kind == argList {
		if len(arg.Vals) == 0 {
			return errors.New("expected a value or a list (v1, v2)")
		}
		for _, v := range arg.Vals {
			if v == "" {
				return errors.New("expected non-empty list values")
			}
		}
		return nil
	}
	if len(arg.Vals) != 1 {
		return errors.New("expected exactly one value")
	}
	v := arg.Vals[0]
	switch a.kind {
	case argString:
		if v == "" {
			return errors.New("expected a non-empty value")
		}
	case argInt:
		if _, err := strconv.ParseUint(v, 10, 63); err != nil {
			return fmt.Errorf("expected a non-negative integer, got %q", v)
		}
	case argDur:
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("expected a non-negative duration such as 1s or 250ms, got %q", v)
		}
	case argBool:
		if _, err := strconv.ParseBool(v); err != nil {
			return fmt.Errorf("expected true or false, got %q", v)
		}
	case argEnum:
		if !slices.Contains(a.enum, v) {
			return fmt.Errorf("expected one of %s, got %q", strings.Join(a.enum, ", "), v)
		}
	}
	return nil
}

// rejoin rebuilds a line from datadriven's tokens: world ops use their own field syntax, which
// datadriven splits at single spaces; joining the tokens back gives the line as written.
func rejoin(cmd string, args []datadriven.CmdArg) string {
	var b strings.Builder
	b.WriteString(cmd)
	for _, a := range args {
		b.WriteByte(' ')
		b.WriteString(a.String())
	}
	return b.String()
}

// String renders d in the form ParseDirective reads back: the line, then (if any) the input.
func (d Directive) String() string {
	line := d.Line()
	if in := d.inputText(); in != "" {
		return line + "\n" + in
	}
	return line
}

// Line is the directive's first line.
func (d Directive) Line() string {
	if d.Op != nil {
		op := *d.Op
		if specs[d.Cmd] != nil && specs[d.Cmd].input {
			op.Content = nil
		}
		return op.String()
	}
	return rejoin(d.Cmd, d.Args)
}

func (d Directive) inputText() string {
	if d.Op != nil && d.Op.Content != nil && specs[d.Cmd].input {
		return formatContent(d.Op.Content)
	}
	return d.Input
}

// arg returns the first value of key, and whether it was given.
func (d Directive) arg(key string) (string, bool) {
	for _, a := range d.Args {
		if a.Key == key {
			if len(a.Vals) == 0 {
				return "", true
			}
			return a.Vals[0], true
		}
	}
	return "", false
}

func (d Directive) str(key, def string) string {
	if v, ok := d.arg(key); ok {
		return v
	}
	return def
}

func (d Directive) has(key string) bool { _, ok := d.arg(key); return ok }

func (d Directive) list(key string) []string {
	for _, a := range d.Args {
		if a.Key == key {
			return a.Vals
		}
	}
	return nil
}

// The typed getters below are called only after newDirective checked the values.

func (d Directive) num(key string, def int) int {
	if v, ok := d.arg(key); ok {
		n, _ := strconv.Atoi(v)
		return n
	}
	return def
}

func (d Directive) dur(key string, def time.Duration) time.Duration {
	if v, ok := d.arg(key); ok {
		x, _ := time.ParseDuration(v)
		return x
	}
	return def
}

func (d Directive) boolean(key string, def bool) bool {
	if v, ok := d.arg(key); ok {
		if v == "" {
			return true
		}
		b, _ := strconv.ParseBool(v)
		return b
	}
	return def
}

// text returns a caption's words.
// Caption is a caption directive's text ("" for any other directive).
func (d Directive) Caption() string {
	if d.Cmd != "caption" {
		return ""
	}
	return d.text()
}

func (d Directive) text() string {
	var parts []string
	for _, a := range d.Args {
		parts = append(parts, a.String())
	}
	return strings.Join(parts, " ")
}
