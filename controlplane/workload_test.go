package controlplane_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/fakeapi"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	deployments  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	statefulsets = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
	replicasets  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
)

func (e *env) workload(gvr schema.GroupVersionResource, ns, name string, replicas int64) {
	e.t.Helper()
	kind := map[string]string{"deployments": "Deployment", "statefulsets": "StatefulSet", "replicasets": "ReplicaSet"}[gvr.Resource]
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"replicas": replicas, "selector": map[string]any{"matchLabels": map[string]any{"app": name}}},
	}}
	if _, err := e.srv.Resource(gvr).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) scale(gvr schema.GroupVersionResource, ns, name string, replicas int64) {
	e.t.Helper()
	u := e.get(gvr, ns, name)
	_ = unstructured.SetNestedField(u.Object, replicas, "spec", "replicas")
	if _, err := e.srv.Resource(gvr).Namespace(ns).Update(context.Background(), u, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func status(u *unstructured.Unstructured, field string) int64 {
	n, _, _ := unstructured.NestedInt64(u.Object, "status", field)
	return n
}

func condition(u *unstructured.Unstructured, typ string) (string, string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			r, _ := m["reason"].(string)
			return s, r
		}
	}
	return "", ""
}

// rolledOut is kubectl rollout status's test of a Deployment.
func rolledOut(u *unstructured.Unstructured) bool {
	spec, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	return u.GetGeneration() <= status(u, "observedGeneration") &&
		status(u, "updatedReplicas") >= spec && status(u, "replicas") <= status(u, "updatedReplicas") &&
		status(u, "availableReplicas") >= status(u, "updatedReplicas")
}

func withLatency(t *testing.T, cfg controlplane.WorkloadConfig) *env {
	t.Helper()
	e := newEnv(t)
	cp, err := controlplane.New(e.srv, controlplane.Config{Rand: rand.New(rand.NewPCG(7, 7)), Workload: cfg})
	if err != nil {
		t.Fatal(err)
	}
	e.cp = cp
	return e
}

