package scenarios

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/cockroachdb/datadriven"

	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/narration"
)

// informerDirectives build, start, stop and change informers and their handlers.
var informerDirectives = []*directiveSpec{
	{name: "informer", help: "build an informer (not started)", args: []argSpec{
		required(strArg("name")), strArg("resource"), strArg("ns"), strArg("labels"), strArg("fields"), durArg("resync"),
		enumArg("queue", "realfifo", "realfifo-nonatomic", "deltafifo"), boolArg("batch"), enumArg("mode", "list-watch", "watch-list"),
		enumArg("transform", "drop-annotations", "drop-content"), listArg("indexers"),
	}, handle: func(e *Env, d Directive, add func(string, ...any)) error {
		return e.addInformer(d, d.str("name", ""), add)
	}},
	{name: "start", args: []argSpec{required(strArg("informer"))}, help: "start an informer", handle: (*Env).start},
	{name: "stop", args: []argSpec{required(strArg("informer"))}, help: "stop an informer", handle: (*Env).stop},
	{name: "restart", args: []argSpec{required(strArg("informer")), required(strArg("as"))},
		help: "stop an informer and start a new one with the same options and handlers, named as", handle: (*Env).restart},
	{name: "client", args: []argSpec{required(strArg("name")), required(strArg("informer"))},
		help: "the informer and what it feeds as the world's client name: crash-restart client=name restarts it", handle: (*Env).addClient},
	{name: "handler", help: "register a handler (late join after start)", args: []argSpec{
		required(strArg("informer")), required(strArg("name")), durArg("resync"), durArg("slow"), strArg("filter"), flagArg("mutates"),
	}, handle: func(e *Env, d Directive, add func(string, ...any)) error {
		st, err := e.informer(d)
		if err != nil {
			return err
		}
		return e.addHandler(st, d, add)
	}},
	{name: "remove-handler", args: []argSpec{required(strArg("informer")), required(strArg("name"))},
		help: "unregister a handler; its buffered notifications are dropped", handle: (*Env).removeHandler},
	{name: "add-indexers", args: []argSpec{required(strArg("informer")), required(listArg("indexers"))},
		help: "add indexers to an informer, before or after start", handle: (*Env).addIndexers},
}

// start starts an informer, or every informer a factory made.
func (e *Env) start(d Directive, add func(string, ...any)) error {
	if fs, ok := e.factories[d.str("informer", "")]; ok {
		e.startFactory(fs, add)
		return nil
	}
	st, err := e.informer(d)
	if err != nil {
		return err
	}
	if err := st.n.Start(); err != nil {
		add("error: %v", err)
	}
	return nil
}

func (e *Env) stop(d Directive, _ func(string, ...any)) error {
	st, err := e.informer(d)
	if err != nil {
		return err
	}
	st.n.Stop()
	e.w.Settle()
	return nil
}

func (e *Env) removeHandler(d Directive, add func(string, ...any)) error {
	hs, err := e.handler(d.str("informer", "") + "/" + d.str("name", ""))
	if err != nil {
		return err
	}
	if err := hs.h.Remove(); err != nil {
		add("error: %v", err)
	}
	e.w.Settle()
	return nil
}

func (e *Env) addIndexers(d Directive, add func(string, ...any)) error {
	st, err := e.informer(d)
	if err != nil {
		return err
	}
	idx, err := indexers(d.list("indexers"))
	if err != nil {
		return err
	}
	if err := st.n.SharedIndexInformer().AddIndexers(idx); err != nil {
		add("error: %v", err)
	}
	return nil
}

func (e *Env) addInformer(d Directive, name string, add func(string, ...any)) error {
	if _, ok := e.informers[name]; ok {
		return fmt.Errorf("an informer named %q exists already", name)
	}
	gvr, err := parseResource(d.str("resource", ""))
	if err != nil {
		return err
	}
	o := world.InformerSpec{
		Resource: gvr, Namespace: d.str("ns", ""),
		LabelSelector: d.str("labels", ""), FieldSelector: d.str("fields", ""),
	}
	o.Informer.ResyncPeriod = d.dur("resync", 0)
	switch d.str("queue", "realfifo") {
	case "realfifo":
		o.Informer.QueueMode = informer.QueueRealFIFO
	case "realfifo-nonatomic":
		o.Informer.QueueMode = informer.QueueRealFIFONonAtomic
	case "deltafifo":
		o.Informer.QueueMode = informer.QueueDeltaFIFO
	}
	o.Informer.DisableBatchPop = !d.boolean("batch", true)
	if err := setWatchList(&o, d.str("mode", "list-watch")); err != nil {
		return err
	}
	if t := d.str("transform", ""); t != "" {
		o.Transform = transforms[t]
	}
	if idx := d.list("indexers"); len(idx) > 0 {
		o.Informer.Indexers, err = indexers(idx)
		if err != nil {
			return err
		}
	}
	n, err := e.w.AddInformer(name, o)
	if err != nil {
		return err
	}
	st := &infState{name: name, d: d, n: n}
	e.informers[name] = st
	e.infOrder = append(e.infOrder, name)
	return nil
}

