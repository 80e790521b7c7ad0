package controlplane_test

import (
	"context"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/controlplane"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var jobs = controlplane.JobsGVR

// withJobs is an env whose control plane runs Jobs per cfg, drawing from seed.
func withJobs(t *testing.T, seed uint64, cfg controlplane.JobConfig) *env {
	t.Helper()
	e := newEnv(t)
	cp, err := controlplane.New(e.srv, controlplane.Config{Rand: rand.New(rand.NewPCG(seed, seed)), Jobs: cfg})
	if err != nil {
		t.Fatal(err)
	}
	e.cp = cp
	return e
}

// job creates a Job; spec holds its spec's fields (completions, parallelism, suspend...).
func (e *env) job(ns, name string, spec map[string]any) {
	e.t.Helper()
	spec["template"] = map[string]any{"spec": map[string]any{"restartPolicy": "Never",
		"containers": []any{map[string]any{"name": "work", "image": "busybox"}}}}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "batch/v1", "kind": "Job",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
	if _, err := e.srv.Resource(jobs).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func jobTime(t *testing.T, u *unstructured.Unstructured, field string) time.Time {
	t.Helper()
	s, ok, _ := unstructured.NestedString(u.Object, "status", field)
	if !ok {
		return time.Time{}
	}
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("status.%s %q: %v", field, s, err)
	}
	return at
}

func conditionTypes(u *unstructured.Unstructured) []string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var out []string
	for _, c := range conds {
		m := c.(map[string]any)
		out = append(out, m["type"].(string)+"="+m["status"].(string)+"/"+m["reason"].(string))
	}
	return out
}

// runJobs advances the clock timer by timer until the control plane has none, at most steps.
func (e *env) runJobs(steps int) {
	e.t.Helper()
	e.settle()
	for i := 0; i < steps && e.advance(); i++ {
	}
}

func TestJobRunsItsCompletionsAtItsParallelism(t *testing.T) {
	e := withJobs(t, 1, controlplane.JobConfig{MinDuration: time.Second, MaxDuration: 5 * time.Second})
	start := e.clk.Now()
	e.job("a", "batch", map[string]any{"completions": int64(3), "parallelism": int64(2)})
	e.settle()
	u := e.get(jobs, "a", "batch")
	if got := jobTime(t, u, "startTime"); !got.Equal(start) {
		t.Fatalf("startTime %v, want %v", got, start)
	}
	if status(u, "active") != 2 || status(u, "ready") != 2 || status(u, "succeeded") != 0 {
		t.Fatalf("a running Job's status %v", u.Object["status"])
	}
	if n, ok, _ := unstructured.NestedInt64(u.Object, "status", "terminating"); !ok || n != 0 {
		t.Errorf("terminating is written as 0: %v", u.Object["status"])
	}
	if c := conditionTypes(u); len(c) != 0 {
		t.Errorf("a running Job has no conditions yet: %v", c)
	}
	// Never more than parallelism pods at once, and succeeded only grows.
	var last int64
	for i := 0; i < 20 && e.advance(); i++ {
		u = e.get(jobs, "a", "batch")
		if a := status(u, "active"); a > 2 {
			t.Fatalf("active %d > parallelism 2", a)
		}
		if s := status(u, "succeeded"); s < last {
			t.Fatalf("succeeded went back from %d to %d", last, s)
		} else {
			last = s
		}
	}
	u = e.get(jobs, "a", "batch")
	if status(u, "succeeded") != 3 || status(u, "active") != 0 || status(u, "failed") != 0 {
		t.Fatalf("finished Job's counts %v", u.Object["status"])
	}
	want := []string{"SuccessCriteriaMet=True/CompletionsReached", "Complete=True/CompletionsReached"}
	if got := conditionTypes(u); !reflect.DeepEqual(got, want) {
		t.Fatalf("conditions %v, want %v", got, want)
	}
	done := jobTime(t, u, "completionTime")
	// Two pods run together, then one: at least 2 s, at most 10 s.
	if d := done.Sub(start); d < 2*time.Second || d > 10*time.Second {
		t.Fatalf("completed %v after the start", d)
	}
	if !done.Equal(e.clk.Now().Truncate(time.Second)) { // the API's times are whole seconds
		t.Errorf("completionTime %v is not when the last pod ended (%v)", done, e.clk.Now())
	}
	if _, ok := e.cp.Jobs.NextTimer(); ok {
		t.Errorf("a finished Job without a TTL leaves a timer")
	}
	if s := e.cp.Jobs.Stats(); s.Errors != 0 || s.Writes < 3 {
		t.Errorf("stats %+v", s)
	}
}

