package world

import (
	"strconv"
	"strings"
	"testing"

	"github.com/informersim/informersim/informer"
)

// Goal: keyState.isRV answers as comparing with the formatted resourceVersion does, leading
// zeros included (its shortcut compares with the text the RV was parsed from). Method: every
// pair of a set of parsed texts and compared texts, against strconv.FormatUint.
func TestIsRVIsFormatCompare(t *testing.T) {
	texts := []string{"0", "00", "7", "007", "70", "12", "012", "18446744073709551615", "018446744073709551615"}
	others := append([]string{"", "+7", " 7", "7 "}, texts...)
	for _, parsed := range texts {
		rv, err := strconv.ParseUint(parsed, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		st := keyState{rv: rv, rvText: parsed}
		for _, text := range others {
			if got, want := st.isRV(text), text == strconv.FormatUint(rv, 10); got != want {
				t.Errorf("rv parsed from %q: isRV(%q) = %v, want %v", parsed, text, got, want)
			}
		}
	}
}

// Goal: the Recorders of an informer's handlers share one keyIndex (the number of each key, in
// their shared cacheLookup) without sharing any state: each keeps its own order oracle and view.
// Method: two Recorders on one lookup; the first is told about a then b, the second about b only, interleaved. The views
// differ as told; an update of a to the second is a violation (it never held a), while the same
// update to the first is not.
func TestRecordersShareKeyNumbersNotState(t *testing.T) {
	w, err := New(1, Config{})
	if err != nil {
		t.Fatal(err)
	}
	obj := defaultObject
	lookup := newCacheLookup(informer.NewStore(informer.MetaNamespaceKeyFunc)) // empty: nothing to check
	first, second := newDeliveryLog(w, "t/h1", lookup, 10), newDeliveryLog(w, "t/h2", lookup, 10)
	recFeed{first}.OnAdd(obj("a", "2"), false)
	recFeed{first}.OnAdd(obj("b", "3"), false)
	recFeed{second}.OnAdd(obj("b", "3"), false)
	if got := first.View(); len(got) != 2 || got["default/a"] == nil || got["default/b"] == nil {
		t.Errorf("first view %v, want a and b", got)
	}
	if got := second.View(); len(got) != 1 || got["default/b"] == nil {
		t.Errorf("second view %v, want b alone", got)
	}
	if got := violation(t, func() { recFeed{second}.OnUpdate(obj("a", "2"), obj("a", "4")) }); !strings.Contains(got, "update of a key the handler does not hold") {
		t.Errorf("update of a to the second: violation %q, want the key reported as not held", got)
	}
	if got := violation(t, func() { recFeed{first}.OnUpdate(obj("a", "2"), obj("a", "4")) }); got != "" {
		t.Errorf("update of a to the first: violation %q", got)
	}
}

// Goal: a handler's mirror of its buffer (refQueue) stays a FIFO and does not grow without bound
// when it never empties (a handler that never catches up). Method: push two, then for 10,000
// rounds push one and pop one, checking each pop returns the oldest; the array's capacity stays
// small.
func TestRefQueueIsABoundedFIFO(t *testing.T) {
	var q refQueue
	next, want := 0, 0
	push := func() { q.push(noteRef{key: next}); next++ }
	pop := func() {
		if got := q.pop().key; got != want {
			t.Fatalf("pop %d, want %d", got, want)
		}
		want++
	}
	push()
	push()
	for range 10000 {
		push()
		pop()
	}
	if q.len() != 2 || cap(q.items) > 16 {
		t.Fatalf("len %d cap %d, want 2 and a small array", q.len(), cap(q.items))
	}
	pop()
	pop()
	if q.len() != 0 {
		t.Fatalf("len %d after popping all", q.len())
	}
}
