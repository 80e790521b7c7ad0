// Package informers is the shared informer factory of the Foo clientset, written by hand in
// informer-gen's shape (externalversions).
package informers

import (
	"reflect"
	"sync"
	"time"

	"github.com/informersim/informersim/examples/samplecontroller/clientset"
	"github.com/informersim/informersim/examples/samplecontroller/informers/internalinterfaces"
	"github.com/informersim/informersim/examples/samplecontroller/informers/samplecontroller"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// SharedInformerFactory hands out shared informers of the group's types.
type SharedInformerFactory interface {
	internalinterfaces.SharedInformerFactory
	Shutdown()
	WaitForCacheSync(stopCh <-chan struct{}) map[reflect.Type]bool
	Samplecontroller() samplecontroller.Interface
}

// NewSharedInformerFactory returns a factory of client-go informers over client.
func NewSharedInformerFactory(client clientset.Interface, resync time.Duration) SharedInformerFactory {
	return &factory{client: client, resync: resync, informers: map[reflect.Type]cache.SharedIndexInformer{}, started: map[reflect.Type]bool{}}
}

type factory struct {
	client    clientset.Interface
	resync    time.Duration
	lock      sync.Mutex
	informers map[reflect.Type]cache.SharedIndexInformer
	started   map[reflect.Type]bool
	wg        sync.WaitGroup
	shutdown  bool
}

func (f *factory) Start(stopCh <-chan struct{}) {
	f.lock.Lock()
	defer f.lock.Unlock()
	if f.shutdown {
		return
	}
	for typ, inf := range f.informers {
		if !f.started[typ] {
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				inf.Run(stopCh)
			}()
			f.started[typ] = true
		}
	}
}

func (f *factory) Shutdown() {
	f.lock.Lock()
	f.shutdown = true
	f.lock.Unlock()
	f.wg.Wait()
}

func (f *factory) WaitForCacheSync(stopCh <-chan struct{}) map[reflect.Type]bool {
	f.lock.Lock()
	started := map[reflect.Type]cache.SharedIndexInformer{}
	for typ, inf := range f.informers {
		if f.started[typ] {
			started[typ] = inf
		}
	}
	f.lock.Unlock()
	res := map[reflect.Type]bool{}
	for typ, inf := range started {
		res[typ] = cache.WaitForCacheSync(stopCh, inf.HasSynced)
	}
	return res
}

func (f *factory) InformerFor(obj runtime.Object, newFunc internalinterfaces.NewInformerFunc) cache.SharedIndexInformer {
	f.lock.Lock()
	defer f.lock.Unlock()
	typ := reflect.TypeOf(obj)
	if inf, ok := f.informers[typ]; ok {
		return inf
	}
	inf := newFunc(f.client, f.resync)
	f.informers[typ] = inf
	return inf
}

func (f *factory) Samplecontroller() samplecontroller.Interface {
	return samplecontroller.New(f, "", nil)
}
