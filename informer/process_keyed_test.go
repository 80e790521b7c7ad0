package informer

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clocktesting "k8s.io/utils/clock/testing"
)

// The keyed processing path (process_keyed.go) must be invisible: it only saves computing keys
// again. Method: two informers, one popping its RealFIFO with popKeyed (the default) and one
// with PopBatch/Pop through handleBatchDeltas/handleDeltas (unkeyed), get the same random
// script (writes, deletes, bookmarks, expired watches and relists, closed streams, late joins,
// removals, resync ticks, a cached object renamed in place) and the same random interleaving of Reflector, queue and listener
// steps, for every RealFIFO mode, with batch pop on and off, with and without a transform (whose
// objects the queue keeps no key for, and one of which has no key at all), for a shared informer and for a Runner (whose one
// handler is called inside the pop). Every step event (its text, its Object and its handler
// list), every handler call, the cache and its RV must be the same at every step.
func TestKeyedProcessingMatchesUnkeyed(t *testing.T) {
	for _, runner := range []bool{false, true} {
		for _, mode := range []QueueMode{QueueRealFIFO, QueueRealFIFONonAtomic} {
			for _, batch := range []bool{true, false} {
				for _, transform := range []bool{false, true} {
					name := fmt.Sprintf("runner=%v/%v/batch=%v/transform=%v", runner, mode, batch, transform)
					t.Run(name, func(t *testing.T) {
						for seed := uint64(1); seed <= 20; seed++ {
							keyedVersusUnkeyed(t, seed, SharedIndexInformerOptions{
								QueueMode: mode, DisableBatchPop: !batch, ResyncPeriod: 3 * time.Second,
							}, transform, runner)
						}
					})
				}
			}
		}
	}
}

// keyedTwin is one side of keyedVersusUnkeyed: the step harness, its handlers and what it saw.
type keyedTwin struct {
	e      *infStep
	runner bool
	recs   []*infRec
	regs   []ResourceEventHandlerRegistration
	events []string
}

func newKeyedTwin(seed uint64, opts SharedIndexInformerOptions, transform, runner, unkeyed bool) *keyedTwin {
	opts.Rand = rand.New(rand.NewPCG(seed, 7))
	var tf TransformFunc
	if transform {
		// Idempotent, and returns a new object: the queue then keeps no key for it. Object "e"
		// loses its metadata, so its key fails at processing (the keyed path's fallback).
		tf = func(o any) (any, error) {
			if m, ok := o.(*metav1.PartialObjectMetadata); ok {
				if m.Name == "e" {
					return dataNoMeta{id: "e@" + m.ResourceVersion}, nil
				}
				return m.DeepCopy(), nil
			}
			return o, nil
		}
	}
	tw := &keyedTwin{runner: runner}
	if runner {
		e := &infStep{lw: newInfLW(), clock: clocktesting.NewFakeClock(infT0)}
		rec := &infRec{}
		_, r := NewInformerWithOptions(InformerOptions{
			ListerWatcher: e.lw, ObjectType: &metav1.PartialObjectMetadata{}, Handler: rec,
			ResyncPeriod: opts.ResyncPeriod, Transform: tf, Clock: e.clock, Rand: opts.Rand,
			QueueMode: opts.QueueMode, DisableBatchPop: opts.DisableBatchPop,
		})
		e.inf = r.s
		e.st, _ = r.Steps()
		tw.e, tw.recs = e, []*infRec{rec}
	} else {
		tw.e = newInfStep(nil, opts)
		if tf != nil {
			_ = tw.e.inf.SetTransform(tf)
		}
	}
	tw.e.inf.(*sharedIndexInformer).unkeyed = unkeyed
	tw.e.st.SetObserver(func(ev StepEvent) {
		line := ev.String()
		if ev.Object != nil {
			line += " object=" + infDescribe(ev.Object)
		}
		line += fmt.Sprintf(" handlers=%v", ev.Handlers)
		tw.events = append(tw.events, line)
	})
	return tw
}

// addHandler registers a recorder; a Runner has its one handler already.
func (tw *keyedTwin) addHandler(period time.Duration) {
	if tw.runner {
		return
	}
	rec, reg := tw.e.handler(&period)
	tw.recs = append(tw.recs, rec)
	tw.regs = append(tw.regs, reg)
}

// state is everything a step may change that the test compares.
func (tw *keyedTwin) state() string {
	s := fmt.Sprintf("queue=%d", tw.e.st.QueueLen())
	for _, l := range tw.e.st.Listeners() {
		s += fmt.Sprintf(" h%d:%d:%v", l.ID, l.Buffered, l.Synced)
	}
	for i, r := range tw.recs {
		s += fmt.Sprintf(" rec%d=%q", i, r.take())
	}
	var cached []string
	for _, o := range tw.e.inf.GetStore().List() {
		cached = append(cached, infDescribe(o))
	}
	s += fmt.Sprintf(" cache=%v rv=%s synced=%v", cached, tw.e.inf.GetStore().LastStoreSyncResourceVersion(), tw.e.inf.HasSynced())
	ev := tw.events
	tw.events = nil
	return s + fmt.Sprintf(" events=%q", ev)
}

