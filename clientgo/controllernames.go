package clientgo

import (
	"strings"

	"github.com/informersim/informersim/clientgo/internal/crhooks"
)

// controller-runtime's process-wide controller names are given back after a run by package
// clientgo/controllerruntime, when the test process imports it (see its doc); the harness does
// not link controller-runtime itself.

// controllerNames returns the controller names taken in the process now (nil without
// clientgo/controllerruntime).
func controllerNames() map[string]bool {
	if crhooks.ControllerNames == nil {
		return nil
	}
	return crhooks.ControllerNames.Taken()
}

// releaseControllerNames gives back the names taken since before, the names at a run's start.
func releaseControllerNames(before map[string]bool) {
	if crhooks.ControllerNames != nil {
		crhooks.ControllerNames.Release(before)
	}
}

// nameCollision reports whether err is controller-runtime refusing a controller name.
func nameCollision(err error) bool {
	return err != nil && strings.Contains(err.Error(), "Controller names must be unique")
}

// nameCollisionHint says why a controller name was refused under the harness.
func nameCollisionHint() string {
	if crhooks.ControllerNames == nil {
		return `controller-runtime's controller names are process-wide and the harness gives a run's names back only when the test imports _ "github.com/informersim/informersim/clientgo/controllerruntime"`
	}
	if runsActive.Load() > 1 {
		return "controller-runtime's controller names are process-wide and another run of this process is going on: runs in parallel need managers with ctrl.Options.Controller.SkipNameValidation, or one run at a time"
	}
	return ""
}
