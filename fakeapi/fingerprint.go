package fakeapi

import (
	"math"
	"math/bits"
)

// fingerprint hashes a stored object's content (a normalised value: nil, string, bool, int64,
// float64, map[string]any, []any; see normalize) into 64 bits, so that the server can tell later
// whether an object it lent (see lend.go) still holds what it held then, without keeping a copy
// to compare with. Equal contents give equal fingerprints in every run and process: a map's
// entries are combined by addition, which does not depend on Go's random iteration order, and
// strings are hashed with fixed constants (hashString), with no per-process seed. Each kind of
// value starts from its own constant, so "1" and 1, or an empty map and an empty list, differ.
// A value of a type stored objects never hold (only a change can put one there) hashes to a
// constant of its own.
//
// Hashing reads every map entry once and allocates nothing: about a quarter of the time of the
// deep copy (copyObject) it saves. (Reading small maps' slots in place, from the runtime's map
// layout, was measured on and off and bought nothing end to end: BenchmarkSweep/nohash and
// examples' BenchmarkHarnessRun within noise, so maps are ranged over.)
func fingerprint(v any) uint64 {
	switch x := v.(type) {
	case map[string]any:
		sum := uint64(0x9e3779b97f4a7c15)
		for k, e := range x {
			sum += fingerprintEntry(k, e)
		}
		return mix(sum)
	case []any:
		h := uint64(0xc4ceb9fe1a85ec53)
		for _, e := range x {
			h = (h ^ fingerprint(e)) * fnvPrime
		}
		return mix(h ^ uint64(len(x)))
	case string:
		return hashString(x)
	case int64:
		return mix(uint64(x) ^ 0x2545f4914f6cdd1d)
	case float64:
		return mix(math.Float64bits(x) ^ 0x6a09e667f3bcc909)
	case bool:
		if x {
			return 0xbb67ae8584caa73b
		}
		return 0x3c6ef372fe94f82b
	case nil:
		return 0xa54ff53a5f1d36f1
	}
	return 0x510e527fade682d1
}

// fingerprintEntry is a map entry's part of its map's fingerprint, which sums them.
func fingerprintEntry(k string, e any) uint64 {
	return mix(hashString(k) ^ (fingerprint(e) * 0xff51afd7ed558ccd))
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
	// wordPrime is the 64-bit golden-ratio constant, an odd number with well-spread bits.
	wordPrime = 0x9e3779b97f4a7c15
)

// hashString hashes s eight bytes at a time, then finalises with mix: a stored object's strings
// are mostly names, timestamps and uids of 10 to 40 bytes, and a byte at a time was a quarter of
// the fingerprints' cost. Each word is folded in by a full 128-bit multiply whose halves are
// combined, so that a change in any bit reaches every bit of the state (a plain 64-bit multiply
// only carries changes upwards, and two one-bit changes in consecutive words could cancel). The
// last word is the string's last eight bytes, overlapping the one before when the length is not
// a multiple of eight, and a string shorter than eight bytes is one word made of two
// overlapping halves (four to seven bytes) or of its first, middle and last bytes (one to
// three): every byte is read, at a fixed cost instead of a loop over the tail. The length goes
// in first, so that among strings of one length these words differ when the strings do, and
// strings that differ only by trailing zero bytes differ.
func hashString(s string) uint64 {
	n := len(s)
	h := uint64(fnvOffset) ^ uint64(n)*wordPrime
	switch {
	case n >= 8:
		for t := s; len(t) > 8; t = t[8:] {
			h = foldWord(h, load64(t))
		}
		h = foldWord(h, load64(s[n-8:]))
	case n >= 4:
		h = foldWord(h, uint64(load32(s))|uint64(load32(s[n-4:]))<<32)
	case n > 0:
		h = foldWord(h, uint64(s[0])|uint64(s[n/2])<<8|uint64(s[n-1])<<16)
	}
	return mix(h)
}

// foldWord folds w into h by a full 128-bit multiply whose halves are combined.
func foldWord(h, w uint64) uint64 {
	hi, lo := bits.Mul64(h^w, wordPrime)
	return hi ^ lo
}

// load64 and load32 read the first eight and four bytes of s, little-endian; the compiler
// turns the byte reads into one load.
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func load32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// mix is the finaliser of MurmurHash3: it spreads every input bit over the output, so that sums
// of mixed values do not cancel in simple ways.
func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}
