package pinned

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps what Check reports instead of failing the test.
type recorder struct {
	testing.TB
	errors []string
	fatal  string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }

func TestCheck(t *testing.T) {
	file := filepath.Join(t.TempDir(), "hashes.txt")
	if err := os.WriteFile(file, []byte("1 a1\n2 b2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hash := func(name string) string { return map[string]string{"1": "a1", "2": "b2", "3": "c3"}[name] }

	r := &recorder{TB: t}
	Check(r, file, Seeds(2), hash)
	if len(r.errors) != 0 || r.fatal != "" {
		t.Errorf("equal hashes reported %q %q", r.errors, r.fatal)
	}

	r = &recorder{TB: t}
	Check(r, file, Seeds(3), func(name string) string {
		if name == "2" {
			return "moved"
		}
		return hash(name)
	})
	got := strings.Join(r.errors, "\n")
	for _, want := range []string{"2 hashes moved", "3 hashes c3, " + file + " pins nothing", "2 of 3 hashes moved"} {
		if !strings.Contains(got, want) {
			t.Errorf("report %q lacks %q", got, want)
		}
	}

	r = &recorder{TB: t}
	Check(r, filepath.Join(t.TempDir(), "missing.txt"), Seeds(1), hash)
	if !strings.Contains(r.fatal, UpdateEnv) {
		t.Errorf("a missing file: %q, want it to name %s", r.fatal, UpdateEnv)
	}
}
