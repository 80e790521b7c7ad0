package informer

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
)

// A factory with two resources, step-driven on a fake clock: each resource has one informer
// whatever the number of ForResource calls, handlers register on it, and its lister reads the
// cache. The test apiserver serves watch-list, so each informer starts with one streaming
// request.
func ExampleSharedInformerFactory() {
	srv := newUServer()
	srv.set(podsGVR, "default", "web", nil)
	srv.set(cmsGVR, "default", "settings", nil)
	clk := clocktesting.NewFakeClock(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))
	var steppers []FactoryInformer
	factory, _ := NewSharedInformerFactoryWithOptions(srv.client(), 0,
		WithInformerOptions(func(_ schema.GroupVersionResource, o *SharedIndexInformerOptions) { o.Clock = clk }),
		WithStepDriver(func(fi FactoryInformer) (func() error, error) { steppers = append(steppers, fi); return nil, nil }))

	for _, gvr := range []schema.GroupVersionResource{podsGVR, cmsGVR, podsGVR} {
		gi, _ := factory.ForResource(gvr)
		_, _ = gi.Informer().AddEventHandler(ResourceEventHandlerFuncs{
			AddFunc: func(obj any) {
				u := obj.(*unstructured.Unstructured)
				fmt.Printf("%s: add %s/%s\n", gvr.Resource, u.GetNamespace(), u.GetName())
			},
		})
	}
	fmt.Println("informers:", len(steppers))
	factory.Start(nil)
	for _, fi := range steppers { // the driver: here, step each informer to quiescence
		(&infStep{inf: fi.Informer, st: fi.Stepper, clock: clk, lwOverride: fi.ListerWatcher}).quiesce()
	}
	fmt.Println("synced:", factory.WaitForCacheSync(nil))
	pods, _ := factory.ForResource(podsGVR)
	list, _ := pods.Lister().List(labels.Everything())
	fmt.Println("pods listed:", len(list), "requests:", srv.takeRequests())
	// Output:
	// informers: 2
	// pods: add default/web
	// pods: add default/web
	// configmaps: add default/settings
	// synced: map[/v1, Resource=configmaps:true /v1, Resource=pods:true]
	// pods listed: 1 requests: [watch pods ns="" sel="" rv="" watch configmaps ns="" sel="" rv=""]
}
