package fakeapi

import "math/rand/v2"

// zeroSource always returns the same value, so every draw repeats: it forces generateName
// collisions. (Not 0: rand.IntN would reject 0 forever for some bounds.)
type zeroSource struct{}

func (zeroSource) Uint64() uint64 { return 1 << 63 }

func constRand() *rand.Rand { return rand.New(zeroSource{}) }
