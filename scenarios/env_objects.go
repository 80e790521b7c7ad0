package scenarios

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/informersim/informersim/sim/world"
)

// objectDirectives write objects and inject faults: every world op but sleep is a directive of
// its own name, in world.Op's syntax (a new kind of op is a new directive with no change here).
var objectDirectives = append(opDirectiveSpecs(), &directiveSpec{name: "populate",
	args: []argSpec{required(numArg("n")), strArg("prefix"), strArg("ns"), strArg("label")},
	help: "create n pods at once (their n writes are summarised in one line)", handle: (*Env).populate})

func opDirectiveSpecs() []*directiveSpec {
	var out []*directiveSpec
	for _, k := range world.OpKinds() {
		if k == world.OpSleep {
			continue // a scenario moves time with run
		}
		out = append(out, &directiveSpec{name: k.String(), op: true, input: k == world.OpCreate || k == world.OpUpdate,
			help:   "a world op (world.Parse syntax: a write or a fault); create and update take optional content JSON as input",
			handle: (*Env).applyOp})
	}
	return out
}

// applyOp applies the directive's op. The apiserver's refusal of a write (404, 409, 422...) is
// narrated, not an error of the file; any other error (an invalid op, a replica the apiserver
// does not have) is.
func (e *Env) applyOp(d Directive, _ func(string, ...any)) error {
	if d.Op == nil {
		return fmt.Errorf("directive %q has no op (ParseDirective builds it)", d.Cmd)
	}
	err := e.w.Apply(*d.Op)
	var status apierrors.APIStatus
	if err != nil && !errors.As(err, &status) {
		return err
	}
	return nil
}

// populate creates n pods named <prefix>-000... and narrates them as one line.
func (e *Env) populate(d Directive, add func(string, ...any)) error {
	n := d.num("n", 0)
	if n == 0 || n > 10_000 {
		return errors.New("populate: expected n between 1 and 10000")
	}
	prefix := d.str("prefix", "p")
	var lbl map[string]string
	if l, ok := d.arg("label"); ok {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return fmt.Errorf("populate: label: expected key=value, got %q", l)
		}
		lbl = map[string]string{k: v}
	}
	before := len(e.pending)
	first := e.w.Server().Revision() + 1
	for i := range n {
		op := world.Op{Kind: world.OpCreate, Namespace: d.str("ns", ""), Name: fmt.Sprintf("%s-%03d", prefix, i), Labels: lbl}
		if err := e.w.Apply(op); err != nil {
			return fmt.Errorf("populate: %w", err)
		}
	}
	e.pending = e.pending[:before]
	add("created %d pods %s-000..%s-%03d at rv=%d..%d", n, prefix, prefix, n-1, first, e.w.Server().Revision())
	return nil
}
