package controlplane

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/informersim/informersim/fakeapi"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// JobConfig configures the Job controller stand-in: how long its simulated pods run and how
// often they fail. The zero value runs every pod for no time and never fails one: a Job
// completes at the stand-in's first steps.
type JobConfig struct {
	// MinDuration and MaxDuration bound each simulated pod's run, drawn from the seeded source
	// when the pod starts.
	MinDuration, MaxDuration time.Duration
	// FailureProbability is each pod's chance to end Failed instead of Succeeded, drawn when it
	// starts (0 <= p <= 1).
	FailureProbability float64
}

func (c JobConfig) validate() error {
	if c.MinDuration < 0 || c.MaxDuration < c.MinDuration {
		return fmt.Errorf("controlplane: job-controller: duration range [%v, %v] is not 0 <= min <= max", c.MinDuration, c.MaxDuration)
	}
	if !(c.FailureProbability >= 0 && c.FailureProbability <= 1) { // NaN fails too
		return fmt.Errorf("controlplane: job-controller: failure probability %v is not in [0, 1]", c.FailureProbability)
	}
	return nil
}

// JobsGVR is the resource the Job controller stand-in serves.
var JobsGVR = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}

// What the job controller's conditions say (the batch/v1 API's condition types and reasons;
// the messages are kube-controller-manager's).
const (
	jobCondSuccessCriteriaMet = "SuccessCriteriaMet"
	jobCondComplete           = "Complete"
	jobCondFailureTarget      = "FailureTarget"
	jobCondFailed             = "Failed"
	jobCondSuspended          = "Suspended"

	jobReasonCompletionsReached    = "CompletionsReached"
	jobReasonBackoffLimitExceeded  = "BackoffLimitExceeded"
	jobReasonDeadlineExceeded      = "DeadlineExceeded"
	jobReasonSuspended             = "JobSuspended"
	jobReasonResumed               = "JobResumed"
	jobMessageCompletionsReached   = "Reached expected number of succeeded pods"
	jobMessageBackoffLimitExceeded = "Job has reached the specified backoff limit"
	jobMessageDeadlineExceeded     = "Job was active longer than specified deadline"
	jobMessageSuspended            = "Job suspended"
	jobMessageResumed              = "Job resumed"
)

// The pod failure backoff: a failed pod is replaced 10s after the first failure, doubling with
// each further one, capped at six minutes (the Job documentation's figures).
const (
	jobPodBackoff    = 10 * time.Second
	jobPodBackoffMax = 6 * time.Minute
	// jobDefaultBackoffLimit is spec.backoffLimit when unset (the API's default).
	jobDefaultBackoffLimit = 6
)

// JobController stands in for kube-controller-manager's job controller and its TTL-after-finished
// controller (docs/controlplane.md §5), without pods: each Job that is not suspended runs
// simulated pods (at most spec.parallelism at once, until spec.completions succeed), each for a
// seeded duration and failing with a seeded probability, and the stand-in writes the status the
// job controller writes as they start and end: startTime, active, ready, terminating, succeeded,
// failed, completedIndexes, the SuccessCriteriaMet and Complete conditions with completionTime,
// or FailureTarget and Failed (BackoffLimitExceeded, DeadlineExceeded), the Suspended condition.
// A finished Job with spec.ttlSecondsAfterFinished is deleted that long after it finished.
//
// It notices only writes to Jobs (a commit observer on the server): the other components'
// scans, and every run without a Job, are what they were before it existed.
type JobController struct {
	base
	rnd  *rand.Rand
	cfg  JobConfig
	jobs view[jobItem]
	// runs are the Jobs being run, by uid: their simulated pods.
	runs map[types.UID]*jobRun
	// next is the earliest instant at which a run has something to do (a pod ends, a
	// replacement may start, a deadline or a TTL passes), found by the last scan.
	next time.Time
}

type jobItem struct{}

var jobHooks = viewHooks[jobItem]{add: func(*unstructured.Unstructured) jobItem { return jobItem{} }, drop: func(jobItem) {}}

