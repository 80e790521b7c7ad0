package scenarios

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/informer/workqueue"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
)

// workQueue is a controller's half: a handler on an informer adds each object's key to a
// step-driven rate-limited workqueue (informer.md §11), and worker actors take keys, spend the
// work duration on each, and reconcile. A plain workqueue's reconcile only fails the first fail
// attempts of each key (to show AddRateLimited's backoff); a controller's keeps one configmap
// "<pod>-cm" per pod of its informer, written through the apiserver.
type workQueue struct {
	e       *Env
	name    string
	inf     *infState
	q       *workqueue.RateLimitingQueue[string]
	clk     *sim.Clock
	work    time.Duration
	fail    int
	attempt map[string]int
	mirror  bool
	workers []*worker
	done    int
}

type worker struct {
	wq   *workQueue
	name string
	key  string // the key in hand, "" when idle
}

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// workqueueDirectives build workqueues and controllers fed by informers' handlers.
var workqueueDirectives = []*directiveSpec{
	{name: "workqueue", help: "a rate-limited workqueue fed by a handler, with workers", args: []argSpec{
		required(strArg("name")), required(strArg("informer")), numArg("workers"), durArg("work"), numArg("fail"),
	}, handle: (*Env).addWorkQueue},
	{name: "controller", help: "a controller: handler, workqueue, workers reconciling pods into configmaps", args: []argSpec{
		required(strArg("name")), required(strArg("informer")), numArg("workers"), durArg("work"),
	}, handle: (*Env).addWorkQueue},
}

func (e *Env) addWorkQueue(d Directive, add func(string, ...any)) error {
	name := d.str("name", "")
	if _, ok := e.queues[name]; ok {
		return fmt.Errorf("a workqueue named %q exists already", name)
	}
	st, err := e.informer(d)
	if err != nil {
		return err
	}
	clk := e.w.Sim().ClockFor(name)
	wq := &workQueue{
		e: e, name: name, inf: st, clk: clk, work: d.dur("work", 0), fail: d.num("fail", 0),
		attempt: map[string]int{}, mirror: d.Cmd == "controller",
		q: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](clk),
			workqueue.RateLimitingQueueConfig{Name: name, Clock: clk, StepDriven: true}),
	}
	enqueue := func(obj any) {
		key, err := informer.DeletionHandlingMetaNamespaceKeyFunc(obj)
		if err != nil {
			return
		}
		wq.q.Add(key)
		e.w.Sim().Emit(name, "add", sim.F("key", key), sim.FInt("len", int64(wq.q.Len())))
	}
	h := informer.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}
	hd := Directive{Cmd: "handler", Args: d.Args[:0:0]}
	hd.Args = append(hd.Args, argOf("informer", st.name), argOf("name", name))
	if err := e.addHandlerWith(st, hd, h, add); err != nil {
		return err
	}
	for i := range max(d.num("workers", 1), 1) {
		wk := &worker{wq: wq, name: name + "/w" + strconv.Itoa(i+1)}
		wq.workers = append(wq.workers, wk)
		if err := e.w.AddActor(wk); err != nil {
			return err
		}
	}
	if err := e.w.AddDeadlines(world.Deadlines{Actor: name, Kind: "ready", Next: wq.q.NextDeadline, Fire: func() {
		n := wq.q.FireDue()
		e.w.Sim().Emit(name, "ready", sim.FInt("items", int64(n)))
	}}); err != nil {
		return err
	}
	if err := e.w.AddQuietCondition(name+" drained", func() bool { return wq.q.Len() == 0 && wq.q.Processing() == 0 }); err != nil {
		return err
	}
	if wq.mirror {
		if err := e.w.AddCheck("controller "+name+": one configmap per pod", wq.check); err != nil {
			return err
		}
	}
	e.queues[name] = wq
	e.queueOrder = append(e.queueOrder, name)
	return nil
}

func (wk *worker) Name() string { return wk.name }

func (wk *worker) Actions(add func(sim.Action)) {
	if wk.key == "" && wk.wq.q.Len() > 0 {
		add(sim.Action{Name: "get", Run: wk.get})
	}
}

