// Package fastpath is the switch of the speed tricks: code that exists only to be faster than
// the standard code beside it (reflect.DeepEqual, apimachinery's converter, encoding each
// response anew, ...), answers as it does, and has a test that says so.
//
// # Contract
//
// Use(t) says whether trick t is in. Every trick takes the standard path when it is out, and
// a trick never changes a run: the plain build passes the same tests with the same pinned trace
// hashes (make test-plain). Two switches take tricks out:
//
//   - the build tag plain (go test -tags plain ./...) takes every trick out: On is false, and
//     as On is a constant, as pebble's internal/invariants is, the branches not taken are not
//     compiled in;
//   - the environment variable INFORMERSIM_PLAIN, read once when the process starts, takes out
//     the tricks it names, separated by commas
//     (INFORMERSIM_PLAIN=shared-encodings,conversion-plans), or all of them (all). It is how one trick is measured end to end: the same binary run with and
//     without it. A name that is no trick's stops the process with the list of names, rather
//     than measure something other than what was asked; a process with tricks taken out says
//     so on standard error.
//
// docs/performance.md, "Speed tricks", lists each trick with what it buys end to end and the
// command that measures it; a trick that buys under 2% goes. Nested modules under this module's
// path (clientgo, kube, ...) import this package too.
package fastpath
