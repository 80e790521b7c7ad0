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
	argSeed           // a seed: a decimal integer from 0 to 2^64-1 (a fuzz input's may be any)
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

// directiveSpec is one directive of the language: its arguments and what it does, together. The
// rows live with their handlers, one list per topic (env.go, env_objects.go, env_informers.go,
// factory.go, workqueue.go, env_time.go, env_inspect.go); specs indexes them all.
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
	// handle runs the directive on the Env's world (which exists by then), reporting with add.
	// An error means the directive does not fit the scenario (an unknown informer).
	handle func(e *Env, d Directive, add func(string, ...any)) error
}

// The argument constructors of the rows.
func strArg(k string) argSpec                  { return argSpec{key: k, kind: argString} }
func durArg(k string) argSpec                  { return argSpec{key: k, kind: argDur} }
func numArg(k string) argSpec                  { return argSpec{key: k, kind: argInt} }
func boolArg(k string) argSpec                 { return argSpec{key: k, kind: argBool} }
func listArg(k string) argSpec                 { return argSpec{key: k, kind: argList} }
func flagArg(k string) argSpec                 { return argSpec{key: k, kind: argFlag} }
func required(a argSpec) argSpec               { a.required = true; return a }
func enumArg(k string, vals ...string) argSpec { return argSpec{key: k, kind: argEnum, enum: vals} }

// directiveTopics are the lists of rows, in the order the package documentation gives them.
var directiveTopics = [][]*directiveSpec{storyDirectives, objectDirectives, informerDirectives, factoryDirectives,
	workqueueDirectives, controlPlaneDirectives, timeDirectives, inspectDirectives}

// specs indexes every directive of the language by name.
var specs = func() map[string]*directiveSpec {
	m := map[string]*directiveSpec{}
	for _, topic := range directiveTopics {
		for _, d := range topic {
			m[d.name] = d
		}
	}
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
	case argSeed:
		if _, err := strconv.ParseUint(v, 10, 64); err != nil {
			return fmt.Errorf("expected a seed, an integer from 0 to 18446744073709551615, got %q", v)
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

// seed is the value of key as a seed (argSeed), def when absent.
func (d Directive) seed(key string, def uint64) uint64 {
	if v, ok := d.arg(key); ok {
		n, _ := strconv.ParseUint(v, 10, 64)
		return n
	}
	return def
}

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
