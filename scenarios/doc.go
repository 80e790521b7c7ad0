// Package scenarios is the scenario language of informersim: plain-text files, read top to
// bottom as a story, in the style of etcd-raft's interaction tests (docs/simulation.md §E). Each
// directive is one line with arguments, then "----", then the expected output: the system's own
// narration of what the apiserver, the Reflector, the queue, the Indexer and each handler did,
// followed by what the directive reports. github.com/cockroachdb/datadriven reads the framing
// and rewrites the expected blocks (make rewrite). The course in testdata/ (docs/course.md)
// teaches the informer's behavior one concept a file; the command line runs any file or course
// scenario (informersim run, list, explain). A file opens with comment lines: its title, then
// optional "labels: a, b" and "pipeline: Reflector, Indexer" lines (the parts of client-go's
// pipeline the lesson is about, highlighted on its page of the course site, package timeline),
// then the concept text.
//
// # Contract
//
// A scenario builds one world (package sim/world) with the named oracles of sim/world/oracle
// attached. A run is determined by the file, the seed and the policy: Run with the same inputs
// prints the same narration and trace hash. The first failure (an oracle's violation, a run
// error, a world that does not converge) stops the run: the directive prints it (the oracle, the
// first violating event with the trace before it, the seed) with the one command that replays it,
// "informersim run NAME --seed N", and every later directive prints "skipped". A malformed file,
// or a directive that does not fit the scenario (an unknown informer), is an error naming the
// file, the line, the directive and what was expected. ParseDirective never panics
// (FuzzParseDirective). Every directive has a text form that parses back (Directive.String), so
// a run built in code, a generated workload included, can be written out as a file (Format,
// GeneratedDirectives).
//
// # The directives
//
// The world and the story:
//
//	world seed=1 policy=random|fifo|pct pct-depth=N replicas=N min-latency=1ms max-latency=50ms
//	      bookmark-interval=D compaction-interval=D watch-cache-history=N max-watch-events=N
//	      max-in-flight=N rv-wait=D check-each-delivery controllers status-latency=D stuck=NAME
//	      client=NAME                                first directive only; defaults otherwise
//	      (check-each-delivery: the apiserver checks the objects a handler was lent at the end of
//	      each delivery, world.Config.CheckReadOnlyEachDelivery, so a handler that changes one
//	      fails the run at its own delivery rather than at the object's next write; client=NAME:
//	      a stand-in for a client that runs outside the file, a Go test's controller, so that the
//	      client faults aimed at it run, narrated as not taken: an ops file that OpsFile or
//	      ShrinkOps wrote of such a run names it)
//	legend                                           the legend of the narration
//	caption Some words                               a caption between phases (prints nothing)
//
// Objects, in world.Op's own syntax (world.Parse reads the line; create and update take the
// object's content as JSON in the input lines):
//
//	create name=a label:app=web annotation:k=v finalizers=f1 generateName=web- resource=v1/configmaps
//	update name=a label:app=db                       patch name=a patchType=merge patch=...
//	delete name=a propagation=Foreground             populate n=600 prefix=p label=app=web
//
// Informers and handlers:
//
//	informer name=inf1 resource=v1/pods ns=default labels=app=web fields=metadata.name=a
//	         resync=10s queue=realfifo|realfifo-nonatomic|deltafifo batch=false
//	         mode=list-watch|watch-list transform=drop-annotations|drop-content
//	         indexers=(namespace, label:app)
//	factory name=f ns=default resync=30s resources=(v1/pods, v1/configmaps)   (informers f-pods...)
//	for-resource factory=f resource=v1/secrets      (the factory's informer, shared)
//	start informer=inf1|f   stop informer=inf1   restart informer=inf1 as=inf2
//	client name=controller informer=inf1   (inf1 and what it feeds as the world's client: the op
//	                          crash-restart client=controller restarts it as inf1-restarted)
//	add-indexers informer=inf1 indexers=(label:app)
//	handler informer=inf1 name=h1 resync=5s slow=100ms filter=app=web   (late join after start)
//	handler informer=inf1 name=bad mutates     (labels what it is given in place: a bug)
//	remove-handler informer=inf1 name=h1
//	workqueue name=q informer=inf1 workers=2 work=100ms fail=2
//	controller name=c informer=inf1 workers=2 work=10ms    (one ConfigMap per pod, checked)
//
// Faults, world ops too (world.Parse reads the line; a generator can draw each, see
// world.GenConfig.FaultOpKinds):
//
//	close-watches [code=410|500|429]   compact   fail-next verb=list|watch code=410|429|500|504
//	burn-revisions n=100   slow-consumer [informer=inf1]   trigger-bookmarks
//	lag-replica replica=1 by=30s   freeze-replica replica=1   resume-replica replica=1
//	reinit-replica replica=1 not-ready=5s   route-next replica=1
//
// Admission webhooks' faults, accepted only by a world that calls webhooks (the client-go
// harness with Cluster.Webhooks; a scenario's world calls none, and refuses them):
//
//	slow-webhook [name=W] by=15s   refuse-webhook [name=W]   fail-webhook [name=W] code=500
//
// Client faults, world ops aimed at a client the world does not run (world.World.AddClient:
// clientgo's harness registers its controller, a campaign its Go-hosted one; in a file, the
// world directive's client=NAME stand-in):
//
//	crash-restart client=controller   conflict client=controller   hidden-change client=controller
//	slow-call client=controller by=5s   stale-read client=controller replica=1
//
// The control plane (docs/controlplane.md), which `world controllers` runs (status-latency=D
// bounds the workload status stand-in's seeded latency, stuck=NAME is a Deployment in the default
// namespace whose rollout never completes):
//
//	own name=dep owner=web block resource=v1/configmaps owner-resource=apps/v1/deployments ns=default
//	                          (the language's own: it reads the owner's uid when it runs, which
//	                          no op could carry into a replay; controlplane.go says why)
//	cascade name=web policy=foreground|background|orphan resource=... ns=...
//	                          (the op delete name=web propagation=Foreground|Background|Orphan)
//	slow-controller name=garbage-collector by=5s   stop-controller name=garbage-collector
//	start-controller name=garbage-collector     (also namespace-controller, workload-status, job-controller)
//	rollout-status name=web [ns=default]        what kubectl rollout status says now
//
// Time and scheduling:
//
//	run for=1s | until=converged [budget=1h] | until=synced informer=inf1
//	    | until=event event=inf1/reflector:list-page | steps=N     [show=(reflector, h1)]
//	generate ops=50 fault-ops=true fault-points=true max-interval=2s   faults on=false
//
// Inspection:
//
//	cache informer=inf1 [index=namespace value=default] [full]   log handler=inf1/h1 [new]
//	queue informer=inf1 | workqueue=q   rv informer=inf1   requests [client=inf1] [all]
//	objects [resource=v1/configmaps] [ns=default]   oracles   hazards
//
// # Implementation notes
//
// Env is the interaction environment: it holds the world and turns directives into calls on
// it. Each directive is one row (directiveSpec): its arguments and its handler together, in a
// list per topic beside the handlers (env.go: the world and the story; env_objects.go: ops and
// populate; env_informers.go, factory.go, workqueue.go; env_time.go: run, generate, faults;
// env_inspect.go: what a scenario can look at). Env.dispatch looks the row up; there is no other
// list of directives. Narration is collected with sim.Sim.Subscribe, leaving out the scheduler's step events;
// show= keeps only some actors. Outside go test, Run feeds datadriven a testing.TB of its own
// (runTB) and compares nothing itself: Result.Mismatches compares each output with the file's
// block, so the command line and the Ginkgo suite share one runner.
//
// Beyond running files: Shrink cuts a failing file down to a minimal one failing the same way;
// OpsFile, OpsOfFile and ShrinkOps do the same for the ops of a run of a controller hosted in
// Go (a fuzz input's), WriteOpsFailure writes both files for a failing fuzz input; Perturb and
// PerturbFile run Sieve-style perturbation campaigns (a restart, a lagging replica, an
// unobserved delete before each op of a passing run) and shrink the first run that breaks
// (docs/fuzzing.md).
package scenarios
