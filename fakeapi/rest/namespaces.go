package rest

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/informersim/informersim/fakeapi"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SystemNamespaces are the namespaces kube-apiserver creates at start-up and keeps: clients
// assume them (kubectl's default namespace, kube-system for leader election, kube-public,
// kube-node-lease for node heartbeats).
var SystemNamespaces = []string{"default", "kube-node-lease", "kube-public", "kube-system"}

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// EnsureNamespaces creates each named namespace that does not exist yet, Active and labelled
// kubernetes.io/metadata.name as kube-apiserver labels them. `informersim serve` calls it with
// SystemNamespaces; a server built for a simulation does not (its runs would change), so a
// client that needs them calls it too. Each creation is an ordinary write of srv (a revision,
// an ADDED event, a record).
func EnsureNamespaces(ctx context.Context, srv *fakeapi.Server, names ...string) error {
	if srv == nil {
		return errors.New("rest: nil *fakeapi.Server")
	}
	nss := srv.Resource(namespacesGVR)
	for _, name := range names {
		ns := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1",
			"kind":       "Namespace",
			"metadata":   map[string]any{"name": name},
		}}
		defaultNamespace(ns)
		if _, err := nss.Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("rest: creating namespace %q: %w", name, err)
		}
	}
	return nil
}

// defaultNamespace does to a namespace being created what kube-apiserver's namespace strategy
// does: its status is Active (whatever was sent), it carries the kubernetes finalizer and the kubernetes.io/metadata.name label
// with its name. fakeapi is schemaless, so the front does it for the built-in namespaces
// resource (kubectl create namespace sends neither status nor label).
func defaultNamespace(ns *unstructured.Unstructured) {
	labels := ns.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	if name := ns.GetName(); name != "" {
		labels["kubernetes.io/metadata.name"] = name
	}
	ns.SetLabels(labels)
	finalizers, _, _ := unstructured.NestedStringSlice(ns.Object, "spec", "finalizers")
	if !slices.Contains(finalizers, "kubernetes") {
		finalizers = append(finalizers, "kubernetes")
	}
	_ = unstructured.SetNestedStringSlice(ns.Object, finalizers, "spec", "finalizers")
	_ = unstructured.SetNestedMap(ns.Object, map[string]any{"phase": "Active"}, "status")
}
