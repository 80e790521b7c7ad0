// Package invariant holds the project's always-on assertions.
//
// # Contract
//
// [Check] panics with a message that starts with "invariant violated: " when its condition is
// false. Assertions are never compiled out: a simulator that silently continues after an
// impossible state produces traces nobody can trust (TigerBeetle's TIGER_STYLE makes the same
// argument). Use it for invariants of our own code (resourceVersions are monotonic, a key is in
// the queue if and only if it is in the item map), never for bad input from a caller: bad input
// gets a returned error.
//
// [Thorough] switches on checks too costly for every run, which test binaries want and
// benchmarks must not pay for: the engine's re-asking of its cached actors at every step
// (sim.Sim.AddCachedActor) is one. A test binary's TestMain calls [ThoroughUnlessBenchmarking].
// Like Check, a thorough check only panics: a run that passes it is the run without it.
package invariant
