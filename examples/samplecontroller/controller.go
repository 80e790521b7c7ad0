// Package samplecontroller is a controller in the shape of kubernetes/sample-controller: for each
// Foo (a custom resource of samplecontroller.k8s.io/v1alpha1 with a status subresource) it keeps a
// Deployment named Foo.Spec.DeploymentName, owned by the Foo, with Foo.Spec.Replicas replicas,
// and reports in Foo.Status what it saw. It uses client-go only: a typed clientset, a
// generated-style clientset of Foo, shared informer factories, listers, a rate-limited workqueue
// and workers. Nothing in it knows how it is tested; controller_test.go runs it inside
// informersim's world, realtime_test.go against client-go's own informers.
package samplecontroller

import (
	"context"
	"fmt"
	"sync"
	"time"

	samplev1alpha1 "github.com/informersim/informersim/examples/samplecontroller/apis/v1alpha1"
	"github.com/informersim/informersim/examples/samplecontroller/clientset"
	fooinformers "github.com/informersim/informersim/examples/samplecontroller/informers/samplecontroller/v1alpha1"
	listers "github.com/informersim/informersim/examples/samplecontroller/listers/v1alpha1"
	"golang.org/x/time/rate"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// Bugs plants known bugs in the controller, so that a test can show it catches them. The zero
// value is the correct controller.
type Bugs struct {
	// IgnoreTombstones makes the Deployment handler drop a cache.DeletedFinalStateUnknown
	// instead of unwrapping it: a Deployment deleted while the informer was disconnected (seen
	// only by the relist) is then never re-created.
	IgnoreTombstones bool
	// MutateListerObject makes the status update write into the lister's Foo instead of a
	// DeepCopy: the informer's cache (shared with every handler and lister) then holds a status
	// the apiserver never sent.
	MutateListerObject bool
	// StatusOntoFreshRead writes the status at every sync, computed from the lister's Foo but
	// onto a Foo read afresh (a GET), so the write is never refused 409: a stale lister (an informer
	// started from a lagging replica after a restart) then writes an older observedGeneration
	// over a newer one, where the correct controller's write from the stale Foo is refused 409
	// and retried.
	StatusOntoFreshRead bool
	// RemembersOwnership keeps in memory the Deployments this process created and scales only
	// those, taking any other for one it must not touch: after a restart, in the middle of a
	// Foo's life, the new process remembers nothing and a Foo's later scale never reaches its
	// Deployment.
	RemembersOwnership bool
}

// Controller is the Foo controller.
type Controller struct {
	kubeclientset   kubernetes.Interface
	sampleclientset clientset.Interface

	deploymentsLister appslisters.DeploymentLister
	deploymentsSynced cache.InformerSynced
	foosLister        listers.FooLister
	foosSynced        cache.InformerSynced

	// workqueue holds the Foos to sync; rate limited, so a failing Foo is retried with backoff
	// and one Foo is never processed by two workers at once.
	workqueue workqueue.TypedRateLimitingInterface[cache.ObjectName]

	bugs Bugs
	// created is RemembersOwnership's memory: the Deployments this process created.
	mu      sync.Mutex
	created map[string]bool
}

// NewController returns a Foo controller over the given clients and informers (shared informer
// factories hand them out; the caller starts the factories).
func NewController(ctx context.Context, kubeclientset kubernetes.Interface, sampleclientset clientset.Interface,
	deploymentInformer appsinformers.DeploymentInformer, fooInformer fooinformers.FooInformer, bugs Bugs) (*Controller, error) {
	logger := klog.FromContext(ctx)
	ratelimiter := workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](5*time.Millisecond, 1000*time.Second),
		&workqueue.TypedBucketRateLimiter[cache.ObjectName]{Limiter: rate.NewLimiter(rate.Limit(50), 300)},
	)
	c := &Controller{
		kubeclientset:     kubeclientset,
		sampleclientset:   sampleclientset,
		deploymentsLister: deploymentInformer.Lister(),
		deploymentsSynced: deploymentInformer.Informer().HasSynced,
		foosLister:        fooInformer.Lister(),
		foosSynced:        fooInformer.Informer().HasSynced,
		workqueue:         workqueue.NewTypedRateLimitingQueue(ratelimiter),
		bugs:              bugs,
		created:           map[string]bool{},
	}
	logger.Info("Setting up event handlers")
	if _, err := fooInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueFoo,
		UpdateFunc: func(_, newObj any) { c.enqueueFoo(newObj) },
	}); err != nil {
		return nil, err
	}
	// The Deployment handler finds the Foo owning a changed Deployment and enqueues it, so that a
	// Deployment changed or deleted by someone else is put back as the Foo wants it.
	if _, err := deploymentInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.handleObject,
		UpdateFunc: func(oldObj, newObj any) {
			if newObj.(*appsv1.Deployment).ResourceVersion == oldObj.(*appsv1.Deployment).ResourceVersion {
				return // a periodic resync: nothing changed
			}
			c.handleObject(newObj)
		},
		DeleteFunc: c.handleObject,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run waits for the caches to sync, starts workers, and blocks until ctx is done; then it shuts