func keyedVersusUnkeyed(t *testing.T, seed uint64, opts SharedIndexInformerOptions, transform, runner bool) {
	t.Helper()
	twins := [2]*keyedTwin{
		newKeyedTwin(seed, opts, transform, runner, false),
		newKeyedTwin(seed, opts, transform, runner, true),
	}
	both := func(f func(tw *keyedTwin)) {
		for _, tw := range twins {
			f(tw)
		}
	}
	both(func(tw *keyedTwin) {
		tw.addHandler(0)
		tw.addHandler(3 * time.Second)
	})
	both(func(tw *keyedTwin) { tw.e.st.Start() })
	rng := rand.New(rand.NewPCG(seed, 99))
	names := []string{"a", "b", "c", "d", "e"}
	for step := range 600 {
		r := rng.IntN(100)
		switch {
		case r < 25:
			both(func(tw *keyedTwin) { tw.e.serveOne() })
		case r < 45:
			both(func(tw *keyedTwin) {
				if tw.e.st.QueueLen() > 0 {
					_ = tw.e.st.ProcessNext()
				}
			})
		case r < 70:
			k := rng.IntN(8)
			both(func(tw *keyedTwin) {
				ls := tw.e.st.Listeners()
				if len(ls) > 0 && ls[k%len(ls)].Buffered > 0 {
					tw.e.st.DeliverNext(ls[k%len(ls)].Registration)
				}
			})
		case r < 86:
			name := names[rng.IntN(len(names))]
			both(func(tw *keyedTwin) { tw.e.lw.set(name) })
		case r < 91:
			name := names[rng.IntN(len(names))]
			both(func(tw *keyedTwin) {
				if _, ok := tw.e.lw.objs[name]; ok {
					tw.e.lw.del(name)
				}
			})
		case r < 93:
			both(func(tw *keyedTwin) { tw.e.lw.bookmark() })
		case r < 95:
			both(func(tw *keyedTwin) { tw.e.lw.expire() })
		case r < 96:
			both(func(tw *keyedTwin) { tw.e.lw.closeWatches() })
		case r == 96 && step%3 == 0:
			// A handler that renames a cached object, which it must not do: events about it
			// then name its new key, as describeKey always did (cachedKey).
			both(func(tw *keyedTwin) {
				if objs := tw.e.inf.GetStore().List(); len(objs) > 0 {
					if m, ok := objs[0].(*metav1.PartialObjectMetadata); ok {
						m.Name += "-renamed"
					}
				}
			})
		case r < 97:
			both(func(tw *keyedTwin) { tw.addHandler(5 * time.Second) })
		case r < 98:
			k := rng.IntN(8)
			both(func(tw *keyedTwin) {
				if len(tw.regs) > 0 {
					_ = tw.e.inf.RemoveEventHandler(tw.regs[k%len(tw.regs)])
				}
			})
		default:
			d := time.Duration(1+rng.IntN(4)) * time.Second
			both(func(tw *keyedTwin) {
				target := tw.e.clock.Now().Add(d)
				for {
					dl, ok := tw.e.st.NextDeadline()
					if !ok || dl.After(target) {
						break
					}
					if dl.After(tw.e.clock.Now()) {
						tw.e.clock.SetTime(dl)
					}
					tw.e.st.Tick()
				}
				tw.e.clock.SetTime(target)
			})
		}
		keyed, unkeyed := twins[0].state(), twins[1].state()
		if diff := cmp.Diff(keyed, unkeyed); diff != "" {
			t.Fatalf("seed %d, step %d: keyed and unkeyed processing differ (-keyed +unkeyed):\n%s", seed, step, diff)
		}
	}
	both(func(tw *keyedTwin) { tw.e.quiesce() })
	if diff := cmp.Diff(twins[0].state(), twins[1].state()); diff != "" {
		t.Fatalf("seed %d, at quiescence: keyed and unkeyed processing differ (-keyed +unkeyed):\n%s", seed, diff)
	}
}

