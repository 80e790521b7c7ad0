package clientgo_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/informersim/informersim/clientgo"
	_ "github.com/informersim/informersim/clientgo/controllerruntime" // managers run again and again in this process
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim/world"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// widgetReconciler is a controller-runtime reconciler: every Widget owns a ConfigMap
// "widget-NAME" whose data says its size, and its status says it is ready at its generation.
// It records an event when it creates the ConfigMap. It knows nothing of informersim.
type widgetReconciler struct {
	ctrlclient.Client
	scheme *runtime.Scheme
	events recorder.EventRecorder
}

func (r *widgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var w Widget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, ctrlclient.IgnoreNotFound(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: "widget-" + w.Name}}
	op, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = map[string]string{"size": strconv.Itoa(int(w.Spec.Size))}
		return controllerutil.SetControllerReference(&w, cm, r.scheme)
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	if op == controllerutil.OperationResultCreated {
		r.events.Eventf(&w, cm, corev1.EventTypeNormal, "Created", "Create", "created ConfigMap %s", cm.Name)
	}
	if w.Status.ObservedGeneration != w.Generation || !w.Status.Ready {
		w.Status.Ready, w.Status.ObservedGeneration = true, w.Generation
		if err := r.Status().Update(ctx, &w); err != nil {
			if apierrors.IsConflict(err) {
				return ctrl.Result{Requeue: true}, nil
			}
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// widgetManagerMain is the operator's main from the *rest.Config on, as for a cluster: a
// manager with default options (no metrics address set, no health probes, no leader
// election), its controller with an owned kind, its event recorder, Start.
func widgetManagerMain(scheme *runtime.Scheme) func(ctx context.Context, cfg *rest.Config) error {
	return func(ctx context.Context, cfg *rest.Config) error {
		mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme})
		if err != nil {
			return err
		}
		if err := ctrl.NewControllerManagedBy(mgr).For(&Widget{}).Owns(&corev1.ConfigMap{}).
			Complete(&widgetReconciler{Client: mgr.GetClient(), scheme: mgr.GetScheme(), events: mgr.GetEventRecorder("widgets")}); err != nil {
			return err
		}
		return mgr.Start(ctx)
	}
}

var widgetsGVR = widgetGV.WithResource("widgets")

