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
	path, notes, err := Write(tc, dir)
	if err != nil || len(notes) > 0 {
		t.Fatal(err, notes)
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
	again, _, err := Write(tc, dir)
	if err != nil || again != path {
		t.Fatalf("a second Write: %q, %v; want %q", again, err, path)
	}
	if _, _, err := Write(tc, filepath.Join(dir, "with space")); err == nil {
		t.Fatal("Write accepted a directory GOFLAGS cannot carry")
	}
	if _, _, err := Write(Toolchain{GOROOT: t.TempDir(), GOVERSION: "go0.0"}, dir); err == nil || !strings.Contains(err.Error(), "go0.0") {
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
	overlay, _, err := Write(Toolchain{GOROOT: runtime.GOROOT(), GOVERSION: runtime.Version()}, t.TempDir())
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

// TestModulePatchesEveryVersionThatHasTheTexts patches the versions of client-go in a module cache
// whose mutation detector has the texts, and names the one whose file changed.
func TestModulePatchesEveryVersionThatHasTheTexts(t *testing.T) {
	modcache := t.TempDir()
	detector := "package cache\n\nimport (\n\t\"fmt\"\n\t\"k8s.io/apimachinery/pkg/util/diff\"\n)\n\n" +
		"func NewCacheMutationDetector(name string) MutationDetector {\n\tif !mutationDetectionEnabled {\n\t\treturn nil\n\t}\n}\n\n" +
		"func (d *defaultCacheMutationDetector) CompareObjects() {\n\taltered := false\n" +
		"\tfor range a {\n\t\tif x {\n\t\t\taltered = true\n\t\t}\n\t}\n" +
		"\tfor range b {\n\t\tif x {\n\t\t\taltered = true\n\t\t}\n\t}\n" +
		"\tif altered {\n\t\tpanic(msg)\n\t}\n}\n"
	for version, text := range map[string]string{
		"v0.37.2": detector,
		"v0.99.0": strings.Replace(detector, "\t\tpanic(msg)\n", "\t\tos.Exit(1)\n", 1),
	} {
		dir := filepath.Join(modcache, "k8s.io", "client-go@"+version, "tools", "cache")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "mutation_detector.go"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string][]byte{}
	notes := patchModules(modcache, files)
	if len(notes) != 1 || !strings.Contains(notes[0], "client-go@v0.99.0") || !strings.Contains(notes[0], "panic(msg)") {
		t.Errorf("notes %q, want one naming client-go@v0.99.0 and the text it lacks", notes)
	}
	patchedFile := filepath.Join(modcache, "k8s.io", "client-go@v0.37.2", "tools", "cache", "mutation_detector.go")
	got := string(files[patchedFile])
	if strings.Count(got, "informersimAltered = append(") != 2 || !strings.Contains(got, CacheModifiedPrefix) {
		t.Errorf("v0.37.2's detector was not patched whole:\n%s", got)
	}
	if _, ok := files[filepath.Join(filepath.Dir(patchedFile), "informersim_mutation.go")]; !ok {
		t.Error("v0.37.2 did not get the added file")
	}
	if len(files) != 2 {
		t.Errorf("%d files patched or added, want 2 (v0.99.0 left as it is)", len(files))
	}
}
