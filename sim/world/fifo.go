package world

// fifo is a first-in first-out queue on a slice whose head advances: popped slots are cleared
// (so the queue keeps no reference to what left it), the queue starts over at the front of its
// array once empty, and it moves to the front rather than growing when full with room there (a
// consumer that never catches up), so a steady flow does not allocate and the array stays within
// twice the longest backlog. The world keeps three kinds: a watch stream's wire and its timers,
// and each handler's mirror of its buffer.
type fifo[T any] struct {
	items []T // items[head:] are queued, oldest first
	head  int
}

func (q *fifo[T]) len() int { return len(q.items) - q.head }

func (q *fifo[T]) push(v T) {
	if len(q.items) == cap(q.items) && q.head > 0 {
		k := copy(q.items, q.items[q.head:])
		clear(q.items[k:])
		q.items, q.head = q.items[:k], 0
	}
	q.items = append(q.items, v)
}

// pop takes the oldest; the queue must not be empty.
func (q *fifo[T]) pop() T {
	var zero T
	v := q.items[q.head]
	q.items[q.head] = zero
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	return v
}

// take removes and returns the i-th queued item (0: the oldest, as pop), moving the i items
// before it up by one: the cost is in i, not in the length of the queue, so taking from near the
// head, the usual case, stays cheap however long the queue is.
func (q *fifo[T]) take(i int) T {
	at := q.head + i
	v := q.items[at]
	copy(q.items[q.head+1:at+1], q.items[q.head:at])
	q.pop() // the old head, now a copy of the item at head+1 (or v itself when i is 0)
	return v
}

// queued returns the queued items, oldest first; the slice aliases the queue's array.
func (q *fifo[T]) queued() []T { return q.items[q.head:] }

// release empties the queue and returns its array, emptied, for another queue to reuse.
func (q *fifo[T]) release() []T {
	clear(q.items)
	buf := q.items[:0]
	q.items, q.head = nil, 0
	return buf
}
