// Package fastpath is the switch of the speed tricks: code that exists only to be faster than
// the standard code beside it (reflect.DeepEqual, apimachinery's converter, encoding each
// response anew, ...), answers as it does, and has a test that says so.
//
// # Contract
//
// On is true in an ordinary build and false in a build with the tag plain (go test -tags plain
// ./...); every trick takes the standard path when On is false. A trick never changes a run:
// the plain build passes the same tests with the same pinned trace hashes (make test-plain), so
// a trick can be measured on and off by building the same code both ways, and goes when it stops
// paying (docs/performance.md, "Speed tricks", lists each with what it buys).
//
// On is a constant, as pebble's internal/invariants is, so that the branch not taken is not
// compiled in. Nested modules under this module's path (clientgo, kube, ...) import it too.
package fastpath
