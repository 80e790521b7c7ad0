package world

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/internal/invariant"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world/narration"
)

// OpKind is the kind of a workload operation.
type OpKind int

// The operations: writes (create, update, patch, delete), time (sleep), and faults: every
// fault the apiserver can be told to inject is an op, so that a Script, a Generator and a
// scenario file can all hold any of them. Each kind is one row of opRows below (its fields,
// validation, effect and narration, and how a Generator draws it); adding a kind is a constant
// and a row here.
const (
	// OpCreate creates an object from the Op's metadata (Name or GenerateName, Labels,
	// Annotations, Finalizers) and Content.
	OpCreate OpKind = iota + 1
	// OpUpdate reads Name and writes it back with Labels and Annotations merged in, Finalizers
	// replacing its finalizers when not nil, each Content field replacing the object's, and its
	// "sim/gen" annotation bumped, so that every update is a real change with a new
	// resourceVersion.
	OpUpdate
	// OpPatch patches Name with Patch, of PatchType.
	OpPatch
	// OpDelete deletes Name, with Propagation's policy if set. Finalizers or a pod's grace
	// period make it a MODIFIED first (fakeapi.md §5.3).
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
	// OpBurnRevisions consumes Count revisions without writing anything (fakeapi.md §6 F-10):
	// the next write's resourceVersion jumps.
	OpBurnRevisions
	// OpSlowConsumer cuts the open watches off as slow consumers (fakeapi.md §6 F-8): those of
	// the informer named Informer, or every open watch when Informer is "".
	OpSlowConsumer
	// OpTriggerBookmarks sends a bookmark on every open watch that allows them (F-7).
	OpTriggerBookmarks
	// OpLagReplica makes replica Replica's watch cache see each revision Duration after it is
	// written (F-2).
	OpLagReplica
	// OpFreezeReplica stops replica Replica's watch cache (F-2) until OpResumeReplica.
	OpFreezeReplica
	// OpResumeReplica unfreezes replica Replica.
	OpResumeReplica
	// OpReinitReplica reinitialises replica Replica's watch cache: its watches close, its
	// history is dropped, and for Duration (if not 0) it answers 429 (fakeapi.md §3.4).
	OpReinitReplica
	// OpRouteNext sends the next list or watch to replica Replica.
	OpRouteNext

	// OpSlowController makes the control plane's component Name (garbage-collector,
	// namespace-controller, workload-status, job-controller) act only Duration after it sees a change
	// (docs/controlplane.md §4); the world must run the control plane (Config.ControlPlane).
	OpSlowController
	// OpStopController stops (crashes) the control plane's component Name until
	// OpStartController.
	OpStopController
	// OpStartController restarts the control plane's component Name; it reads the apiserver
	// afresh.
	OpStartController

	// OpSlowWebhook makes the next call to the admission webhook Name (any webhook when Name is
	// "") answer Duration ("by") later than its drawn delay: at or past the webhook's
	// timeoutSeconds, the call times out (webhooks.go). The world must call webhooks
	// (EnableWebhooks).
	OpSlowWebhook
	// OpRefuseWebhook makes the next call to the webhook Name fail as a refused connection.
	OpRefuseWebhook
	// OpFailWebhook makes the webhook Name's server answer its next call with HTTP Code.
	OpFailWebhook

	// The client faults (clientfaults.go): each is aimed at Client, a client of the apiserver
	// that its host registered with World.AddClient (the controller clientgo's harness runs, a
	// perturbation campaign's), is narrated as that client and handed to its host inside the
	// op's step. The host does it at once (a restart, a hidden change) or at the client's next
	// occasion (its next update, call or LIST from a watch cache).

	// OpCrashRestart crash-restarts the client: its process dies with what it held in memory
	// (caches, queues, its own bookkeeping) and starts again afresh, while the world goes on
	// (Sieve's intermediate state, perturb.go).
	OpCrashRestart
	// OpConflict answers the client's next update (PUT or PATCH of one object) 409 Conflict
	// without serving it, as the apiserver answers a write from a stale read.
	OpConflict
	// OpSlowCall delays the response to the client's next call by Duration on top of its
	// latency.
	OpSlowCall
	// OpStaleRead sends the client's next LIST that a watch cache serves (resourceVersion=0, an
	// informer's first) to replica Replica: with that replica lagging (OpLagReplica), the client
	// starts from a past state of the world (time travel).
	OpStaleRead
	// OpHiddenChange updates or deletes (the host's draw) an object one of the client's
	// informers holds, out of their sight: the change is wrapped in Sieve's unobserved state
	// (Perturbation{Kind: PerturbUnobserved}.Ops), so the informers learn of it only from a
	// relist.
	OpHiddenChange

	numOpKinds = iota + 1 // one past the last kind: the size of opRows
)

