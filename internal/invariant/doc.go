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
package invariant
