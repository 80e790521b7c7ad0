package genmap_test

import (
	"fmt"
	"testing"

	"github.com/informersim/informersim/internal/genmap"
)

// TestBounded: the map keeps at most two generations of its limit; an entry read after every
// put stays while the others go; a value set again in a full generation does not start a new
// one. It fails with the old generation's hits left there (entry 0 is dropped), or with the
// bound left out.
func TestBounded(t *testing.T) {
	m := genmap.Map[int, string]{Limit: 4}
	m.Put(0, "0")
	for i := 1; i < 100; i++ {
		m.Put(i, fmt.Sprint(i))
		if v, ok := m.Get(0); !ok || v != "0" {
			t.Fatalf("entry 0, read after every put, was dropped at put %d", i)
		}
		if n := m.Len(); n > 8 {
			t.Fatalf("%d entries held with a limit of 4", n)
		}
	}
	if _, ok := m.Get(50); ok {
		t.Error("entry 50, never read, is still held after 49 more puts")
	}
	if v, ok := m.Get(99); !ok || v != "99" {
		t.Errorf("the last entry: %q %v", v, ok)
	}
	before := m.Len()
	m.Put(99, "again")
	if v, _ := m.Get(99); v != "again" || m.Len() != before {
		t.Errorf("setting a held entry again: %q, %d entries held (%d before)", v, m.Len(), before)
	}
	m.Delete(99)
	if _, ok := m.Get(99); ok {
		t.Error("entry 99 is held after Delete")
	}
}

// TestZeroMapUsesDefaultLimit: the zero Map takes DefaultLimit entries in a generation.
func TestZeroMapUsesDefaultLimit(t *testing.T) {
	var m genmap.Map[int, int]
	for i := range 3 * genmap.DefaultLimit {
		m.Put(i, i)
	}
	if n := m.Len(); n != 2*genmap.DefaultLimit {
		t.Errorf("%d entries held after %d puts, want %d", n, 3*genmap.DefaultLimit, 2*genmap.DefaultLimit)
	}
}

func ExampleMap() {
	m := genmap.Map[string, int]{Limit: 2}
	m.Put("a", 1)
	m.Put("b", 2)
	m.Put("c", 3) // the current generation {a, b} is full: it becomes the old one
	m.Get("a")    // found in the old generation: back to the current one
	m.Put("d", 4) // {c, a} is full: it becomes the old one, and the older, {b}, is dropped
	_, hasA := m.Get("a")
	_, hasB := m.Get("b")
	fmt.Println(hasA, hasB, m.Len()) // {d, a} and {c}
	// Output: true false 3
}
