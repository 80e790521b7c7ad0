package sim

import (
	"fmt"
	"reflect"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Quiet reports whether the workload (scripts, generators) has nothing left to apply and every
// started, unstopped informer is caught up with what the network can give it now: synced,
// watching on a stream whose response arrived, nothing pending at the apiserver's watcher, the
// watch cache serving it caught up with the store, nothing on the wire, no request pending or in
// flight, an empty queue and no buffered notification. It says nothing about the cache's content: CheckConverged does. Periodic
// timers (bookmarks, watch deadlines, compaction, resync ticks) do not count, which is why a
// world with open watches is run with RunUntilConverged or RunFor rather than
// Sim.RunUntilQuiescent: a bookmark every minute keeps a deadline inside the quiescence window.
func (w *World) Quiet() bool {
	if w.pendingOps > 0 {
		return false
	}
	for _, n := range w.informers {
		if !n.quiet() {
			return false
		}
	}
	return true
}

func (n *InformerNode) quiet() bool {
	if !n.started || n.stopped {
		return !n.started || n.stopped
	}
	st := n.stream
	// A request on the network leaves no open stream (a LIST: st == nil; a WATCH: !st.opened).
	if !n.inf.HasSynced() || n.hasRequest() || st == nil || !st.opened || st.ended ||
		len(st.wire) > 0 || st.w.Pending() > 0 || st.w.Done() || !n.st.Reflector().Watching() {
		return false
	}
	// A lagging watch cache (fakeapi.md MH-12) still owes the stream the revisions it has not
	// processed.
	if srv := n.w.srv; srv.ReplicaRevision(st.w.Replica()) < srv.Revision() {
		return false
	}
	if n.st.QueueLen() > 0 {
		return false
	}
	for _, h := range n.handlers {
		if h.Pending() > 0 {
			return false
		}
	}
	return true
}

// RunUntilConverged runs until the world is Quiet (for at most budget of simulated time), then
// checks CheckConverged. This is the liveness phase of a run (style rule 13): turn faults off
// first (Sim.SetFaultsEnabled(false)) and stop the workload. A negative budget is an error.
func (w *World) RunUntilConverged(budget time.Duration) error {
	if budget < 0 {
		return fmt.Errorf("sim: RunUntilConverged: negative budget %v", budget)
	}
	if err := w.s.RunUntil(w.Quiet, budget); err != nil {
		return fmt.Errorf("sim: the world did not quiesce: %w", err)
	}
	return w.CheckConverged()
}

// CheckConverged is the eventual-consistency oracle (design.md "Oracles"): every started,
// unstopped informer's cache equals the apiserver's current state for its resource and
// namespace (same keys, resourceVersions and content), and so does every current handler's
// replayed view. It reports the first divergence, in informer, then key order. It reads the
// apiserver with a LIST at resourceVersion "" (a consistent read, recorded as a request); an
// injected LIST failure still queued is consumed, and the read retried up to
// maxOracleListRetries times.
func (w *World) CheckConverged() error {
	for _, n := range w.informers {
		if !n.started || n.stopped {
			continue
		}
		// An injected failure nobody consumed fails this read; failures queue first-in
		// first-out, so a bounded number of retries drains them.
		list, err := w.srv.List(n.gvr, n.namespace, metav1.ListOptions{})
		for i := 0; err != nil && i < maxOracleListRetries; i++ {
			list, err = w.srv.List(n.gvr, n.namespace, metav1.ListOptions{})
		}
		if err != nil {
			return fmt.Errorf("sim: %s: CheckConverged: listing the apiserver: %w", n.name, err)
		}
		want := map[string]any{}
		for i := range list.Items {
			u := &list.Items[i]
			want[keyOf(u)] = u
		}
		cache := map[string]any{}
		for _, obj := range n.inf.GetStore().List() {
			k, _ := describe(obj)
			cache[k] = obj
		}
		if err := diffStates(want, cache); err != nil {
			return fmt.Errorf("sim: %s: cache diverges from the apiserver at rv=%s: %w (seed %d)", n.name, list.GetResourceVersion(), err, w.s.Seed())
		}
		for _, h := range n.handlers {
			if h.Removed() {
				continue
			}
			if err := diffStates(want, h.rec.view); err != nil {
				return fmt.Errorf("sim: %s: replayed view diverges from the apiserver at rv=%s: %w (seed %d)", h.actor, list.GetResourceVersion(), err, w.s.Seed())
			}
		}
	}
	return nil
}

// maxOracleListRetries bounds the reads CheckConverged retries after injected failures.
const maxOracleListRetries = 16

func keyOf(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return ns + "/" + u.GetName()
	}
	return u.GetName()
}

// diffStates reports the first key (in sorted order) where got differs from want.
func diffStates(want, got map[string]any) error {
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
		go_, inGot := got[k]
		switch {
		case !inGot:
			return fmt.Errorf("key %s: missing, apiserver has rv=%s", k, rvOf(wo))
		case !inWant:
			return fmt.Errorf("key %s: present at rv=%s, apiserver has none", k, rvOf(go_))
		case rvOf(wo) != rvOf(go_):
			return fmt.Errorf("key %s: rv=%s, apiserver has rv=%s", k, rvOf(go_), rvOf(wo))
		case !sameContent(wo, go_):
			return fmt.Errorf("key %s: same rv=%s but different content", k, rvOf(wo))
		}
	}
	return nil
}

func rvOf(obj any) string {
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetResourceVersion()
	}
	return "?"
}

func sameContent(a, b any) bool {
	ua, ok1 := a.(*unstructured.Unstructured)
	ub, ok2 := b.(*unstructured.Unstructured)
	if ok1 && ok2 {
		return reflect.DeepEqual(ua.Object, ub.Object)
	}
	return reflect.DeepEqual(a, b)
}
