package benchrun

import (
	"flag"
	"testing"
)

// Test runs f as a test named name and reports whether it passed. It fails b at once when the
// binary was given -test.cpu or -test.count (see the package documentation).
func Test(b *testing.B, name string, f func(t *testing.T)) bool {
	b.Helper()
	for _, fl := range []string{"test.cpu", "test.count"} {
		if v := flag.Lookup(fl); v != nil && v.Value.String() != v.DefValue {
			b.Fatalf("-%s=%s: each op runs a test, which testing.RunTests would repeat for every value; run the binary once per setting (GOMAXPROCS in the environment)", fl, v.Value)
		}
	}
	if f == nil {
		b.Fatal("benchrun.Test: nil function")
	}
	return testing.RunTests(func(string, string) (bool, error) { return true, nil },
		[]testing.InternalTest{{Name: name, F: f}})
}
