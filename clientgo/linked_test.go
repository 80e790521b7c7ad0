package clientgo

import (
	"bytes"
	"runtime"
	"testing"
	"time"
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
		{"github.com/informersim/informersim/clientgo.binaryHasFunctions", true},
		{"example.invalid/no/such/package.", false},
	} {
		start := time.Now()
		has, known := binaryHasFunctions(c.prefix)
		if !known {
			if runtime.GOOS == "linux" || runtime.GOOS == "darwin" {
				t.Fatalf("binaryHasFunctions(%q): the function table could not be read", c.prefix)
			}
			t.Skipf("no function table reader for %s: the harness reads the stacks instead", runtime.GOOS)
		}
		if has != c.want {
			t.Errorf("binaryHasFunctions(%q) = %v, want %v", c.prefix, has, c.want)
		}
		t.Logf("%q: %v in %v", c.prefix, has, time.Since(start))
	}
}

// TestReaderContainsAcrossChunks places the string across each chunk boundary of the reader.
func TestReaderContainsAcrossChunks(t *testing.T) {
	s := []byte("sigs.k8s.io/controller-runtime/")
	for _, at := range []int{0, 1<<20 - len(s), 1<<20 - 5, 1 << 20, 2<<20 - 1, 3<<20 - len(s)} {
		data := make([]byte, 3<<20)
		copy(data[at:], s)
		if got, err := readerContains(bytes.NewReader(data[:max(at+len(s), 0)]), s); err != nil || !got {
			t.Errorf("at %d: %v, %v", at, got, err)
		}
		if got, err := readerContains(bytes.NewReader(data[:at+len(s)-1]), s); err != nil || got {
			t.Errorf("cut at %d: %v, %v", at, got, err)
		}
	}
}
