package introspect

import (
	_ "unsafe" // go:linkname

	_ "k8s.io/apimachinery/pkg/util/wait" // jitterRand below
	_ "k8s.io/client-go/tools/cache"      // mutationDetectionEnabled below
)

// Two package variables of client-go v0.37.2 and apimachinery v0.37.2 that no API reaches,
// read and set here only (doc.go lists them with the versions checked). A symbol that goes
// away fails the build; one whose meaning changes does not, hence the list.

//go:linkname mutationDetectionEnabled k8s.io/client-go/tools/cache.mutationDetectionEnabled
var mutationDetectionEnabled bool

//go:linkname waitJitterRand k8s.io/apimachinery/pkg/util/wait.jitterRand
var waitJitterRand func() float64

// MutationDetectionEnabled reports whether client-go's cache mutation detector is on: the
// informers it builds from now on keep and compare deep copies of what they cache.
func MutationDetectionEnabled() bool { return mutationDetectionEnabled }

// SetMutationDetectionEnabled turns client-go's cache mutation detector on or off for the
// informers built from now on (client-go reads the variable when it builds one).
func SetMutationDetectionEnabled(on bool) { mutationDetectionEnabled = on }

// WaitJitterRand returns the function apimachinery's wait.Jitter draws its fractions from.
func WaitJitterRand() func() float64 { return waitJitterRand }

// SetWaitJitterRand makes draw the function wait.Jitter draws its fractions from. It is not
// safe to call while another goroutine calls wait.Jitter: call it from an init function.
func SetWaitJitterRand(draw func() float64) { waitJitterRand = draw }
