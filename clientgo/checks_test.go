package clientgo_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim/world"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// mirrorMainWith is the mirror controller's main (mirrorMain) with the mirrorsMirrors bug
// planted or not.
func mirrorMainWith(bug bool) func(context.Context, *rest.Config) error {
	return func(ctx context.Context, cfg *rest.Config) error {
		client, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		factory := informers.NewSharedInformerFactory(client, 0)
		m, err := newMirror(client, factory.Core().V1().ConfigMaps())
		if err != nil {
			return err
		}
		m.mirrorsMirrors = bug
		factory.Start(ctx.Done())
		return m.Run(ctx, 2)
	}
}

// noMirrorOfAMirror is the invariant the bug breaks.
func noMirrorOfAMirror(srv *fakeapi.Server) error {
	l, err := srv.Snapshot(cmsGVR, "", metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, it := range l.Items {
		if strings.HasSuffix(it.GetName(), "-mirror-mirror") {
			return fmt.Errorf("%s/%s mirrors a mirror", it.GetNamespace(), it.GetName())
		}
	}
	return nil
}

// TestChecksWhileRunning: Checks.Invariant (after every step) and Checks.OnWrite (on every
// write, with the object before and after) stop a run at the step that breaks them, long before
// the end of the safety phase, naming the step or the write, the seed and the replay line; the
// correct controller passes both on the same seed.
func TestChecksWhileRunning(t *testing.T) {
	base := mirrorConfig(1, 2, nil)

	cfg := base
	cfg.Controller, cfg.Checks.Invariant = clientgo.Main(mirrorMainWith(true)), noMirrorOfAMirror
	rep, err := clientgo.Run(t, cfg)
	if err == nil || !strings.Contains(err.Error(), "clientgo: Checks.Invariant broken after step ") ||
		!strings.Contains(err.Error(), "-mirror-mirror mirrors a mirror") || !strings.Contains(err.Error(), world.TestRepro(t.Name(), 1)) {
		t.Fatalf("the invariant: %v", err)
	}
	if rep.SimTime >= base.Phases.FaultsFor || !strings.Contains(rep.Failure, "invariant-violation") || !strings.Contains(rep.Trace, "controller: invariant-violation error=") {
		t.Fatalf("the run went on to %v after the violation, or its Failure lacks it:\n%s", rep.SimTime, rep.Failure)
	}

	cfg = base
	var before, after int
	cfg.Controller = clientgo.Main(mirrorMainWith(true))
	cfg.Checks.OnWrite = func(w clientgo.Write) error {
		if w.Before != nil {
			before++
		}
		if w.After != nil {
			after++
		}
		if strings.HasSuffix(w.Name, "-mirror-mirror") && w.After != nil && w.Before == nil {
			return fmt.Errorf("created %s, a mirror of a mirror", w.Name)
		}
		return nil
	}
	rep, err = clientgo.Run(t, cfg)
	if err == nil || !strings.Contains(err.Error(), "clientgo: the controller's write POST /api/v1/namespaces/default/configmaps (201) breaks Checks.OnWrite: created ") ||
		!strings.Contains(err.Error(), world.TestRepro(t.Name(), 1)) || rep.SimTime >= base.Phases.FaultsFor {
		t.Fatalf("the write check: %v (stopped at %v)", err, rep.SimTime)
	}
	// The failure tells the written object's story: a violation about it, its history in the
	// report (the apiserver's ADDED of it, the write-violation naming it).
	var v *world.Violation
	if !errors.As(err, &v) || !strings.HasSuffix(v.Key, "-mirror-mirror") || !strings.Contains(rep.Failure, "history of "+v.Key) {
		t.Fatalf("the write check's failure is not about the object written: %v\n%s", err, rep.Failure)
	}
	if after == 0 {
		t.Fatalf("no write had its object after (%d before)", before)
	}

	cfg.Controller, cfg.Checks.Invariant = clientgo.Main(mirrorMainWith(false)), noMirrorOfAMirror
	before, after = 0, 0
	if _, err := clientgo.Run(t, cfg); err != nil {
		t.Fatalf("the correct controller: %v", err)
	}
	if before == 0 || after == 0 {
		t.Fatalf("OnWrite saw %d objects before and %d after: updates and deletes must show both", before, after)
	}
}
