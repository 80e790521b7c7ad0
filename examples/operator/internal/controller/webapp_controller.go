// Package controller holds the webapp operator's reconciler, laid out as kubebuilder lays out
// internal/controller: a reconciler type with its RBAC markers, Reconcile, and SetupWithManager.
package controller

import (
	"context"
	"fmt"
	"time"

	webappv1 "github.com/informersim/informersim/examples/operator/api/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// Bugs are mistakes the reconciler can be built with, for the world specs to show that a seed
// sweep catches them; the zero value is the correct reconciler.
type Bugs struct {
	// MutateCache reads the WebApp's Deployment from the manager's cache without a copy
	// (client.UnsafeDisableDeepCopy) and sets the wanted replicas and image on that object
	// before writing it: when the write fails (a conflict), the cache already shows the change,
	// and the next reconcile sees nothing to do.
	MutateCache bool
	// StaleStatus writes the status with a merge patch computed from the cached WebApp, which
	// carries no resourceVersion: a status computed from a stale read (a cache relisted from a
	// lagging replica) overwrites a newer one, and status.observedGeneration goes back.
	StaleStatus bool
	// NotFoundIsAnError returns the NotFound of a WebApp that is gone instead of nil (the
	// client.IgnoreNotFound left out): the request is retried forever, with a growing backoff.
	NotFoundIsAnError bool
}

// WebAppReconciler keeps, for every WebApp, a Deployment of the same name with its replicas
// and image, owned by the WebApp (so that the garbage collector deletes it with the WebApp), and
// writes the WebApp's status: the generation observed, the Deployment's replicas and available
// replicas, and the Available condition.
type WebAppReconciler struct {
	client.Client
	Scheme   *runtime.Scheme
	Recorder recorder.EventRecorder
	Bugs     Bugs
}

// +kubebuilder:rbac:groups=apps.example.com,resources=webapps,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=apps.example.com,resources=webapps/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one WebApp's Deployment and status to its spec.
func (r *WebAppReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	var app webappv1.WebApp
	if err := r.Get(ctx, req.NamespacedName, &app); err != nil {
		if r.Bugs.NotFoundIsAnError {
			return ctrl.Result{}, err
		}
		// Deleted: the garbage collector deletes its Deployment.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !app.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	dep, err := r.reconcileDeployment(ctx, &app)
	if err != nil {
		if apierrors.IsConflict(err) {
			log.V(1).Info("conflict writing the Deployment, retrying", "webapp", req.NamespacedName)
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, err
	}
	if err := r.updateStatus(ctx, &app, dep); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// conflictRetry is how soon a reconcile whose write met a conflict (its cache is behind) runs
// again. A fixed delay, not the queue's per-item exponential backoff: a cache behind a lagging
// replica meets many conflicts in a row, and the backoff (5ms doubled up to 1000s) grew to
// eleven minutes in the operator's seed sweep (seed 317), with no event left to wake it.
const conflictRetry = time.Second

// replicas is the spec's replicas, 1 when unset.
func replicas(app *webappv1.WebApp) int32 {
	return ptr.Deref(app.Spec.Replicas, 1)
}

// reconcileDeployment creates the WebApp's Deployment, or updates its replicas and image.
func (r *WebAppReconciler) reconcileDeployment(ctx context.Context, app *webappv1.WebApp) (*appsv1.Deployment, error) {
	dep, err := r.readDeployment(ctx, app)
	if apierrors.IsNotFound(err) {
		dep = r.newDeployment(app)
		if err := controllerutil.SetControllerReference(app, dep, r.Scheme); err != nil {
			return nil, err
		}
		if err := r.Create(ctx, dep); err != nil {
			return nil, err
		}
		r.Recorder.Eventf(app, dep, corev1.EventTypeNormal, "Created", "CreateDeployment", "created Deployment %s", dep.Name)
		return dep, nil
	}
	if err != nil {
		return nil, err
	}
	if !metav1.IsControlledBy(dep, app) {
		return nil, fmt.Errorf("deployment %s/%s exists and is not controlled by WebApp %s", dep.Namespace, dep.Name, app.Name)
	}
	if ptr.Deref(dep.Spec.Replicas, 1) == replicas(app) && imageOf(dep) == app.Spec.Image {
		return dep, nil
	}
	if !r.Bugs.MutateCache {
		dep = dep.DeepCopy()
	}
	dep.Spec.Replicas = ptr.To(replicas(app))
	dep.Spec.Template.Spec.Containers[0].Image = app.Spec.Image
	if err := r.Update(ctx, dep); err != nil {
		return nil, err
	}
	return dep, nil
}

// readDeployment reads the WebApp's Deployment from the manager's cache: a copy with Get, or,
// with Bugs.MutateCache, the cache's own object through List.
func (r *WebAppReconciler) readDeployment(ctx context.Context, app *webappv1.WebApp) (*appsv1.Deployment, error) {
	if !r.Bugs.MutateCache {
		var dep appsv1.Deployment
		if err := r.Get(ctx, client.ObjectKeyFromObject(app), &dep); err != nil {
			return nil, err
		}
		return &dep, nil
	}
	var deps appsv1.DeploymentList
	if err := r.List(ctx, &deps, client.InNamespace(app.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	for i := range deps.Items {
		if deps.Items[i].Name == app.Name {
			return &deps.Items[i], nil
		}
	}
	return nil, apierrors.NewNotFound(appsv1.Resource("deployments"), app.Name)
}

func imageOf(dep *appsv1.Deployment) string {
	if len(dep.Spec.Template.Spec.Containers) == 0 {
		return ""
	}
	return dep.Spec.Template.Spec.Containers[0].Image
}

func (r *WebAppReconciler) newDeployment(app *webappv1.WebApp) *appsv1.Deployment {
	labels := map[string]string{"app.kubernetes.io/name": "webapp", "app.kubernetes.io/instance": app.Name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas(app)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: app.Spec.Image}}},
			},
		},
	}
}

// updateStatus writes what the WebApp's Deployment reports, if it changed.
func (r *WebAppReconciler) updateStatus(ctx context.Context, app *webappv1.WebApp, dep *appsv1.Deployment) error {
	want := *app.Status.DeepCopy()
	want.ObservedGeneration = app.Generation
	want.Replicas = ptr.Deref(dep.Spec.Replicas, 1)
	want.AvailableReplicas = dep.Status.AvailableReplicas
	cond := metav1.Condition{Type: webappv1.ConditionAvailable, Status: metav1.ConditionFalse, Reason: "Progressing",
		Message: fmt.Sprintf("%d of %d replicas available", want.AvailableReplicas, want.Replicas), ObservedGeneration: app.Generation}
	if dep.Status.ObservedGeneration >= dep.Generation && want.AvailableReplicas == replicas(app) {
		cond.Status, cond.Reason = metav1.ConditionTrue, "AllReplicasAvailable"
	}
	meta.SetStatusCondition(&want.Conditions, cond)
	if equality.Semantic.DeepEqual(app.Status, want) {
		return nil
	}
	if r.Bugs.StaleStatus {
		patch := client.MergeFrom(app.DeepCopy())
		app.Status = want
		return r.Status().Patch(ctx, app, patch)
	}
	app.Status = want
	return r.Status().Update(ctx, app)
}

// SetupWithManager registers the reconciler with the manager: it watches WebApps and the
// Deployments they own.
func (r *WebAppReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&webappv1.WebApp{}).
		Owns(&appsv1.Deployment{}).
		Named("webapp").
		Complete(r)
}
