package controllerruntime

import (
	"sync"
	_ "unsafe" // go:linkname

	"github.com/informersim/informersim/clientgo/internal/crhooks"
	"k8s.io/apimachinery/pkg/util/sets"
	_ "sigs.k8s.io/controller-runtime/pkg/controller" // usedNames below
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func init() {
	metricsserver.DefaultBindAddress = "0"
	crhooks.ControllerNames = names{}
	installOutcomes()
}

// controller-runtime keeps the names in an unexported set behind an unexported mutex
// (pkg/controller/name.go in v0.25): no API gives one back.

//go:linkname crNameLock sigs.k8s.io/controller-runtime/pkg/controller.nameLock
var crNameLock sync.Mutex

//go:linkname crUsedNames sigs.k8s.io/controller-runtime/pkg/controller.usedNames
var crUsedNames sets.Set[string]

// names is crhooks.ControllerNames over controller-runtime's set.
type names struct{}

func (names) Taken() map[string]bool {
	crNameLock.Lock()
	defer crNameLock.Unlock()
	taken := make(map[string]bool, len(crUsedNames))
	for name := range crUsedNames {
		taken[name] = true
	}
	return taken
}

func (names) Release(before map[string]bool) {
	crNameLock.Lock()
	defer crNameLock.Unlock()
	for name := range crUsedNames {
		if !before[name] {
			crUsedNames.Delete(name)
		}
	}
}
