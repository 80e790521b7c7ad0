package operator_test

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/examples/operator/internal/controller"
)

// detectorChildEnv tells TestDetectorChild, run in a process of its own, which reconciler to
// run: "mutate" (Bugs.MutateCache) or "correct".
const detectorChildEnv = "INFORMERSIM_DETECTOR_CHILD"

// detectorSeeds is how many seeds the child runs. The planted reconciler writes into the cache's
// Deployment only when it changes the image (the List with UnsafeDisableDeepCopy copies the
// Deployment's struct, not its containers), which not every seed's workload does.
const detectorSeeds = 10

// Goal: controller-runtime's cache is made of client-go informers, whose objects the harness
// cannot compare (the Report says so); with client-go's cache mutation detector on
// (KUBE_CACHE_MUTATION_DETECTOR=true) the reconciler that changes the cache's Deployment ends the
// process with client-go's "cache ... modified" at the first seed whose workload changes an image
// (seed 2), after the harness named the seed, where the outcome check needs a seed whose write
// then fails; the correct operator runs clean under the detector.
func TestCacheMutationCaughtByClientGosDetector(t *testing.T) {
	if os.Getenv(detectorChildEnv) != "" {
		t.Skip("the child runs TestDetectorChild only")
	}
	if os.Getenv("KUBE_CACHE_MUTATION_DETECTOR") != "true" {
		rep, err := clientgo.Run(t, runConfig(t, mixed, 1, fifo, nil))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Diagnostics.ClientGoMutationDetector || !strings.Contains(rep.String(), "not checked read-only") {
			t.Fatalf("the Report does not say the cache's objects went unchecked: %s", rep)
		}
	}
	child := func(which string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDetectorChild$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "KUBE_CACHE_MUTATION_DETECTOR=true", detectorChildEnv+"="+which)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := child("mutate")
	if err == nil {
		t.Fatalf("the reconciler changing the cache's Deployment ran to the end under client-go's detector:\n%s", out)
	}
	if !strings.Contains(out, "cache *v1.Deployment modified") {
		t.Errorf("the child did not end with client-go's detector:\n%s", out)
	}
	// The markers name the run going on when the process died: its start, and no end.
	starts := regexp.MustCompile(`TestDetectorChild: seed (\d+) starts under client-go's cache mutation detector`).FindAllStringSubmatch(out, -1)
	if len(starts) == 0 {
		t.Fatalf("no run marker in the child's output:\n%s", out)
	}
	last := starts[len(starts)-1][1]
	if strings.Contains(out, "seed "+last+" ended") {
		t.Errorf("the last run (seed %s) ended before client-go's detector saw the change:\n%s", last, out)
	}
	t.Logf("client-go's detector ended the process in the run of seed %s (replay: INFORMERSIM_SEED=%s)", last, last)
	if out, err := child("correct"); err != nil || !strings.Contains(out, fmt.Sprintf("seed %d ended under client-go's cache mutation detector", detectorSeeds)) {
		t.Fatalf("the correct operator under client-go's detector: %v\n%s", err, out)
	}
}

// TestDetectorChild is TestCacheMutationCaughtByClientGosDetector's child process.
func TestDetectorChild(t *testing.T) {
	which := os.Getenv(detectorChildEnv)
	if which == "" {
		t.Skip("run by TestCacheMutationCaughtByClientGosDetector")
	}
	opts := fifo
	opts.Bugs = controller.Bugs{MutateCache: which == "mutate"}
	for seed := uint64(1); seed <= detectorSeeds; seed++ {
		rep, err := clientgo.Run(t, runConfig(t, mixed, seed, opts, nil))
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, rep.Failure)
		}
		if !rep.Diagnostics.ClientGoMutationDetector {
			t.Fatalf("seed %d: the Report says client-go's detector was off: %s", seed, rep)
		}
	}
}
