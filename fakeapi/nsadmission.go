package fakeapi

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// This file holds what kube-apiserver's NamespaceLifecycle admission plugin says about a write
// into a namespace (fakeapi.md §5.3): a create in a namespace being deleted is refused (403,
// always), and with Config.RequireNamespaces a create or an update in a namespace that does not
// exist is refused (404 namespaces "x" not found). Deletes are never refused here.
//
// Why a switch: a world run or a scenario creates objects in namespaces nobody created (no
// namespace is modelled there, and every pinned trace relies on it), so the rule is off unless
// a server stands for a cluster a client talks to (informersim serve, the clientgo harness),
// which also create the namespaces kube-apiserver starts with.

// admitWrite_locked is the plugin's check of a create (create true) or an update of u, an
// object of res. A create is checked before the registry validates or names the object, as
// admission runs first: a create into a missing namespace is a 404 even when its body is
// invalid, and a refusal names a generateName create by its prefix, as the plugin's does.
func (s *Server) admitWrite_locked(res *resourceStore, u *unstructured.Unstructured, create bool) error {
	if !res.info.Namespaced {
		return nil
	}
	nsName := metaStr(u, "namespace")
	// An update is refused only for a missing namespace, and only when namespaces are required:
	// the common update returns here, before any lookup (it runs on every write).
	if nsName == "" || !create && !s.cfg.RequireNamespaces {
		return nil
	}
	nss, ok := s.resources[NamespacesGVR]
	if !ok {
		return nil
	}
	ns := s.current_locked(nss, objKey{name: nsName})
	if ns == nil {
		if !s.cfg.RequireNamespaces {
			return nil
		}
		// The plugin's last resort is a GET of the namespace, whose 404 it returns as it is.
		return apierrors.NewNotFound(NamespacesGVR.GroupResource(), nsName)
	}
	if !create || !terminating(ns) {
		return nil
	}
	name := metaStr(u, "name")
	if name == "" {
		name = metaStr(u, "generateName")
	}
	if name == "" {
		name = "Unknown"
	}
	err := apierrors.NewForbidden(res.info.GVR.GroupResource(), name,
		fmt.Errorf("unable to create new content in namespace %s because it is being terminated", nsName))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    "NamespaceTerminating",
		Message: fmt.Sprintf("namespace %s is being terminated", nsName),
		Field:   "metadata.namespace",
	})
	return err
}
