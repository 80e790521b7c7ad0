package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/internal/invariant"
)

// OpKind is the kind of a workload operation.
type OpKind int

// The workload operations.
const (
	// OpCreate creates Name with Labels.
	OpCreate OpKind = iota + 1
	// OpUpdate sets Labels on Name (merged into its labels) and bumps its "sim/gen" annotation,
	// so every update is a real change with a new resourceVersion.
	OpUpdate
	// OpDelete deletes Name.
	OpDelete
	// OpCloseWatches ends every open watch: cleanly when Code is 0, else with an ERROR event of
	// that HTTP code (410 makes the Reflector relist, informer.md §7.7).
	OpCloseWatches
	// OpCompact compacts the apiserver's history to its current revision (fakeapi.md §6 F-1):
	// re-watching from an older resourceVersion then gets 410.
	OpCompact
	// OpFailNext makes the next request of Verb fail with HTTP Code (429, 500, 410...).
	OpFailNext
	// OpSleep only moves a Script's time forward by Duration.
	OpSleep
)

var opKindNames = [...]string{OpCreate: "create", OpUpdate: "update", OpDelete: "delete",
	OpCloseWatches: "close-watches", OpCompact: "compact", OpFailNext: "fail-next", OpSleep: "sleep"}

func (k OpKind) String() string {
	if k > 0 && int(k) < len(opKindNames) {
		return opKindNames[k]
	}
	return "OpKind(" + strconv.Itoa(int(k)) + ")"
}

// Op is one workload operation on the world's apiserver.
type Op struct {
	Kind OpKind
	// Resource is the resource written; zero means pods.
	Resource schema.GroupVersionResource
	// Namespace of the object; "" means "default" for namespaced resources.
	Namespace string
	Name      string
	Labels    map[string]string
	// Code is the HTTP code of OpCloseWatches (0: clean) and OpFailNext: an error code, 400 to
	// 599.
	Code int32
	// Verb is the request OpFailNext fails.
	Verb fakeapi.Verb
	// Duration is OpSleep's; it must not be negative.
	Duration time.Duration
}

// validate checks what the world itself can tell is wrong with op: an unknown kind, a code or
// verb out of range, a negative sleep. A write to a name the apiserver rejects (empty, invalid,
// unknown) is left to the apiserver, which answers as a real one does (design.md "Bad input").
func (op Op) validate() error {
	errorCode := func(c int32) bool { return c >= 400 && c <= 599 }
	switch op.Kind {
	case OpCreate, OpUpdate, OpDelete, OpCompact:
	case OpCloseWatches:
		if op.Code != 0 && !errorCode(op.Code) {
			return fmt.Errorf("sim: %s: Code must be 0 (a clean close) or an HTTP error code, 400 to 599", op)
		}
	case OpFailNext:
		if op.Verb < fakeapi.VerbCreate || op.Verb > fakeapi.VerbWatch || !errorCode(op.Code) {
			return fmt.Errorf("sim: %s: needs a Verb (fakeapi.VerbCreate to VerbWatch) and an HTTP error Code, 400 to 599", op)
		}
	case OpSleep:
		if op.Duration < 0 {
			return fmt.Errorf("sim: %s: negative Duration", op)
		}
	default:
		return fmt.Errorf("sim: unknown op kind %v", op.Kind)
	}
	return nil
}

// Pods is the default resource of workload operations. The apiserver deletes pods gracefully
// (fakeapi.md §5.3): a delete stores deletionTimestamp first (MODIFIED), and an unscheduled pod,
// as the workload's are, is then removed at the next revision (DELETED).
var Pods = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// ConfigMaps is a resource without graceful deletion: a delete is one DELETED at one revision,
// the shape of informer.md §14's worked traces.
var ConfigMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// String renders op as one line, e.g. "create pods/default/a app=web", "close-watches code=410".
func (op Op) String() string {
	var b strings.Builder
	b.WriteString(op.Kind.String())
	switch op.Kind {
	case OpCreate, OpUpdate, OpDelete:
		gvr, ns := op.target()
		b.WriteString(" " + gvr.Resource + "/")
		if ns != "" {
			b.WriteString(ns + "/")
		}
		b.WriteString(op.Name)
		keys := make([]string, 0, len(op.Labels))
		for k := range op.Labels {
			keys = append(keys, k)
		}
		slices.Sort(keys) // never map order in output (style rule 9)
		for _, k := range keys {
			b.WriteString(" " + k + "=" + op.Labels[k])
		}
	case OpCloseWatches:
		if op.Code != 0 {
			fmt.Fprintf(&b, " code=%d", op.Code)
		}
	case OpFailNext:
		fmt.Fprintf(&b, " verb=%s code=%d", op.Verb, op.Code)
	case OpSleep:
		b.WriteString(" " + op.Duration.String())
	}
	return b.String()
}

