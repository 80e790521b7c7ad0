package world

import "testing"

// Goal: appending a kind to a list of n fault kinds (eleven or more) changes what one fault value names, the
// value naming the new position, and nothing else; every position of a list of up to 64 kinds
// is named by some value; the first eleven positions are about as likely as each other.
func TestFuzzPositionStableUnderAppend(t *testing.T) {
	for n := 1; n <= fuzzFaultValues; n++ {
		named := make([]int, n)
		for f := range fuzzFaultValues {
			p := fuzzPosition(f, n)
			if p < 0 || p >= n {
				t.Fatalf("n=%d: value %d names position %d", n, f, p)
			}
			named[p]++
			if n < fuzzFoldKinds || n == fuzzFaultValues {
				continue // fewer than eleven kinds fold onto all of them (f mod n)
			}
			if q := fuzzPosition(f, n+1); q != p && q != n {
				t.Errorf("n=%d: appending a kind moves value %d from position %d to %d", n, f, p, q)
			}
		}
		changed := 0
		for f := range fuzzFaultValues {
			if n < fuzzFaultValues && fuzzPosition(f, n+1) != fuzzPosition(f, n) {
				changed++
			}
		}
		if n >= fuzzFoldKinds && n < fuzzFaultValues && changed != 1 {
			t.Errorf("n=%d: appending a kind changes %d values, want 1", n, changed)
		}
		for p, c := range named {
			if c == 0 {
				t.Errorf("n=%d: no value names position %d", n, p)
			}
			if p < min(n, fuzzFoldKinds) && n <= 16 && c < fuzzFaultValues/min(n, fuzzFoldKinds)-2 {
				t.Errorf("n=%d: position %d has %d values, want about %d", n, p, c, fuzzFaultValues/min(n, fuzzFoldKinds))
			}
		}
	}
}
