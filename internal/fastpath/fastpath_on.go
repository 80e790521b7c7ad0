//go:build !plain

package fastpath

// On says that the speed tricks are in: the build has no tag plain.
const On = true
