package clientgo

import (
	"strings"
	"sync"
	_ "unsafe" // go:linkname

	"k8s.io/apimachinery/pkg/util/sets"
	_ "sigs.k8s.io/controller-runtime/pkg/controller" // usedNames below
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Metrics: a manager whose options leave Metrics.BindAddress empty serves metrics on
// metricsserver.DefaultBindAddress, ":8080": a real listener, whose goroutine waits in network
// I/O the run cannot see the end of (the watchdog would end the run), and which two runs of one
// process would both bind. A process that links the harness is a test process: the default is
// "0" (no metrics server), as in controller-runtime's own tests. An address the controller sets
// itself is kept, and a run that serves on it is stopped by the watchdog, naming it.
func init() { metricsserver.DefaultBindAddress = "0" }

// What controller-runtime keeps process-wide, which the harness scopes to a run.
//
// Controller names: controller-runtime refuses to build a controller whose name another
// controller of the process already has (its metrics are registered by name), and never
// forgets a name. In a cluster a process runs one manager; under the harness every run of a
// test process builds the manager again, so the second run of a seed would fail with "controller
// with name ... already exists". The names a run's controllers took are given back when the run
// ends; two controllers of one name in one run are still refused, as in a cluster. Runs going on
// in parallel in one process share the names, so two of them building a controller of the same
// name at once collide: the run's error then says so (see nameCollision).

//go:linkname crNameLock sigs.k8s.io/controller-runtime/pkg/controller.nameLock
var crNameLock sync.Mutex

//go:linkname crUsedNames sigs.k8s.io/controller-runtime/pkg/controller.usedNames
var crUsedNames sets.Set[string]

// controllerNames returns the controller names taken in the process now.
func controllerNames() sets.Set[string] {
	crNameLock.Lock()
	defer crNameLock.Unlock()
	return crUsedNames.Clone()
}

// releaseControllerNames gives back the names taken since before, the names at a run's start.
func releaseControllerNames(before sets.Set[string]) {
	crNameLock.Lock()
	defer crNameLock.Unlock()
	for name := range crUsedNames {
		if !before.Has(name) {
			crUsedNames.Delete(name)
		}
	}
}

// nameCollision reports whether err is controller-runtime refusing a controller name.
func nameCollision(err error) bool {
	return err != nil && strings.Contains(err.Error(), "Controller names must be unique")
}
