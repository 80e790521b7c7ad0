// Package controllerruntime lets controller-runtime managers and controllers run under the
// clientgo harness, one run after another or in parallel in one test process. Import it for its
// effect, in the test files that run a controller-runtime controller:
//
//	import _ "github.com/informersim/informersim/clientgo/controllerruntime"
//
// It is a package of its own so that a module testing only client-go controllers does not
// require controller-runtime (the harness, package clientgo, does not import it).
//
// What it changes, for the whole test process:
//
//   - Controller names: controller-runtime refuses to build a controller whose name another
//     controller of the process already has (its metrics are registered by name) and never
//     forgets a name. A cluster runs one manager per process; the harness builds the manager
//     again in every run, so the second run of a seed would fail with "controller with name ...
//     already exists". With this package, the names a run's controllers took are given back when
//     the run ends (and when a crashed controller's main has returned, before it is started
//     again); two controllers of one name in one run are still refused, as in a cluster. Runs in
//     parallel share the process's names: two of them building a controller of the same name at
//     once collide, and the run's error says so (managers for parallel runs set
//     ctrl.Options.Controller.SkipNameValidation).
//   - Metrics: a manager whose options leave Metrics.BindAddress empty serves metrics on
//     ":8080", a real listener whose goroutine waits in network I/O the run cannot see the end of
//     (the harness's watchdog would end the run) and which two runs would both bind. This
//     package makes the default "0" (no metrics server), as controller-runtime's own tests do. An
//     address the controller sets itself is kept.
//   - The root logger: pkg/log.Log (and ctrl.Log) is replaced by one that tells the harness
//     each reconcile's outcome (an error, a requeue, a success: Report.Reconciles and the
//     hot-loop check) and passes every line on to the logger ctrl.SetLogger sets, at the
//     verbosity it asks (reconciles.go). A manager given a logger of its own (Options.Logger)
//     is not seen, and its run's Report.Reconciles says so.
//
// Without it, in a test binary that links controller-runtime, clientgo.Run fails at once with an
// error naming this import (where the binary's function table cannot be read, on Windows, a
// manager's second run fails with the name error above and a default metrics listener is named
// by the harness's watchdog).
package controllerruntime
