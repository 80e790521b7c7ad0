package clientgo_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim/world"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

var jobsGVR = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}

// batchRunner is a small client-go controller that runs a Job per request: for each ConfigMap
// labelled batch=run it creates a Job (owned by the ConfigMap, spec.completions from its data),
// waits for it to finish, and writes the outcome into the ConfigMap (data.result: Complete or
// Failed, data.succeeded). Without a job controller in the cluster it would wait forever.
type batchRunner struct {
	client kubernetes.Interface
	cms    corelisters.ConfigMapLister
	jobs   batchlisters.JobLister
	queue  workqueue.TypedRateLimitingInterface[cache.ObjectName]
	synced []cache.InformerSynced
	// notFoundIsAnError is the planted bug of TestHotLoopCaughtBySweep: a request whose
	// ConfigMap is gone returns the lister's NotFound instead of nil, so the key is retried
	// forever.
	notFoundIsAnError bool
}

func newBatchRunner(_ context.Context, env *clientgo.Env) (*batchRunner, error) {
	cmInf := env.KubeInformers.Core().V1().ConfigMaps()
	jobInf := env.KubeInformers.Batch().V1().Jobs()
	c := &batchRunner{client: env.Client, cms: cmInf.Lister(), jobs: jobInf.Lister(),
		queue:  workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName]()),
		synced: []cache.InformerSynced{cmInf.Informer().HasSynced, jobInf.Informer().HasSynced}}
	enqueue := func(obj any) {
		if m, err := cache.ObjectToName(obj); err == nil && m.Name != "" {
			c.queue.Add(m)
		}
	}
	request := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if cm, ok := obj.(*corev1.ConfigMap); ok && cm.Labels["batch"] == "run" {
			enqueue(cm)
		}
	}
	if _, err := cmInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: request, UpdateFunc: func(_, n any) { request(n) }, DeleteFunc: request,
	}); err != nil {
		return nil, err
	}
	owner := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if j, ok := obj.(*batchv1.Job); ok {
			if ref := metav1.GetControllerOf(j); ref != nil && ref.Kind == "ConfigMap" {
				c.queue.Add(cache.ObjectName{Namespace: j.Namespace, Name: ref.Name})
			}
		}
	}
	if _, err := jobInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: owner, UpdateFunc: func(_, n any) { owner(n) }, DeleteFunc: owner,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *batchRunner) Run(ctx context.Context, workers int) error {
	defer c.queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return errors.New("caches did not sync")
	}
	for range workers {
		go wait.UntilWithContext(ctx, func(ctx context.Context) {
			for c.next(ctx) {
			}
		}, time.Second)
	}
	<-ctx.Done()
	return nil
}

func (c *batchRunner) next(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	if err := c.sync(ctx, key); err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Error syncing; requeuing for later retry", "objectReference", key)
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

func jobOutcome(j *batchv1.Job) string {
	for _, cond := range j.Status.Conditions {
		if (cond.Type == batchv1.JobComplete || cond.Type == batchv1.JobFailed) && cond.Status == corev1.ConditionTrue {
			return string(cond.Type)
		}
	}
	return ""
}

func (c *batchRunner) sync(ctx context.Context, key cache.ObjectName) error {
	cm, err := c.cms.ConfigMaps(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) && !c.notFoundIsAnError {
		return nil // the request is gone; its Job goes with it (owner reference)
	}
	if err != nil {
		return err
	}
	name := "run-" + cm.Name
	job, err := c.jobs.Jobs(cm.Namespace).Get(name)
	if apierrors.IsNotFound(err) {
		completions, _ := strconv.Atoi(cm.Data["completions"])
		job = &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cm.Namespace,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cm, corev1.SchemeGroupVersion.WithKind("ConfigMap"))}},
			Spec: batchv1.JobSpec{Completions: ptrTo(int32(completions)), Parallelism: ptrTo(int32(2)), BackoffLimit: ptrTo(int32(1)),
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "work", Image: "busybox"}}}}},
		}
		_, err := c.client.BatchV1().Jobs(cm.Namespace).Create(ctx, job, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil // the cache is behind: the Job's event brings the request back
		}
		return err
	}
	if err != nil {
		return err
	}
	outcome := jobOutcome(job)
	succeeded := strconv.Itoa(int(job.Status.Succeeded))
	if outcome == "" || (cm.Data["result"] == outcome && cm.Data["succeeded"] == succeeded) {
		return nil
	}
	cm = cm.DeepCopy()
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["result"], cm.Data["succeeded"] = outcome, succeeded
	_, err = c.client.CoreV1().ConfigMaps(cm.Namespace).Update(ctx, cm, metav1.UpdateOptions{})
	return err
}

