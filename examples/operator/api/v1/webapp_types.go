package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WebAppSpec is what the user wants: a Deployment of Image with Replicas pods.
type WebAppSpec struct {
	// Replicas is the number of pods; nil means 1.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// Image is the container image the pods run.
	Image string `json:"image"`
}

// WebAppStatus is what the operator observed.
type WebAppStatus struct {
	// ObservedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Replicas is the Deployment's desired replicas; AvailableReplicas those its status reports
	// available.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// +optional
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`
	// Conditions: Available (every replica available at the observed generation).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ConditionAvailable is the condition that says the WebApp's pods are all available.
const ConditionAvailable = "Available"

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status

// WebApp is a web application: a Deployment the operator keeps at the spec.
type WebApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WebAppSpec   `json:"spec"`
	Status WebAppStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// WebAppList is a list of WebApps.
type WebAppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WebApp `json:"items"`
}

func init() {
	SchemeBuilder.Register(&WebApp{}, &WebAppList{})
}
