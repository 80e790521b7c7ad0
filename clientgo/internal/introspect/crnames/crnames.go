// Package crnames reads and trims controller-runtime's process-wide set of controller names
// (sigs.k8s.io/controller-runtime/pkg/controller's nameLock and usedNames, checked against
// v0.25.2), which no API reaches. It is a package of its own, beside introspect, because
// importing it links controller-runtime, which package clientgo must not do (clientgo/linked.go):
// only clientgo/controllerruntime imports it.
//
// A symbol that goes away fails the build; if the set's type or its lock changes meaning,
// nothing says so: introspect's doc lists the assumption and the version checked.
package crnames

import (
	"sync"
	_ "unsafe" // go:linkname

	"k8s.io/apimachinery/pkg/util/sets"
	_ "sigs.k8s.io/controller-runtime/pkg/controller" // nameLock and usedNames below
)

// controller-runtime keeps the names in an unexported set behind an unexported mutex
// (pkg/controller/name.go in v0.25).

//go:linkname nameLock sigs.k8s.io/controller-runtime/pkg/controller.nameLock
var nameLock sync.Mutex

//go:linkname usedNames sigs.k8s.io/controller-runtime/pkg/controller.usedNames
var usedNames sets.Set[string]

// Taken returns the controller names controller-runtime has handed out in the process.
func Taken() map[string]bool {
	nameLock.Lock()
	defer nameLock.Unlock()
	taken := make(map[string]bool, len(usedNames))
	for name := range usedNames {
		taken[name] = true
	}
	return taken
}

// ReleaseAllBut gives back to controller-runtime every name it handed out that is not in keep,
// so that a controller of that name can be built again.
func ReleaseAllBut(keep map[string]bool) {
	nameLock.Lock()
	defer nameLock.Unlock()
	for name := range usedNames {
		if !keep[name] {
			usedNames.Delete(name)
		}
	}
}
