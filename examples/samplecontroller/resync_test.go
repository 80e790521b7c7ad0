package samplecontroller_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/examples/samplecontroller"
	"github.com/informersim/informersim/examples/samplecontroller/clientset"
	"github.com/informersim/informersim/examples/samplecontroller/informers/internalinterfaces"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim/world"
)

// newControllerResyncing is newController with both factories resyncing every period, as
// sample-controller's main.go builds them (30s).
func newControllerResyncing(period time.Duration) func(context.Context, *clientgo.Env) (clientgo.Controller, error) {
	return func(ctx context.Context, env *clientgo.Env) (clientgo.Controller, error) {
		fooClient, err := clientset.NewForConfig(env.RESTConfig)
		if err != nil {
			return nil, err
		}
		opts := clientgo.FactoryOptions{ResyncPeriod: period}
		kube := env.NewKubeInformerFactory(opts)
		foos := fooFactory{clientgo.Factory[internalinterfaces.NewInformerFunc]{Informers: env.NewInformers(opts)}}
		return samplecontroller.NewController(ctx, env.Client, fooClient,
			kube.Apps().V1().Deployments(), foos.Samplecontroller().V1alpha1().Foos(), samplecontroller.Bugs{})
	}
}

// Goal: the harness finds a liveness gap of the correct controller that only its resync closes.
// On seed 52 of the "410 relists" and "compaction" specs (two workers), the Deployment informer's
// watch ends with a 410 and it waits about 11s to relist; meanwhile the controller creates dep-4
// for foo-4 (its retries answered 409 AlreadyExists while its lister lacks dep-4), the workload
// deletes dep-4, the controller creates it again, and the workload deletes it again. The relist
// no longer holds dep-4, so no event ever names it, and foo-4, synced, is never queued again. Wired through the Env without resync (newController, as the
// other tests here), the run ends with foo-4 lacking its Deployment; with main.go's 30s resync
// the next resync queues foo-4 and the controller recreates dep-4. Level-triggered controllers
// rely on a resync (or a relist's events) for exactly this; the tests that sweep seeds through
// the Env without resync pass on the seeds they sweep, not on every seed.
func TestMissedDeploymentNeedsResync(t *testing.T) {
	const seed = 52
	for _, name := range []string{"410 relists", "compaction"} {
		s := specNamed(t, name)
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			var w *world.World
			_, err := clientgo.Run(t, runConfig(t, s, seed, 2, samplecontroller.Bugs{}, &w))
			if err == nil || !strings.Contains(err.Error(), "foo-4 has no Deployment dep-4") {
				t.Fatalf("seed %d without resync: got %v, want the run to end with foo-4 lacking dep-4", seed, err)
			}
			created, deleted := writesOf(w.Server(), "dep-4")
			if created == 0 || created != deleted {
				t.Fatalf("seed %d without resync: dep-4 created %d and deleted %d times, want as many deletes as creates", seed, created, deleted)
			}
			t.Logf("without resync (dep-4 created and deleted %d times): %v", created, err)

			cfg := runConfig(t, s, seed, 2, samplecontroller.Bugs{}, &w)
			ctor := cfg.Controller.(clientgo.Constructor)
			ctor.New = newControllerResyncing(30 * time.Second)
			cfg.Controller = ctor
			rep, err := clientgo.Run(t, cfg)
			if err != nil {
				t.Fatalf("seed %d with a 30s resync: %v", seed, err)
			}
			// The resync queued foo-4 again and the controller recreated dep-4.
			if c, d := writesOf(w.Server(), "dep-4"); d != deleted || c != created+1 {
				t.Fatalf("seed %d with a 30s resync: dep-4 created %d and deleted %d times, want %d and %d", seed, c, d, created+1, deleted)
			}
			t.Logf("with a 30s resync: %v", rep)
		})
	}
}

// writesOf counts the successful creates and deletes of the Deployment named name.
func writesOf(srv *fakeapi.Server, name string) (creates, deletes int) {
	for _, rq := range srv.Requests() {
		if rq.Resource != depsGVR || rq.Name != name || rq.Err != "" {
			continue
		}
		switch rq.Verb {
		case fakeapi.VerbCreate:
			creates++
		case fakeapi.VerbDelete:
			deletes++
		}
	}
	return creates, deletes
}

// specNamed is the spec of that name.
func specNamed(t *testing.T, name string) spec {
	t.Helper()
	for _, s := range specs {
		if s.name == name {
			return s
		}
	}
	t.Fatalf("no spec %q", name)
	return spec{}
}