// the workqueue down and the workers stop.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrash()
	defer c.workqueue.ShutDown()
	logger := klog.FromContext(ctx)
	logger.Info("Starting Foo controller")
	if ok := cache.WaitForCacheSync(ctx.Done(), c.deploymentsSynced, c.foosSynced); !ok {
		return fmt.Errorf("failed to wait for caches to sync")
	}
	logger.Info("Starting workers", "count", workers)
	for range workers {
		go wait.UntilWithContext(ctx, c.runWorker, time.Second)
	}
	<-ctx.Done()
	logger.Info("Shutting down workers")
	return nil
}

func (c *Controller) runWorker(ctx context.Context) {
	for c.processNextWorkItem(ctx) {
	}
}

func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	ref, shutdown := c.workqueue.Get()
	if shutdown {
		return false
	}
	defer c.workqueue.Done(ref)
	if err := c.syncHandler(ctx, ref); err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Error syncing; requeuing for later retry", "objectReference", ref)
		c.workqueue.AddRateLimited(ref)
		return true
	}
	c.workqueue.Forget(ref)
	return true
}

// syncHandler makes the world as Foo ref wants it: its Deployment exists, is owned by it, and has
// its replicas; then it records what it saw in the Foo's status.
func (c *Controller) syncHandler(ctx context.Context, ref cache.ObjectName) error {
	foo, err := c.foosLister.Foos(ref.Namespace).Get(ref.Name)
	if errors.IsNotFound(err) {
		return nil // deleted: its Deployment goes with it (owner reference)
	}
	if err != nil {
		return err
	}
	name := foo.Spec.DeploymentName
	if name == "" {
		utilruntime.HandleErrorWithContext(ctx, nil, "Deployment name missing from object reference", "objectReference", ref)
		return nil
	}
	deployment, err := c.deploymentsLister.Deployments(foo.Namespace).Get(name)
	if errors.IsNotFound(err) {
		deployment, err = c.kubeclientset.AppsV1().Deployments(foo.Namespace).Create(ctx, newDeployment(foo), metav1.CreateOptions{})
		if err == nil {
			c.mu.Lock()
			c.created[foo.Namespace+"/"+name] = true
			c.mu.Unlock()
		}
	}
	if err != nil {
		return err
	}
	if !metav1.IsControlledBy(deployment, foo) {
		return fmt.Errorf("resource %q already exists and is not managed by Foo %s", deployment.Name, foo.Name)
	}
	if c.bugs.RemembersOwnership {
		c.mu.Lock()
		mine := c.created[foo.Namespace+"/"+name]
		c.mu.Unlock()
		if !mine {
			// The planted bug: a Deployment this process did not create is left as it is.
			return c.updateFooStatus(ctx, foo, deployment)
		}
	}
	if foo.Spec.Replicas != nil && *foo.Spec.Replicas != *deployment.Spec.Replicas {
		deployment, err = c.kubeclientset.AppsV1().Deployments(foo.Namespace).Update(ctx, newDeployment(foo), metav1.UpdateOptions{})
		if err != nil {
			return err
		}
	}
	return c.updateFooStatus(ctx, foo, deployment)
}

