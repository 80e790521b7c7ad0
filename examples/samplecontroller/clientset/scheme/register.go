// Package scheme holds the scheme of the Foo clientset, as client-gen generates it.
package scheme

import (
	samplev1alpha1 "github.com/informersim/informersim/examples/samplecontroller/apis/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

var (
	// Scheme has the Foo types.
	Scheme = runtime.NewScheme()
	// Codecs encodes and decodes them.
	Codecs = serializer.NewCodecFactory(Scheme)
	// ParameterCodec encodes query parameters.
	ParameterCodec = runtime.NewParameterCodec(Scheme)
)

// AddToScheme adds the clientset's types to a scheme.
var AddToScheme = samplev1alpha1.AddToScheme

func init() {
	metav1.AddToGroupVersion(Scheme, schema.GroupVersion{Version: "v1"})
	utilruntime.Must(AddToScheme(Scheme))
}
