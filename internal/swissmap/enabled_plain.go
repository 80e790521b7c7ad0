//go:build plain || !(amd64 || arm64 || loong64 || mips64 || mips64le || ppc64 || ppc64le || riscv64 || s390x)

package swissmap

// Enabled is false under the plain build tag and on 32-bit platforms (GOARCH=386, arm...), whose
// map headers and slots are not laid out in the 8-byte words this package reads: every user
// takes the language's own map operations.
const Enabled = false
