// Package v1alpha1 is the typed client of samplecontroller.k8s.io/v1alpha1, written by hand in
// client-gen's shape (on client-go's gentype).
package v1alpha1

import (
	"context"
	"net/http"

	samplev1alpha1 "github.com/informersim/informersim/examples/samplecontroller/apis/v1alpha1"
	"github.com/informersim/informersim/examples/samplecontroller/clientset/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/gentype"
	"k8s.io/client-go/rest"
)

// SamplecontrollerV1alpha1Interface is the group's client.
type SamplecontrollerV1alpha1Interface interface {
	RESTClient() rest.Interface
	FoosGetter
}

// FoosGetter returns a Foo client of a namespace.
type FoosGetter interface {
	Foos(namespace string) FooInterface
}

// FooInterface has the verbs of Foo.
type FooInterface interface {
	Create(ctx context.Context, foo *samplev1alpha1.Foo, opts metav1.CreateOptions) (*samplev1alpha1.Foo, error)
	Update(ctx context.Context, foo *samplev1alpha1.Foo, opts metav1.UpdateOptions) (*samplev1alpha1.Foo, error)
	UpdateStatus(ctx context.Context, foo *samplev1alpha1.Foo, opts metav1.UpdateOptions) (*samplev1alpha1.Foo, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*samplev1alpha1.Foo, error)
	List(ctx context.Context, opts metav1.ListOptions) (*samplev1alpha1.FooList, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*samplev1alpha1.Foo, error)
}

// SamplecontrollerV1alpha1Client is the group's REST client.
type SamplecontrollerV1alpha1Client struct {
	restClient rest.Interface
}

// Foos returns the Foo client of namespace.
func (c *SamplecontrollerV1alpha1Client) Foos(namespace string) FooInterface {
	return &foos{gentype.NewClientWithList[*samplev1alpha1.Foo, *samplev1alpha1.FooList](
		"foos", c.RESTClient(), scheme.ParameterCodec, namespace,
		func() *samplev1alpha1.Foo { return &samplev1alpha1.Foo{} },
		func() *samplev1alpha1.FooList { return &samplev1alpha1.FooList{} },
	)}
}

type foos struct {
	*gentype.ClientWithList[*samplev1alpha1.Foo, *samplev1alpha1.FooList]
}

// NewForConfigAndClient returns the group's client over h.
func NewForConfigAndClient(c *rest.Config, h *http.Client) (*SamplecontrollerV1alpha1Client, error) {
	config := *c
	gv := samplev1alpha1.SchemeGroupVersion
	config.GroupVersion = &gv
	config.APIPath = "/apis"
	config.NegotiatedSerializer = rest.CodecFactoryForGeneratedClient(scheme.Scheme, scheme.Codecs).WithoutConversion()
	if config.UserAgent == "" {
		config.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	client, err := rest.RESTClientForConfigAndClient(&config, h)
	if err != nil {
		return nil, err
	}
	return &SamplecontrollerV1alpha1Client{client}, nil
}

// RESTClient returns the REST client underneath.
func (c *SamplecontrollerV1alpha1Client) RESTClient() rest.Interface {
	if c == nil {
		return nil
	}
	return c.restClient
}
