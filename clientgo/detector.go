package clientgo

import (
	"fmt"
	"io"
	"os"

	"github.com/informersim/informersim/clientgo/internal/introspect"
	"github.com/informersim/informersim/internal/goseed"
)

// client-go's cache mutation detector, for the informers the harness cannot see.
//
// The informers a controller builds itself (Main: client-go's factories, generated ones,
// controller-runtime's cache) decode the REST front's bytes into objects of their own, which
// the harness never holds, so its read-only check (readonly.go) cannot compare them. client-go
// has its own check of exactly those objects: with KUBE_CACHE_MUTATION_DETECTOR=true in the
// environment of the process (read once, when the process starts), every informer keeps a deep
// copy of each object it caches and compares them every second of its clock; a change panics
// the process, printing both versions. Inside the harness that clock is the bubble's, so the
// comparisons happen at simulated instants and leave the trace unchanged (same seed, same hash,
// detector on or off). The panic ends the whole test binary, by client-go's design, and names
// no seed: the harness therefore writes each Main run's seed and replay line to standard error
// as the run starts and ends while the detector is on, so the run that was going on when the
// process died can be read back. Report.Diagnostics.ClientGoMutationDetector says which way it
// was. The switch is client-go's package variable, read and set through introspect.

// detectorLog is where the run markers go: standard error, whose writes reach the terminal
// before a panic ends the process (t.Log's are kept until the test ends, and lost with it).
var detectorLog io.Writer = os.Stderr

// markDetectedRun writes the line that names a Main run to the detector's reader, "starts" or
// "ended"; nothing when the detector is off or the controller is not wired by its main.
func markDetectedRun(cfg Config, test, what string) {
	if !introspect.MutationDetectionEnabled() || cfg.main() == nil || goseed.Active() {
		return
	}
	fmt.Fprintf(detectorLog, "clientgo: %s: seed %d %s under client-go's cache mutation detector (a panic \"cache ... modified\" in between is this run's; replay: %s)\n",
		test, cfg.Seed, what, cfg.Repro)
}
