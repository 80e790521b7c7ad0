package goseed

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestApplyReplacesTheTextOnceInItsFunction(t *testing.T) {
	src := []byte("package p\n\nfunc a() {\n\tx := 1\n}\n\nfunc b() {\n\tx := 1\n}\n")
	out, err := apply(src, patch{file: "p.go", after: "func b(", text: "\tx := 1\n", with: "\tx := 2\n"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "package p\n\nfunc a() {\n\tx := 1\n}\n\nfunc b() {\n\tx := 2\n}\n"; string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

func TestApplyRefusesWhatIsNotThereOnce(t *testing.T) {
	src := []byte("package p\n\nfunc a() {\n\tx := 1\n\tx := 1\n}\n\nfunc b() {\n\ty := 1\n}\n")
	for _, tc := range []struct {
		name string
		p    patch
		want string
	}{
		{"no such function", patch{after: "func c(", text: "x"}, `no line starts with "func c("`},
		{"not in the function", patch{after: "func b(", text: "\tx := 1\n"}, "is not where it was"},
		{"twice", patch{after: "func a(", text: "\tx := 1\n"}, "occurs 2 times"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := apply(src, tc.p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("apply: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestWriteForThisGo writes the overlay for the Go running the test: every patch applies, the
// overlay names each patched and added file, and a second Write reuses the first.
func TestWriteForThisGo(t *testing.T) {
	tc := Toolchain{GOROOT: runtime.GOROOT(), GOVERSION: runtime.Version()}
	dir := t.TempDir()
	path, err := Write(tc, dir)
	if err != nil {
		t.Fatal(err)
	}
	var overlay struct{ Replace map[string]string }
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &overlay); err != nil {
		t.Fatal(err)
	}
	for _, p := range patches {
		src := filepath.Join(tc.GOROOT, "src", filepath.FromSlash(p.file))
		dst, ok := overlay.Replace[src]
		if !ok {
			t.Fatalf("the overlay does not replace %s", src)
		}
		got, err := os.ReadFile(dst)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(got), p.with) {
			t.Errorf("%s lacks the patch %q", dst, p.why)
		}
	}
	for name := range added {
		if _, ok := overlay.Replace[filepath.Join(tc.GOROOT, "src", filepath.FromSlash(name))]; !ok {
			t.Errorf("the overlay does not add %s", name)
		}
	}
	again, err := Write(tc, dir)
	if err != nil || again != path {
		t.Fatalf("a second Write: %q, %v; want %q", again, err, path)
	}
	if _, err := Write(tc, filepath.Join(dir, "with space")); err == nil {
		t.Fatal("Write accepted a directory GOFLAGS cannot carry")
	}
	if _, err := Write(Toolchain{GOROOT: t.TempDir(), GOVERSION: "go0.0"}, dir); err == nil || !strings.Contains(err.Error(), "go0.0") {
		t.Fatalf("Write for a GOROOT without the sources: %v, want an error naming the version", err)
	}
}

// TestOverlayMakesRangesFollowTheSeed builds a program with the overlay and without, runs each
// twice in new processes, and compares what they print: with the overlay, one seed ranges
// alike in every process and other seeds otherwise; without it, Active says so.
func TestOverlayMakesRangesFollowTheSeed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the standard library with the overlay (about 15 s with a cold cache)")
	}
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	overlay, err := Write(Toolchain{GOROOT: runtime.GOROOT(), GOVERSION: runtime.Version()}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("testdata", "rangeorder")
	run := func(flags ...string) []string {
		t.Helper()
		bin := filepath.Join(t.TempDir(), "rangeorder")
		build := exec.Command(goCmd, append(append([]string{"build"}, flags...), "-o", bin, ".")...)
		build.Dir = dir
		build.Env = append(os.Environ(), "GOFLAGS=")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build %v: %v\n%s", flags, err, out)
		}
		var outs []string
		for range 2 {
			out, err := exec.Command(bin).Output()
			if err != nil {
				t.Fatalf("%s: %v", bin, err)
			}
			outs = append(outs, string(out))
		}
		return outs
	}
	seeded := run("-overlay=" + overlay)
	if seeded[0] != seeded[1] {
		t.Errorf("with the overlay, two processes ranged differently:\n%s\n%s", seeded[0], seeded[1])
	}
	lines := strings.Split(strings.TrimSpace(seeded[0]), "\n")
	if len(lines) != 5 || lines[0] != "true" {
		t.Fatalf("with the overlay, the program printed %q: want Active true and four orders", seeded[0])
	}
	if lines[1] != lines[2] {
		t.Errorf("with the overlay, seed 1 ranged two ways in one process:\n%s\n%s", lines[1], lines[2])
	}
	if lines[1] == lines[3] || lines[3] == lines[4] {
		t.Errorf("with the overlay, seeds 1, 2 and 3 did not give three orders:\n%s\n%s\n%s", lines[1], lines[3], lines[4])
	}
	plain := run()
	if !strings.HasPrefix(plain[0], "false\n") {
		t.Errorf("without the overlay, Active said true:\n%s", plain[0])
	}
}

// TestOverlayReportsTheDetectorsPanic runs testdata/panicreport's tests with the overlay.
func TestOverlayReportsTheDetectorsPanic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the standard library with the overlay (about 15 s with a cold cache)")
	}
	overlay, err := Write(Toolchain{GOROOT: runtime.GOROOT(), GOVERSION: runtime.Version()}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "test", "-count=1", "-overlay="+overlay, "./testdata/panicreport")
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}
}
