package goseed

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Toolchain is the Go toolchain an overlay is written for: its GOROOT and version, as `go env
// GOROOT GOVERSION` prints them.
type Toolchain struct {
	GOROOT    string
	GOVERSION string
	// GOMODCACHE is where the modules the tests build with are; the patches of modules
	// (client-go's) apply to the versions found there. Empty: none.
	GOMODCACHE string
}

// FindToolchain asks the go command on PATH (or goCmd) which toolchain builds the tests.
func FindToolchain(goCmd string) (Toolchain, error) {
	if goCmd == "" {
		goCmd = "go"
	}
	out, err := exec.Command(goCmd, "env", "GOROOT", "GOVERSION", "GOMODCACHE").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return Toolchain{}, fmt.Errorf("goseed: %s env: %v: %s", goCmd, err, bytes.TrimSpace(ee.Stderr))
		}
		return Toolchain{}, fmt.Errorf("goseed: %s env: %w", goCmd, err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 3 || lines[0] == "" || lines[1] == "" {
		return Toolchain{}, fmt.Errorf("goseed: %s env GOROOT GOVERSION GOMODCACHE printed %q, not three lines", goCmd, out)
	}
	return Toolchain{GOROOT: lines[0], GOVERSION: lines[1], GOMODCACHE: lines[2]}, nil
}

