// Package v1alpha1 is the API of the Foo custom resource (group samplecontroller.k8s.io), in the
// shape of kubernetes/sample-controller's: a Foo asks for a Deployment of a name and a number of
// replicas, and its status reports what the controller last saw.
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of Foo.
const GroupName = "samplecontroller.k8s.io"

// SchemeGroupVersion is the group and version of these types.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// Resource returns the GroupResource of a resource of this group, as listers want it.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

var (
	// SchemeBuilder registers the types of this package.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &Foo{}, &FooList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}

// Foo asks for a Deployment named Spec.DeploymentName with Spec.Replicas replicas.
type Foo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   FooSpec   `json:"spec"`
	Status FooStatus `json:"status"`
}

// FooSpec is what a Foo asks for.
type FooSpec struct {
	DeploymentName string `json:"deploymentName"`
	Replicas       *int32 `json:"replicas"`
}

// FooStatus is what the controller saw: the Deployment's available replicas, and the
// generation of the Foo it last acted on.
type FooStatus struct {
	AvailableReplicas  int32 `json:"availableReplicas"`
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// FooList is a list of Foos.
type FooList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`

	Items []Foo `json:"items"`
}
