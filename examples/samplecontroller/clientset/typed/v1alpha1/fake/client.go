// Package fake is the fake typed client of samplecontroller.k8s.io/v1alpha1 (clientset/fake's),
// written by hand in client-gen's shape on client-go's gentype fakes.
package fake

import (
	samplev1alpha1 "github.com/informersim/informersim/examples/samplecontroller/apis/v1alpha1"
	typed "github.com/informersim/informersim/examples/samplecontroller/clientset/typed/v1alpha1"
	"k8s.io/client-go/gentype"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/testing"
)

// FakeSamplecontrollerV1alpha1 is the group's client over a testing.Fake.
type FakeSamplecontrollerV1alpha1 struct {
	*testing.Fake
}

var _ typed.SamplecontrollerV1alpha1Interface = (*FakeSamplecontrollerV1alpha1)(nil)

// Foos returns the fake Foo client of namespace.
func (c *FakeSamplecontrollerV1alpha1) Foos(namespace string) typed.FooInterface {
	return &fakeFoos{gentype.NewFakeClientWithList[*samplev1alpha1.Foo, *samplev1alpha1.FooList](
		c.Fake, namespace, samplev1alpha1.SchemeGroupVersion.WithResource("foos"), samplev1alpha1.SchemeGroupVersion.WithKind("Foo"),
		func() *samplev1alpha1.Foo { return &samplev1alpha1.Foo{} },
		func() *samplev1alpha1.FooList { return &samplev1alpha1.FooList{} },
		func(dst, src *samplev1alpha1.FooList) { dst.ListMeta = src.ListMeta },
		func(l *samplev1alpha1.FooList) []*samplev1alpha1.Foo { return gentype.ToPointerSlice(l.Items) },
		func(l *samplev1alpha1.FooList, items []*samplev1alpha1.Foo) {
			l.Items = gentype.FromPointerSlice(items)
		},
	)}
}

type fakeFoos struct {
	*gentype.FakeClientWithList[*samplev1alpha1.Foo, *samplev1alpha1.FooList]
}

// RESTClient returns nil: the fake has no REST client, as client-gen's fakes.
func (c *FakeSamplecontrollerV1alpha1) RESTClient() rest.Interface {
	var ret *rest.RESTClient
	return ret
}