// hasKey must agree with DeletionHandlingMetaNamespaceKeyFunc on every kind of object, including
// names and namespaces that contain the separator.
func TestHasKey(t *testing.T) {
	for _, tc := range []struct {
		obj any
		key string
	}{
		{dataMeta("ns", "p", "1"), "ns/p"},
		{dataMeta("", "node", "1"), "node"},
		{dataMeta("a", "b/c", "1"), "a/b/c"},
		{dataMeta("a/b", "c", "1"), "a/b/c"},
		{dataMeta("", "", "1"), ""},
		{dataObj("ns", "p", "1"), "ns/p"},
		{dataObj("", "node", "1"), "node"},
		{dataObj("a/b", "c", "1"), "a/b/c"},
		{oddUnstructured()[0], ""},
		{oddUnstructured()[2], "ns/"},
		{DeletedFinalStateUnknown{Key: "ns/gone"}, "ns/gone"},
		{ExplicitKey("ns/explicit"), "ns/explicit"},
	} {
		want, err := DeletionHandlingMetaNamespaceKeyFunc(tc.obj)
		if err != nil || want != tc.key {
			t.Fatalf("%v: key %q, %v; the test expects %q", tc.obj, want, err, tc.key)
		}
		if !hasKey(tc.key, tc.obj) {
			t.Errorf("hasKey(%q, %v) = false, want true", tc.key, tc.obj)
		}
		for _, other := range []string{tc.key + "x", "x" + tc.key, "ns/q", "ns", "/ns/p", "ns/p/", "a/bc"} {
			if other != tc.key && hasKey(other, tc.obj) {
				t.Errorf("hasKey(%q, %v) = true, want false (its key is %q)", other, tc.obj, tc.key)
			}
		}
	}
	for _, obj := range []any{nil, dataNoMeta{id: "x"}} {
		if hasKey("", obj) || hasKey("x", obj) {
			t.Errorf("hasKey(_, %v) = true for an object without a key", obj)
		}
		if got := cachedKey("ns/p", obj); got != describeKey(obj) {
			t.Errorf("cachedKey(ns/p, %v) = %q, want describeKey's %q", obj, got, describeKey(obj))
		}
	}
	renamed := dataMeta("ns", "p2", "1")
	if got := cachedKey("ns/p", renamed); got != "ns/p2" {
		t.Errorf("cachedKey of a renamed object = %q, want its own key ns/p2", got)
	}
}

// oddUnstructured returns unstructured objects whose metadata is malformed in the ways the
// getters tolerate: metadata absent, not a map, a name that is not a string, a nil map.
func oddUnstructured() []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		{Object: map[string]any{"metadata": "not a map"}},
		{Object: map[string]any{}},
		{Object: map[string]any{"metadata": map[string]any{"namespace": "ns", "name": 7}}},
		{Object: map[string]any{"metadata": map[string]any{"name": "n"}}},
		{},
	}
}

// unstructuredName reads what GetNamespace and GetName read, malformed metadata included; so
// ObjectToName's shortcut for unstructured objects gives what meta.Accessor would.
func TestUnstructuredNameMatchesGetters(t *testing.T) {
	objs := append(oddUnstructured(), dataObj("ns", "p", "1"), dataObj("", "node", "1"))
	for _, u := range objs {
		ns, name := unstructuredName(u)
		if ns != u.GetNamespace() || name != u.GetName() {
			t.Errorf("unstructuredName(%v) = %q, %q; the getters say %q, %q", u.Object, ns, name, u.GetNamespace(), u.GetName())
		}
		got, err := ObjectToName(u)
		if want := (ObjectName{u.GetNamespace(), u.GetName()}); err != nil || got != want {
			t.Errorf("ObjectToName(%v) = %v, %v; want %v", u.Object, got, err, want)
		}
	}
	// A nil *Unstructured has no metadata: an error, and no key, rather than a panic.
	var none *unstructured.Unstructured
	if _, err := ObjectToName(none); err == nil || hasKey("", none) {
		t.Errorf("ObjectToName(nil *Unstructured) = %v, hasKey %v; want an error and false", err, hasKey("", none))
	}
}

// notify classifies an update as isSyncUpdate does and gives the step events describeRV's RVs,
// whether or not its caller read the new object's RV (objRV), for every shape of object:
// tombstones and objects without metadata are never sync-class, even when describeRV finds
// equal RVs.
func TestNotifyReadsRVsAsBefore(t *testing.T) {
	e := newInfStep(t, SharedIndexInformerOptions{})
	s := e.inf.(*sharedIndexInformer)
	var last StepEvent
	e.st.SetObserver(func(ev StepEvent) { last = ev })
	a1 := dataObj("ns", "a", "1")
	objs := []any{a1, dataObj("ns", "a", "1"), dataObj("ns", "a", "2"), dataMeta("ns", "a", "1"),
		DeletedFinalStateUnknown{Key: "ns/a", Obj: a1}, dataNoMeta{id: "x"}, nil}
	for _, old := range objs {
		for _, obj := range objs {
			for _, rv := range []objRV{{}, readRV(obj)} {
				s.notify(NotificationUpdate, old, obj, rv, "ns/a", false)
				if last.Kind != StepDistributed || last.Sync != isSyncUpdate(old, obj) ||
					last.ResourceVersion != describeRV(obj) || last.OldResourceVersion != describeRV(old) {
					t.Errorf("update %s -> %s (objRV %+v): event %+v; want sync %v, rv %q, old rv %q", dataDescribe(old), dataDescribe(obj),
						rv, last, isSyncUpdate(old, obj), describeRV(obj), describeRV(old))
				}
			}
		}
	}
}
