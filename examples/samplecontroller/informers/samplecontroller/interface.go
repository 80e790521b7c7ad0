// Package samplecontroller gives the informers of the group samplecontroller.k8s.io, in
// informer-gen's shape.
package samplecontroller

import (
	"github.com/informersim/informersim/examples/samplecontroller/informers/internalinterfaces"
	"github.com/informersim/informersim/examples/samplecontroller/informers/samplecontroller/v1alpha1"
)

// Interface gives the group's versions.
type Interface interface {
	V1alpha1() v1alpha1.Interface
}

// New returns the group's informers over factory f.
func New(f internalinterfaces.SharedInformerFactory, namespace string, tweak internalinterfaces.TweakListOptionsFunc) Interface {
	return &group{f, namespace, tweak}
}

type group struct {
	factory   internalinterfaces.SharedInformerFactory
	namespace string
	tweak     internalinterfaces.TweakListOptionsFunc
}

func (g *group) V1alpha1() v1alpha1.Interface { return v1alpha1.New(g.factory, g.namespace, g.tweak) }
