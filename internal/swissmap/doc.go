// Package swissmap reads the memory of the Go runtime's maps whose keys are strings and whose
// values are two words (a string or an interface): map[string]string and map[string]any, the
// maps of every object the simulator stores or lends.
//
// Two checks compare or hash such maps at every step or request: the REST harness's read-only
// check (clientgo) keeps a small label map as two blocks of memory instead of looking its
// entries up, and fakeapi's fingerprint of a stored object reads a map's slots in place instead
// of ranging over it. Both need the same facts about the runtime's maps, kept here once.
//
// Go's maps (swiss tables, Go 1.24 and later) have a header: the count of entries, a hash seed,
// a pointer to the map's one group when it is small (at most eight entries) or to a directory
// of tables when it is big, and the directory's length (0 for a small map). A group is a word
// of control bytes, one per slot, whose high bit is set for a slot that holds no entry, then
// eight slots, each the key and then the value in place. A big map's directory points to its
// tables, one table taking consecutive entries of the directory from the one its index names;
// a table holds an array of groups laid out as a small map's.
//
// The layout is the runtime's, not a promise of the language, and the offsets here are a 64-bit
// platform's: Enabled is false on a 32-bit one and under the plain build tag (go test -tags
// plain), and then every user takes the language's map operations. Checked against Go 1.24 to
// 1.26 (internal/runtime/maps) on amd64. This package only reads what it is told to read; each
// user checks, once per process and on maps of its own of the type it
// reads, that the entries are where the layout says (clientgo's checkSmallMapLayout, fakeapi's
// checkSmallAnyMapLayout), and falls back to the language's own map operations when they are
// not.
package swissmap
