package scenarios

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim/world"
)

// factoryState is a SharedInformerFactory (informer.md §9) built for the step driver: each
// informer it creates is hosted by the world as "<factory>-<resource>", from a world Source of
// that resource, so the world drives it and the oracles check it like any other.
type factoryState struct {
	name    string
	ns      string
	f       informer.SharedInformerFactory
	sources map[schema.GroupVersionResource]*world.Source
	hostErr error
	// informers the factory created, in order.
	informers []string
}

// factoryDirectives build shared informer factories and ask them for informers.
var factoryDirectives = []*directiveSpec{
	{name: "factory", help: "a SharedInformerFactory (informer.md §9) whose informers the world hosts", args: []argSpec{
		required(strArg("name")), strArg("ns"), durArg("resync"), listArg("resources"),
	}, handle: (*Env).addFactory},
	{name: "for-resource", args: []argSpec{required(strArg("factory")), required(strArg("resource"))},
		help: "ask a factory for a resource's informer (created on first use, shared after)",
		handle: func(e *Env, d Directive, add func(string, ...any)) error {
			fs, ok := e.factories[d.str("factory", "")]
			if !ok {
				return fmt.Errorf("no factory named %q", d.str("factory", ""))
			}
			return e.forResource(fs, d.str("resource", ""), add)
		}},
}

func (e *Env) addFactory(d Directive, add func(string, ...any)) error {
	name := d.str("name", "")
	if _, ok := e.factories[name]; ok {
		return fmt.Errorf("a factory named %q exists already", name)
	}
	if _, ok := e.informers[name]; ok {
		return fmt.Errorf("an informer named %q exists already", name)
	}
	fs := &factoryState{name: name, ns: d.str("ns", ""), sources: map[schema.GroupVersionResource]*world.Source{}}
	client := informer.ClientFunc(func(gvr schema.GroupVersionResource, ns string) informer.ListerWatcher {
		src, err := e.w.NewSource(infName(name, gvr), world.InformerSpec{Resource: gvr, Namespace: ns})
		if err != nil {
			fs.hostErr = err
			return nil
		}
		fs.sources[gvr] = src
		return src.ListerWatcher()
	})
	f, err := informer.NewSharedInformerFactoryWithOptions(client, d.dur("resync", 0),
		informer.WithNamespace(fs.ns),
		informer.WithInformerOptions(func(gvr schema.GroupVersionResource, o *informer.SharedIndexInformerOptions) {
			if src := fs.sources[gvr]; src != nil {
				*o = src.Options(*o)
			}
		}),
		informer.WithStepDriver(func(fi informer.FactoryInformer) (func() error, error) {
			src := fs.sources[fi.GVR]
			if src == nil {
				return nil, fmt.Errorf("scenarios: factory %s: no source for %v", name, fi.GVR)
			}
			n, err := e.w.HostInformer(src, fi.Informer)
			if err != nil {
				return nil, err
			}
			iname := infName(name, fi.GVR)
			e.informers[iname] = &infState{name: iname, d: Directive{Cmd: "factory"}, n: n}
			e.infOrder = append(e.infOrder, iname)
			fs.informers = append(fs.informers, iname)
			// The factory's Start starts it through the world, which then drives it.
			return n.Start, nil
		}))
	if err != nil {
		return err
	}
	fs.f = f
	e.factories[name] = fs
	for _, r := range d.list("resources") {
		if err := e.forResource(fs, r, add); err != nil {
			return err
		}
	}
	return nil
}

// infName names a factory's informer: "<factory>-<resource>".
func infName(factory string, gvr schema.GroupVersionResource) string {
	return factory + "-" + gvr.Resource
}

func (e *Env) forResource(fs *factoryState, resource string, add func(string, ...any)) error {
	gvr, err := parseResource(resource)
	if err != nil {
		return err
	}
	if gvr.Empty() {
		return fmt.Errorf("resource: expected version/resource, got %q", resource)
	}
	before := len(fs.informers)
	fs.hostErr = nil
	gi, err := fs.f.ForResource(gvr)
	if err == nil {
		err = fs.hostErr
	}
	if err != nil {
		add("error: %v", err)
		return nil
	}
	iname := infName(fs.name, gvr)
	if len(fs.informers) > before {
		add("%s: new informer %s for %s", fs.name, iname, gvr.Resource)
	} else if st := e.informers[iname]; st != nil && st.n.SharedIndexInformer() == gi.Informer() {
		add("%s: the same informer %s, shared", fs.name, iname)
	}
	return nil
}

// startFactory calls the factory's Start, which starts every informer it created that has not
// started yet (through the world), and reports which ones it started.
func (e *Env) startFactory(fs *factoryState, add func(string, ...any)) {
	before := map[string]bool{}
	for _, iname := range fs.informers {
		before[iname] = e.informers[iname].n.Started()
	}
	fs.f.Start(nil)
	var started []string
	for _, iname := range fs.informers {
		if !before[iname] && e.informers[iname].n.Started() {
			started = append(started, iname)
		}
	}
	if len(started) == 0 {
		add("%s: nothing to start", fs.name)
		return
	}
	add("%s: started %s", fs.name, strings.Join(started, ", "))
}
