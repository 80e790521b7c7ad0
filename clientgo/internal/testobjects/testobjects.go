// Package testobjects holds objects the clientgo harness's tests share: built in code, so that
// every test starts from the same value.
package testobjects

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// RichDeployment has a field of every shape the snapshot handles: maps (labels, a resource
// list of Quantities), pointers, slices of structs, strings, bytes, an inline array of the
// Quantity's big number, a RawExtension's interface.
func RichDeployment() *appsv1.Deployment {
	block := true
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "shop", ResourceVersion: "7", Generation: 2,
			Labels:      map[string]string{"app": "web", "tier": "front"},
			Annotations: map[string]string{"note": "hello"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "example.com/v1", Kind: "Site", Name: "site", UID: "u-1", BlockOwnerDeletion: &block,
			}},
			ManagedFields: []metav1.ManagedFieldsEntry{{
				Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "apps/v1",
				FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:replicas":{}}}`)},
			}},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(3)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Annotations: map[string]string{}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: "nginx:1.27", Args: []string{"-g", "daemon off;"},
					Env: []corev1.EnvVar{{Name: "MODE", Value: "prod"}},
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("1.5Gi"),
					}},
				}}},
			},
		},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration: 2, Replicas: 3,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Message: "ok"}},
		},
	}
}
