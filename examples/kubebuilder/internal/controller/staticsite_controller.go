/*
Copyright 2026 The informersim Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	webv1 "github.com/informersim/informersim/examples/kubebuilder/api/v1"
)

// ConditionAvailable is the StaticSite condition saying its Deployment serves its spec.
const ConditionAvailable = "Available"

// StaticSiteReconciler keeps each StaticSite's Deployment in line with its spec and reports the
// Deployment's readiness in the site's status.
type StaticSiteReconciler struct {
	client.Client
	Scheme *runtime.Scheme
}

// +kubebuilder:rbac:groups=web.informersim.dev,resources=staticsites,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=web.informersim.dev,resources=staticsites/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=web.informersim.dev,resources=staticsites/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete

// Reconcile creates or updates the site's Deployment (owned by the site, so deleting the site
// deletes it), then writes the site's status from the Deployment's.
func (r *StaticSiteReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)

	var site webv1.StaticSite
	if err := r.Get(ctx, req.NamespacedName, &site); err != nil {
		// Deleted since it was queued: its Deployment goes with it (owner reference).
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: site.Name, Namespace: site.Namespace}}
	op, err := controllerutil.CreateOrUpdate(ctx, r.Client, deploy, func() error {
		labels := map[string]string{"app.kubernetes.io/name": "staticsite", "app.kubernetes.io/instance": site.Name}
		replicas := site.Spec.Replicas
		deploy.Spec.Replicas = &replicas
		deploy.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
		deploy.Spec.Template.Labels = labels
		deploy.Spec.Template.Spec.Containers = []corev1.Container{{
			Name:  "web",
			Image: site.Spec.Image,
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80}},
			Env:   []corev1.EnvVar{{Name: "SITE_DOMAIN", Value: site.Spec.Domain}},
		}}
		return controllerutil.SetControllerReference(&site, deploy, r.Scheme)
	})
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("the Deployment of %s: %w", req.NamespacedName, err)
	}
	if op != controllerutil.OperationResultNone {
		log.Info("deployment written", "operation", op)
	}

	site.Status.ReadyReplicas = deploy.Status.ReadyReplicas
	site.Status.ObservedGeneration = site.Generation
	available := metav1.Condition{Type: ConditionAvailable, Status: metav1.ConditionFalse, Reason: "Progressing",
		Message: fmt.Sprintf("%d of %d replicas ready", deploy.Status.ReadyReplicas, site.Spec.Replicas), ObservedGeneration: site.Generation}
	if deploy.Status.ReadyReplicas >= site.Spec.Replicas {
		available.Status, available.Reason = metav1.ConditionTrue, "Ready"
	}
	meta.SetStatusCondition(&site.Status.Conditions, available)
	// A conflict (the site changed meanwhile) is retried with the site's new version.
	return ctrl.Result{}, r.Status().Update(ctx, &site)
}

// SetupWithManager registers the reconciler with mgr: it watches StaticSites and the
// Deployments they own.
func (r *StaticSiteReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&webv1.StaticSite{}).
		Owns(&appsv1.Deployment{}).
		Named("staticsite").
		Complete(r)
}