// jobRun is one Job's simulated pods and counts.
type jobRun struct {
	pods []jobPod
	// succeeded and failed count the pods ended; completed holds the Indexed Job's indexes that
	// succeeded.
	succeeded, failed int64
	completed         map[int64]bool
	// replaceAt is when a pod may start after the last failure (the failure backoff).
	replaceAt time.Time
	// started is the run's startTime; suspended is set while spec.suspend holds it.
	started   time.Time
	suspended bool
	// finished is set once a terminal outcome is decided: outcome (Complete or Failed), its
	// reason and message, at.
	finished             bool
	outcome, reason, msg string
	finishedAt           time.Time
	// failStreak counts the failures since the last success: the backoff doubles with each.
	failStreak int64
}

// jobPod is a simulated pod: when it ends, how, and its index (Indexed Jobs).
type jobPod struct {
	end   time.Time
	fails bool
	index int64
}

// jobSpec is what the stand-in reads of a Job's spec, with the API's defaults.
type jobSpec struct {
	completions    int64 // -1 when unset: the Job succeeds with its first succeeded pod
	parallelism    int64
	backoffLimit   int64
	suspend        bool
	indexed        bool
	activeDeadline time.Duration // 0 when unset
	ttl            time.Duration
	hasTTL         bool
}

func readJobSpec(u *unstructured.Unstructured) jobSpec {
	s := jobSpec{completions: -1, parallelism: 1, backoffLimit: jobDefaultBackoffLimit}
	c, hasC, _ := unstructured.NestedInt64(u.Object, "spec", "completions")
	p, hasP, _ := unstructured.NestedInt64(u.Object, "spec", "parallelism")
	switch {
	case hasC:
		s.completions = c
	case !hasP:
		s.completions = 1 // neither set: one pod to completion
	}
	if hasP {
		s.parallelism = p
	}
	if b, ok, _ := unstructured.NestedInt64(u.Object, "spec", "backoffLimit"); ok {
		s.backoffLimit = b
	}
	s.suspend, _, _ = unstructured.NestedBool(u.Object, "spec", "suspend")
	mode, _, _ := unstructured.NestedString(u.Object, "spec", "completionMode")
	s.indexed = mode == "Indexed" && s.completions >= 0
	if d, ok, _ := unstructured.NestedInt64(u.Object, "spec", "activeDeadlineSeconds"); ok && d > 0 {
		s.activeDeadline = time.Duration(d) * time.Second
	}
	if t, ok, _ := unstructured.NestedInt64(u.Object, "spec", "ttlSecondsAfterFinished"); ok && t >= 0 {
		s.ttl, s.hasTTL = time.Duration(t)*time.Second, true
	}
	return s
}

