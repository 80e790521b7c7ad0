package controllerruntime

import (
	"github.com/informersim/informersim/clientgo/internal/crhooks"
	"github.com/informersim/informersim/clientgo/internal/introspect/crnames"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func init() {
	metricsserver.DefaultBindAddress = "0"
	crhooks.ControllerNames = names{}
	installOutcomes()
}

// names is crhooks.ControllerNames over controller-runtime's set (clientgo/internal/introspect/crnames).
type names struct{}

func (names) Taken() map[string]bool { return crnames.Taken() }

func (names) Release(before map[string]bool) { crnames.ReleaseAllBut(before) }
