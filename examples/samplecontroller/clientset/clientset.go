// Package clientset is the Foo clientset, written by hand in client-gen's shape (versioned.Interface).
package clientset

import (
	samplev1alpha1 "github.com/informersim/informersim/examples/samplecontroller/clientset/typed/v1alpha1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// Interface is the clientset.
type Interface interface {
	Discovery() discovery.DiscoveryInterface
	SamplecontrollerV1alpha1() samplev1alpha1.SamplecontrollerV1alpha1Interface
}

// Clientset implements Interface.
type Clientset struct {
	*discovery.DiscoveryClient
	samplecontrollerV1alpha1 *samplev1alpha1.SamplecontrollerV1alpha1Client
}

// SamplecontrollerV1alpha1 returns the group's client.
func (c *Clientset) SamplecontrollerV1alpha1() samplev1alpha1.SamplecontrollerV1alpha1Interface {
	return c.samplecontrollerV1alpha1
}

// Discovery returns the discovery client.
func (c *Clientset) Discovery() discovery.DiscoveryInterface {
	if c == nil {
		return nil
	}
	return c.DiscoveryClient
}

// NewForConfig returns a clientset for c.
func NewForConfig(c *rest.Config) (*Clientset, error) {
	config := *c
	if config.UserAgent == "" {
		config.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	httpClient, err := rest.HTTPClientFor(&config)
	if err != nil {
		return nil, err
	}
	var cs Clientset
	cs.samplecontrollerV1alpha1, err = samplev1alpha1.NewForConfigAndClient(&config, httpClient)
	if err != nil {
		return nil, err
	}
	cs.DiscoveryClient, err = discovery.NewDiscoveryClientForConfigAndClient(&config, httpClient)
	if err != nil {
		return nil, err
	}
	return &cs, nil
}