// NewJobController returns the Job controller stand-in of srv; rnd draws its pods' durations
// and outcomes.
func NewJobController(srv *fakeapi.Server, rnd *rand.Rand, cfg JobConfig) (*JobController, error) {
	b, err := newBase("job-controller", srv)
	if err != nil {
		return nil, err
	}
	if rnd == nil {
		return nil, fmt.Errorf("controlplane: job-controller: nil *rand.Rand")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	jc := &JobController{base: b, rnd: rnd, cfg: cfg, runs: map[types.UID]*jobRun{}}
	jc.jobs = newView[jobItem](&jc.base, JobsGVR)
	// Only a write to a Job is a change for it; the server calls the observer with its lock
	// held, possibly from another goroutine than the driver's (serve), hence the atomic.
	jc.dirty = new(atomic.Bool)
	srv.OnCommit(func(c fakeapi.Commit) {
		if c.Resource == JobsGVR {
			jc.dirty.Store(true)
		}
	})
	// Jobs stored before the stand-in was made are a change to read; with none it starts
	// quiet, so a world without Jobs never steps it.
	if l, err := srv.Snapshot(JobsGVR, "", metav1.ListOptions{}); err == nil && len(l.Items) > 0 {
		jc.dirty.Store(true)
	}
	jc.quiet = true
	return jc, nil
}

// Pending implements Component.
func (jc *JobController) Pending(now time.Time) bool {
	if jc.pending(now) {
		return true
	}
	at, ok := jc.ownTimer()
	return ok && !jc.stopped && !now.Before(at)
}

// NextTimer implements Component.
func (jc *JobController) NextTimer() (time.Time, bool) {
	at, ok := jc.timer()
	if own, ok2 := jc.ownTimer(); ok2 && !jc.stopped && (!ok || own.Before(at)) {
		at, ok = own, true
	}
	return at, ok
}

// ownTimer is the runs' next instant, never before the end of a wait (see WorkloadStatus).
func (jc *JobController) ownTimer() (time.Time, bool) {
	if jc.next.IsZero() {
		return time.Time{}, false
	}
	return later(jc.next, jc.retryAt), true
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// SetStopped implements Component: a restarted stand-in reads the server afresh and takes each
// running Job's counts from its status; the pods it reports active start again with new draws.
func (jc *JobController) SetStopped(stopped bool) {
	jc.base.SetStopped(stopped)
	clear(jc.runs)
	jc.next = time.Time{}
	jc.jobs.forget(jobHooks)
}

// Step implements Component.
func (jc *JobController) Step(ctx context.Context, now time.Time) (string, error) {
	if jc.idle(now, jc.ownTimer) {
		return "", nil
	}
	jc.stats.Scans++
	jc.beginScan()
	rev := jc.srv.Revision()
	err := refresh(&jc.base, &jc.jobs, jobHooks)
	if notFound(err) {
		clear(jc.runs)
		jc.next = time.Time{}
		jc.done(now, rev)
		return "", nil // Jobs are not served
	}
	if err != nil {
		jc.result(now, err)
		return "", nil
	}
	jc.next = time.Time{}
	seen := make(map[types.UID]bool, len(jc.jobs.entries))
	for _, e := range jc.jobs.entries {
		u := e.obj
		uid := u.GetUID()
		seen[uid] = true
		if u.GetDeletionTimestamp() != nil {
			continue
		}
		what, err, wrote := jc.sync(ctx, u, now)
		if wrote {
			jc.result(now, err)
			if err != nil {
				return fmt.Sprintf("%s of jobs %s/%s failed: %v", what, e.ns, e.name, err), nil
			}
			return fmt.Sprintf("%s of jobs %s/%s", what, e.ns, e.name), nil
		}
	}
	// A scan that went through every Job drops the runs of those no longer stored.
	for uid := range jc.runs {
		if !seen[uid] {
			delete(jc.runs, uid)
		}
	}
	jc.done(now, rev)
	return "", nil
}

// sync brings one Job's run up to now and writes what is due: its status when it differs from
// the one stored, or its deletion once its TTL after finishing has passed. wrote reports a write
// (made or refused); otherwise the Job's next instant has been folded into jc.next.
func (jc *JobController) sync(ctx context.Context, u *unstructured.Unstructured, now time.Time) (what string, err error, wrote bool) {
	spec := readJobSpec(u)
	uid := u.GetUID()
	if at, done := finishedAt(u); done {
		delete(jc.runs, uid)
		if !spec.hasTTL {
			return "", nil, false
		}
		due := at.Add(spec.ttl)
		if now.Before(due) {
			jc.wake(due)
			return "", nil, false
		}
		return "ttl delete", jc.deleteJob(ctx, u), true
	}
	run := jc.runs[uid]
	if run == nil {
		run = resume(u, now)
		jc.runs[uid] = run
	}
	jc.advance(run, spec, now)
	want := jc.status(u, run, spec, now)
	if !jobStatusEqual(u.Object["status"], want) {
		return "status", jc.writeStatus(ctx, u, want), true
	}
	if run.finished && spec.hasTTL {
		jc.wake(run.finishedAt.Add(spec.ttl))
	}
	if at, ok := run.nextEvent(spec); ok {
		jc.wake(at)
	}
	return "", nil, false
}

func (jc *JobController) wake(at time.Time) {
	if jc.next.IsZero() || at.Before(jc.next) {
		jc.next = at
	}
}

// resume starts the run of a Job first seen, from what its status says: a new Job has none; one
// seen by a stand-in that restarted keeps its counts and start time, and the pods it reports
// active start again.
func resume(u *unstructured.Unstructured, now time.Time) *jobRun {
	run := &jobRun{completed: map[int64]bool{}}
	run.succeeded, _, _ = unstructured.NestedInt64(u.Object, "status", "succeeded")
	run.failed, _, _ = unstructured.NestedInt64(u.Object, "status", "failed")
	if s, ok, _ := unstructured.NestedString(u.Object, "status", "startTime"); ok {
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			run.started = t
		}
	}
	if s, ok, _ := unstructured.NestedString(u.Object, "status", "completedIndexes"); ok {
		for _, i := range parseIndexes(s) {
			run.completed[i] = true
		}
	}
	status, _ := conditionOf(u, jobCondSuspended)
	run.suspended = status == "True"
	if !run.started.IsZero() {
		run.replaceAt = now // the pods it reports active start again now
	}
	return run
}

// advance plays the Job's simulated pods up to now, event by event in time order: pods end,
// the Job finishes or fails, pods start (after the failure backoff), the deadline passes.
func (jc *JobController) advance(run *jobRun, spec jobSpec, now time.Time) {
	if run.finished {
		return
	}
	if spec.suspend {
		// Suspending deletes the active pods; they are not counted as failed.
		run.pods = run.pods[:0]
		run.suspended = true
		return
	}
	if run.suspended || run.started.IsZero() {
		// Started, or resumed from suspension: the start time is (re)set to now.
		run.started, run.suspended = now, false
		run.replaceAt = time.Time{}
	}
	for {
		at, ok := run.nextEvent(spec)
		if !ok || at.After(now) {
			return
		}
		if spec.activeDeadline > 0 && !at.Before(run.started.Add(spec.activeDeadline)) {
			// Deadline first: the active pods are deleted and counted as failed.
			run.failed += int64(len(run.pods))
			run.pods = run.pods[:0]
			run.finish(jobCondFailed, jobReasonDeadlineExceeded, jobMessageDeadlineExceeded, at)
			return
		}
		// Pods ending at this instant, in index order.
		slices.SortFunc(run.pods, func(a, b jobPod) int { return cmp.Or(a.end.Compare(b.end), cmp.Compare(a.index, b.index)) })
		ended := 0
		for _, p := range run.pods {
			if p.end.After(at) {
				break
			}
			ended++
			if p.fails {
				run.failed++
				run.failStreak++
				backoff := jobPodBackoff << min(run.failStreak-1, 10)
				run.replaceAt = at.Add(min(backoff, jobPodBackoffMax))
				continue
			}
			run.succeeded++
			run.failStreak = 0
			if spec.indexed {
				run.completed[p.index] = true
			}
		}
		run.pods = slices.Delete(run.pods, 0, ended)
		switch {
		case run.failed > spec.backoffLimit:
			run.pods = run.pods[:0]
			run.finish(jobCondFailed, jobReasonBackoffLimitExceeded, jobMessageBackoffLimitExceeded, at)
			return
		case spec.completions < 0 && run.succeeded > 0, spec.completions >= 0 && run.succeeded >= spec.completions:
			// The remaining pods of a work-queue Job (completions unset) are terminated.
			run.pods = run.pods[:0]
			run.finish(jobCondComplete, jobReasonCompletionsReached, jobMessageCompletionsReached, at)
			return
		}
		if !at.Before(run.replaceAt) {
			jc.startPods(run, spec, at)
		}
	}
}

// nextEvent is the earliest instant at which the run has something to do: a pod ends, pods are
// missing and may start, the deadline passes.
func (run *jobRun) nextEvent(spec jobSpec) (time.Time, bool) {
	if run.finished || spec.suspend || run.started.IsZero() {
		return time.Time{}, false
	}
	var at time.Time
	take := func(t time.Time) {
		if at.IsZero() || t.Before(at) {
			at = t
		}
	}
	for _, p := range run.pods {
		take(p.end)
	}
	if run.wanted(spec) > 0 {
		take(later(run.started, run.replaceAt))
	}
	if spec.activeDeadline > 0 {
		take(run.started.Add(spec.activeDeadline))
	}
	return at, !at.IsZero()
}

// wanted is how many more pods the Job should run now: up to parallelism, and no more than the
// completions still missing.
func (run *jobRun) wanted(spec jobSpec) int64 {
	n := spec.parallelism - int64(len(run.pods))
	if spec.completions >= 0 {
		n = min(n, spec.completions-run.succeeded-int64(len(run.pods)))
	}
	return max(n, 0)
}

// startPods starts the pods the Job is missing at at, drawing each one's duration and outcome;
// an Indexed Job's pods take the lowest indexes neither completed nor running.
func (jc *JobController) startPods(run *jobRun, spec jobSpec, at time.Time) {
	for n := run.wanted(spec); n > 0; n-- {
		p := jobPod{end: at.Add(jc.duration()), fails: jc.fails()}
		if spec.indexed {
			for i := int64(0); ; i++ {
				if !run.completed[i] && !slices.ContainsFunc(run.pods, func(q jobPod) bool { return q.index == i }) {
					p.index = i
					break
				}
			}
		}
		run.pods = append(run.pods, p)
	}
}

func (jc *JobController) duration() time.Duration {
	span := jc.cfg.MaxDuration - jc.cfg.MinDuration
	if span <= 0 {
		return jc.cfg.MinDuration
	}
	return jc.cfg.MinDuration + time.Duration(jc.rnd.Int64N(int64(span)+1))
}

func (jc *JobController) fails() bool {
	switch p := jc.cfg.FailureProbability; {
	case p <= 0:
		return false // no draw: a run without failures draws only durations
	case p >= 1:
		return true
	default:
		return jc.rnd.Float64() < p
	}
}

func (run *jobRun) finish(outcome, reason, msg string, at time.Time) {
	run.finished, run.outcome, run.reason, run.msg, run.finishedAt = true, outcome, reason, msg, at
}

// status is the status the job controller writes for the run at now, keeping the conditions
// already stored (with their times) and adding or flipping those the run calls for.
func (jc *JobController) status(u *unstructured.Unstructured, run *jobRun, spec jobSpec, now time.Time) map[string]any {
	// ready and terminating are pointers in the API: written, 0 included. No pod is ever
	// terminating here (a pod's end is its removal), and an active pod is ready at once.
	st := map[string]any{"ready": int64(len(run.pods)), "terminating": int64(0), "uncountedTerminatedPods": map[string]any{}}
	count := func(k string, n int64) { // zero counts are omitted, as the API's omitempty does
		if n != 0 {
			st[k] = n
		}
	}
	if !run.started.IsZero() {
		st["startTime"] = run.started.UTC().Format(time.RFC3339)
	}
	count("active", int64(len(run.pods)))
	count("succeeded", run.succeeded)
	count("failed", run.failed)
	if spec.indexed && len(run.completed) > 0 {
		st["completedIndexes"] = formatIndexes(run.completed)
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	set := func(typ, status, reason, msg string, at time.Time) {
		ts := at.UTC().Format(time.RFC3339)
		for i, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] != typ {
				continue
			}
			if m["status"] == status && m["reason"] == reason {
				return
			}
			conds[i] = map[string]any{"type": typ, "status": status, "reason": reason, "message": msg, "lastProbeTime": ts, "lastTransitionTime": ts}
			return
		}
		conds = append(conds, map[string]any{"type": typ, "status": status, "reason": reason, "message": msg, "lastProbeTime": ts, "lastTransitionTime": ts})
	}
	if stored, _ := conditionOf(u, jobCondSuspended); stored == "True" && !spec.suspend {
		set(jobCondSuspended, "False", jobReasonResumed, jobMessageResumed, run.started)
	}
	switch {
	case run.finished:
		interim := jobCondSuccessCriteriaMet
		if run.outcome == jobCondFailed {
			interim = jobCondFailureTarget
		}
		set(interim, "True", run.reason, run.msg, run.finishedAt)
		set(run.outcome, "True", run.reason, run.msg, run.finishedAt)
		if run.outcome == jobCondComplete {
			st["completionTime"] = run.finishedAt.UTC().Format(time.RFC3339)
		}
	case spec.suspend:
		set(jobCondSuspended, "True", jobReasonSuspended, jobMessageSuspended, now)
	}
	if len(conds) > 0 {
		st["conditions"] = conds
	}
	return st
}

