package samplecontroller_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/examples/samplecontroller"
)

// detectorChildEnv tells TestDetectorChild, run in a process of its own, which controller to run:
// "mutate" (the lister mutation planted) or "correct".
const detectorChildEnv = "INFORMERSIM_DETECTOR_CHILD"

// detectorSeeds are the seeds the child runs: the planted mutation changes a Foo of the cache at
// the controller's first status update, which every seed reaches.
var detectorSeeds = []uint64{1, 2, 3}

// Goal: under a Main the harness cannot see the objects client-go's informers cache, and
// says so in the Report; with client-go's own cache mutation detector on
// (KUBE_CACHE_MUTATION_DETECTOR=true), the sample controller that writes into its lister's Foo
// ends the process with client-go's "cache ... modified" after the harness named the run's seed
// and replay line, and the correct controller runs clean under it.
func TestListerMutationUnderMainCaughtByClientGosDetector(t *testing.T) {
	if os.Getenv(detectorChildEnv) != "" {
		t.Skip("the child runs TestDetectorChild only")
	}
	if os.Getenv("KUBE_CACHE_MUTATION_DETECTOR") != "true" {
		// Without the detector the mutation goes unseen: the Report must say the check could
		// not look. (With it on in this process, this run would end the process.)
		rep, err := clientgo.Run(t, mainConfig(t, specs[0], 1, samplecontroller.Bugs{MutateListerObject: true}, nil))
		if err != nil {
			t.Fatalf("the plant failed without the detector (a check now sees it: update this test): %v", err)
		}
		if rep.Diagnostics.ClientGoMutationDetector || !strings.Contains(rep.String(), "not checked read-only") {
			t.Fatalf("the Report does not say client-go's objects went unchecked: %s", rep)
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
		t.Fatalf("the planted lister mutation ran to the end under client-go's detector:\n%s", out)
	}
	for _, want := range []string{
		"cache *v1alpha1.Foo modified",
		"TestDetectorChild: seed 1 starts under client-go's cache mutation detector",
		"replay: INFORMERSIM_SEED=1 go test -run",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the child's output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "seed 1 ended") {
		t.Errorf("the planted run ended before client-go's detector saw the change:\n%s", out)
	}

	out, err = child("correct")
	if err != nil {
		t.Fatalf("the correct controller fails under client-go's detector: %v\n%s", err, out)
	}
	for _, seed := range detectorSeeds {
		if !strings.Contains(out, fmt.Sprintf("seed %d ended under client-go's cache mutation detector", seed)) {
			t.Errorf("no end marker of seed %d:\n%s", seed, out)
		}
	}
}

// TestDetectorChild is TestListerMutationUnderMainCaughtByClientGosDetector's child process.
func TestDetectorChild(t *testing.T) {
	which := os.Getenv(detectorChildEnv)
	if which == "" {
		t.Skip("run by TestListerMutationUnderMainCaughtByClientGosDetector")
	}
	bugs := samplecontroller.Bugs{MutateListerObject: which == "mutate"}
	for _, seed := range detectorSeeds {
		rep, err := clientgo.Run(t, mainConfig(t, specs[0], seed, bugs, nil))
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, rep.Failure)
		}
		if !rep.Diagnostics.ClientGoMutationDetector {
			t.Fatalf("seed %d: the Report says client-go's detector was off: %s", seed, rep)
		}
	}
}