// Write writes the overlay for tc under dir (a directory of its own per toolchain and patch set,
// so overlays of several Go versions live side by side and a new patch set never reuses an old
// one) and returns the path of its JSON file, the value of -overlay. An overlay already written
// is reused. It fails, writing nothing, when a patch does not apply to tc's standard library. The
// notes name the module versions in tc.GOMODCACHE left unpatched (their files changed).
func Write(tc Toolchain, dir string) (overlayPath string, notes []string, err error) {
	if tc.GOROOT == "" || tc.GOVERSION == "" {
		return "", nil, errors.New("goseed: the toolchain's GOROOT and GOVERSION are both needed")
	}
	if strings.ContainsAny(dir, " \t\n") {
		return "", nil, fmt.Errorf("goseed: the overlay's directory %q holds a space, which GOFLAGS cannot carry; choose another (INFORMERSIM_OVERLAY_DIR)", dir)
	}
	files, err := patched(tc)
	if err != nil {
		return "", nil, err
	}
	// files are named by path under GOROOT/src; a module's by its absolute path, which sorts
	// and digests alike.
	notes = patchModules(tc.GOMODCACHE, files)
	digest := sha256.New()
	fmt.Fprintf(digest, "%s\x00%s\x00", tc.GOVERSION, tc.GOROOT)
	names := slices.Sorted(mapsKeys(files))
	for _, name := range names {
		fmt.Fprintf(digest, "%s\x00%d\x00", name, len(files[name]))
		digest.Write(files[name])
	}
	final := filepath.Join(dir, tc.GOVERSION+"-"+hex.EncodeToString(digest.Sum(nil))[:12])
	overlay := filepath.Join(final, "overlay.json")
	if _, err := os.Stat(overlay); err == nil {
		return overlay, notes, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("goseed: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, ".writing-")
	if err != nil {
		return "", nil, fmt.Errorf("goseed: %w", err)
	}
	defer os.RemoveAll(tmp)
	replace := map[string]string{}
	for _, name := range names {
		dst := filepath.Join(tmp, filepath.FromSlash(strings.TrimPrefix(name, "/")))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", nil, fmt.Errorf("goseed: %w", err)
		}
		if err := os.WriteFile(dst, files[name], 0o644); err != nil {
			return "", nil, fmt.Errorf("goseed: %w", err)
		}
		replace[sourcePath(tc, name)] = filepath.Join(final, filepath.FromSlash(strings.TrimPrefix(name, "/")))
	}
	js, err := json.MarshalIndent(struct{ Replace map[string]string }{replace}, "", "\t")
	if err != nil {
		return "", nil, fmt.Errorf("goseed: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "overlay.json"), append(js, '\n'), 0o644); err != nil {
		return "", nil, fmt.Errorf("goseed: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		// Another process wrote the same overlay meanwhile: its files are the same bytes.
		if _, statErr := os.Stat(overlay); statErr == nil {
			return overlay, notes, nil
		}
		return "", nil, fmt.Errorf("goseed: %w", err)
	}
	return overlay, notes, nil
}

// patched applies every patch to tc's sources and returns the changed and added files by path
// under GOROOT/src.
func patched(tc Toolchain) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, p := range patches {
		src, ok := files[p.file]
		if !ok {
			b, err := os.ReadFile(filepath.Join(tc.GOROOT, "src", filepath.FromSlash(p.file)))
			if err != nil {
				return nil, fmt.Errorf("goseed: %s: cannot read the source it patches (%s): %w", tc.GOVERSION, p.why, err)
			}
			src = b
		}
		out, err := apply(src, p)
		if err != nil {
			return nil, fmt.Errorf("goseed: %s is not supported: %s: %w (the patch: %s)", tc.GOVERSION, p.file, err, p.why)
		}
		files[p.file] = out
	}
	for name, text := range added {
		if _, err := os.Stat(filepath.Join(tc.GOROOT, "src", filepath.FromSlash(name))); err == nil {
			return nil, fmt.Errorf("goseed: %s already has %s, the file the overlay adds", tc.GOVERSION, name)
		}
		files[name] = []byte(text)
	}
	return files, nil
}

// apply replaces p.text, which must occur once in the region of src that follows the line
// starting with p.after (up to the next top-level declaration).
func apply(src []byte, p patch) ([]byte, error) {
	times := max(p.times, 1)
	start, end := 0, len(src)
	if p.after != "" {
		i := bytes.Index(src, []byte("\n"+p.after))
		if i < 0 {
			return nil, fmt.Errorf("no line starts with %q", p.after)
		}
		start = i + 1
		if j := bytes.Index(src[start:], []byte("\n}\n")); j >= 0 {
			end = start + j + 3
		}
	}
	region := src[start:end]
	switch n := bytes.Count(region, []byte(p.text)); {
	case n == times:
	case n == 0:
		return nil, fmt.Errorf("the text %q is not where it was (after %q)", p.text, p.after)
	default:
		return nil, fmt.Errorf("the text %q occurs %d times after %q, not %d", p.text, n, p.after, times)
	}
	out := make([]byte, 0, len(src)+times*len(p.with))
	out = append(out, src[:start]...)
	out = append(out, bytes.ReplaceAll(region, []byte(p.text), []byte(p.with))...)
	out = append(out, src[end:]...)
	return out, nil
}

// patchModules applies the module patches to every version of their modules in modcache and
// adds the results to files, by absolute path; it returns a note for each version left as it is.
func patchModules(modcache string, files map[string][]byte) (notes []string) {
	if modcache == "" {
		return nil
	}
	for _, mp := range modulePatches {
		dirs, _ := filepath.Glob(filepath.Join(modcache, filepath.FromSlash(escapeModulePath(mp.module))+"@*"))
		slices.Sort(dirs)
		for _, dir := range dirs {
			out, err := patchModule(dir, mp)
			if err != nil {
				notes = append(notes, fmt.Sprintf("%s: left as it is: %v", filepath.Base(dir), err))
				continue
			}
			for name, b := range out {
				files[name] = b
			}
		}
	}
	return notes
}

// patchModule patches one version of a module, in dir; all of its patches apply or none.
func patchModule(dir string, mp modulePatch) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, p := range mp.patches {
		path := filepath.Join(dir, filepath.FromSlash(p.file))
		src, ok := out[path]
		if !ok {
			b, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			src = b
		}
		b, err := apply(src, p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.file, err)
		}
		out[path] = b
	}
	for name, text := range mp.added {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if _, err := os.Stat(path); err == nil {
			return nil, fmt.Errorf("it already has %s", name)
		}
		out[path] = []byte(text)
	}
	return out, nil
}

// escapeModulePath is a module path as the module cache spells it: an upper-case letter is an
// exclamation mark and the letter in lower case.
func escapeModulePath(path string) string {
	var b strings.Builder
	for _, r := range path {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// sourcePath is the file the overlay replaces or adds: a path under GOROOT/src, or an absolute
// one (a module's).
func sourcePath(tc Toolchain, name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(tc.GOROOT, "src", filepath.FromSlash(name))
}

func mapsKeys(m map[string][]byte) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// DefaultDir is where overlays are written unless INFORMERSIM_OVERLAY_DIR says otherwise: the
// user's cache directory.
func DefaultDir() (string, error) {
	if d := os.Getenv("INFORMERSIM_OVERLAY_DIR"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("goseed: no cache directory for the overlay (set INFORMERSIM_OVERLAY_DIR): %w", err)
	}
	return filepath.Join(d, "informersim", "goseed"), nil
}
