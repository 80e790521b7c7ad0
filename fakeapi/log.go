package fakeapi

// logChunk is the number of entries in each chunk of an eventLog (a power of two, so that
// indexing is a shift and a mask).
const logChunk = 64

// eventLog is the store's event log: entries in ascending revision order, kept in chunks of
// logChunk entries. Writes append at the back and trimming drops entries at the front, so a
// slice would copy the whole log whenever its room ran out (a log that is only ever appended to
// is copied about four times over as append grows it, a trimmed one at every quarter of its
// length), and those copies were several percent of a world's time; a chunk is filled in place
// and never moved. Index 0 is the oldest entry kept.
type eventLog struct {
	chunks []*[logChunk]entry // the entries are at positions [head, head+n) of the chunks in order
	head   int
	n      int
}

// len returns the number of entries.
func (l *eventLog) len() int { return l.n }

// at returns entry i (0 <= i < len). The pointer stays valid until the entry is dropped.
func (l *eventLog) at(i int) *entry {
	p := l.head + i
	return &l.chunks[p/logChunk][p%logChunk]
}

// append adds e after the newest entry.
func (l *eventLog) append(e entry) {
	p := l.head + l.n
	if p/logChunk == len(l.chunks) {
		l.chunks = append(l.chunks, new([logChunk]entry))
	}
	l.chunks[p/logChunk][p%logChunk] = e
	l.n++
}

// dropFront drops the k oldest entries (0 <= k <= len), clearing them so that the log keeps no
// reference to their objects, and frees the chunks they emptied.
func (l *eventLog) dropFront(k int) {
	for i := 0; i < k; i++ {
		*l.at(i) = entry{}
	}
	l.head += k
	l.n -= k
	full := l.head / logChunk
	if l.n == 0 {
		full = len(l.chunks) // nothing left: every chunk goes, and the next append starts afresh
	}
	clear(l.chunks[:full])
	l.chunks = l.chunks[full:]
	if l.n == 0 {
		l.head = 0
	} else {
		l.head %= logChunk
	}
}
