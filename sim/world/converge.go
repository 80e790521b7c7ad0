package world

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/internal/invariant"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world/narration"
)

// Quiet reports whether the world has nothing left to do that the network can give it now: the
// workload (scripts, generators) has nothing left to apply; every started, unstopped informer
// is synced, watching on a stream whose response arrived, with nothing pending at the
// apiserver's watcher, the watch cache serving it caught up with the store, nothing on the
// wire, no request pending or in flight, an empty queue, and no registration with a buffered
// notification or inside a call's CallDuration; no user actor offers an action, no user timer
// (After) is armed, and every quiet condition holds. It says nothing about the cache's content:
// CheckConverged does. Periodic timers (bookmarks, watch deadlines, compaction, resync ticks)
// do not count, which is why a world with open watches is run with RunUntilConverged or RunFor
// rather than sim.Sim.RunUntilQuiescent: a bookmark every minute keeps a deadline inside the
// quiescence window.
func (w *World) Quiet() bool {
	if w.pendingOps > 0 {
		return false
	}
	for _, n := range w.informers {
		if !n.quiet() {
			return false
		}
	}
	return w.userQuiet()
}

func (n *Informer) quiet() bool {
	if !n.started || n.stopped {
		return true
	}
	// First the handlers' own counts, which cost no lock: while a notification is being
	// delivered to each handler (most steps of a busy world, and RunUntil asks before every
	// one), one of them says "not quiet". A count that is too high cannot hide here: its actor
	// offers a delivery, which the informer refuses loudly; one that is too low is caught by
	// the comparison with the informer's own count below.
	for _, h := range n.handlers {
		if h.buffered.len() > 0 && !h.Removed() {
			return false
		}
	}
	st := n.net.stream
	// A request on the network leaves no open stream (a LIST: st == nil; a WATCH: !st.opened).
	if !n.inf.HasSynced() || n.st.Reflector().HasRequest() || st == nil || !st.opened || st.ended ||
		st.onWire() > 0 || st.w.Ready() || !n.st.Reflector().Watching() {
		return false
	}
	// A lagging watch cache (fakeapi.md MH-12) still owes the stream the revisions it has not
	// processed.
	if srv := n.w.srv; replicaRevision(srv, st.w.Replica()) < srv.Revision() {
		return false
	}
	if n.st.QueueLen() > 0 {
		return false
	}
	for _, h := range n.handlers {
		b := h.Buffered()
		if b != h.buffered.len() && !h.Removed() {
			// The actor's count went wrong: it would offer deliveries that are not there, or
			// never offer one that is.
			invariant.Check(false, "world: %s: %d notifications buffered, the handler's actor counts %d", h.actor, b, h.buffered.len())
		}
		if h.Busy() || b > 0 {
			return false
		}
	}
	return true
}

// RunUntilConverged runs until the world is Quiet (for at most budget of simulated time), then
// checks CheckConverged. This is the liveness phase of a run (style.md rule 13): turn faults off
// first (SetFaultsEnabled(false)) and stop the workload. A negative budget, and an informer
// that was added but never started (it would never sync, and nothing could be checked), are
// usage errors (errors.Is(err, ErrUsage)): the call is wrong, the run did not fail, and nothing
// ran.
func (w *World) RunUntilConverged(budget time.Duration) error {
	if budget < 0 {
		return usageError{fmt.Errorf("world: RunUntilConverged: negative budget %v", budget)}
	}
	if err := w.settleOutside(); err != nil { // notices informers a factory started since the last step
		return err
	}
	for _, n := range w.informers {
		if !n.started && !n.stopped {
			return usageError{fmt.Errorf("world: RunUntilConverged: informer %s was never started (call its Start)", n.Name())}
		}
	}
	if err := w.s.RunUntil(w.Quiet, budget); err != nil {
		var failed *sim.RunError
		if errors.As(err, &failed) {
			return err // a step failed (a panic, a violated oracle): that is the news, not quiescence
		}
		return fmt.Errorf("world: the world did not quiesce: %w", err)
	}
	return w.CheckConverged()
}

// CheckConverged checks first that no object the apiserver lent the world's informers was
// changed (a *Violation of OracleReadOnlyObjects, from fakeapi.Lending.Check), then is the
// eventual-consistency oracle (design.md "Oracles"), then the user's checks: every started,
// unstopped informer's cache equals the apiserver's current state for its resource, namespace
// and selectors, after its Transform (same keys; same resourceVersions and content, or the
// informer's Equal); so does every current handler's replayed view; and every check added with
// AddCheck passes. It reports the first divergence,
// in informer, then key order, then the checks in the order added, with the seed and the repro
// line. A divergence is a *Violation of OracleEventualConsistency; a failed check is an error
// naming the check. It reads the apiserver with fakeapi.Lending.Snapshot, which changes nothing:
// a run with and without checks is the same run.
func (w *World) CheckConverged() error {
	if err := w.srv.Lending().Check(); err != nil {
		return w.violationAbout(OracleReadOnlyObjects, err.Error(), mutatedKey(err), w.convergedEvent())
	}
	for _, n := range w.informers {
		if !n.started || n.stopped {
			continue
		}
		if err := n.checkConverged(); err != nil {
			var d *divergence
			key := ""
			if errors.As(err, &d) {
				key = d.key
			}
			return w.violationAbout(OracleEventualConsistency, err.Error(), key, w.convergedEvent())
		}
	}
	for _, c := range w.checks {
		if err := c.check(); err != nil {
			return fmt.Errorf("world: check %q failed: %w (seed %d; repro: %s)", c.name, err, w.s.Seed(), w.s.Config().Repro)
		}
	}
	return nil
}