// OpKinds returns every op kind, in the order of their constants.
func OpKinds() []OpKind {
	out := make([]OpKind, 0, numOpKinds-1)
	for k := OpCreate; k < numOpKinds; k++ {
		out = append(out, k)
	}
	return out
}

// ParseOpKind returns the kind named name (as OpKind.String writes it).
func ParseOpKind(name string) (OpKind, error) {
	for k := OpCreate; k < numOpKinds; k++ {
		if opRows[k].name == name {
			return k, nil
		}
	}
	return 0, fmt.Errorf("world: unknown op kind %q", name)
}

func (k OpKind) String() string {
	if k.valid() {
		return opRows[k].name
	}
	return "OpKind(" + strconv.Itoa(int(k)) + ")"
}

// Fault reports whether k is a fault: an op that changes how the apiserver serves, not what it
// stores (every kind but the writes and sleep).
func (k OpKind) Fault() bool { return k.valid() && opRows[k].fault }

func (k OpKind) valid() bool { return k >= OpCreate && k < numOpKinds }

func (k OpKind) write() bool { return k >= OpCreate && k <= OpDelete }

// opArg is one field an op kind takes in its text form: which Op field, under which key, and
// whether String always writes it (and Parse wants it) even at its zero value.
type opArg struct {
	field    opField
	key      string
	required bool
}

// opRow is everything about one op kind.
type opRow struct {
	name string
	// args are the fields the kind takes, in the order String writes them; every other Op
	// field must be zero.
	args  []opArg
	fault bool
	// check is the kind's own validation of its fields' values (nil: any value will do).
	check func(op Op) error
	// target is what only the world can tell: the resource is served, the replica exists
	// (nil: nothing).
	target func(w *World, op Op) error
	// apply performs the op on the world's apiserver and narrates it, as actor "apiserver".
	apply func(w *World, op Op) error
	// draw is how a Generator draws one op of the kind from r (nil: the Generator does not
	// draw it as an extra kind: writes come from its own model, sleep is its intervals).
	draw func(g *Generator, r *rand.Rand) Op
}

// replicaRow is the row of a fault on one replica of the apiserver (Op.Replica, which must
// exist), named name: narrated as "<name> replica=N" and the fields more adds, then
// done by do. It takes the Duration under dur's key when dur is set. A Generator draws it on a
// random replica, and its Duration with drawDur.
func replicaRow(kind OpKind, name string, dur *opArg, more func(w *World, op Op) ([]sim.Field, error),
	do func(srv *fakeapi.Server, op Op) error, drawDur func(r *rand.Rand) time.Duration) opRow {
	row := opRow{name: name, fault: true, args: []opArg{replicaArg}, check: checkReplicaDuration, target: checkReplica}
	if dur != nil {
		row.args = append(row.args, *dur)
	}
	row.apply = func(w *World, op Op) error {
		f := []sim.Field{sim.FInt("replica", int64(op.Replica))}
		if more != nil {
			extra, err := more(w, op)
			if err != nil {
				return err
			}
			f = append(f, extra...)
		}
		w.s.Emit(narration.ActorAPIServer, name, f...)
		return do(w.srv, op)
	}
	row.draw = func(g *Generator, r *rand.Rand) Op {
		op := Op{Kind: kind, Replica: r.IntN(g.w.srv.Replicas().Len())}
		if drawDur != nil {
			op.Duration = drawDur(r)
		}
		return op
	}
	return row
}

