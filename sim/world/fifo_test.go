package world

import (
	"slices"
	"testing"
)

// take removes the i-th queued item and keeps the others in order, from the head, the middle and
// the tail, and the queue goes on as a fifo afterwards (a stream's timers: the oldest fires
// first as a rule, another one when deadlines are equal).
func TestFifoTake(t *testing.T) {
	for i := range 5 {
		var q fifo[int]
		for v := range 5 {
			q.push(v)
		}
		if got := q.take(i); got != i {
			t.Fatalf("take(%d) = %d, want %d", i, got, i)
		}
		want := slices.Delete([]int{0, 1, 2, 3, 4}, i, i+1)
		if !slices.Equal(q.queued(), want) {
			t.Fatalf("after take(%d): %v, want %v", i, q.queued(), want)
		}
		q.push(5)
		want = append(want, 5)
		var got []int
		for q.len() > 0 {
			got = append(got, q.pop())
		}
		if !slices.Equal(got, want) {
			t.Fatalf("after take(%d) and a push, popped %v, want %v", i, got, want)
		}
		if q.head != 0 || len(q.items) != 0 {
			t.Fatalf("an emptied queue did not start over at the front: head %d, %d items", q.head, len(q.items))
		}
	}
	// Popped and taken slots keep no reference to what left the queue.
	var q fifo[*int]
	for range 3 {
		q.push(new(int))
	}
	q.take(1)
	q.pop()
	for j, p := range q.items[:q.head] {
		if p != nil {
			t.Errorf("slot %d before the head still references an item", j)
		}
	}
}
