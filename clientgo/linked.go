package clientgo

import (
	"errors"
	"sync"

	"github.com/informersim/informersim/clientgo/internal/crhooks"
	"github.com/informersim/informersim/clientgo/internal/introspect"
)

// Whether the test binary links controller-runtime is read once per process, at its first Run,
// from the binary's own function table (its .gopclntab section, which holds every function's
// name), unless clientgo/controllerruntime is imported, which links it. Two things use it:
//
//   - A binary that links controller-runtime without clientgo/controllerruntime would run a
//     manager once, then refuse its controllers' names in the next run, or sit two minutes on
//     its metrics listener until the watchdog ends the process: Run says at once which import
//     is missing instead.
//   - Reading every goroutine's stack (bubbleRuns) stops the whole process while the runtime
//     formats them: about 0.4 ms a read, once or twice a run, during which a run going on in
//     parallel stops too (in a 2-run sweep the stop was a tenth of the wall time). The frames
//     it looks for are all controller-runtime's, and no goroutine can be in a function the
//     binary lacks: a binary without controller-runtime (a client-go controller's tests:
//     package clientgo does not link it) never reads them.
//
// The scan (package internal/introspect) costs 10-80 ms on a loaded machine (TestBinaryFunctionTable
// logs it: a name found early stops it), once per process.

// crFunctionPrefix begins the name of every function of controller-runtime.
const crFunctionPrefix = "sigs.k8s.io/controller-runtime/"

// crLinked says whether the running binary links controller-runtime.
type crLinked int

const (
	crUnknown crLinked = iota // the function table could not be read: assume it does
	crAbsent
	crPresent
)

var controllerRuntimeLinked = sync.OnceValue(func() crLinked {
	if crhooks.ControllerNames != nil {
		return crPresent // clientgo/controllerruntime is linked, and controller-runtime with it
	}
	has, known := introspect.BinaryHasFunctions(crFunctionPrefix)
	switch {
	case !known:
		return crUnknown
	case has:
		return crPresent
	}
	return crAbsent
})

// errMissingControllerRuntimeImport is Run's error in a binary that links controller-runtime
// without clientgo/controllerruntime.
var errMissingControllerRuntimeImport = errors.New(`clientgo: Run: this test binary links controller-runtime but not package clientgo/controllerruntime, which lets a manager run again in each run (it gives controller names back to controller-runtime and turns its ":8080" metrics listener off): add, in a test file of the package, import _ "github.com/informersim/informersim/clientgo/controllerruntime"`)

// checkControllerRuntimeImport returns errMissingControllerRuntimeImport when the binary links
// controller-runtime without clientgo/controllerruntime.
func checkControllerRuntimeImport() error {
	if crhooks.ControllerNames == nil && controllerRuntimeLinked() == crPresent {
		return errMissingControllerRuntimeImport
	}
	return nil
}

// controllerRuntimeMayRun reports whether a goroutine of the process may be running
// controller-runtime's code: false only when the binary was read and holds none of it.
func controllerRuntimeMayRun() bool { return controllerRuntimeLinked() != crAbsent }
