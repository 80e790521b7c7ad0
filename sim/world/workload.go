package world

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world/narration"
)

// Script schedules ops as steps of actor "workload", the first at d from now, each OpSleep
// moving the following ones later. Ops due at the same time form one step and apply in the
// order given (separate timers with equal deadlines could run in any order). It returns the time
// (since Epoch) of the last op. A negative d or an invalid op (see Apply) is an error, and then
// nothing is scheduled; write errors of the apiserver when an op runs are narrated, not returned.
// Script keeps copies of the ops (their maps and slices included): changing the caller's after
// Script returns changes nothing.
func (w *World) Script(d time.Duration, ops ...Op) (time.Duration, error) {
	if d < 0 {
		return 0, fmt.Errorf("world: Script: negative delay %v", d)
	}
	checked := make([]Op, len(ops))
	for i, op := range ops {
		var err error
		if checked[i], err = w.check(op); err != nil {
			return 0, fmt.Errorf("%w (Script op %d)", err, i)
		}
		// The ops run later: keep them as they are now, whatever the caller's maps become.
		checked[i].Labels, checked[i].Annotations = maps.Clone(op.Labels), maps.Clone(op.Annotations)
		checked[i].Finalizers = slices.Clone(op.Finalizers)
	}
	ops = checked
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
			kind = narration.StepOps
		}
		w.pendingOps++
		w.after(at-w.s.Now(), "workload", kind, func() {
			w.pendingOps--
			for _, op := range b {
				_ = w.apply(op, false)
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
	// Resource written; zero means the world's Config.DefaultResource.
	Resource schema.GroupVersionResource
	// Namespaces the objects live in; empty means {DefaultNamespace} ({""} for a
	// cluster-scoped resource).
	Namespaces []string
	// Ops is how many operations to issue. Zero means DefaultGenOps (50).
	Ops int
	// MinInterval and MaxInterval bound the pause before each op. Zero means 10ms and 2s.
	MinInterval, MaxInterval time.Duration
	// HotNames and ColdNames size the object-name pools: three quarters of the ops pick a hot
	// name, so the same objects churn (style rule 11). Zero means 3 and 5.
	HotNames, ColdNames int
	// FaultOps makes one op in ten a fault op, drawn, like the writes, from the "workload"
	// stream (so it changes which writes follow): a watch close (clean or 410) or a compaction,
	// or one of FaultOpKinds. (It was called Disruptions. Drawing it from the "faults" stream
	// instead would change every generated run with it, and the course's expected output.)
	FaultOps bool
	// FaultOpKinds, if not nil, are the kinds a fault op draws from, each as likely as its share
	// of the list: any fault kind (OpKind.Fault), and OpPatch, though not a fault (a merge patch
	// of a live object's labels; the workload's own draws are creates, updates and deletes). It
	// needs FaultOps. A Generator leaves no replica frozen: after its last op it resumes the
	// replicas it froze.
	FaultOpKinds []OpKind
	// FaultPoints consults the fault points "watch/close", "watch/expire", "compact" and
	// "request/fail" after each op, so seeds explore fault schedules (sim.Sim.Fault; off with
	// SetFaultsEnabled(false)). Every fault point decision, including which request fails and
	// how, draws from the "faults" stream, never from "workload": turning fault points off leaves
	// the workload's ops unchanged. (It was called Faults.)
	FaultPoints bool
	// Shape, if set, shapes each write the workload draws (a create, update or delete of
	// Resource's objects; not a fault op) before it is applied, so the workload can write
	// objects a controller acts on, not only labels: it returns the op to apply. It may set
	// a create's or update's Content (a spec), Labels, Annotations and Finalizers, and it may
	// redirect the write to another object (another Resource, Namespace or Name, of any kind
	// of write): e.g. turn an update of a Foo into a delete of the Deployment that Foo owns.
	// The Generator keeps track of the objects of Resource it wrote; a redirected write
	// leaves what it knows unchanged (the drawn write did not happen). A shaped write of the
	// drawn object must keep its Kind: otherwise it is not applied and its GeneratedOp's Err
	// says why, as for an op the world refuses (a bad Content). r is the workload's source of
	// choices (the "workload" stream, or the fuzz input's next bytes under Fuzz), so what Shape
	// draws from it is decided by the seed or the input; Shape must draw only from r and read
	// nothing else that varies (no map order, no clock). Unset, the workload is unchanged.
	Shape func(op Op, r *rand.Rand) Op
}

// Generator is a seeded random workload: a chain of "workload" steps drawing from the "workload"
// stream. It is model-aware (style.md rule 26): it updates and deletes only names that exist,
// and creates only names that do not, so a deleted name is sometimes re-created with a new UID.
// It records every op it issued (Ops), so a run's workload can be printed, replayed with Script
// or compared.
type Generator struct {
	w      *World
	cfg    GenConfig
	rnd    *rand.Rand       // "workload": which op, which object, when
	faults *rand.Rand       // "faults": how an injected fault fails
	exists map[objName]bool // live objects
	frozen map[int]bool     // replicas its ops froze
	issued int
	timer  *sim.Timer
	ops    []GeneratedOp
	// choices is the fuzz input rnd reads (World.Fuzz), nil for a seeded workload.
	choices *choiceSource
	// shaped says the op being applied went through GenConfig.Shape (so the world checks it
	// as it checks Apply's: Content converted, the resource served); refused, that Shape made
	// it an op the Generator does not apply.
	shaped  bool
	refused error
}

// objName is an object's namespace and name: a map key that takes no concatenation.
type objName struct{ namespace, name string }

// GeneratedOp is one op a Generator issued.
type GeneratedOp struct {
	// Time is when it was applied (since the epoch).
	Time time.Duration
	Op   Op
	// FaultPoint says a fault point issued it (GenConfig.FaultPoints), not the workload's draw
	// (a fault op of GenConfig.FaultOps is the workload's).
	FaultPoint bool
	// Err is the apiserver's answer to a write, "" for success.
	Err string
}

// Ops returns the ops issued so far, in order.
func (g *Generator) Ops() []GeneratedOp { return slices.Clone(g.ops) }

// Generate starts a random workload; its first op comes after one interval.
func (w *World) Generate(cfg GenConfig) (*Generator, error) {
	g, err := w.newGenerator(cfg, "Generate")
	if err != nil {
		return nil, err
	}
	g.start()
	return g, nil
}

// newGenerator checks cfg and builds a Generator drawing from the "workload" stream; errors
// name the caller (Generate, Fuzz).
func (w *World) newGenerator(cfg GenConfig, caller string) (*Generator, error) {
	c := cfg
	if c.Resource.Empty() {
		c.Resource = w.cfg.DefaultResource
	}
	res, ok := w.resourceKind(c.Resource)
	if !ok {
		return nil, fmt.Errorf("world: %s: the apiserver does not serve %s", caller, w.notServed(c.Resource))
	}
	if len(c.Namespaces) == 0 {
		c.Namespaces = []string{DefaultNamespace}
		if !res.Namespaced {
			c.Namespaces = []string{""}
		}
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
		return nil, fmt.Errorf("world: %s: negative Ops %d, HotNames %d or ColdNames %d", caller, c.Ops, c.HotNames, c.ColdNames)
	case c.MinInterval < 0 || c.MaxInterval < c.MinInterval:
		return nil, fmt.Errorf("world: %s: want 0 <= MinInterval <= MaxInterval, got [%v, %v]", caller, c.MinInterval, c.MaxInterval)
	}
	if c.FaultOpKinds != nil && !c.FaultOps {
		return nil, fmt.Errorf("world: %s: FaultOpKinds %v needs FaultOps", caller, c.FaultOpKinds)
	}
	c.FaultOpKinds = slices.Clone(c.FaultOpKinds)
	for _, k := range c.FaultOpKinds {
		if !k.valid() || opRows[k].draw == nil {
			return nil, fmt.Errorf("world: %s: FaultOpKinds: %v is not a kind a fault op can draw (a fault kind, or patch)", caller, k)
		}
	}
	for _, ns := range c.Namespaces {
		if !res.Namespaced {
			if ns != "" {
				return nil, fmt.Errorf("world: %s: %v is cluster-scoped; Namespaces must be empty", caller, c.Resource)
			}
			continue
		}
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return nil, fmt.Errorf("world: %s: invalid namespace %q: %s", caller, ns, strings.Join(errs, "; "))
		}
	}
	g := &Generator{w: w, cfg: c, rnd: w.s.Rand(sim.StreamWorkload), faults: w.s.Rand(sim.StreamFaults), exists: map[objName]bool{}}
	// Room for the ops and about as many again for the faults' (four fault points after each
	// op), so the record of a short run is one allocation rather than a doubling series of
	// large GeneratedOps; capped, so a huge Ops does not reserve memory it may never use.
	g.ops = make([]GeneratedOp, 0, min(2*c.Ops, 1024))
	knob := fmt.Sprintf("ops=%d names=%d+%d fault-ops=%v fault-points=%v", c.Ops, c.HotNames, c.ColdNames, c.FaultOps, c.FaultPoints)
	if c.FaultOpKinds != nil {
		names := make([]string, len(c.FaultOpKinds))
		for i, k := range c.FaultOpKinds {
			names[i] = k.String()
		}
		knob += " fault-op-kinds=" + strings.Join(names, ",")
	}
	w.s.SetKnob("workload", knob)
	return g, nil
}

// start counts the Generator among the world's pending work and arms its first op.
func (g *Generator) start() {
	if !g.Finished() {
		g.w.pendingOps++
	}
	g.schedule()
}

// Finished reports whether every op has been issued.
func (g *Generator) Finished() bool { return g.issued >= g.cfg.Ops }

// Issued is the number of ops issued so far.
func (g *Generator) Issued() int { return g.issued }

// Stop cancels the ops not yet issued.
func (g *Generator) Stop() {
	if g.Finished() {
		return
	}
	g.timer.Stop()
	g.cfg.Ops = g.issued
	g.w.pendingOps--
}

func (g *Generator) schedule() {
	if g.Finished() {
		return
	}
	lo, hi := g.cfg.MinInterval, g.cfg.MaxInterval
	d := lo
	switch {
	case g.choices != nil:
		d = g.fuzzInterval() // one byte, biased to the shortest pause
	case hi > lo:
		d += time.Duration(g.rnd.Int64N(int64(hi-lo) + 1))
	}
	if g.timer != nil {
		g.timer.Reset(d) // fired: re-armed, it is to the engine what a new timer would be
		return
	}
	g.timer = g.w.after(d, narration.ActorWorkload, narration.StepOp, g.step)
}

func (g *Generator) step() {
	g.issued++
	op := g.next()
	if err := g.apply(op, false); err != nil && apierrors.IsNotFound(err) && op.Resource == g.cfg.Resource {
		delete(g.exists, objName{op.Namespace, op.Name}) // keep the model honest
	}
	if g.cfg.FaultPoints {
		g.injectFaults()
	}
	if g.choices != nil && g.choices.exhausted() {
		g.cfg.Ops = g.issued // a fuzz input ends with its bytes: this was its last op
	}
	if g.Finished() {
		g.resumeFrozen()
		g.w.pendingOps--
	}
	g.schedule()
}

// resumeFrozen resumes the replicas the Generator's ops left frozen, in replica order.
func (g *Generator) resumeFrozen() {
	for _, i := range slices.Sorted(maps.Keys(g.frozen)) {
		_ = g.apply(Op{Kind: OpResumeReplica, Replica: i}, false)
	}
}

// live returns the objects the Generator knows to exist, in namespace and name order.
func (g *Generator) live() []objName {
	return slices.SortedFunc(maps.Keys(g.exists), func(a, b objName) int {
		return strings.Compare(a.namespace+"/"+a.name, b.namespace+"/"+b.name)
	})
}

// apply applies op and records it.
func (g *Generator) apply(op Op, fromFaultPoint bool) error {
	var err error
	switch {
	case g.refused != nil:
		err = g.refused
	case g.shaped:
		var checked Op
		if checked, err = g.w.check(op); err == nil {
			err = g.w.apply(checked, fromFaultPoint)
		}
	default:
		err = g.w.apply(op, fromFaultPoint)
	}
	g.shaped, g.refused = false, nil
	switch op.Kind {
	case OpFreezeReplica:
		if g.frozen == nil {
			g.frozen = map[int]bool{}
		}
		g.frozen[op.Replica] = true
	case OpResumeReplica, OpReinitReplica:
		delete(g.frozen, op.Replica)
	}
	rec := GeneratedOp{Time: g.w.s.Now(), Op: op, FaultPoint: fromFaultPoint}
	if err != nil {
		rec.Err = err.Error()
	}
	g.ops = append(g.ops, rec)
	return err
}

// next draws one op.
func (g *Generator) next() Op {
	if g.choices != nil {
		return g.nextFuzz() // a fuzz input's own, denser and hazard-biased, decoding
	}
	r := g.rnd
	if g.cfg.FaultOps && r.IntN(10) == 0 {
		if g.cfg.FaultOpKinds != nil {
			return opRows[g.cfg.FaultOpKinds[r.IntN(len(g.cfg.FaultOpKinds))]].draw(g, r)
		}
		switch r.IntN(3) {
		case 0:
			return Op{Kind: OpCloseWatches}
		case 1:
			return Op{Kind: OpCloseWatches, Code: 410}
		default:
			return Op{Kind: OpCompact}
		}
	}
	return g.nextWrite()
}

// nextWrite draws a create, update or delete of one of the name pools' objects.
func (g *Generator) nextWrite() Op {
	r := g.rnd
	ns := g.cfg.Namespaces[r.IntN(len(g.cfg.Namespaces))]
	var name string
	if g.cfg.ColdNames == 0 || (g.cfg.HotNames > 0 && r.IntN(4) != 0) {
		name = "hot-" + strconv.Itoa(r.IntN(g.cfg.HotNames))
	} else {
		name = "cold-" + strconv.Itoa(r.IntN(g.cfg.ColdNames))
	}
	key := objName{ns, name}
	op := Op{Resource: g.cfg.Resource, Namespace: ns, Name: name,
		Labels: map[string]string{"v": strconv.Itoa(r.IntN(3))}}
	live := g.exists[key]
	switch {
	case !live:
		op.Kind = OpCreate
		g.exists[key] = true
	case r.IntN(4) == 0:
		op.Kind = OpDelete
		delete(g.exists, key)
	default:
		op.Kind = OpUpdate
	}
	return g.shape(op, key, live)
}

// shape passes a drawn write through GenConfig.Shape: a write redirected to another object
// restores what the Generator knew of the drawn one (live); a write of the drawn object with
// another kind is marked refused (g.refused), for apply to record without applying it.
func (g *Generator) shape(op Op, key objName, live bool) Op {
	if g.cfg.Shape == nil {
		return op
	}
	drawn := op
	op = g.cfg.Shape(op, g.rnd)
	g.shaped = true
	if op.Resource.Empty() {
		op.Resource = g.cfg.Resource
	}
	if op.Resource != drawn.Resource || op.Namespace != drawn.Namespace || op.Name != drawn.Name {
		if live {
			g.exists[key] = true
		} else {
			delete(g.exists, key)
		}
		return op
	}
	if op.Kind != drawn.Kind {
		g.refused = fmt.Errorf("world: GenConfig.Shape turned the %s of %s into a %s of the same object: a shaped write of the drawn object keeps its kind (redirect it to another object instead)", drawn.Kind, path.Join(drawn.Namespace, drawn.Name), op.Kind)
		if live {
			g.exists[key] = true
		} else {
			delete(g.exists, key)
		}
	}
	return op
}

// injectFaults consults the workload's fault points (sim.Sim.Fault), in a fixed order; how a
// fault fails draws from the "faults" stream.
func (g *Generator) injectFaults() {
	s := g.w.s
	if s.Fault("watch/close") {
		_ = g.apply(Op{Kind: OpCloseWatches}, true)
	}
	if s.Fault("watch/expire") {
		_ = g.apply(Op{Kind: OpCloseWatches, Code: 410}, true)
	}
	if s.Fault("compact") {
		_ = g.apply(Op{Kind: OpCompact}, true)
	}
	if s.Fault("request/fail") {
		verb := fakeapi.VerbWatch
		if g.faults.IntN(2) == 0 {
			verb = fakeapi.VerbList
		}
		_ = g.apply(Op{Kind: OpFailNext, Verb: verb, Code: []int32{429, 500, 410}[g.faults.IntN(3)]}, true)
	}
}
