//go:build !plain && (amd64 || arm64 || loong64 || mips64 || mips64le || ppc64 || ppc64le || riscv64 || s390x)

package swissmap

// Enabled says whether the layout this package reads may be used: on a 64-bit platform (the
// offsets and sizes here are in 8-byte words) and without the plain build tag, which turns every
// fast path of the project off so that it can be measured against the plain code (docs/performance.md).
// Each user still checks the layout once per process before it relies on it.
const Enabled = true