func (n *Informer) checkConverged() error {
	src := n.src
	// Lent, not copied: the check only reads (and the Transform below gets a copy, unless it
	// only reads too).
	list, err := n.w.srv.Lending().Snapshot(src.gvr, src.ns, metav1.ListOptions{LabelSelector: src.opts.LabelSelector, FieldSelector: src.opts.FieldSelector}, "world/eventual-consistency")
	if err != nil {
		return fmt.Errorf("%s: reading the apiserver: %w", n.Name(), err)
	}
	want := make(map[string]any, len(list.Items))
	for i := range list.Items {
		u := &list.Items[i]
		var obj any = u
		if src.opts.Transform != nil {
			in := u
			if !src.opts.TransformReadsOnly {
				in = u.DeepCopy()
			}
			if obj, err = src.opts.Transform(in); err != nil {
				return fmt.Errorf("%s: Transform of %s: %w", n.Name(), keyOf(u), err)
			}
		}
		want[keyOf(u)] = obj
	}
	cache := map[string]any{}
	for _, obj := range n.inf.GetStore().List() {
		k, _ := describe(obj)
		cache[k] = obj
	}
	rv := list.GetResourceVersion()
	if err := diffStates(want, cache, src.opts.Equal, nil); err != nil {
		return fmt.Errorf("%s: cache diverges from the apiserver at rv=%s: %w", n.Name(), rv, err)
	}
	for _, h := range n.handlers {
		if h.Removed() {
			continue
		}
		// The cache matched: a view entry that is the cached object itself matches too.
		if err := diffStates(want, h.rec.View(), src.opts.Equal, cache); err != nil {
			return fmt.Errorf("%s: replayed view diverges from the apiserver at rv=%s: %w", h.actor, rv, err)
		}
	}
	return nil
}

func keyOf(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return ns + "/" + u.GetName()
	}
	return u.GetName()
}

// diffStates reports the first key (in sorted order) where got differs from want: by
// resourceVersion and content, or by equal when it is set. matched, if not nil, holds objects
// already found to match want (the informer's cache): a got entry that is the very same
// *unstructured.Unstructured as matched's, for its key, is not compared again, since the same
// object compares the same (only without equal: the user's function is not assumed pure).
func diffStates(want, got map[string]any, equal func(got, want any) bool, matched map[string]any) error {
	keys := make([]string, 0, len(want)+len(got))
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		wo, inWant := want[k]
		g, inGot := got[k]
		switch {
		case !inGot:
			return &divergence{k, fmt.Sprintf("missing, apiserver has rv=%s", rvOf(wo))}
		case !inWant:
			return &divergence{k, fmt.Sprintf("present at rv=%s, apiserver has none", rvOf(g))}
		case equal == nil && sameObject(g, matched[k]):
		case equal != nil:
			if !equal(g, wo) {
				return &divergence{k, fmt.Sprintf("not Equal to the apiserver's (rv=%s, apiserver has rv=%s)", rvOf(g), rvOf(wo))}
			}
		case rvOf(wo) != rvOf(g):
			return &divergence{k, fmt.Sprintf("rv=%s, apiserver has rv=%s", rvOf(g), rvOf(wo))}
		case !reflect.DeepEqual(wo, g):
			return &divergence{k, fmt.Sprintf("same rv=%s but different content", rvOf(wo))}
		}
	}
	return nil
}

// divergence is diffStates' finding: the first key whose state differs, and how.
type divergence struct{ key, msg string }

func (d *divergence) Error() string { return "key " + d.key + ": " + d.msg }

// sameObject reports whether a and b are the same *unstructured.Unstructured.
func sameObject(a, b any) bool {
	ua, ok1 := a.(*unstructured.Unstructured)
	ub, ok2 := b.(*unstructured.Unstructured)
	return ok1 && ok2 && ua == ub && ua != nil
}

func rvOf(obj any) string {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		// The common case, read as GetResourceVersion does (a missing or non-string value
		// reads ""), without meta.Accessor's interface checks or the nested-field walk.
		md, _ := u.Object["metadata"].(map[string]any)
		rv, _ := md["resourceVersion"].(string)
		return rv
	}
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetResourceVersion()
	}
	return "?"
}

var errNilFunc = errors.New("nil func")

// convergedEvent stands for the moment of a convergence check in a Violation: the check reads
// the state the whole trace led to, at this step and time.
func (w *World) convergedEvent() sim.Event {
	return sim.Event{Step: w.s.StepCount(), Time: w.s.Now(), Actor: narration.ActorWorld, Kind: narration.KindCheckConverged}
}

// replicaRevision is the revision replica i's watch cache has processed; a stream is always
// served by one of the server's replicas, so the index is in range.
func replicaRevision(srv *fakeapi.Server, i int) uint64 {
	rv, err := srv.Replicas().Revision(i)
	invariant.Check(err == nil, "world: a stream served by %v", err)
	return rv
}

// ErrUsage marks an error of the caller rather than of the run (errors.Is): a call that does not
// fit the world, such as converging with an informer that was never started. Replaying the seed
// would only repeat the mistake, so such an error carries no repro line.
var ErrUsage = errors.New("world: usage error")

// usageError is an error whose message is its own but which errors.Is matches to ErrUsage.
type usageError struct{ error }

func (e usageError) Is(target error) bool { return target == ErrUsage }
func (e usageError) Unwrap() error        { return e.error }
