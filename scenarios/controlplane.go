package scenarios

import (
	"errors"
	"fmt"

	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/sim/world"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// controlPlaneDirectives use the control plane's stand-ins (docs/controlplane.md), which
// `world controllers` switches on: owner references, deletes with a propagation policy, and
// kubectl rollout status's verdict. The faults of a slow or stopped controller are world ops
// (slow-controller, stop-controller, start-controller), directives of their own names.
//
// cascade is the world's op delete with its propagation policy (delete ... propagation=Foreground),
// under kubectl's name and word for it: a Go test, a generator's Shape, a recorded run and an
// ops file use the op. own stays the scenario language's alone: it names the owner and reads
// its uid when it runs, an identity the apiserver assigns in that run only, so as data it
// would either carry a uid that no longer exists once a replay or a shrink recreates the owner,
// or be a lookup, which is what a controller's own write (SetControllerReference) does; in a
// run outside a file the controller under test sets its owner references itself.
var controlPlaneDirectives = []*directiveSpec{
	{name: "own", help: "give object name an owner reference to owner (same resource unless owner-resource)",
		args:   []argSpec{required(strArg("name")), required(strArg("owner")), strArg("resource"), strArg("owner-resource"), strArg("ns"), flagArg("block")},
		handle: (*Env).own},
	{name: "cascade", help: "delete name with a propagation policy (kubectl delete --cascade)",
		args:   []argSpec{required(strArg("name")), required(enumArg("policy", "foreground", "background", "orphan")), strArg("resource"), strArg("ns")},
		handle: (*Env).cascade},
	{name: "rollout-status", help: "what kubectl rollout status says of a Deployment now (one line, no waiting)",
		args:   []argSpec{required(strArg("name")), strArg("ns")},
		handle: (*Env).rolloutStatus},
}

// objectClient returns the client, the namespace and the resource of an object named by a
// directive's resource= and ns= (the world's defaults otherwise).
func (e *Env) objectTarget(d Directive, key string) (schema.GroupVersionResource, string, error) {
	gvr, err := parseResource(d.str(key, ""))
	if err != nil {
		return gvr, "", err
	}
	if gvr.Empty() {
		gvr = e.w.Config().DefaultResource
	}
	ns := d.str("ns", world.DefaultNamespace)
	return gvr, ns, nil
}

func (e *Env) get(gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	return e.w.Server().Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
}

// own sets an owner reference on name to owner (its current uid), as a controller's
// SetControllerReference does, with blockOwnerDeletion when block is given.
func (e *Env) own(d Directive, add func(string, ...any)) error {
	gvr, ns, err := e.objectTarget(d, "resource")
	if err != nil {
		return err
	}
	ogvr := gvr
	if d.has("owner-resource") {
		if ogvr, _, err = e.objectTarget(d, "owner-resource"); err != nil {
			return err
		}
	}
	owner, err := e.get(ogvr, ns, d.str("owner", ""))
	if err != nil {
		return fmt.Errorf("own: the owner: %w", err)
	}
	block := d.has("block")
	ref := metav1.OwnerReference{APIVersion: owner.GetAPIVersion(), Kind: owner.GetKind(), Name: owner.GetName(), UID: owner.GetUID()}
	if block {
		ref.BlockOwnerDeletion = &block
	}
	dep, err := e.get(gvr, ns, d.str("name", ""))
	if err != nil {
		return fmt.Errorf("own: %w", err)
	}
	dep.SetOwnerReferences(append(dep.GetOwnerReferences(), ref))
	if _, err := e.w.Server().Resource(gvr).Namespace(ns).Update(ctx, dep, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("own: %w", err)
	}
	e.w.Settle()
	return nil
}

// cascade applies the op delete with a propagation policy; the apiserver's refusal is narrated
// (write-error), not an error of the file.
func (e *Env) cascade(d Directive, add func(string, ...any)) error {
	gvr, err := parseResource(d.str("resource", ""))
	if err != nil {
		return err
	}
	policy := map[string]metav1.DeletionPropagation{"foreground": metav1.DeletePropagationForeground,
		"background": metav1.DeletePropagationBackground, "orphan": metav1.DeletePropagationOrphan}[d.str("policy", "")]
	err = e.w.Apply(world.Op{Kind: world.OpDelete, Resource: gvr, Namespace: d.str("ns", ""), Name: d.str("name", ""), Propagation: policy})
	var status apierrors.APIStatus
	if err != nil && !errors.As(err, &status) {
		return err
	}
	return nil
}

// controlPlaneConfig is the world directive's control plane: nil unless controllers is given.
func controlPlaneConfig(d Directive) *controlplane.Config {
	if !d.has("controllers") {
		return nil
	}
	var stuck []string
	if s := d.str("stuck", ""); s != "" {
		stuck = []string{world.DefaultNamespace + "/" + s}
	}
	return &controlplane.Config{Workload: controlplane.WorkloadConfig{MaxLatency: d.dur("status-latency", 0), Stuck: stuck}}
}

var deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// rolloutStatus prints kubectl rollout status's verdict on a Deployment, by kubectl's rules: the
// generation observed first, then a progress deadline exceeded, then updated, old and available
// replicas.
func (e *Env) rolloutStatus(d Directive, add func(string, ...any)) error {
	name := d.str("name", "")
	u, err := e.get(deploymentsGVR, d.str("ns", world.DefaultNamespace), name)
	if err != nil {
		return fmt.Errorf("rollout-status: %w", err)
	}
	num := func(path ...string) int64 { n, _, _ := unstructured.NestedInt64(u.Object, path...); return n }
	add("rollout-status %s: %s", name, rolloutVerdict(u, num))
	return nil
}

func rolloutVerdict(u *unstructured.Unstructured, num func(...string) int64) string {
	name := u.GetName()
	if u.GetGeneration() > num("status", "observedGeneration") {
		return "Waiting for deployment spec update to be observed..."
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == "Progressing" && m["reason"] == "ProgressDeadlineExceeded" {
			return fmt.Sprintf("error: deployment %q exceeded its progress deadline", name)
		}
	}
	want, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if !found {
		want = 1
	}
	updated, replicas, available := num("status", "updatedReplicas"), num("status", "replicas"), num("status", "availableReplicas")
	switch {
	case updated < want:
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d out of %d new replicas have been updated...", name, updated, want)
	case replicas > updated:
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d old replicas are pending termination...", name, replicas-updated)
	case available < updated:
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d of %d updated replicas are available...", name, available, updated)
	}
	return fmt.Sprintf("deployment %q successfully rolled out", name)
}
