//go:build plain

package fastpath

// On says that the speed tricks are out: the build has the tag plain.
const On = false