// jobStatusEqual compares a stored status with the one wanted, ignoring the conditions' times.
func jobStatusEqual(have any, want map[string]any) bool {
	strip := func(st any) map[string]any {
		m, _ := st.(map[string]any)
		out := make(map[string]any, len(m))
		for k, v := range m {
			if k != "conditions" {
				out[k] = v
				continue
			}
			list, _ := v.([]any)
			var conds []string
			for _, c := range list {
				cm, _ := c.(map[string]any)
				conds = append(conds, fmt.Sprint(cm["type"], "/", cm["status"], "/", cm["reason"]))
			}
			out[k] = conds
		}
		return out
	}
	return reflect.DeepEqual(strip(have), strip(want))
}

// writeStatus writes want as u's status through /status, on the condition that the Job is still
// the one read (its uid).
func (jc *JobController) writeStatus(ctx context.Context, u *unstructured.Unstructured, want map[string]any) error {
	uid := u.GetUID()
	_, _, err := jc.srv.Resource(JobsGVR).Namespace(u.GetNamespace()).Mutate(ctx, u.GetName(), fakeapi.Mutation{
		Verb: fakeapi.VerbUpdateStatus, Subresource: "status", LendTo: jc.name,
		Compute: func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			if live.GetUID() != uid {
				return nil, apierrors.NewConflict(JobsGVR.GroupResource(), u.GetName(), fmt.Errorf("the object changed since it was read"))
			}
			next := &unstructured.Unstructured{Object: maps.Clone(live.Object)}
			next.Object["status"] = want
			return next, nil
		},
	})
	if notFound(err) {
		return nil
	}
	return err
}