// widgetsConverged: every Widget has its ConfigMap with its size, and a ready status at its
// generation.
func widgetsConverged(srv *fakeapi.Server) error {
	ws, err := srv.Snapshot(widgetsGVR, "", metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, w := range ws.Items {
		l, err := srv.Snapshot(cmsGVR, w.GetNamespace(), metav1.ListOptions{FieldSelector: "metadata.name=widget-" + w.GetName()})
		if err != nil || len(l.Items) != 1 {
			return fmt.Errorf("widget %s has no ConfigMap (%v)", w.GetName(), err)
		}
		size, _, _ := unstructuredInt(w.Object, "spec", "size")
		if got := l.Items[0].Object["data"].(map[string]any)["size"]; got != strconv.FormatInt(size, 10) {
			return fmt.Errorf("widget %s: ConfigMap says size %v, spec %d", w.GetName(), got, size)
		}
		gen, _, _ := unstructuredInt(w.Object, "status", "observedGeneration")
		if gen != w.GetGeneration() {
			return fmt.Errorf("widget %s: status.observedGeneration %d, generation %d", w.GetName(), gen, w.GetGeneration())
		}
	}
	return nil
}

// widgetManagerScheme is client-go's types and Widget's.
func widgetManagerScheme(t *testing.T) *runtime.Scheme {
	scheme := builtinScheme(t)
	scheme.AddKnownTypes(widgetGV, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(scheme, widgetGV)
	return scheme
}

func widgetManagerConfig(t *testing.T, seed uint64) clientgo.Config {
	scheme := widgetManagerScheme(t)
	return clientgo.Config{
		Seed: seed,
		Setup: func(w *world.World) error {
			r := w.Sim().Rand("widgets")
			var ops []world.Op
			for i := range 4 {
				ops = append(ops, world.Op{Kind: world.OpCreate, Resource: widgetsGVR, Name: fmt.Sprintf("w%d", i),
					Content: map[string]any{"spec": map[string]any{"size": int64(i)}}})
			}
			faults := []world.Op{{Kind: world.OpCloseWatches}, {Kind: world.OpCloseWatches, Code: 410},
				{Kind: world.OpFailNext, Verb: fakeapi.VerbUpdateStatus, Code: 409}, {Kind: world.OpCompact}}
			for range 12 {
				ops = append(ops, world.Op{Kind: world.OpSleep, Duration: time.Duration(100+r.IntN(2000)) * time.Millisecond})
				name := fmt.Sprintf("w%d", r.IntN(4))
				switch r.IntN(3) {
				case 0:
					ops = append(ops, world.Op{Kind: world.OpPatch, Resource: widgetsGVR, Name: name, PatchType: "application/merge-patch+json",
						Patch: fmt.Sprintf(`{"spec":{"size":%d}}`, r.IntN(9))})
				case 1:
					ops = append(ops, world.Op{Kind: world.OpDelete, Resource: cmsGVR, Name: "widget-" + name})
				default:
					ops = append(ops, faults[r.IntN(len(faults))])
				}
			}
			_, err := w.Script(100*time.Millisecond, ops...)
			return err
		},
		Cluster:    clientgo.Cluster{API: fakeapi.Config{Resources: []fakeapi.Resource{clientgo.CustomResource(widgetGV.WithKind("Widget"), "widgets", true, true)}}},
		Controller: clientgo.Main(widgetManagerMain(scheme)),
		Phases:     clientgo.Phases{FaultsFor: 30 * time.Second},
		Checks:     clientgo.Checks{Outcome: widgetsConverged},
	}
}

// TestManagerInTheWorld runs a controller-runtime manager, built by its main from the
// *rest.Config with default options, in the world: its cache's informers (a custom resource in
// JSON, an owned built-in kind in protobuf) are served by the world, its reconciler converges
// under watch closes, 410s, compactions and status conflicts, its event recorder writes events
// through the world, its discovery is answered at once, and each seed run twice gives the same
// trace hash: the priority queue, the manager's runnables and the name check replay.
func TestManagerInTheWorld(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		var w *world.World
		cfg := widgetManagerConfig(t, seed)
		setup := cfg.Setup
		cfg.Setup = func(ww *world.World) error { w = ww; return setup(ww) }
		rep, err := clientgo.Run(t, cfg)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, rep.Failure)
		}
		again, err := clientgo.Run(t, widgetManagerConfig(t, seed))
		if err != nil {
			t.Fatalf("seed %d, second run: %v\n%s", seed, err, again.Failure)
		}
		if rep.Hash != again.Hash {
			t.Errorf("seed %d: trace hashes differ: %s, %s", seed, rep.Hash, again.Hash)
		}
		kinds := map[string]bool{}
		for _, k := range rep.Diagnostics.Streams {
			kinds[k.String()] = true
		}
		if !kinds["widgets.example.com/v1 (json)"] || !kinds["configmaps/v1 (protobuf)"] || rep.Diagnostics.StaticRequests == 0 {
			t.Errorf("seed %d: streams %v, static requests %d", seed, rep.Diagnostics.Streams, rep.Diagnostics.StaticRequests)
		}
		// The recorder writes events.k8s.io/v1 events; the REST front keeps them in core/v1's
		// store, as kube-apiserver does (fakeapi/rest/events.go).
		events, err := w.Server().Snapshot(coreEventsGVR, "", metav1.ListOptions{})
		if err != nil || len(events.Items) == 0 {
			t.Errorf("seed %d: the event recorder wrote no event (%v)", seed, err)
		}
		t.Logf("%v; streams %v; %d static requests; %d events", rep, rep.Diagnostics.Streams, rep.Diagnostics.StaticRequests, len(events.Items))
	}
}

