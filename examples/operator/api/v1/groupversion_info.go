// Package v1 contains the API of the webapp operator: the WebApp custom resource of the
// apps.example.com/v1 group, laid out as kubebuilder lays out an api/v1 package (types,
// group-version registration, deep copies).
//
// +kubebuilder:object:generate=true
// +groupName=apps.example.com
package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group version of the WebApp resource.
	GroupVersion = schema.GroupVersion{Group: "apps.example.com", Version: "v1"}

	// SchemeBuilder registers the group's types.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the group's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