func (wk *worker) get() {
	wq := wk.wq
	key, shutdown := wq.q.Get()
	if shutdown {
		return
	}
	wk.key = key
	wq.e.w.Sim().Emit(wk.name, "get", sim.F("key", key), sim.FInt("len", int64(wq.q.Len())))
	if wq.work == 0 {
		wk.finish()
		return
	}
	if _, err := wq.e.w.After(wq.work, wk.name, "done", wk.finish); err != nil {
		wk.finish()
	}
}

func (wk *worker) finish() {
	wq := wk.wq
	key := wk.key
	wk.key = ""
	s := wq.e.w.Sim()
	err := wq.reconcile(key)
	if err != nil {
		wq.q.AddRateLimited(key)
		s.Emit(wk.name, "requeue", sim.F("key", key), sim.FInt("requeues", int64(wq.q.NumRequeues(key))), sim.F("err", err.Error()))
	} else {
		wq.q.Forget(key)
		wq.done++
		s.Emit(wk.name, "done", sim.F("key", key))
	}
	wq.q.Done(key)
}

func (wq *workQueue) reconcile(key string) error {
	wq.attempt[key]++
	if wq.attempt[key] <= wq.fail {
		return fmt.Errorf("attempt %d of %d fails on purpose", wq.attempt[key], wq.fail)
	}
	if !wq.mirror {
		return nil
	}
	obj, exists, err := wq.inf.n.SharedIndexInformer().GetStore().GetByKey(key)
	if err != nil {
		return err
	}
	ns, name, err := informer.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	rc := wq.e.w.Server().Resource(configMaps).Namespace(ns)
	cmName := name + "-cm"
	if !exists {
		err := rc.Delete(ctx, cmName, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	want := desiredData(obj.(*unstructured.Unstructured))
	cur, err := rc.Get(ctx, cmName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": want}}
		cm.SetName(cmName)
		cm.SetNamespace(ns)
		cm.SetLabels(map[string]string{"controller": wq.name})
		_, err = rc.Create(ctx, cm, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	have, _, _ := unstructured.NestedMap(cur.Object, "data")
	if maps.EqualFunc(have, want, func(a, b any) bool { return a == b }) {
		return nil
	}
	cur.Object["data"] = want
	_, err = rc.Update(ctx, cur, metav1.UpdateOptions{})
	return err
}

// desiredData is what the controller writes for a pod: its name and its app label.
func desiredData(pod *unstructured.Unstructured) map[string]any {
	return map[string]any{"pod": pod.GetName(), "app": pod.GetLabels()["app"]}
}

// check is the controller's convergence check: exactly one configmap per pod its informer
// watches, with the data the pod asks for.
func (wq *workQueue) check() error {
	gvr, ns := wq.inf.n.Resource()
	pods, err := wq.e.w.Server().Snapshot(gvr, ns, metav1.ListOptions{LabelSelector: wq.inf.d.str("labels", ""), FieldSelector: wq.inf.d.str("fields", "")})
	if err != nil {
		return err
	}
	cms, err := wq.e.w.Server().Snapshot(configMaps, ns, metav1.ListOptions{LabelSelector: "controller=" + wq.name})
	if err != nil {
		return err
	}
	have := map[string]map[string]any{}
	for i := range cms.Items {
		data, _, _ := unstructured.NestedMap(cms.Items[i].Object, "data")
		have[cms.Items[i].GetNamespace()+"/"+cms.Items[i].GetName()] = data
	}
	var problems []string
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.GetDeletionTimestamp() != nil {
			continue
		}
		k := p.GetNamespace() + "/" + p.GetName() + "-cm"
		data, ok := have[k]
		switch {
		case !ok:
			problems = append(problems, "missing "+k)
		case !maps.EqualFunc(data, desiredData(p), func(a, b any) bool { return a == b }):
			problems = append(problems, "stale "+k)
		}
		delete(have, k)
	}
	for _, k := range slices.Sorted(maps.Keys(have)) {
		problems = append(problems, "orphan "+k)
	}
	if len(problems) > 0 {
		return errors.New(fmt.Sprint(problems))
	}
	return nil
}

func (wq *workQueue) describe(add func(string, ...any)) {
	busy := 0
	for _, wk := range wq.workers {
		if wk.key != "" {
			busy++
		}
	}
	add("%s: %d ready, %d processing, %d workers busy of %d, %d keys done", wq.name, wq.q.Len(), wq.q.Processing(), busy, len(wq.workers), wq.done)
}
