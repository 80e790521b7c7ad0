// Package fake is the Foo clientset over client-go's object tracker (k8s.io/client-go/testing),
// written by hand in the shape client-gen gives a clientset's fake: what a controller's own unit
// tests run it against. The sample controller's benchmarks run the same controller and workload
// on it and in the harness, so the harness's price is measured against the usual way.
package fake

import (
	"github.com/informersim/informersim/examples/samplecontroller/clientset"
	"github.com/informersim/informersim/examples/samplecontroller/clientset/scheme"
	samplev1alpha1 "github.com/informersim/informersim/examples/samplecontroller/clientset/typed/v1alpha1"
	fakesamplev1alpha1 "github.com/informersim/informersim/examples/samplecontroller/clientset/typed/v1alpha1/fake"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/testing"
)

// Clientset is clientset.Interface over an object tracker. Its embedded testing.Fake records
// every action and lets a test prepend reactors.
type Clientset struct {
	testing.Fake
	discovery *fakediscovery.FakeDiscovery
	tracker   testing.ObjectTracker
}

var _ clientset.Interface = (*Clientset)(nil)

// NewSimpleClientset returns a Clientset whose tracker holds objects. It panics on an object
// the tracker refuses (one of a kind the scheme lacks, or twice the same), as client-gen's does:
// the objects are a test's fixture.
func NewSimpleClientset(objects ...runtime.Object) *Clientset {
	tracker := testing.NewObjectTracker(scheme.Scheme, scheme.Codecs.UniversalDecoder())
	for _, obj := range objects {
		if err := tracker.Add(obj); err != nil {
			panic(err)
		}
	}
	c := &Clientset{tracker: tracker}
	c.discovery = &fakediscovery.FakeDiscovery{Fake: &c.Fake}
	c.AddReactor("*", "*", testing.ObjectReaction(tracker))
	c.AddWatchReactor("*", func(action testing.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if w, ok := action.(testing.WatchActionImpl); ok {
			opts = w.ListOptions
		}
		w, err := tracker.Watch(action.GetResource(), action.GetNamespace(), opts)
		if err != nil {
			return false, nil, err
		}
		return true, w, nil
	})
	return c
}

// Tracker returns the tracker underneath, to add or read objects without recorded actions.
func (c *Clientset) Tracker() testing.ObjectTracker { return c.tracker }

// IsWatchListSemanticsUnSupported tells client-go's reflector (through informers built with
// cache.ToListWatcherWithWatchListSemantics) that the tracker cannot serve a watch-list: it
// sends no initial events and no bookmark, so a reflector waiting for them never syncs.
func (c *Clientset) IsWatchListSemanticsUnSupported() bool { return true }

// Discovery returns the fake discovery client.
func (c *Clientset) Discovery() discovery.DiscoveryInterface { return c.discovery }

// SamplecontrollerV1alpha1 returns the group's fake client.
func (c *Clientset) SamplecontrollerV1alpha1() samplev1alpha1.SamplecontrollerV1alpha1Interface {
	return &fakesamplev1alpha1.FakeSamplecontrollerV1alpha1{Fake: &c.Fake}
}