func TestJobFailsAfterItsBackoffLimit(t *testing.T) {
	e := withJobs(t, 2, controlplane.JobConfig{MinDuration: time.Second, MaxDuration: time.Second, FailureProbability: 1})
	start := e.clk.Now()
	e.job("a", "flaky", map[string]any{"backoffLimit": int64(2)})
	e.runJobs(20)
	u := e.get(jobs, "a", "flaky")
	if status(u, "failed") != 3 || status(u, "succeeded") != 0 || status(u, "active") != 0 {
		t.Fatalf("counts %v", u.Object["status"])
	}
	want := []string{"FailureTarget=True/BackoffLimitExceeded", "Failed=True/BackoffLimitExceeded"}
	if got := conditionTypes(u); !reflect.DeepEqual(got, want) {
		t.Fatalf("conditions %v, want %v", got, want)
	}
	if _, ok, _ := unstructured.NestedString(u.Object, "status", "completionTime"); ok {
		t.Errorf("a failed Job has no completionTime")
	}
	// Pods of 1 s, replaced 10 s then 20 s after a failure: the third fails at 1+10+1+20+1 s.
	if got, want := e.clk.Now().Sub(start), 33*time.Second; got != want {
		t.Errorf("failed %v after the start, want %v (the failure backoff)", got, want)
	}
}

func TestJobActiveDeadline(t *testing.T) {
	e := withJobs(t, 3, controlplane.JobConfig{MinDuration: time.Hour, MaxDuration: time.Hour})
	start := e.clk.Now()
	e.job("a", "slow", map[string]any{"parallelism": int64(2), "completions": int64(4), "activeDeadlineSeconds": int64(10)})
	e.runJobs(10)
	u := e.get(jobs, "a", "slow")
	want := []string{"FailureTarget=True/DeadlineExceeded", "Failed=True/DeadlineExceeded"}
	if got := conditionTypes(u); !reflect.DeepEqual(got, want) {
		t.Fatalf("conditions %v, want %v", got, want)
	}
	if status(u, "failed") != 2 || status(u, "active") != 0 {
		t.Errorf("the deadline ends the two active pods as failed: %v", u.Object["status"])
	}
	if got := e.clk.Now().Sub(start); got != 10*time.Second {
		t.Errorf("failed %v after the start, want 10s", got)
	}
}

func TestJobSuspendedThenResumed(t *testing.T) {
	e := withJobs(t, 4, controlplane.JobConfig{MinDuration: 3 * time.Second, MaxDuration: 3 * time.Second})
	e.job("a", "later", map[string]any{"suspend": true})
	e.runJobs(5)
	u := e.get(jobs, "a", "later")
	if !jobTime(t, u, "startTime").IsZero() || status(u, "active") != 0 {
		t.Fatalf("a suspended Job does not start: %v", u.Object["status"])
	}
	if got := conditionTypes(u); !reflect.DeepEqual(got, []string{"Suspended=True/JobSuspended"}) {
		t.Fatalf("conditions %v", got)
	}
	e.clk.Step(time.Minute)
	resumed := e.clk.Now()
	_ = unstructured.SetNestedField(u.Object, false, "spec", "suspend")
	if _, err := e.srv.Resource(jobs).Namespace("a").Update(context.Background(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.settle()
	u = e.get(jobs, "a", "later")
	if !jobTime(t, u, "startTime").Equal(resumed) || status(u, "active") != 1 {
		t.Fatalf("resumed: %v", u.Object["status"])
	}
	if got := conditionTypes(u); !reflect.DeepEqual(got, []string{"Suspended=False/JobResumed"}) {
		t.Fatalf("conditions %v", got)
	}
	e.runJobs(5)
	u = e.get(jobs, "a", "later")
	want := []string{"Suspended=False/JobResumed", "SuccessCriteriaMet=True/CompletionsReached", "Complete=True/CompletionsReached"}
	if got := conditionTypes(u); !reflect.DeepEqual(got, want) {
		t.Fatalf("conditions %v, want %v", got, want)
	}
	if got := jobTime(t, u, "completionTime"); !got.Equal(resumed.Add(3 * time.Second)) {
		t.Errorf("completionTime %v, want 3s after resuming", got)
	}
}

func TestJobDeletedAfterItsTTL(t *testing.T) {
	e := withJobs(t, 5, controlplane.JobConfig{MinDuration: 2 * time.Second, MaxDuration: 2 * time.Second})
	start := e.clk.Now()
	e.job("a", "once", map[string]any{"ttlSecondsAfterFinished": int64(30)})
	e.runJobs(1)
	if u := e.get(jobs, "a", "once"); u == nil || jobTime(t, u, "completionTime").IsZero() {
		t.Fatalf("not completed: %v", u)
	}
	e.runJobs(10)
	if u := e.get(jobs, "a", "once"); u != nil {
		t.Fatalf("still there at %v: %v", e.clk.Now().Sub(start), u.Object["metadata"])
	}
	if got := e.clk.Now().Sub(start); got != 32*time.Second {
		t.Errorf("deleted %v after the start, want 32s (2s of work, 30s of TTL)", got)
	}
	if e.cp.Jobs.Stats().Deletes != 1 {
		t.Errorf("stats %+v", e.cp.Jobs.Stats())
	}
}

func TestJobIndexedCompletedIndexes(t *testing.T) {
	e := withJobs(t, 6, controlplane.JobConfig{MinDuration: time.Second, MaxDuration: 4 * time.Second})
	e.job("a", "idx", map[string]any{"completions": int64(5), "parallelism": int64(2), "completionMode": "Indexed"})
	e.settle()
	var seen []string
	for i := 0; i < 20 && e.advance(); i++ {
		if s, ok, _ := unstructured.NestedString(e.get(jobs, "a", "idx").Object, "status", "completedIndexes"); ok {
			seen = append(seen, s)
		}
	}
	if len(seen) == 0 || seen[len(seen)-1] != "0-4" {
		t.Fatalf("completedIndexes over the run %v, want to end at 0-4", seen)
	}
}

func TestJobsDeterministicPerSeed(t *testing.T) {
	run := func(seed uint64) string {
		e := withJobs(t, seed, controlplane.JobConfig{MinDuration: time.Second, MaxDuration: time.Minute, FailureProbability: 0.3})
		for _, n := range []string{"j1", "j2", "j3"} {
			e.job("a", n, map[string]any{"completions": int64(4), "parallelism": int64(2), "backoffLimit": int64(3)})
		}
		e.runJobs(200)
		var b strings.Builder
		for _, n := range []string{"j1", "j2", "j3"} {
			u := e.get(jobs, "a", n)
			b.WriteString(n + " " + strings.Join(conditionTypes(u), ",") + " ")
			b.WriteString(jobTime(t, u, "completionTime").String() + " ")
			st, _, _ := unstructured.NestedMap(u.Object, "status")
			b.WriteString(strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(fmtMap(st), "\n", " "), "  ", " ")) + "\n")
		}
		return b.String()
	}
	a, b, c := run(11), run(11), run(12)
	if a != b {
		t.Fatalf("one seed, two outcomes:\n%s\n%s", a, b)
	}
	if a == c {
		t.Errorf("seeds 11 and 12 ran alike:\n%s", a)
	}
	if !strings.Contains(a+c, "Failed=True") || !strings.Contains(a+c, "Complete=True") {
		t.Errorf("with a 30%% failure probability and a backoff limit of 3, expected both outcomes among six Jobs:\n%s%s", a, c)
	}
}

