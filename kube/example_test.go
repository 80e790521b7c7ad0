package kube_test

import (
	"fmt"

	"github.com/informersim/informersim/kube"
	appsv1 "k8s.io/api/apps/v1"
)

// A Deployment in fakeapi's unstructured form converted to its Go type, as
// runtime.DefaultUnstructuredConverter.FromUnstructured would: a field of the wrong JSON type is
// the converter's error.
func ExampleFromUnstructured() {
	content := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "default", "creationTimestamp": "2026-11-26T19:00:00Z",
			"labels": map[string]any{"app": "web"}},
		"spec": map[string]any{"replicas": int64(3)},
	}
	var d appsv1.Deployment
	if err := kube.FromUnstructured(content, &d); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Name, d.Labels["app"], *d.Spec.Replicas, d.CreationTimestamp.UTC().Format("15:04"))

	content["spec"] = map[string]any{"replicas": "three"}
	fmt.Println(kube.FromUnstructured(content, &d))
	// Output:
	// web web 3 19:00
	// unrecognized type: int32
}
