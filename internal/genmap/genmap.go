package genmap

// DefaultLimit bounds a generation of a Map whose Limit is zero.
const DefaultLimit = 1024

// Map is a map of at most 2×Limit entries (see the package documentation).
type Map[K comparable, V any] struct {
	// Limit is the number of entries of a generation; zero means DefaultLimit. Set it before the
	// first Put.
	Limit    int
	cur, old map[K]V
}

// Get returns k's value, moving it to the current generation if it was in the old one.
func (m *Map[K, V]) Get(k K) (V, bool) {
	if v, ok := m.cur[k]; ok {
		return v, true
	}
	if v, ok := m.old[k]; ok {
		delete(m.old, k)
		m.Put(k, v)
		return v, true
	}
	var zero V
	return zero, false
}

// Put sets k's value in the current generation, which becomes the old one first if it is full.
func (m *Map[K, V]) Put(k K, v V) {
	limit := m.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	if m.cur == nil {
		m.cur = make(map[K]V)
	}
	if _, ok := m.cur[k]; !ok && len(m.cur) >= limit {
		m.old, m.cur = m.cur, make(map[K]V, len(m.cur))
	}
	m.cur[k] = v
}

// Delete removes k from both generations.
func (m *Map[K, V]) Delete(k K) {
	delete(m.cur, k)
	delete(m.old, k)
}

// Len is the number of entries held, in both generations.
func (m *Map[K, V]) Len() int { return len(m.cur) + len(m.old) }