// controllerRow is the row of a fault on one component of the control plane (Op.Name, which the
// world must run: Config.ControlPlane), named name: narrated as "<name> name=C" and the
// Duration under dur's key when dur is set, then done by do. A Generator draws it on a random
// component, and its Duration with drawDur.
func controllerRow(kind OpKind, name string, dur *opArg, do func(c controlplane.Component, op Op) error, drawDur func(r *rand.Rand) time.Duration) opRow {
	row := opRow{name: name, fault: true, args: []opArg{{field: fieldName, key: "name", required: true}}}
	if dur != nil {
		row.args = append(row.args, *dur)
	}
	row.check = func(op Op) error {
		if !slices.Contains(controllerNames, op.Name) {
			return fmt.Errorf("Name %q is not a control-plane component (%s)", op.Name, strings.Join(controllerNames, ", "))
		}
		return nonNegativeDuration(op)
	}
	row.target = func(w *World, _ Op) error {
		if w.cp == nil {
			return errors.New("the world runs no control plane (Config.ControlPlane, world controllers)")
		}
		return nil
	}
	row.apply = func(w *World, op Op) error {
		f := []sim.Field{sim.F("name", op.Name)}
		if dur != nil {
			f = append(f, sim.FDur(dur.key, op.Duration))
		}
		if w.cp == nil { // a Generator applies without target's check
			return errors.New("world: the world runs no control plane (Config.ControlPlane, world controllers)")
		}
		w.s.Emit(narration.ActorAPIServer, name, f...)
		for _, c := range w.cp.Components() {
			if c.Name() == op.Name {
				return do(c, op)
			}
		}
		return fmt.Errorf("world: no control-plane component %q", op.Name)
	}
	row.draw = func(_ *Generator, r *rand.Rand) Op {
		op := Op{Kind: kind, Name: drawnControllers[r.IntN(len(drawnControllers))]}
		if drawDur != nil {
			op.Duration = drawDur(r)
		}
		return op
	}
	return row
}

// controllerNames are the control plane's components, as their ops name them.
var controllerNames = []string{narration.ActorGarbageCollector, narration.ActorNamespaceController, narration.ActorWorkloadStatus, narration.ActorJobController}

// drawnControllers are the components a Generator draws a fault on: the job controller, added
// later, is left out so that a seed's generated workload stays the one it was (a Generator
// writes no Jobs, so a fault on it would do nothing either).
var drawnControllers = controllerNames[:3]

// The field lists the kinds share.
var (
	objectArgs = []opArg{{field: fieldResource, key: "resource"}, {field: fieldNamespace, key: "ns"}, {field: fieldName, key: "name"}}
	metaArgs   = []opArg{{field: fieldLabels, key: "label:"}, {field: fieldAnnotations, key: "annotation:"}}
	replicaArg = opArg{field: fieldReplica, key: "replica", required: true}
)