// batchRequests writes five requests at time zero and three more during the safety phase.
func batchRequests(w *world.World) error {
	req := func(name string, completions int) world.Op {
		return world.Op{Kind: world.OpCreate, Resource: cmsGVR, Name: name, Labels: map[string]string{"batch": "run"},
			Content: map[string]any{"data": map[string]any{"completions": strconv.Itoa(completions)}}}
	}
	for i := range 5 {
		if err := w.Apply(req(fmt.Sprintf("r%d", i), 1+i%3)); err != nil {
			return err
		}
	}
	_, err := w.Script(5*time.Second, req("r5", 2), req("r6", 1), req("r7", 4))
	return err
}

// batchDone is the runner's outcome: every request has its Job, finished, and its result.
func batchDone(srv *fakeapi.Server) error {
	cms, err := srv.Snapshot(cmsGVR, "default", metav1.ListOptions{LabelSelector: "batch=run"})
	if err != nil {
		return err
	}
	if len(cms.Items) == 0 {
		return errors.New("no request")
	}
	for _, cm := range cms.Items {
		job, err := srv.Resource(jobsGVR).Namespace("default").Get(context.Background(), "run-"+cm.GetName(), metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("request %s has no Job: %w", cm.GetName(), err)
		}
		var j batchv1.Job
		if err := fromUnstructured(job.Object, &j); err != nil {
			return err
		}
		outcome := jobOutcome(&j)
		if outcome == "" {
			return fmt.Errorf("Job %s has not finished: %+v", j.Name, j.Status)
		}
		data, _ := cm.Object["data"].(map[string]any)
		if data["result"] != outcome || data["succeeded"] != strconv.Itoa(int(j.Status.Succeeded)) {
			return fmt.Errorf("request %s says %v/%v, its Job %s/%d", cm.GetName(), data["result"], data["succeeded"], outcome, j.Status.Succeeded)
		}
	}
	return nil
}

// TestJobControllerStandInRunsAJobCreatingController: a client-go controller that creates Jobs
// and waits for them runs to its outcome under the harness with no Job-finishing actor of its
// own: the job controller stand-in runs each Job's pods for a seeded time, fails some (a
// failure probability of 0.3 with a backoff limit of 1), and writes the conditions and counts
// the controller reads. Both outcomes occur across the seeds, each seed's run replays (the same
// trace twice), and with Cluster.ControlPlane.Off the same controller never finishes.
func TestJobControllerStandInRunsAJobCreatingController(t *testing.T) {
	cfg := func(seed uint64) clientgo.Config {
		return clientgo.Config{
			Seed:    seed,
			Setup:   batchRequests,
			Cluster: clientgo.Cluster{ControlPlane: clientgo.ControlPlane{Config: controlplane.Config{Jobs: controlplane.JobConfig{MinDuration: 2 * time.Second, MaxDuration: 40 * time.Second, FailureProbability: 0.3}}}},
			Controller: clientgo.Constructor{New: func(ctx context.Context, env *clientgo.Env) (clientgo.Controller, error) {
				return newBatchRunner(ctx, env)
			}},
			Phases: clientgo.Phases{FaultsFor: 20 * time.Second},
			Checks: clientgo.Checks{Outcome: batchDone},
		}
	}
	outcomes := map[string]int{}
	for seed := uint64(1); seed <= 4; seed++ {
		var srv *fakeapi.Server
		c := cfg(seed)
		setup := c.Setup
		c.Setup = func(w *world.World) error { srv = w.Server(); return setup(w) }
		rep, err := clientgo.Run(t, c)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, rep.Failure)
		}
		if rep.Diagnostics.ControlPlane.JobController.Writes < 8 {
			t.Errorf("seed %d: the job controller wrote %d times for 8 Jobs", seed, rep.Diagnostics.ControlPlane.JobController.Writes)
		}
		jobs, err := srv.Snapshot(jobsGVR, "default", metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs.Items {
			var job batchv1.Job
			if err := fromUnstructured(j.Object, &job); err != nil {
				t.Fatal(err)
			}
			outcomes[jobOutcome(&job)]++
			if job.Status.StartTime == nil || (jobOutcome(&job) == "Complete") != (job.Status.CompletionTime != nil) {
				t.Errorf("seed %d: Job %s: startTime %v, completionTime %v, outcome %s", seed, job.Name, job.Status.StartTime, job.Status.CompletionTime, jobOutcome(&job))
			}
		}
		if seed == 1 {
			again, err := clientgo.Run(t, cfg(seed))
			if err != nil || again.Hash != rep.Hash {
				t.Fatalf("seed 1 twice: %v, hashes %s and %s", err, rep.Hash, again.Hash)
			}
			t.Logf("%v", rep)
		}
	}
	if outcomes["Complete"] == 0 || outcomes["Failed"] == 0 {
		t.Errorf("outcomes over 4 seeds %v: want both Complete and Failed", outcomes)
	}
	t.Logf("outcomes over 4 seeds: %v", outcomes)

	off := cfg(1)
	off.Cluster.ControlPlane, off.Phases.Budget = clientgo.ControlPlane{Off: true}, time.Minute
	if _, err := clientgo.Run(t, off); err == nil {
		t.Errorf("without the job controller the Jobs finished anyway")
	}
}

func fromUnstructured(obj map[string]any, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(obj, into)
}