func (op Op) target() (schema.GroupVersionResource, string) {
	gvr := op.Resource
	if gvr.Empty() {
		gvr = Pods
	}
	ns := op.Namespace
	if ns == "" {
		ns = "default"
	}
	return gvr, ns
}

// Apply performs op on the apiserver now, narrated as actor "apiserver" ("ADDED
// obj=pods/default/a rv=2"), and settles the world. An invalid op (see Op's fields) is returned
// and does nothing; write errors (404, 409, 422...) are returned and narrated; neither fails the
// run. OpSleep does nothing here: only Script moves time.
func (w *World) Apply(op Op) error {
	if err := op.validate(); err != nil {
		return err
	}
	err := w.apply(op)
	w.settle()
	return err
}

func (w *World) apply(op Op) error {
	s := w.s
	ctx := context.Background()
	switch op.Kind {
	case OpCreate, OpUpdate, OpDelete:
		gvr, ns := op.target()
		if res, ok := w.resourceKind(gvr); ok && !res.Namespaced {
			ns = ""
		}
		rc := w.srv.Resource(gvr)
		if ns != "" {
			rc = rc.Namespace(ns)
		}
		ref := gvr.Resource + "/" + op.Name
		if ns != "" {
			ref = gvr.Resource + "/" + ns + "/" + op.Name
		}
		var out *unstructured.Unstructured
		var err error
		kind := ""
		switch op.Kind {
		case OpCreate:
			res, _ := w.resourceKind(gvr)
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvr.GroupVersion().WithKind(res.Kind))
			u.SetName(op.Name)
			u.SetNamespace(ns)
			if len(op.Labels) > 0 {
				u.SetLabels(op.Labels)
			}
			out, err = rc.Create(ctx, u, metav1.CreateOptions{})
			kind = "ADDED"
		case OpUpdate:
			out, err = rc.Get(ctx, op.Name, metav1.GetOptions{})
			if err == nil {
				labels := out.GetLabels()
				if labels == nil {
					labels = map[string]string{}
				}
				for k, v := range op.Labels {
					labels[k] = v
				}
				out.SetLabels(labels)
				ann := out.GetAnnotations()
				if ann == nil {
					ann = map[string]string{}
				}
				gen, _ := strconv.Atoi(ann["sim/gen"])
				ann["sim/gen"] = strconv.Itoa(gen + 1)
				out.SetAnnotations(ann)
				out, err = rc.Update(ctx, out, metav1.UpdateOptions{})
			}
			kind = "MODIFIED"
		case OpDelete:
			before := w.srv.Revision()
			err = rc.Delete(ctx, op.Name, metav1.DeleteOptions{})
			kind = "DELETED"
			if err == nil && w.srv.Revision() == before+2 {
				// A graceful delete with grace 0 (an unscheduled pod) is two writes: the deletion
				// fields, then the removal (fakeapi.md §5.3). Narrate both, so no revision the
				// informers may see goes unexplained.
				s.Emit("apiserver", "MODIFIED", F("obj", ref), F("rv", fakeapi.FormatRV(before+1)), F("deletionGracePeriodSeconds", "0"))
			}
		}
		if err != nil {
			s.Emit("apiserver", "write-error", F("op", op.String()), F("err", err.Error()))
			return err
		}
		rv := fakeapi.FormatRV(w.srv.Revision())
		if out != nil {
			rv = out.GetResourceVersion()
		}
		s.Emit("apiserver", kind, F("obj", ref), F("rv", rv))
	case OpCloseWatches:
		var err error
		if op.Code != 0 {
			err = fakeapi.NewWatchError(op.Code)
		}
		s.Emit("apiserver", "close-watches", FInt("watches", int64(len(w.srv.Watchers()))), FInt("code", int64(op.Code)))
		w.srv.CloseAllWatches(err)
	case OpCompact:
		rev := w.srv.Revision()
		s.Emit("apiserver", "compact", F("rv", fakeapi.FormatRV(rev)))
		if err := w.srv.Compact(rev); err != nil {
			return err
		}
	case OpFailNext:
		s.Emit("apiserver", "fail-next", F("verb", op.Verb.String()), FInt("code", int64(op.Code)))
		w.srv.FailNext(op.Verb, statusError(op.Code))
	case OpSleep:
	default:
		invariant.Check(false, "sim: apply: unvalidated op kind %v", op.Kind)
	}
	return nil
}