var coreEventsGVR = schema.GroupVersionResource{Version: "v1", Resource: "events"}

// TestStuckRunIsNamed: a manager serving health probes on a real address leaves a goroutine in
// network I/O, which the run cannot see the end of. The watchdog ends the process within
// seconds, naming the listener, the fix and the seed, instead of a hang until go test's
// timeout; with the listener check out of reach (a watchdog of two seconds), its general report
// names the goroutine's state. Each runs in a child process.
func TestStuckRunIsNamed(t *testing.T) {
	if os.Getenv("CLIENTGO_STUCK_CHILD") != "" {
		if os.Getenv("CLIENTGO_STUCK_CHILD") == "general" {
			clientgo.SetStuckAfter(2 * time.Second)
		}
		cfg := widgetManagerConfig(t, 7)
		scheme := widgetManagerScheme(t)
		cfg.Controller = clientgo.Main(func(ctx context.Context, c *rest.Config) error {
			mgr, err := ctrl.NewManager(c, ctrl.Options{Scheme: scheme, HealthProbeBindAddress: "127.0.0.1:0"})
			if err != nil {
				return err
			}
			return mgr.Start(ctx)
		})
		_, err := clientgo.Run(t, cfg)
		t.Fatalf("the run returned: %v", err)
	}
	start := time.Now()
	failsInChildWith(t, "CLIENTGO_STUCK_CHILD", "1", "clientgo: the run is stuck (seed 7;", "accept connections on a real address",
		`HealthProbeBindAddress: "0"`, "net.(*netFD).accept")
	if d := time.Since(start); d > time.Minute {
		t.Errorf("the listener was named after %v, want seconds", d)
	}
	failsInChildWith(t, "CLIENTGO_STUCK_CHILD", "general", "clientgo: the run is stuck (seed 7;", "IO wait", "network I/O: a server listening on a real address")
}

// TestManagerReconcilesCounted: a manager's reconciles are seen through controller-runtime's
// root logger (clientgo/controllerruntime): the Report names its controller and counts its
// outcomes, the conflicts injected on status updates among its requeues, with no hot loop. A
// manager given a logger of its own (Options.Logger) logs past the harness: its Report says its
// reconciles were not seen, rather than counting none.
func TestManagerReconcilesCounted(t *testing.T) {
	cfg := widgetManagerConfig(t, 2)
	rep, err := clientgo.Run(t, cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, rep.Failure)
	}
	r := rep.Reconciles
	if len(r.Controllers) != 1 || r.Controllers[0] != "widget" || r.Reconciles < 4 || len(r.HotLoops) != 0 || r.Unobserved != "" {
		t.Fatalf("reconciles %+v", r)
	}
	t.Logf("%v", r)

	scheme := widgetManagerScheme(t)
	cfg.Controller = clientgo.Main(func(ctx context.Context, c *rest.Config) error {
		mgr, err := ctrl.NewManager(c, ctrl.Options{Scheme: scheme, Logger: funcr.New(func(string, string) {}, funcr.Options{})})
		if err != nil {
			return err
		}
		if err := ctrl.NewControllerManagedBy(mgr).For(&Widget{}).Owns(&corev1.ConfigMap{}).
			Complete(&widgetReconciler{Client: mgr.GetClient(), scheme: mgr.GetScheme(), events: mgr.GetEventRecorder("widgets")}); err != nil {
			return err
		}
		return mgr.Start(ctx)
	})
	rep, err = clientgo.Run(t, cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, rep.Failure)
	}
	if rep.Reconciles.Reconciles != 0 || !strings.Contains(rep.Reconciles.Unobserved, "Options.Logger") || !strings.Contains(rep.String(), "not seen") {
		t.Fatalf("a manager with a logger of its own: %+v; %v", rep.Reconciles, rep)
	}
}
