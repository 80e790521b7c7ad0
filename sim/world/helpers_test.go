package world

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/informersim/informersim/informer"
)

// The resources the tests write: pods (deleted gracefully, fakeapi.md §5.3) and configmaps
// (one DELETED at one revision, the shape of informer.md §14's worked traces).
var (
	pods       = DefaultResource()
	configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// useInformerResync asks handlerOpts for the informer's default resync period.
const useInformerResync time.Duration = -1

// handlerOpts is the HandlerOptions of a handler asking for resync (useInformerResync: the
// informer's period).
func handlerOpts(resync time.Duration) HandlerOptions {
	if resync < 0 {
		return HandlerOptions{}
	}
	return HandlerOptions{ResyncPeriod: &resync}
}

// recFeed feeds a DeliveryLog deliveries as the informer's observer would, for tests of the order
// oracle on hand-made sequences.
type recFeed struct{ r *DeliveryLog }

func (f recFeed) OnAdd(obj any, initial bool) {
	key, rv := describe(obj)
	f.r.deliver(informer.StepEvent{Kind: informer.StepDelivered, Notification: informer.NotificationAdd, Key: key, ResourceVersion: rv, InInitialList: initial, Object: obj})
}

func (f recFeed) OnUpdate(oldObj, newObj any) {
	key, rv := describe(newObj)
	_, oldRV := describe(oldObj)
	f.r.deliver(informer.StepEvent{Kind: informer.StepDelivered, Notification: informer.NotificationUpdate, Key: key, ResourceVersion: rv, OldResourceVersion: oldRV, Object: newObj})
}

func (f recFeed) OnDelete(obj any) {
	e := informer.StepEvent{Kind: informer.StepDelivered, Notification: informer.NotificationDelete, Object: obj}
	if t, ok := obj.(informer.DeletedFinalStateUnknown); ok {
		e.Key, e.Tombstone = t.Key, true
		_, e.ResourceVersion = describe(t.Obj)
	} else {
		e.Key, e.ResourceVersion = describe(obj)
	}
	f.r.deliver(e)
}

func ptrTo[T any](v T) *T { return &v }

// defaultObject is an object named name in namespace "default" at resourceVersion rv, as the
// DeliveryLog tests feed them.
func defaultObject(name, rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetNamespace("default")
	u.SetName(name)
	u.SetResourceVersion(rv)
	return u
}
