// Package goseed puts the random choices the Go runtime makes on its own under a run's seed, so
// that unchanged client-go and controller-runtime code replays from the seed like the world does.
//
// # Contract
//
// A test binary built with the overlay this package writes (the deterministic mode: GOFLAGS
// holding -overlay=FILE, as `informersim determinism` prints it) makes these choices as a
// function of the seed last given to Begin and of what the program did, never of the process,
// the machine or the clock:
//
//   - the hash of every map key that is not a pointer (strings, integers, structs of them):
//     the runtime's hash keys are fixed, and a map takes a fixed hash seed when its first entry
//     is written (and again when it is written after being emptied), so a map's layout is a
//     function of what was written into it, even a map kept from one run to the next;
//   - where a range over a map starts: drawn from the run's seed, the map's hash seed and its
//     size, so two seeds give two orders, one seed always the same;
//   - which of several ready cases a select takes: drawn from the run's seed and the number of
//     selects the goroutine made before;
//   - what math/rand's functions (v1 and v2) return to the goroutines of a run's bubble: a stream
//     the run's seed starts; a sync.Map's hash seed is fixed.
//
// What it does not decide: the order of maps keyed by pointers (their hash is an address), and
// the order in which goroutines run, which is the scheduler's (package clientgo's harness
// orders the goroutines of a run itself). A binary built without the overlay is unchanged:
// Active reports false, and SetSeed only sets an environment variable.
//
// The overlay is written for the Go version that will build the tests (Write, from the sources
// under its GOROOT): each patch names the text it changes, and a Go release whose runtime no
// longer has that text is refused with the file and the text, never patched half.
package goseed