func fmtMap(m map[string]any) string {
	u := unstructured.Unstructured{Object: map[string]any{"status": m}}
	b, _ := u.MarshalJSON()
	return string(b)
}

func TestJobControllerIgnoresOtherWrites(t *testing.T) {
	e := withJobs(t, 7, controlplane.JobConfig{})
	e.create(configmaps, "a", "c1")
	e.workload(deployments, "a", "web", 2)
	e.settle()
	if s := e.cp.Jobs.Stats(); s.Scans != 0 {
		t.Fatalf("the Job controller scanned %d times with no Job written", s.Scans)
	}
	if e.cp.Jobs.Pending(e.clk.Now()) {
		t.Fatal("pending with no Job")
	}
	e.job("a", "j", map[string]any{})
	e.settle()
	u := e.get(jobs, "a", "j")
	if got := conditionTypes(u); len(got) != 2 || status(u, "succeeded") != 1 {
		t.Fatalf("zero durations: the Job completes at once: %v", u.Object["status"])
	}
}

func TestJobControllerRestartKeepsCounts(t *testing.T) {
	e := withJobs(t, 8, controlplane.JobConfig{MinDuration: 5 * time.Second, MaxDuration: 5 * time.Second})
	e.job("a", "long", map[string]any{"completions": int64(3)})
	e.settle()
	e.advance() // the first pod ends, the second starts
	u := e.get(jobs, "a", "long")
	if status(u, "succeeded") != 1 || status(u, "active") != 1 {
		t.Fatalf("after one pod %v", u.Object["status"])
	}
	started := jobTime(t, u, "startTime")
	e.cp.Jobs.SetStopped(true)
	e.clk.Step(time.Minute)
	e.cp.Jobs.SetStopped(false)
	e.runJobs(10)
	u = e.get(jobs, "a", "long")
	if status(u, "succeeded") != 3 || !jobTime(t, u, "startTime").Equal(started) {
		t.Fatalf("after a restart the counts go on from the status: %v", u.Object["status"])
	}
}

func TestJobConfigValidated(t *testing.T) {
	e := newEnv(t)
	for _, cfg := range []controlplane.JobConfig{
		{MinDuration: -time.Second},
		{MinDuration: 2 * time.Second, MaxDuration: time.Second},
		{FailureProbability: 1.5},
		{FailureProbability: -0.1},
	} {
		if _, err := controlplane.New(e.srv, controlplane.Config{Jobs: cfg}); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}