// advance moves the clock to the next timer of the control plane and settles there.
func (e *env) advance() bool {
	e.t.Helper()
	var next time.Time
	for _, c := range e.cp.Components() {
		if at, ok := c.NextTimer(); ok && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	if next.IsZero() {
		return false
	}
	if next.After(e.clk.Now()) {
		e.clk.SetTime(next)
	}
	e.settle()
	return true
}

func TestWorkloadStatusConvergesAfterItsLatency(t *testing.T) {
	e := withLatency(t, controlplane.WorkloadConfig{MinLatency: 2 * time.Second, MaxLatency: 5 * time.Second})
	start := e.clk.Now()
	e.workload(deployments, "a", "web", 3)
	e.workload(statefulsets, "a", "db", 2)
	e.workload(replicasets, "a", "rs", 4)
	e.settle()
	if d := e.get(deployments, "a", "web"); rolledOut(d) || status(d, "observedGeneration") != 0 {
		t.Fatalf("status written before its latency: %v", d.Object["status"])
	}
	for i := 0; i < 10 && e.advance(); i++ {
	}
	d := e.get(deployments, "a", "web")
	if !rolledOut(d) || status(d, "readyReplicas") != 3 {
		t.Fatalf("deployment status %v", d.Object["status"])
	}
	if s, r := condition(d, "Available"); s != "True" || r != "MinimumReplicasAvailable" {
		t.Errorf("Available %s %s", s, r)
	}
	if el := e.clk.Now().Sub(start); el < 2*time.Second || el > 5*time.Second {
		t.Errorf("converged after %v, outside the latency range", el)
	}
	ss := e.get(statefulsets, "a", "db")
	if status(ss, "readyReplicas") != 2 || ss.Object["status"].(map[string]any)["currentRevision"] != ss.Object["status"].(map[string]any)["updateRevision"] {
		t.Errorf("statefulset status %v", ss.Object["status"])
	}
	if rs := e.get(replicasets, "a", "rs"); status(rs, "availableReplicas") != 4 || status(rs, "observedGeneration") != 1 {
		t.Errorf("replicaset status %v", rs.Object["status"])
	}
	// A scale is a new generation: reported again after a latency.
	e.scale(deployments, "a", "web", 5)
	e.settle()
	if rolledOut(e.get(deployments, "a", "web")) {
		t.Fatal("a scaled deployment reads as rolled out at once")
	}
	for i := 0; i < 10 && e.advance(); i++ {
	}
	if d := e.get(deployments, "a", "web"); !rolledOut(d) || status(d, "availableReplicas") != 5 || status(d, "observedGeneration") != 2 {
		t.Fatalf("after scaling: %v", d.Object["status"])
	}
}

func TestStuckRolloutExceedsItsProgressDeadline(t *testing.T) {
	e := withLatency(t, controlplane.WorkloadConfig{Stuck: []string{"a/stuck"}})
	e.workload(deployments, "a", "stuck", 2)
	e.workload(deployments, "a", "fine", 2)
	e.settle()
	d := e.get(deployments, "a", "stuck")
	if rolledOut(d) || status(d, "observedGeneration") != 1 || status(d, "unavailableReplicas") != 2 {
		t.Fatalf("stuck status %v", d.Object["status"])
	}
	if s, r := condition(d, "Progressing"); s != "True" || r != "ReplicaSetUpdated" {
		t.Fatalf("Progressing %s %s before the deadline", s, r)
	}
	if !rolledOut(e.get(deployments, "a", "fine")) {
		t.Fatal("a deployment not named stuck is stuck")
	}
	e.clk.Step(599 * time.Second)
	e.settle()
	if _, r := condition(e.get(deployments, "a", "stuck"), "Progressing"); r != "ReplicaSetUpdated" {
		t.Fatalf("deadline reported early: %s", r)
	}
	if !e.advance() {
		t.Fatal("no timer for the progress deadline")
	}
	if s, r := condition(e.get(deployments, "a", "stuck"), "Progressing"); s != "False" || r != "ProgressDeadlineExceeded" {
		t.Fatalf("Progressing %s %s after the deadline", s, r)
	}
	e.settle()
	if at, ok := e.cp.Workload.NextTimer(); ok {
		t.Fatalf("a timer remains at %v after the deadline was reported", at)
	}
}

func TestSlowAndStoppedComponents(t *testing.T) {
	e := newEnv(t)
	owner := e.create(configmaps, "a", "owner")
	e.create(configmaps, "a", "dep", ref(owner, true))
	if err := e.cp.GC.SetDelay(3 * time.Second); err != nil {
		t.Fatal(err)
	}
	e.delete(configmaps, "a", "owner", metav1.DeleteOptions{})
	e.settle()
	if e.get(configmaps, "a", "dep") == nil {
		t.Fatal("a collector slowed by 3s acted at once")
	}
	e.clk.Step(3 * time.Second)
	e.settle()
	if e.get(configmaps, "a", "dep") != nil {
		t.Fatal("a slow collector never acted")
	}
	_ = e.cp.GC.SetDelay(0)
	e.cp.GC.SetStopped(true)
	owner = e.create(configmaps, "a", "owner")
	e.create(configmaps, "a", "dep", ref(owner, true))
	e.delete(configmaps, "a", "owner", metav1.DeleteOptions{})
	e.settle()
	if e.cp.GC.Pending(e.clk.Now()) || e.get(configmaps, "a", "dep") == nil {
		t.Fatal("a stopped collector acted")
	}
	e.cp.GC.SetStopped(false)
	e.settle()
	if e.get(configmaps, "a", "dep") != nil {
		t.Fatal("a restarted collector did not catch up")
	}
	if err := e.cp.GC.SetDelay(-time.Second); err == nil {
		t.Fatal("a negative delay was accepted")
	}
}

// TestWorkloadStatusRetriesARefusedWrite: a status write refused (an injected 409) when nothing
// else changes on the server is retried after the backoff, as the deployment controller's queue
// retries: a component that was quiet before the write must not stay quiet after it failed
// (the operator's seed sweep found a Deployment whose status never came).
func TestWorkloadStatusRetriesARefusedWrite(t *testing.T) {
	e := withLatency(t, controlplane.WorkloadConfig{MinLatency: time.Second, MaxLatency: time.Second})
	e.workload(deployments, "a", "web", 2)
	e.settle()
	e.srv.Faults().FailNext(fakeapi.VerbUpdateStatus, apierrors.NewConflict(deployments.GroupResource(), "web", errors.New("injected")))
	for i := 0; i < 10 && e.advance(); i++ {
	}
	if d := e.get(deployments, "a", "web"); !rolledOut(d) {
		t.Fatalf("the status write refused once was never retried: %v (stats %+v)", d.Object["status"], e.cp.Workload.Stats())
	}
	if s := e.cp.Workload.Stats(); s.Errors != 1 || s.Writes != 1 {
		t.Errorf("stats %+v, want one error then one write", s)
	}
}

// TestLatencyDueWhileWaitingForALaggingCache: with stale reads, a scan served by a watch cache
// behind the server waits stalePoll (100ms) before reading again; a status latency shorter than
// that falls due during the wait. The stand-in must not be Pending then (its Step would do
// nothing, and a driver would step it at that instant forever): its timer is the end of the
// wait, when it writes the status.
func TestLatencyDueWhileWaitingForALaggingCache(t *testing.T) {
	e, srv := replicatedEnv(t, 1, controlplane.Config{StaleReads: true,
		Workload: controlplane.WorkloadConfig{MinLatency: 10 * time.Millisecond, MaxLatency: 10 * time.Millisecond}})
	ws := e.cp.Workload
	if err := srv.Replicas().SetLag(0, time.Second); err != nil {
		t.Fatal(err)
	}
	e.workload(deployments, "a", "web", 2)
	e.clk.Step(2 * time.Second) // the cache has the Deployment
	e.create(configmaps, "a", "other")
	start := e.clk.Now()
	// The scan finds the Deployment behind (latency 10ms) and the cache behind the server.
	if !ws.Pending(start) {
		t.Fatal("the stand-in is not pending after writes")
	}
	if _, err := ws.Step(context.Background(), start); err != nil {
		t.Fatal(err)
	}
	e.clk.Step(10 * time.Millisecond) // the latency is due, the wait is not over
	steps := 0
	for ws.Pending(e.clk.Now()) && steps < 10 {
		what, err := ws.Step(context.Background(), e.clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		if what != "" {
			t.Fatalf("wrote %q during its wait", what)
		}
		steps++
	}
	if steps > 0 {
		t.Fatalf("pending during its wait: %d steps did nothing at one instant", steps)
	}
	at, ok := ws.NextTimer()
	if want := start.Add(100 * time.Millisecond); !ok || !at.Equal(want) {
		t.Fatalf("next timer %v %v, want the end of the wait %v", at, ok, want)
	}
	e.clk.SetTime(at)
	e.settle()
	if d := e.get(deployments, "a", "web"); status(d, "availableReplicas") != 2 {
		t.Fatalf("status not written after the wait: %v", d.Object["status"])
	}
}
