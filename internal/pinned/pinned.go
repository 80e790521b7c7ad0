package pinned

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// UpdateEnv is the environment variable that makes Check rewrite the file instead of comparing.
const UpdateEnv = "INFORMERSIM_UPDATE_PINNED"

// Check computes hash(name) for every name and compares the results with the "name hash" lines
// of file. Every name that is missing from the file or hashes differently is reported, with at
// most ten listed in full. With INFORMERSIM_UPDATE_PINNED=1 in the environment it writes the
// file instead.
func Check(t testing.TB, file string, names []string, hash func(name string) string) {
	t.Helper()
	got := make([]string, len(names))
	for i, n := range names {
		got[i] = hash(n)
	}
	if os.Getenv(UpdateEnv) == "1" {
		var b strings.Builder
		for i, n := range names {
			fmt.Fprintf(&b, "%s %s\n", n, got[i])
		}
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("pinned: wrote %d hashes to %s", len(names), file)
		return
	}
	want, err := read(file)
	if err != nil {
		t.Fatalf("pinned: %v (write it with %s=1)", err, UpdateEnv)
	}
	moved := 0
	for i, n := range names {
		if w, ok := want[n]; !ok || w != got[i] {
			moved++
			if moved <= 10 {
				t.Errorf("pinned: %s hashes %s, %s pins %s", n, got[i], file, orMissing(w, ok))
			}
		}
	}
	if moved > 0 {
		t.Errorf("pinned: %d of %d hashes moved; a speed-up must not change a schedule (rewrite with %s=1 only for a change of behavior)", moved, len(names), UpdateEnv)
	}
}

// Seeds returns the names "1".."n", for Check over seeds.
func Seeds(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = strconv.Itoa(i + 1)
	}
	return names
}

func orMissing(w string, ok bool) string {
	if !ok {
		return "nothing"
	}
	return w
}

func read(file string) (map[string]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	want := map[string]string{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s:%d: want \"name hash\", got %q", file, line, sc.Text())
		}
		want[fields[0]] = fields[1]
	}
	return want, sc.Err()
}
