package webhooks

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/kube"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// snapshotInformer is a cache.SharedIndexInformer whose cache is filled by refresh, on the
// caller's goroutine, from the server's objects: always synced, never run. Its handlers are
// called by refresh, in the order they were added, for each change in key order.
type snapshotInformer struct {
	gvr     schema.GroupVersionResource
	typ     reflect.Type // the Go type of its objects (not the pointer)
	indexer cache.Indexer

	mu       sync.Mutex
	handlers []*snapshotRegistration
}

// refresh reads the resource and hands what changed since the last read to the handlers.
func (s *snapshotInformer) refresh(srv *fakeapi.Server) error {
	list, err := srv.Snapshot(s.gvr, metav1.NamespaceAll, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("webhooks: reading %s: %w", s.gvr.Resource, err)
	}
	seen := map[string]bool{}
	s.mu.Lock()
	handlers := append([]*snapshotRegistration(nil), s.handlers...)
	s.mu.Unlock()
	for i := range list.Items { // sorted by namespace and name
		item := &list.Items[i]
		kube.Default(item.Object) // as a write through the front would have left it
		obj := reflect.New(s.typ).Interface().(runtime.Object)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, obj); err != nil {
			return fmt.Errorf("webhooks: reading %s %s: %w", s.gvr.Resource, item.GetName(), err)
		}
		key, err := cache.MetaNamespaceKeyFunc(obj)
		if err != nil {
			return err
		}
		seen[key] = true
		old, exists, err := s.indexer.GetByKey(key)
		if err != nil {
			return err
		}
		if exists && old.(metav1.Object).GetResourceVersion() == item.GetResourceVersion() {
			continue
		}
		if err := s.indexer.Add(obj); err != nil {
			return err
		}
		for _, h := range handlers {
			if exists {
				h.handler.OnUpdate(old, obj)
			} else {
				h.handler.OnAdd(obj, false)
			}
		}
	}
	for _, key := range s.indexer.ListKeys() {
		if seen[key] {
			continue
		}
		old, _, _ := s.indexer.GetByKey(key)
		if err := s.indexer.Delete(old); err != nil {
			return err
		}
		for _, h := range handlers {
			h.handler.OnDelete(old)
		}
	}
	return nil
}

// snapshotRegistration is one handler's registration: synced from the start, as its informer.
type snapshotRegistration struct{ handler cache.ResourceEventHandler }

func (*snapshotRegistration) HasSynced() bool                     { return true }
func (*snapshotRegistration) HasSyncedChecker() cache.DoneChecker { return syncedChecker{} }

// syncedChecker is a DoneChecker that is done.
type syncedChecker struct{}

var closedChannel = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (syncedChecker) Name() string          { return "webhooks snapshot" }
func (syncedChecker) Done() <-chan struct{} { return closedChannel }

func (s *snapshotInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &snapshotRegistration{handler: h}
	s.handlers = append(s.handlers, r)
	// A handler added late hears of what the cache holds, as a shared informer's does.
	for _, obj := range s.indexer.List() {
		h.OnAdd(obj, true)
	}
	return r, nil
}

func (s *snapshotInformer) AddEventHandlerWithResyncPeriod(h cache.ResourceEventHandler, _ time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return s.AddEventHandler(h)
}

func (s *snapshotInformer) AddEventHandlerWithOptions(h cache.ResourceEventHandler, _ cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	return s.AddEventHandler(h)
}

func (s *snapshotInformer) RemoveEventHandler(handle cache.ResourceEventHandlerRegistration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range s.handlers {
		if r == handle {
			s.handlers = append(s.handlers[:i], s.handlers[i+1:]...)
			return nil
		}
	}
	return errors.New("webhooks: RemoveEventHandler: not a registration of this informer")
}

func (s *snapshotInformer) GetStore() cache.Store                  { return s.indexer }
func (s *snapshotInformer) GetIndexer() cache.Indexer              { return s.indexer }
func (s *snapshotInformer) GetController() cache.Controller        { return nil }
func (s *snapshotInformer) Run(<-chan struct{})                    {}
func (s *snapshotInformer) RunWithContext(context.Context)         {}
func (s *snapshotInformer) HasSynced() bool                        { return true }
func (s *snapshotInformer) HasSyncedChecker() cache.DoneChecker    { return syncedChecker{} }
func (s *snapshotInformer) LastSyncResourceVersion() string        { return "" }
func (s *snapshotInformer) IsStopped() bool                        { return false }
func (s *snapshotInformer) AddIndexers(ix cache.Indexers) error    { return s.indexer.AddIndexers(ix) }
func (s *snapshotInformer) SetTransform(cache.TransformFunc) error { return nil }

func (s *snapshotInformer) SetWatchErrorHandler(cache.WatchErrorHandler) error { return nil }

func (s *snapshotInformer) SetWatchErrorHandlerWithContext(cache.WatchErrorHandlerWithContext) error {
	return nil
}