func args(groups ...[]opArg) []opArg {
	var out []opArg
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// opRows is the table of op kinds, indexed by kind. It is filled by init: its functions reach
// OpKind.String, which reads the table.
var opRows [numOpKinds]opRow

func init() {
	opRows = [numOpKinds]opRow{
		OpCreate: {name: "create",
			args: args(objectArgs, []opArg{{field: fieldGenerateName, key: "generateName"}}, metaArgs,
				[]opArg{{field: fieldFinalizers, key: "finalizers"}, {field: fieldContent, key: "content"}}),
			check: checkContentKeys, target: checkTarget, apply: applyWrite},
		OpUpdate: {name: "update",
			args:  args(objectArgs, metaArgs, []opArg{{field: fieldFinalizers, key: "finalizers"}, {field: fieldContent, key: "content"}}),
			check: checkContentKeys, target: checkTarget, apply: applyWrite},
		OpPatch: {name: "patch",
			args:  args(objectArgs, []opArg{{field: fieldPatchType, key: "patchType"}, {field: fieldPatch, key: "patch"}}),
			check: checkPatch, target: checkTarget, apply: applyWrite, draw: drawPatch},
		OpDelete: {name: "delete", args: args(objectArgs, metaArgs, []opArg{{field: fieldPropagation, key: "propagation"}}),
			check: checkPropagation, target: checkTarget, apply: applyWrite},
		OpCloseWatches: {name: "close-watches", fault: true,
			args: []opArg{{field: fieldCode, key: "code"}},
			check: func(op Op) error {
				if op.Code != 0 && !errorCode(op.Code) {
					return errors.New("Code must be 0 (a clean close) or an HTTP error code, 400 to 599")
				}
				return nil
			},
			apply: func(w *World, op Op) error {
				var err error
				if op.Code != 0 {
					err = fakeapi.NewWatchError(op.Code)
				}
				w.s.Emit("apiserver", "close-watches", sim.FInt("watches", int64(len(w.srv.Faults().Watchers()))), sim.FInt("code", int64(op.Code)))
				w.srv.Faults().CloseAllWatches(err)
				return nil
			},
			draw: func(_ *Generator, r *rand.Rand) Op {
				return Op{Kind: OpCloseWatches, Code: []int32{0, 410, 500}[r.IntN(3)]}
			}},
		OpCompact: {name: "compact", fault: true,
			apply: func(w *World, _ Op) error {
				rev := w.srv.Revision()
				w.s.Emit("apiserver", "compact", sim.F("rv", fakeapi.FormatRV(rev)))
				return w.srv.Faults().Compact(rev)
			},
			draw: func(*Generator, *rand.Rand) Op { return Op{Kind: OpCompact} }},
		OpFailNext: {name: "fail-next", fault: true,
			args: []opArg{{field: fieldVerb, key: "verb", required: true}, {field: fieldCode, key: "code", required: true}},
			check: func(op Op) error {
				if op.Verb < fakeapi.VerbCreate || op.Verb > fakeapi.VerbWatch || !errorCode(op.Code) {
					return errors.New("needs a Verb (fakeapi.VerbCreate to VerbWatch) and an HTTP error Code, 400 to 599")
				}
				return nil
			},
			apply: func(w *World, op Op) error {
				w.s.Emit("apiserver", "fail-next", sim.F("verb", op.Verb.String()), sim.FInt("code", int64(op.Code)))
				w.srv.Faults().FailNext(op.Verb, statusError(op.Code))
				return nil
			},
			draw: func(_ *Generator, r *rand.Rand) Op {
				return Op{Kind: OpFailNext, Verb: []fakeapi.Verb{fakeapi.VerbList, fakeapi.VerbWatch}[r.IntN(2)],
					Code: []int32{429, 500, 410}[r.IntN(3)]}
			}},
		OpSleep: {name: "sleep",
			args:  []opArg{{field: fieldDuration, key: "duration"}},
			check: nonNegativeDuration,
			apply: func(*World, Op) error { return nil }},
		OpBurnRevisions: {name: "burn-revisions", fault: true,
			args: []opArg{{field: fieldCount, key: "n", required: true}},
			check: func(op Op) error {
				if op.Count < 0 {
					return errors.New("negative Count")
				}
				return nil
			},
			apply: func(w *World, op Op) error {
				w.s.Emit("apiserver", "burn-revisions", sim.FInt("n", int64(op.Count)))
				w.srv.Faults().BurnRevisions(uint64(op.Count))
				return nil
			},
			draw: func(_ *Generator, r *rand.Rand) Op { return Op{Kind: OpBurnRevisions, Count: 1 + r.IntN(100)} }},
		OpSlowConsumer: {name: "slow-consumer", fault: true,
			args: []opArg{{field: fieldInformer, key: "informer"}},
			check: func(op Op) error {
				if op.Informer != "" && !validName(op.Informer) {
					return fmt.Errorf("invalid Informer name %q", op.Informer)
				}
				return nil
			},
			target: func(w *World, op Op) error {
				if op.Informer != "" && w.informerNamed(op.Informer) == nil {
					return fmt.Errorf("no informer named %q", op.Informer)
				}
				return nil
			},
			apply: applySlowConsumer,
			draw: func(g *Generator, r *rand.Rand) Op {
				op := Op{Kind: OpSlowConsumer}
				if i := r.IntN(len(g.w.informers) + 1); i < len(g.w.informers) {
					op.Informer = g.w.informers[i].Name()
				}
				return op
			}},
		OpTriggerBookmarks: {name: "trigger-bookmarks", fault: true,
			apply: func(w *World, _ Op) error {
				w.s.Emit("apiserver", "trigger-bookmarks")
				w.srv.Faults().TriggerBookmarks()
				return nil
			},
			draw: func(*Generator, *rand.Rand) Op { return Op{Kind: OpTriggerBookmarks} }},
		OpLagReplica: replicaRow(OpLagReplica, "lag-replica", &opArg{field: fieldDuration, key: "by", required: true},
			func(_ *World, op Op) ([]sim.Field, error) { return []sim.Field{sim.FDur("by", op.Duration)}, nil },
			func(srv *fakeapi.Server, op Op) error { return srv.Replicas().SetLag(op.Replica, op.Duration) },
			func(r *rand.Rand) time.Duration { return time.Duration(r.IntN(2000)) * time.Millisecond }),
		OpFreezeReplica: replicaRow(OpFreezeReplica, "freeze-replica", nil,
			func(w *World, op Op) ([]sim.Field, error) {
				at, err := w.srv.Replicas().Revision(op.Replica)
				return []sim.Field{sim.FInt("at", int64(at))}, err
			},
			func(srv *fakeapi.Server, op Op) error { return srv.Replicas().Freeze(op.Replica) }, nil),
		OpResumeReplica: replicaRow(OpResumeReplica, "resume-replica", nil, nil,
			func(srv *fakeapi.Server, op Op) error { return srv.Replicas().Resume(op.Replica) }, nil),
		OpReinitReplica: replicaRow(OpReinitReplica, "reinit-replica", &opArg{field: fieldDuration, key: "not-ready"},
			func(_ *World, op Op) ([]sim.Field, error) {
				return []sim.Field{sim.FDur("not-ready", op.Duration)}, nil
			},
			func(srv *fakeapi.Server, op Op) error { return srv.Replicas().Reinit(op.Replica, op.Duration) },
			func(r *rand.Rand) time.Duration { return time.Duration(r.IntN(3)) * time.Second }),
		OpRouteNext: replicaRow(OpRouteNext, "route-next", nil, nil,
			func(srv *fakeapi.Server, op Op) error { return srv.Replicas().RouteNext(op.Replica) }, nil),
		OpSlowController: controllerRow(OpSlowController, "slow-controller", &opArg{field: fieldDuration, key: "by", required: true},
			func(c controlplane.Component, op Op) error { return c.SetDelay(op.Duration) },
			func(r *rand.Rand) time.Duration { return time.Duration(r.IntN(10)) * time.Second }),
		OpStopController: controllerRow(OpStopController, "stop-controller", nil,
			func(c controlplane.Component, _ Op) error { c.SetStopped(true); return nil }, nil),
		OpStartController: controllerRow(OpStartController, "start-controller", nil,
			func(c controlplane.Component, _ Op) error { c.SetStopped(false); return nil }, nil),
		OpSlowWebhook: webhookRow(OpSlowWebhook, "slow-webhook", []opArg{{field: fieldDuration, key: "by", required: true}},
			func(op Op) error {
				if op.Duration <= 0 {
					return errors.New("needs a positive Duration (by)")
				}
				return nil
			},
			func(r *rand.Rand, op *Op) { op.Duration = time.Duration(1+r.IntN(40)) * time.Second }),
		OpRefuseWebhook: webhookRow(OpRefuseWebhook, "refuse-webhook", nil, nil, nil),
		OpFailWebhook: webhookRow(OpFailWebhook, "fail-webhook", []opArg{{field: fieldCode, key: "code", required: true}},
			func(op Op) error {
				if !errorCode(op.Code) {
					return errors.New("needs an HTTP error Code, 400 to 599")
				}
				return nil
			},
			func(r *rand.Rand, op *Op) { op.Code = []int32{500, 503, 404}[r.IntN(3)] }),

		OpCrashRestart: clientRow(OpCrashRestart, "crash-restart", nil),
		OpConflict:     clientRow(OpConflict, "conflict", nil),
		OpSlowCall: clientRow(OpSlowCall, "slow-call", &opArg{field: fieldDuration, key: "by", required: true},
			func(_ *Generator, r *rand.Rand, op *Op) { op.Duration = time.Duration(1+r.IntN(5)) * time.Second }),
		OpStaleRead: clientRow(OpStaleRead, "stale-read", &replicaArg,
			func(g *Generator, r *rand.Rand, op *Op) { op.Replica = r.IntN(g.w.srv.Replicas().Len()) }),
		OpHiddenChange: clientRow(OpHiddenChange, "hidden-change", nil),
	}
	argKeys = map[string]opField{}
	for k := OpCreate; k < numOpKinds; k++ {
		for _, a := range opRows[k].args {
			argKeys[a.key] = a.field
		}
	}
}

func errorCode(c int32) bool { return c >= 400 && c <= 599 }

func nonNegativeDuration(op Op) error {
	if op.Duration < 0 {
		return errors.New("negative Duration")
	}
	return nil
}

func checkReplicaDuration(op Op) error {
	if op.Replica < 0 {
		return errors.New("negative Replica")
	}
	return nonNegativeDuration(op)
}

func checkReplica(w *World, op Op) error {
	if n := w.srv.Replicas().Len(); op.Replica >= n {
		return fmt.Errorf("replica=%d: the apiserver has %d replicas (world replicas=N)", op.Replica, n)
	}
	return nil
}

func checkTarget(w *World, op Op) error {
	_, _, err := w.target(op)
	return err
}

// checkPropagation refuses a propagation policy kube-apiserver does not know.
func checkPropagation(op Op) error {
	switch op.Propagation {
	case "", metav1.DeletePropagationForeground, metav1.DeletePropagationBackground, metav1.DeletePropagationOrphan:
		return nil
	}
	return fmt.Errorf("unknown Propagation %q (want Foreground, Background or Orphan)", op.Propagation)
}

func checkContentKeys(op Op) error {
	for _, k := range []string{"apiVersion", "kind", "metadata"} {
		if _, ok := op.Content[k]; ok {
			return fmt.Errorf("Content must not hold %q: the op's other fields say it", k)
		}
	}
	return nil
}

func checkPatch(op Op) error {
	if _, ok := patchNames[op.PatchType]; !ok {
		return fmt.Errorf("unknown PatchType %q", op.PatchType)
	}
	if op.Patch == "" {
		return errors.New("empty Patch")
	}
	return nil
}

// applyWrite performs a write; a refused one is narrated ("write-error") and returned.
func applyWrite(w *World, op Op) error {
	err := w.write(op)
	if err != nil {
		if cause := statusCause(err); cause != "" {
			w.s.Emit(narration.ActorAPIServer, narration.KindWriteError, sim.F(narration.FieldOp, op.String()), sim.F(narration.FieldErr, err.Error()), sim.F(narration.FieldCause, cause))
		} else {
			w.s.Emit(narration.ActorAPIServer, narration.KindWriteError, sim.F(narration.FieldOp, op.String()), sim.F(narration.FieldErr, err.Error()))
		}
	}
	return err
}

// applySlowConsumer cuts off the informer's open watches (every open watch without Informer).
// The world names each informer's ListerWatcher after it, so the request record says which
// watches are the informer's.
func applySlowConsumer(w *World, op Op) error {
	ids := w.srv.Faults().Watchers()
	if op.Informer != "" {
		client := w.informerNamed(op.Informer).src.lw.Name
		mine := map[uint64]bool{}
		for _, r := range w.srv.Requests() {
			if r.Verb == fakeapi.VerbWatch && r.WatchID != 0 && r.Client == client {
				mine[r.WatchID] = true
			}
		}
		kept := ids[:0]
		for _, id := range ids {
			if mine[id] {
				kept = append(kept, id)
			}
		}
		ids = kept
	}
	w.s.Emit("apiserver", "slow-consumer", sim.FInt("watches", int64(len(ids))))
	var errs []error
	for _, id := range ids {
		errs = append(errs, w.srv.Faults().CloseSlowConsumer(id))
	}
	return errors.Join(errs...)
}

// drawPatch patches the labels of an object the Generator knows to exist, or, with none, draws
// an ordinary write.
func drawPatch(g *Generator, r *rand.Rand) Op {
	live := g.live()
	if len(live) == 0 {
		return g.nextWrite()
	}
	o := live[r.IntN(len(live))]
	return Op{Kind: OpPatch, Resource: g.cfg.Resource, Namespace: o.namespace, Name: o.name, PatchType: types.MergePatchType,
		Patch: `{"metadata":{"labels":{"p":"` + strconv.Itoa(r.IntN(3)) + `"}}}`}
}

// apply performs a validated op (World.check) and narrates it; with Config.RecordOps it records
// it (a sleep, which applies nothing, is not recorded, nor an op applied while another is, such
// as the writes a client's host makes of a hidden change: the outer op stands for them).
// fromFaultPoint says a Generator's fault point issued it.
func (w *World) apply(op Op, fromFaultPoint bool) error {
	if !op.Kind.valid() {
		invariant.Check(false, "world: apply: unvalidated op kind %v", op.Kind)
	}
	w.applying++
	err := opRows[op.Kind].apply(w, op)
	w.applying--
	if w.cfg.RecordOps && op.Kind != OpSleep && w.applying == 0 {
		rec := GeneratedOp{Time: w.s.Now(), Op: op, FaultPoint: fromFaultPoint}
		if err != nil {
			rec.Err = err.Error()
		}
		w.opLog.Append(rec)
	}
	return err
}

// Ops returns every op the world applied so far, in order: Apply's, Script's and every
// Generator's (fault points' included), as a Generator records its own. It needs
// Config.RecordOps; scenarios.GeneratedDirectives writes them out as a scenario file.
func (w *World) Ops() ([]GeneratedOp, error) {
	if !w.cfg.RecordOps {
		return nil, errors.New("world: Ops: the world records no ops (set Config.RecordOps)")
	}
	return w.opLog.All(), nil
}

// informerNamed returns the world's informer called name, or nil.
func (w *World) informerNamed(name string) *Informer {
	for _, n := range w.informers {
		if n.Name() == name {
			return n
		}
	}
	return nil
}

// kindsTaking lists the kinds that take field f, for the error that says where it belongs.
func kindsTaking(f opField) string {
	var names []string
	for k := OpCreate; k < numOpKinds; k++ {
		for _, a := range opRows[k].args {
			if a.field == f {
				names = append(names, opRows[k].name)
				break
			}
		}
	}
	switch len(names) {
	case 0:
		return "no kind"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
