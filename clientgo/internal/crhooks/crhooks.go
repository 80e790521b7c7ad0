// Package crhooks is where package clientgo/controllerruntime, when a test process imports it,
// hands the harness what it needs of controller-runtime's process-wide state. The harness itself
// does not link controller-runtime: a client-go-only user's module must not require it.
package crhooks

// ControllerNames, set by clientgo/controllerruntime, takes and gives back controller-runtime's
// process-wide controller names. Nil when the process does not import that package.
var ControllerNames interface {
	// Taken returns the names taken in the process now.
	Taken() map[string]bool
	// Release gives back every name taken since before, a result of Taken.
	Release(before map[string]bool)
}

// Outcome is what became of one reconcile of a controller-runtime controller.
type Outcome int

const (
	Started   Outcome = iota // the controller's workers started (no request)
	Succeeded                // Reconcile returned no error and no requeue
	Requeued                 // Result.Requeue or RequeueAfter
	Failed                   // Reconcile returned an error
)

// Reconciled, set by package clientgo, is told each outcome clientgo/controllerruntime sees in
// controller-runtime's logs: the controller's name, the request's namespace and name, and the
// error of a failure. Nil until clientgo is linked; called on the controller's goroutines.
var Reconciled func(controller, namespace, name string, outcome Outcome, err error)