// transforms are the named transforms a scenario can install; each is idempotent (a watch-list
// start-up applies it twice, informer.md §1.5) and works on a copy.
var transforms = map[string]informer.TransformFunc{
	"drop-annotations": func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		u = u.DeepCopy()
		u.SetAnnotations(nil)
		return u, nil
	},
	"drop-content": func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		c := &unstructured.Unstructured{Object: map[string]any{}}
		for _, k := range []string{"apiVersion", "kind", "metadata"} {
			if v, ok := u.Object[k]; ok {
				c.Object[k] = v
			}
		}
		return c.DeepCopy(), nil
	},
}

// indexers builds the named indexers: "namespace" (client-go's namespace index) and
// "label:<key>" (the value of one label).
func indexers(names []string) (informer.Indexers, error) {
	idx := informer.Indexers{}
	for _, name := range names {
		switch {
		case name == "namespace":
			idx[informer.NamespaceIndex] = informer.MetaNamespaceIndexFunc
		case strings.HasPrefix(name, "label:") && len(name) > len("label:"):
			key := strings.TrimPrefix(name, "label:")
			idx[name] = func(obj any) ([]string, error) {
				m, err := meta.Accessor(obj)
				if err != nil {
					return nil, err
				}
				if v, ok := m.GetLabels()[key]; ok {
					return []string{v}, nil
				}
				return nil, nil
			}
		default:
			return nil, fmt.Errorf("indexers: expected namespace or label:<key>, got %q", name)
		}
	}
	return idx, nil
}

func (e *Env) restart(d Directive, add func(string, ...any)) error {
	st, err := e.informer(d)
	if err != nil {
		return err
	}
	return e.restartAs(st, d.str("as", ""), add)
}

// addClient registers the file's controller, the informer the directive names and what it
// feeds (its handlers, a workqueue's and a controller's), as the world's client d's name
// (world.World.AddClient), so that a restart of it is the op crash-restart, as a campaign's
// restart of a Go-hosted controller is (PerturbFile): the op restarts the informer as the
// restart directive does, the new informer named <informer>-restarted (then -restarted2, ...),
// and the client follows it. The other client faults arm a call of the client's own, which the
// file's controller does not make: each is narrated as not taken, as a stand-in's is.
func (e *Env) addClient(d Directive, _ func(string, ...any)) error {
	st, err := e.informer(d)
	if err != nil {
		return err
	}
	name, cur, restarts := d.str("name", ""), st, 0
	return e.w.AddClient(name, func(op world.Op) error {
		if op.Kind != world.OpCrashRestart {
			e.w.Sim().Emit(name, "not-taken", sim.F("why", "the file's client takes only "+world.OpCrashRestart.String()))
			return nil
		}
		restarts++
		as := st.name + "-restarted"
		if restarts > 1 {
			as += strconv.Itoa(restarts)
		}
		var notes []string
		err := e.restartAs(cur, as, func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) })
		if err == nil && len(notes) > 0 {
			err = errors.New(strings.Join(notes, "; "))
		}
		if err != nil {
			return fmt.Errorf("client %s: restarting the informer %s as %s: %w", name, cur.name, as, err)
		}
		cur = e.informers[as]
		return nil
	})
}

