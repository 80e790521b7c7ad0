package scenarios_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/scenarios"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/timeline/record"
)

// tombstoneDropper is a Go-hosted run whose handler drops deletes told by a tombstone: a
// check fails when it still holds a deleted object once the world converges.
func tombstoneDropper(seed uint64, ops []world.Op) error {
	w, err := world.New(seed, world.Config{})
	if err != nil {
		return err
	}
	inf, err := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
	if err != nil {
		return err
	}
	held := map[string]bool{}
	h := informer.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { k, _ := informer.MetaNamespaceKeyFunc(obj); held[k] = true },
		UpdateFunc: func(_, obj any) { k, _ := informer.MetaNamespaceKeyFunc(obj); held[k] = true },
		DeleteFunc: func(obj any) {
			if _, tomb := obj.(informer.DeletedFinalStateUnknown); !tomb {
				k, _ := informer.MetaNamespaceKeyFunc(obj)
				delete(held, k)
			}
		},
	}
	if _, err := w.AddHandler(inf, "dropper", h, world.HandlerOptions{}); err != nil {
		return err
	}
	if err := w.AddCheck("held", func() error {
		for k := range held {
			if _, ok, _ := inf.SharedIndexInformer().GetIndexer().GetByKey(k); !ok {
				return errHeld(k)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := inf.Start(); err != nil {
		return err
	}
	if _, err := w.Script(0, ops...); err != nil {
		return err
	}
	return w.RunUntilConverged(time.Hour)
}

type errHeld string

func (e errHeld) Error() string { return "still holds " + string(e) }

// noisyOps is a failing run's ops as a generator would record them: writes of four objects
// around the two that matter (a 410 close, then the delete of a while the informer relists).
func noisyOps() []world.GeneratedOp {
	at := time.Duration(0)
	var out []world.GeneratedOp
	add := func(gap time.Duration, op world.Op) {
		at += gap
		out = append(out, world.GeneratedOp{Time: at, Op: op})
	}
	for _, n := range []string{"a", "b", "c", "d"} {
		add(20*time.Millisecond, world.Op{Kind: world.OpCreate, Name: n, Labels: map[string]string{"v": "1"}})
	}
	add(30*time.Millisecond, world.Op{Kind: world.OpUpdate, Name: "b", Labels: map[string]string{"v": "2"}})
	add(40*time.Millisecond, world.Op{Kind: world.OpCompact})
	add(40*time.Millisecond, world.Op{Kind: world.OpCloseWatches, Code: 410})
	add(0, world.Op{Kind: world.OpDelete, Name: "c"})
	add(30*time.Millisecond, world.Op{Kind: world.OpUpdate, Name: "d", Labels: map[string]string{"v": "0"}})
	add(30*time.Millisecond, world.Op{Kind: world.OpTriggerBookmarks})
	add(30*time.Millisecond, world.Op{Kind: world.OpDelete, Name: "a"})
	return out
}

// Goal: ShrinkOps cuts a Go-hosted failing run (ops, the user's replay) to a 1-minimal ops file
// failing the same way: the create, the 410 and the delete; the file reads back (OpsOfFile)
// into ops that fail so; WriteOpsFailure writes both files and names them; a run that passes,
// a missing replay and a file holding anything but ops are errors.
func TestShrinkOps(t *testing.T) {
	ops := noisyOps()
	var plain []world.Op
	last := time.Duration(0)
	for _, g := range ops {
		plain = append(plain, world.Op{Kind: world.OpSleep, Duration: g.Time - last}, g.Op)
		last = g.Time
	}
	failure := tombstoneDropper(3, plain)
	if failure == nil {
		t.Fatal("the noisy run passes: no tombstone was dropped")
	}
	shrunk, err := scenarios.ShrinkOps(3, ops, failure, tombstoneDropper, scenarios.OpsShrinkOptions{Name: "dropper", Controller: "tombstoneDropper", Replay: "go test -run TestShrinkOps"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d ops -> %d in %d runs:\n%s", shrunk.Ops[0], shrunk.Ops[1], shrunk.Runs, shrunk.Text)
	if shrunk.Ops[0] != len(ops) || shrunk.Ops[1] != 3 || !shrunk.Minimal || shrunk.Failure != `check "held"` {
		t.Errorf("shrunk %d -> %d ops (minimal %v), failure %q; want %d -> 3, minimal, check \"held\"", shrunk.Ops[0], shrunk.Ops[1], shrunk.Minimal, shrunk.Failure, len(ops))
	}
	for _, want := range []string{"world seed=3", "create name=a", "close-watches code=410", "delete name=a", "tombstoneDropper", "go test -run TestShrinkOps"} {
		if !strings.Contains(shrunk.Text, want) {
			t.Errorf("the shrunk file lacks %q:\n%s", want, shrunk.Text)
		}
	}
	// The file runs under informersim as it is (the ops without the controller), its blocks
	// what that run prints.
	if res, err := scenarios.Run("shrunk", shrunk.Text, scenarios.Options{}); err != nil {
		t.Errorf("the shrunk file does not run under informersim: %v", err)
	} else if res.Failure != nil || len(res.Mismatches()) > 0 {
		t.Errorf("the shrunk file's run under informersim: failure %v, %d blocks differ", res.Failure, len(res.Mismatches()))
	}
	seed, back, err := scenarios.OpsOfFile("shrunk", shrunk.Text)
	if err != nil || seed != 3 {
		t.Fatalf("OpsOfFile: seed %d, %v", seed, err)
	}
	if got := scenarios.FailureSignature(tombstoneDropper(seed, back)); got != `check "held"` {
		t.Errorf("the file's ops, replayed, fail with %q", got)
	}

	dir := t.TempDir()
	t.Setenv(record.ArtifactsEnv, dir)
	msg, err := scenarios.WriteOpsFailure(3, ops, failure, tombstoneDropper, scenarios.OpsShrinkOptions{Name: "dropper/x"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"informersim-dropper-x.txt", "informersim-dropper-x-shrunk.txt"} {
		p := filepath.Join(dir, f)
		if _, err := os.Stat(p); err != nil || !strings.Contains(msg, p) {
			t.Errorf("%s: %v; message: %s", p, err, msg)
		}
	}
	if !strings.Contains(msg, "shrunk from 11 ops to 3") {
		t.Errorf("the message does not give the shrink's ratio: %s", msg)
	}

	if _, err := scenarios.ShrinkOps(3, ops[:4], failure, tombstoneDropper, scenarios.OpsShrinkOptions{}); err == nil || !strings.Contains(err.Error(), "replayed") {
		t.Errorf("ShrinkOps of ops that pass: %v", err)
	}
	if _, err := scenarios.ShrinkOps(3, ops, failure, nil, scenarios.OpsShrinkOptions{}); err == nil {
		t.Error("ShrinkOps took a nil replay")
	}
	if _, err := scenarios.ShrinkOps(3, ops, nil, tombstoneDropper, scenarios.OpsShrinkOptions{}); err == nil {
		t.Error("ShrinkOps took no failure")
	}
	// A fuzz input's seed is any uint64: the world directive takes one above 2^63.
	big := uint64(1)<<63 + 5
	if s, _, err := scenarios.OpsOfFile("big", scenarios.OpsFile("", big, ops[:1])); err != nil || s != big {
		t.Errorf("OpsOfFile of seed %d: %d, %v", big, s, err)
	}
	if res, err := scenarios.Run("big", "world seed=18446744073709551615\n----\n", scenarios.Options{}); err != nil || res.Seed != 1<<64-1 {
		t.Errorf("a world of the largest seed: %v", err)
	}
	if _, _, err := scenarios.OpsOfFile("f", "world seed=1\n----\n\ninformer name=inf1\n----\n"); err == nil || !strings.Contains(err.Error(), "informer name=inf1") {
		t.Errorf("OpsOfFile of a file with an informer: %v", err)
	}
}