// statusError is the apiserver error for an injected failure of HTTP code.
func statusError(code int32) error {
	switch code {
	case 429:
		return apierrors.NewTooManyRequests("injected", 1)
	case 500:
		return apierrors.NewInternalError(errors.New("injected"))
	}
	return fakeapi.NewWatchError(code)
}

// Script schedules ops as steps of actor "workload", the first at d from now, each OpSleep
// moving the following ones later. Ops due at the same time form one step and apply in the
// order given (separate timers with equal deadlines could run in any order). It returns the time
// (since Epoch) of the last op. A negative d or an invalid op (see Apply) is an error, and then
// nothing is scheduled; write errors of the apiserver when an op runs are narrated, not returned.
func (w *World) Script(d time.Duration, ops ...Op) (time.Duration, error) {
	if d < 0 {
		return 0, fmt.Errorf("sim: Script: negative delay %v", d)
	}
	for i, op := range ops {
		if err := op.validate(); err != nil {
			return 0, fmt.Errorf("%w (Script op %d)", err, i)
		}
	}
	at := w.s.Now() + d
	var batch []Op
	flush := func() {
		if len(batch) == 0 {
			return
		}
		b := batch
		batch = nil
		kind := b[0].Kind.String()
		if len(b) > 1 {
			kind = "ops"
		}
		w.pendingOps++
		w.after(at-w.s.Now(), "workload", kind, func() {
			w.pendingOps--
			for _, op := range b {
				_ = w.apply(op)
			}
		})
	}
	for _, op := range ops {
		if op.Kind == OpSleep {
			if op.Duration > 0 {
				flush()
				at += op.Duration
			}
			continue
		}
		batch = append(batch, op)
	}
	flush()
	return at, nil
}

// Generator defaults; see GenConfig.
const (
	DefaultGenOps         = 50
	DefaultGenMinInterval = 10 * time.Millisecond
	DefaultGenMaxInterval = 2 * time.Second
	DefaultGenHotNames    = 3
	DefaultGenColdNames   = 5
)

// GenConfig configures a random workload. The zero value is valid.
type GenConfig struct {
	// Resource written; zero means pods.
	Resource schema.GroupVersionResource
	// Namespaces the objects live in; empty means {"default"}.
	Namespaces []string
	// Ops is how many operations to issue. Zero means DefaultGenOps (50).
	Ops int
	// MinInterval and MaxInterval bound the pause before each op. Zero means 10ms and 2s.
	MinInterval, MaxInterval time.Duration
	// HotNames and ColdNames size the object-name pools: three quarters of the ops pick a hot
	// name, so the same objects churn (style rule 11). Zero means 3 and 5.
	HotNames, ColdNames int
	// Disruptions adds watch closes (clean and 410) and compactions to the mix, one op in ten.
	Disruptions bool
	// Faults consults the fault points "watch/close", "watch/expire", "compact" and
	// "request/fail" after each op, so seeds explore fault schedules (Sim.Fault; off with
	// Sim.SetFaultsEnabled(false)).
	Faults bool
}

// Generator is a seeded random workload: a chain of "workload" steps drawing from the "workload"
// stream. It is model-aware (style rule 26): it updates and deletes only names that exist, and
// creates only names that do not, so a deleted name is sometimes re-created with a new UID.
type Generator struct {
	w      *World
	cfg    GenConfig
	rnd    *rand.Rand
	exists map[string]bool // "ns/name" → live
	issued int
	timer  *Timer
}

