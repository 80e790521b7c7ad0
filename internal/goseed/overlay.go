package goseed

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
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
}

// FindToolchain asks the go command on PATH (or goCmd) which toolchain builds the tests.
func FindToolchain(goCmd string) (Toolchain, error) {
	if goCmd == "" {
		goCmd = "go"
	}
	out, err := exec.Command(goCmd, "env", "GOROOT", "GOVERSION").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return Toolchain{}, fmt.Errorf("goseed: %s env: %v: %s", goCmd, err, bytes.TrimSpace(ee.Stderr))
		}
		return Toolchain{}, fmt.Errorf("goseed: %s env: %w", goCmd, err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 2 || lines[0] == "" || lines[1] == "" {
		return Toolchain{}, fmt.Errorf("goseed: %s env GOROOT GOVERSION printed %q, not two lines", goCmd, out)
	}
	return Toolchain{GOROOT: lines[0], GOVERSION: lines[1]}, nil
}

// Write writes the overlay for tc under dir (a directory of its own per toolchain and patch set,
// so overlays of several Go versions live side by side and a new patch set never reuses an old
// one) and returns the path of its JSON file, the value of -overlay. An overlay already written
// is reused. It fails, writing nothing, when a patch does not apply to tc's standard library.
func Write(tc Toolchain, dir string) (overlayPath string, err error) {
	if tc.GOROOT == "" || tc.GOVERSION == "" {
		return "", errors.New("goseed: the toolchain's GOROOT and GOVERSION are both needed")
	}
	if strings.ContainsAny(dir, " \t\n") {
		return "", fmt.Errorf("goseed: the overlay's directory %q holds a space, which GOFLAGS cannot carry; choose another (INFORMERSIM_OVERLAY_DIR)", dir)
	}
	files, err := patched(tc)
	if err != nil {
		return "", err
	}

	digest := sha256.New()
	fmt.Fprintf(digest, "%s\x00%s\x00", tc.GOVERSION, tc.GOROOT)
	names := slices.Sorted(maps.Keys(files))
	for _, name := range names {
		fmt.Fprintf(digest, "%s\x00%d\x00", name, len(files[name]))
		digest.Write(files[name])
	}
	final := filepath.Join(dir, tc.GOVERSION+"-"+hex.EncodeToString(digest.Sum(nil))[:12])
	overlay := filepath.Join(final, "overlay.json")
	if _, err := os.Stat(overlay); err == nil {
		return overlay, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("goseed: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, ".writing-")
	if err != nil {
		return "", fmt.Errorf("goseed: %w", err)
	}
	defer os.RemoveAll(tmp)
	replace := map[string]string{}
	for _, name := range names {
		dst := filepath.Join(tmp, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", fmt.Errorf("goseed: %w", err)
		}
		if err := os.WriteFile(dst, files[name], 0o644); err != nil {
			return "", fmt.Errorf("goseed: %w", err)
		}
		replace[filepath.Join(tc.GOROOT, "src", filepath.FromSlash(name))] = filepath.Join(final, filepath.FromSlash(name))
	}
	js, err := json.MarshalIndent(struct{ Replace map[string]string }{replace}, "", "\t")
	if err != nil {
		return "", fmt.Errorf("goseed: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "overlay.json"), append(js, '\n'), 0o644); err != nil {
		return "", fmt.Errorf("goseed: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		// Another process wrote the same overlay meanwhile: its files are the same bytes.
		if _, statErr := os.Stat(overlay); statErr == nil {
			return overlay, nil
		}
		return "", fmt.Errorf("goseed: %w", err)
	}
	return overlay, nil
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
	switch n := bytes.Count(region, []byte(p.text)); n {
	case 1:
	case 0:
		return nil, fmt.Errorf("the text %q is not where it was (after %q)", p.text, p.after)
	default:
		return nil, fmt.Errorf("the text %q occurs %d times after %q, not once", p.text, n, p.after)
	}
	out := make([]byte, 0, len(src)+len(p.with))
	out = append(out, src[:start]...)
	out = append(out, bytes.ReplaceAll(region, []byte(p.text), []byte(p.with))...)
	out = append(out, src[end:]...)
	return out, nil
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
