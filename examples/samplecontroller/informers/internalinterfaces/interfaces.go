// Package internalinterfaces holds the factory interface the group informers are built on, in
// informer-gen's shape.
package internalinterfaces

import (
	"time"

	"github.com/informersim/informersim/examples/samplecontroller/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// NewInformerFunc builds the informer of one type.
type NewInformerFunc func(clientset.Interface, time.Duration) cache.SharedIndexInformer

// SharedInformerFactory hands out one shared informer per type.
type SharedInformerFactory interface {
	Start(stopCh <-chan struct{})
	InformerFor(obj runtime.Object, newFunc NewInformerFunc) cache.SharedIndexInformer
}

// TweakListOptionsFunc changes the list options of an informer's requests.
type TweakListOptionsFunc func(*metav1.ListOptions)