// Generate starts a random workload; its first op comes after one interval.
func (w *World) Generate(cfg GenConfig) (*Generator, error) {
	c := cfg
	if c.Resource.Empty() {
		c.Resource = Pods
	}
	if len(c.Namespaces) == 0 {
		c.Namespaces = []string{"default"}
	}
	c.Namespaces = slices.Clone(c.Namespaces)
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Ops, DefaultGenOps)
	def(&c.HotNames, DefaultGenHotNames)
	def(&c.ColdNames, DefaultGenColdNames)
	if c.MinInterval == 0 {
		c.MinInterval = DefaultGenMinInterval
	}
	if c.MaxInterval == 0 {
		c.MaxInterval = max(DefaultGenMaxInterval, c.MinInterval)
	}
	switch {
	case c.Ops < 0 || c.HotNames < 0 || c.ColdNames < 0:
		return nil, fmt.Errorf("sim: Generate: negative Ops %d, HotNames %d or ColdNames %d", c.Ops, c.HotNames, c.ColdNames)
	case c.MinInterval < 0 || c.MaxInterval < c.MinInterval:
		return nil, fmt.Errorf("sim: Generate: want 0 <= MinInterval <= MaxInterval, got [%v, %v]", c.MinInterval, c.MaxInterval)
	}
	for _, ns := range c.Namespaces {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return nil, fmt.Errorf("sim: Generate: invalid namespace %q: %s", ns, strings.Join(errs, "; "))
		}
	}
	if _, ok := w.resourceKind(c.Resource); !ok {
		return nil, fmt.Errorf("sim: Generate: the apiserver does not serve %v", c.Resource)
	}
	g := &Generator{w: w, cfg: c, rnd: w.s.Rand(StreamWorkload), exists: map[string]bool{}}
	w.s.SetKnob("workload", fmt.Sprintf("ops=%d names=%d+%d disruptions=%v faults=%v", c.Ops, c.HotNames, c.ColdNames, c.Disruptions, c.Faults))
	if !g.Done() {
		w.pendingOps++
	}
	g.schedule()
	return g, nil
}

// Done reports whether every op has been issued.
func (g *Generator) Done() bool { return g.issued >= g.cfg.Ops }

// Issued is the number of ops issued so far.
func (g *Generator) Issued() int { return g.issued }

// Stop cancels the ops not yet issued.
func (g *Generator) Stop() {
	if g.Done() {
		return
	}
	g.timer.Stop()
	g.cfg.Ops = g.issued
	g.w.pendingOps--
}

func (g *Generator) schedule() {
	if g.Done() {
		return
	}
	lo, hi := g.cfg.MinInterval, g.cfg.MaxInterval
	d := lo
	if hi > lo {
		d += time.Duration(g.rnd.Int64N(int64(hi-lo) + 1))
	}
	g.timer = g.w.after(d, "workload", "op", g.step)
}

func (g *Generator) step() {
	g.issued++
	op := g.next()
	if err := g.w.apply(op); err != nil && apierrors.IsNotFound(err) {
		_, ns := op.target()
		delete(g.exists, ns+"/"+op.Name) // keep the model honest
	}
	if g.cfg.Faults {
		g.faults()
	}
	if g.Done() {
		g.w.pendingOps--
	}
	g.schedule()
}

// next draws one op.
func (g *Generator) next() Op {
	r := g.rnd
	if g.cfg.Disruptions && r.IntN(10) == 0 {
		switch r.IntN(3) {
		case 0:
			return Op{Kind: OpCloseWatches}
		case 1:
			return Op{Kind: OpCloseWatches, Code: 410}
		default:
			return Op{Kind: OpCompact}
		}
	}
	ns := g.cfg.Namespaces[r.IntN(len(g.cfg.Namespaces))]
	var name string
	if g.cfg.ColdNames == 0 || (g.cfg.HotNames > 0 && r.IntN(4) != 0) {
		name = "hot-" + strconv.Itoa(r.IntN(g.cfg.HotNames))
	} else {
		name = "cold-" + strconv.Itoa(r.IntN(g.cfg.ColdNames))
	}
	key := ns + "/" + name
	op := Op{Resource: g.cfg.Resource, Namespace: ns, Name: name,
		Labels: map[string]string{"v": strconv.Itoa(r.IntN(3))}}
	switch {
	case !g.exists[key]:
		op.Kind = OpCreate
		g.exists[key] = true
	case r.IntN(4) == 0:
		op.Kind = OpDelete
		delete(g.exists, key)
	default:
		op.Kind = OpUpdate
	}
	return op
}

// faults consults the workload's fault points (Sim.Fault), in a fixed order.
func (g *Generator) faults() {
	w, s := g.w, g.w.s
	if s.Fault("watch/close") {
		_ = w.apply(Op{Kind: OpCloseWatches})
	}
	if s.Fault("watch/expire") {
		_ = w.apply(Op{Kind: OpCloseWatches, Code: 410})
	}
	if s.Fault("compact") {
		_ = w.apply(Op{Kind: OpCompact})
	}
	if s.Fault("request/fail") {
		verb := fakeapi.VerbWatch
		if g.rnd.IntN(2) == 0 {
			verb = fakeapi.VerbList
		}
		_ = w.apply(Op{Kind: OpFailNext, Verb: verb, Code: []int32{429, 500, 410}[g.rnd.IntN(3)]})
	}
}
