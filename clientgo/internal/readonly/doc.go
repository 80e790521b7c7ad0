// Package readonly tells whether an object handed out to a controller is still what was handed
// out, with the answer reflect.DeepEqual of the object and a copy taken at that moment gives, at
// a fraction of its cost. It serves the two read-only checks of the clientgo harness: its own,
// of the objects the Env's informers lend (clientgo's lending), and client-go's cache mutation
// detector, whose comparisons it answers in the deterministic mode (DetectorComparisons).
//
// # Contract
//
//   - Compare(obj, cp, last) returns reflect.DeepEqual(obj, cp), and a Snapshot to pass as last
//     to the next comparison of the same pair. cp must be a copy nothing ever changes; obj may be
//     changed between comparisons (that is what is looked for), but not during one.
//   - A Snapshot only ever answers "unchanged" (Snapshot.Unchanged) for memory that is byte for
//     byte what DeepEqual found equal to the copy: nothing here is weaker than DeepEqual.
//   - DetectorComparisons.DeepEqual answers the calls client-go's detector makes to
//     reflect.DeepEqual, and only those (it tells them by the caller's name, through
//     clientgo/internal/introspect); any other call, or a detector whose code changed so that the
//     caller is not found, is left to reflect.DeepEqual itself: slower, never a different answer.
//   - Everything here may be called from several goroutines at once, for distinct objects.
//
// # How a snapshot answers
//
// A snapshot of an object's memory makes every comparison after the first a sweep over bytes
// instead of reflect.DeepEqual of the object with its copy.
//
// The check's first comparison of an object with its copy answers as reflect.DeepEqual, as it
// always did. When they are equal, Compare records every block of memory the object
// reaches: the object's struct, what its pointers point to, the elements of its slices, the
// bytes of its strings, saving their contents. At a later comparison, if every block still
// holds the saved bytes, the object is the very same graph of memory it was when it was equal
// to its copy, so it still is: the answer DeepEqual would give, without walking two objects in
// step. The parts that cannot be compared as bytes are maps and interfaces: a
// map[string]string (the labels and annotations of every object) has its entries saved too,
// and is the same map when it has as many entries and each saved key has its saved value;
// other maps and interfaces are compared with the copy's by DeepEqual at each comparison. When
// any block differs, the comparison is a first one again, so a change is reported with the
// same message at the same step as before; a block that differs with an equal content (a
// pointer replaced by one to an equal value) takes a new snapshot.
//
// The first comparison walks the object and its copy in step by the same plan, comparing what
// DeepEqual compares and recording the blocks as it goes (Verified): about a tenth of
// reflect.DeepEqual's cost. Where it cannot tell (a type that reaches a float, whose NaN is
// unequal to itself, or a function; pointers deeper than the walk goes) or finds a difference,
// reflect.DeepEqual decides, and gives the violation its message.
//
// Shared memory: what the object shares with its copy (the bytes of a string, which a generated
// DeepCopy shares; a pointer or a slice a custom DeepCopy left shared, as time.Time's location) is
// not saved: DeepEqual finds a pointer equal to itself, and a slice or a string equal to one
// with the same bytes, whatever they hold; the pointer itself is in the enclosing block.
package readonly