// deleteJob deletes a finished Job whose TTL passed, in the foreground as the TTL-after-finished
// controller does, on the condition that it is still the Job read.
func (jc *JobController) deleteJob(ctx context.Context, u *unstructured.Unstructured) error {
	uid := u.GetUID()
	policy := metav1.DeletePropagationForeground
	err := jc.srv.Resource(JobsGVR).Namespace(u.GetNamespace()).Delete(ctx, u.GetName(), metav1.DeleteOptions{
		PropagationPolicy: &policy,
		Preconditions:     &metav1.Preconditions{UID: &uid},
	})
	if notFound(err) {
		return nil
	}
	if err == nil {
		jc.stats.Deletes++
	}
	return err
}

// finishedAt reports whether the Job is finished (a Complete or Failed condition True) and since
// when: its completionTime, else the condition's lastTransitionTime.
func finishedAt(u *unstructured.Unstructured) (time.Time, bool) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if (m["type"] == jobCondComplete || m["type"] == jobCondFailed) && m["status"] == "True" {
			s, _ := m["lastTransitionTime"].(string)
			if ct, ok, _ := unstructured.NestedString(u.Object, "status", "completionTime"); ok {
				s = ct
			}
			t, _ := time.Parse(time.RFC3339, s)
			return t, true
		}
	}
	return time.Time{}, false
}

func conditionOf(u *unstructured.Unstructured, typ string) (status, reason string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			status, _ = m["status"].(string)
			reason, _ = m["reason"].(string)
			return status, reason
		}
	}
	return "", ""
}

// formatIndexes writes a set of indexes as the API's completedIndexes does: increasing, runs of
// three or more as "first-last" ("1,3-5,7").
func formatIndexes(set map[int64]bool) string {
	idx := slices.Sorted(maps.Keys(set))
	var b strings.Builder
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(idx[i], 10))
		switch {
		case j-i >= 2:
			b.WriteByte('-')
			b.WriteString(strconv.FormatInt(idx[j], 10))
		case j-i == 1:
			b.WriteByte(',')
			b.WriteString(strconv.FormatInt(idx[j], 10))
		}
		i = j + 1
	}
	return b.String()
}

// parseIndexes reads formatIndexes' text; what does not parse is skipped.
func parseIndexes(s string) []int64 {
	var out []int64
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseInt(lo, 10, 64)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.ParseInt(hi, 10, 64); err != nil || b < a {
				continue
			}
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	return out
}
