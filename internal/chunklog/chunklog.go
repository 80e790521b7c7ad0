package chunklog

const (
	// FirstChunk is the capacity of a log's first chunk (or MaxChunk, if smaller).
	FirstChunk = 32
	// DefaultMaxChunk is the largest capacity of a chunk when Log.MaxChunk is zero.
	DefaultMaxChunk = 256
)

// Log is a sequence of values, oldest first (see the package documentation).
type Log[T any] struct {
	// MaxChunk is the largest capacity of a chunk; zero means DefaultMaxChunk. Large values
	// kept in small numbers (an apiserver's request records) waste less of a last chunk with
	// small chunks.
	MaxChunk int
	// chunks hold the values: chunks[0][head:], then the later chunks; all but the last are full.
	chunks [][]T
	head   int
	n      int
}

// Len returns the number of values in l.
func (l *Log[T]) Len() int { return l.n }

// Append adds v at the new end of l.
func (l *Log[T]) Append(v T) {
	if k := len(l.chunks); k == 0 || len(l.chunks[k-1]) == cap(l.chunks[k-1]) {
		most := l.MaxChunk
		if most <= 0 {
			most = DefaultMaxChunk
		}
		size := min(most, FirstChunk)
		if k > 0 {
			size = min(most, 2*cap(l.chunks[k-1]))
		}
		l.chunks = append(l.chunks, make([]T, 0, size))
	}
	last := &l.chunks[len(l.chunks)-1]
	*last = append(*last, v)
	l.n++
}

// DropOldest removes the k oldest values (all of them if k >= Len), releasing the chunks they
// emptied.
func (l *Log[T]) DropOldest(k int) {
	if k <= 0 {
		return
	}
	if k >= l.n {
		*l = Log[T]{MaxChunk: l.MaxChunk}
		return
	}
	l.n -= k
	for k > 0 {
		c := l.chunks[0]
		left := len(c) - l.head
		if k < left {
			clear(c[l.head : l.head+k])
			l.head += k
			return
		}
		// The rest of the first chunk goes. It is full, since values remain after it.
		k -= left
		l.chunks[0] = nil
		l.chunks = l.chunks[1:]
		l.head = 0
	}
}

// Each calls f with each value of l in place, oldest first. f must not append to or drop from l.
func (l *Log[T]) Each(f func(*T)) {
	for i, c := range l.chunks {
		if i == 0 {
			c = c[l.head:]
		}
		for j := range c {
			f(&c[j])
		}
	}
}

// All returns a copy of the values, oldest first (nil when l is empty).
func (l *Log[T]) All() []T {
	if l.n == 0 {
		return nil
	}
	out := make([]T, 0, l.n)
	for i, c := range l.chunks {
		if i == 0 {
			c = c[l.head:]
		}
		out = append(out, c...)
	}
	return out
}