// updateFooStatus writes what the controller saw to the Foo's status subresource, from the
// lister's copy of the Foo: if that copy is stale, the apiserver answers 409 Conflict and the
// Foo is retried.
func (c *Controller) updateFooStatus(ctx context.Context, foo *samplev1alpha1.Foo, deployment *appsv1.Deployment) error {
	if foo.Status.AvailableReplicas == deployment.Status.AvailableReplicas && foo.Status.ObservedGeneration == foo.Generation && !c.bugs.StatusOntoFreshRead {
		return nil
	}
	fooCopy := foo.DeepCopy() // never change the lister's object
	if c.bugs.MutateListerObject {
		fooCopy = foo // the planted bug: the lister's object itself
	}
	if c.bugs.StatusOntoFreshRead {
		// The planted bug: the status computed from the lister's Foo, written onto a fresh one.
		fresh, err := c.sampleclientset.SamplecontrollerV1alpha1().Foos(foo.Namespace).Get(ctx, foo.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		fresh.Status = fooCopy.Status
		fooCopy = fresh
	}
	fooCopy.Status.AvailableReplicas = deployment.Status.AvailableReplicas
	fooCopy.Status.ObservedGeneration = foo.Generation
	_, err := c.sampleclientset.SamplecontrollerV1alpha1().Foos(foo.Namespace).UpdateStatus(ctx, fooCopy, metav1.UpdateOptions{})
	return err
}

func (c *Controller) enqueueFoo(obj any) {
	ref, err := cache.ObjectToName(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.workqueue.Add(ref)
}

// handleObject enqueues the Foo that owns obj, a Deployment, or the last known state of one in a
// tombstone.
func (c *Controller) handleObject(obj any) {
	logger := klog.Background()
	object, ok := obj.(metav1.Object)
	if !ok {
		tombstone, ok := obj.(cache.DeletedFinalStateUnknown)
		if !ok {
			utilruntime.HandleError(fmt.Errorf("error decoding object, invalid type %T", obj))
			return
		}
		if c.bugs.IgnoreTombstones {
			return // the planted bug: the deleted Deployment's Foo is never told
		}
		object, ok = tombstone.Obj.(metav1.Object)
		if !ok {
			utilruntime.HandleError(fmt.Errorf("error decoding object tombstone, invalid type %T", tombstone.Obj))
			return
		}
		logger.V(4).Info("Recovered deleted object", "resourceName", object.GetName())
	}
	ownerRef := metav1.GetControllerOf(object)
	if ownerRef == nil || ownerRef.Kind != "Foo" {
		return
	}
	foo, err := c.foosLister.Foos(object.GetNamespace()).Get(ownerRef.Name)
	if err != nil {
		logger.V(4).Info("Ignore orphaned object", "object", klog.KObj(object), "foo", ownerRef.Name)
		return
	}
	c.enqueueFoo(foo)
}

// newDeployment is the Deployment a Foo wants: nginx, Spec.Replicas replicas, owned by the Foo.
func newDeployment(foo *samplev1alpha1.Foo) *appsv1.Deployment {
	labels := map[string]string{"app": "nginx", "controller": foo.Name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:      foo.Spec.DeploymentName,
			Namespace: foo.Namespace,
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(foo, samplev1alpha1.SchemeGroupVersion.WithKind("Foo")),
			},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: foo.Spec.Replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:latest"}}},
			},
		},
	}
}
