// Package deepequal gives reflect.DeepEqual's answer for two values of a Go type faster, from a
// plan made once per type: a function per field, element and pointee that reads the values in
// place, instead of reflect.DeepEqual's walk that builds a reflect.Value for each and records
// every pointer, slice and map it passes in a map (to stop in cycles). The world's
// eventual-consistency oracle compares every typed object of an informer's cache with the
// apiserver's, converted (sim/world diffStates), and reflect.DeepEqual was most of its cost.
//
// Equal answers exactly as reflect.DeepEqual would. A type the plan does not cover (one holding
// an interface value), a value whose walk goes deeper than a bound (a cycle of pointers, which
// reflect.DeepEqual handles with its map), and a value that is not a pointer are handed to
// reflect.DeepEqual itself.
package deepequal
