package chunklog

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// Goal: a Log holds exactly what a plain slice appended to and cut from its front holds, through
// chunks of every size, and keeps no reference to a dropped value. Method: 20,000 random appends
// and drops (of none, some, a chunk's worth, everything) against a slice; after each, All, the
// values Each visits, Len and the cleared slots of the first chunk are compared.
func TestLogIsASliceWithItsFrontCut(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var l Log[*int]
	var want []*int
	for i := range 20000 {
		switch op := r.IntN(10); {
		case op < 7:
			v := i
			l.Append(&v)
			want = append(want, &v)
		default:
			k := r.IntN(len(want) + 1)
			if op == 9 {
				k = r.IntN(3 * DefaultMaxChunk)
			}
			l.DropOldest(k)
			want = want[min(k, len(want)):]
		}
		if l.Len() != len(want) {
			t.Fatalf("step %d: Len %d, want %d", i, l.Len(), len(want))
		}
		if got := l.All(); !slices.Equal(got, want) || (len(want) == 0) != (got == nil) {
			t.Fatalf("step %d: All differs from the slice (%d values, want %d)", i, len(got), len(want))
		}
		var each []*int
		l.Each(func(p **int) { each = append(each, *p) })
		if !slices.Equal(each, want) {
			t.Fatalf("step %d: Each visits %d values, not the slice's %d", i, len(each), len(want))
		}
		if len(l.chunks) > 0 {
			for j, p := range l.chunks[0][:l.head] {
				if p != nil {
					t.Fatalf("step %d: dropped slot %d still holds a value", i, j)
				}
			}
		}
		for j, c := range l.chunks {
			if j < len(l.chunks)-1 && len(c) != cap(c) {
				t.Fatalf("step %d: chunk %d of %d is not full", i, j, len(l.chunks))
			}
			if cap(c) > DefaultMaxChunk {
				t.Fatalf("step %d: chunk of %d values, more than DefaultMaxChunk", i, cap(c))
			}
		}
	}
}

// Goal: a Log's MaxChunk bounds its chunks: with 8, every chunk holds 8 values. Method:
// capacities after 50 appends, and again after dropping everything and appending once.
func TestMaxChunkBoundsChunks(t *testing.T) {
	l := Log[int]{MaxChunk: 8}
	for i := range 50 {
		l.Append(i)
	}
	for _, c := range l.chunks {
		if cap(c) != 8 {
			t.Fatalf("a chunk of %d values with MaxChunk 8", cap(c))
		}
	}
	l.DropOldest(l.Len())
	l.Append(1)
	if cap(l.chunks[0]) != 8 {
		t.Fatalf("after dropping everything, a chunk of %d values with MaxChunk 8", cap(l.chunks[0]))
	}
}

// Goal: a short log takes little room: 100 values sit in chunks of 32, 64 and 128 (chunk sizes
// beyond DefaultMaxChunk are checked by TestLogIsASliceWithItsFrontCut). Method: capacities after the
// appends.
func TestChunksGrowFromFirstChunk(t *testing.T) {
	var l Log[int]
	for i := range 100 {
		l.Append(i)
	}
	caps := []int{}
	for _, c := range l.chunks {
		caps = append(caps, cap(c))
	}
	if !slices.Equal(caps, []int{32, 64, 128}) {
		t.Fatalf("chunk capacities %v for 100 values, want [32 64 128]", caps)
	}
}
