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