// restartAs stops st's informer and starts a new one named as, with its options, its handlers
// and the workqueues and controllers it fed.
func (e *Env) restartAs(st *infState, as string, add func(string, ...any)) error {
	st.n.Stop()
	e.w.Settle()
	if err := e.addInformer(st.d, as, add); err != nil {
		return err
	}
	nst := e.informers[as]
	for _, hs := range st.handlers {
		hd := hs.d
		hd.Args = slices.Clone(hd.Args)
		for i := range hd.Args {
			if hd.Args[i].Key == "informer" {
				hd.Args[i].Vals = []string{as}
			}
		}
		if err := e.addHandlerWith(nst, hd, hs.given, add); err != nil {
			return err
		}
	}
	// A workqueue or controller fed by the old informer reads the new one's cache from now on,
	// as a restarted controller's lister does.
	for _, name := range e.queueOrder {
		if wq := e.queues[name]; wq.inf == st {
			wq.inf = nst
		}
	}
	if err := nst.n.Start(); err != nil {
		add("error: %v", err)
	}
	return nil
}

func (e *Env) addHandler(st *infState, d Directive, add func(string, ...any)) error {
	return e.addHandlerWith(st, d, nil, add)
}

// argOf builds one key=value argument.
func argOf(key, val string) datadriven.CmdArg {
	return datadriven.CmdArg{Key: key, Vals: []string{val}}
}

// addHandlerWith registers h (nil: a recording-only handler, or the filter's) as d says.
func (e *Env) addHandlerWith(st *infState, d Directive, h informer.ResourceEventHandler, add func(string, ...any)) error {
	name := d.str("name", "")
	key := st.name + "/" + name
	if _, ok := e.handlers[key]; ok {
		return fmt.Errorf("a handler named %q exists already", key)
	}
	hs := &handlerState{inf: st.name, name: name, d: d, given: h}
	if f, ok := d.arg("filter"); ok {
		sel, err := labels.Parse(f)
		if err != nil {
			return fmt.Errorf("filter: expected a label selector: %v", err)
		}
		hs.filter = sel
		h = informer.FilteringResourceEventHandler{
			FilterFunc: func(obj any) bool { return matches(sel, obj) },
			Handler:    passLog{hs},
		}
	}
	if d.has("mutates") {
		if h != nil {
			return fmt.Errorf("mutates: a filtering handler cannot also be a mutating one")
		}
		h = mutatingHandler{}
	}
	o := world.HandlerOptions{CallDuration: d.dur("slow", 0)}
	if d.has("resync") {
		r := d.dur("resync", 0)
		o.ResyncPeriod = &r
	}
	wh, err := e.w.AddHandler(st.n, name, h, o)
	if err != nil {
		add("error: %v", err)
		return nil
	}
	hs.h = wh
	e.handlers[key] = hs
	st.handlers = append(st.handlers, hs)
	return nil
}

// mutatingHandler is the classic controller bug the read-only-objects oracle catches: it labels
// the very object it is given (touched=yes) instead of a DeepCopy of it.
type mutatingHandler struct{}

func (mutatingHandler) OnAdd(obj any, _ bool) { touch(obj) }

func (mutatingHandler) OnUpdate(_, newObj any) { touch(newObj) }

func (mutatingHandler) OnDelete(any) {}

func touch(obj any) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		l := u.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		l["touched"] = "yes"
		u.SetLabels(l)
	}
}

func matches(sel labels.Selector, obj any) bool {
	if tomb, ok := obj.(informer.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	return sel.Matches(labels.Set(m.GetLabels()))
}

// passLog records what a filtered handler's inner handler is told, in informer.md §14's notation.
type passLog struct{ hs *handlerState }

func (p passLog) OnAdd(obj any, init bool) {
	p.hs.passed = append(p.hs.passed, fmt.Sprintf("add(%s,%t)", ref(obj), init))
}

func (p passLog) OnUpdate(oldObj, newObj any) {
	p.hs.passed = append(p.hs.passed, fmt.Sprintf("upd(%s->%s)", ref(oldObj), rvOf(newObj)))
}

func (p passLog) OnDelete(obj any) {
	if tomb, ok := obj.(informer.DeletedFinalStateUnknown); ok {
		p.hs.passed = append(p.hs.passed, fmt.Sprintf("del(tomb %s)", ref(tomb.Obj)))
		return
	}
	p.hs.passed = append(p.hs.passed, fmt.Sprintf("del(%s)", ref(obj)))
}

func ref(obj any) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "?"
	}
	key := m.GetName()
	if m.GetNamespace() != "" {
		key = m.GetNamespace() + "/" + key
	}
	return narration.Ref(key, m.GetResourceVersion(), false)
}

func rvOf(obj any) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "?"
	}
	return m.GetResourceVersion()
}
