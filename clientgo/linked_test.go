package clientgo

import (
	"runtime"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo/internal/introspect"
)

// TestBinaryFunctionTable reads this test binary's function table: it links controller-runtime
// (the manager tests) and this package, and has no function under a made-up path, whose name is
// nonetheless in the binary as this test's string constant: found only if the scan read more than
// the function table.
func TestBinaryFunctionTable(t *testing.T) {
	for _, c := range []struct {
		prefix string
		want   bool
	}{
		{crFunctionPrefix, true},
		{"github.com/informersim/informersim/clientgo/internal/introspect.BinaryHasFunctions", true},
		{"example.invalid/no/such/package.", false},
	} {
		start := time.Now()
		has, known := introspect.BinaryHasFunctions(c.prefix)
		if !known {
			if runtime.GOOS == "linux" || runtime.GOOS == "darwin" {
				t.Fatalf("BinaryHasFunctions(%q): the function table could not be read", c.prefix)
			}
			t.Skipf("no function table reader for %s: the harness reads the stacks instead", runtime.GOOS)
		}
		if has != c.want {
			t.Errorf("BinaryHasFunctions(%q) = %v, want %v", c.prefix, has, c.want)
		}
		t.Logf("%q: %v in %v", c.prefix, has, time.Since(start))
	}
}
