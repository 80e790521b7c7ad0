package scenarios

import (
	"strings"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/informersim/informersim/sim/world"
)

// Format writes directives as a scenario file, each followed by "----" and its output (outputs
// may be shorter than directives, or nil: the blocks are then empty, for make rewrite to fill).
// An output holding a blank line is fenced with a doubled "----", as datadriven expects.
func Format(header string, directives []Directive, outputs []string) string {
	var b strings.Builder
	if header != "" {
		for _, l := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
			b.WriteString(strings.TrimRight("# "+l, " "))
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	for i, d := range directives {
		b.WriteString(d.String())
		b.WriteString("\n----\n")
		out := ""
		if i < len(outputs) {
			out = strings.TrimRight(outputs[i], "\n")
		}
		if strings.Contains(out, "\n\n") || strings.HasPrefix(out, "\n") {
			b.WriteString("----\n" + out + "\n----\n----\n\n")
			continue
		}
		if out != "" {
			b.WriteString(out + "\n")
		}
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// GeneratedDirectives turns the ops a generator issued (world.Generator.Ops), or every op a
// world applied (world.World.Ops, with world.Config.RecordOps), into directives that replay them: before each op, a run for the time since the previous one (from start, the
// time the generator began).
func GeneratedDirectives(start time.Duration, ops []world.GeneratedOp) []Directive {
	var out []Directive
	at := start
	for _, g := range ops {
		if g.Op.Kind == world.OpSleep {
			continue
		}
		if g.Time > at {
			out = append(out, Directive{Cmd: "run", Args: []datadriven.CmdArg{argOf("for", (g.Time - at).String())}})
			at = g.Time
		}
		op := g.Op
		out = append(out, Directive{Cmd: op.Kind.String(), Op: &op})
	}
	return out
}
